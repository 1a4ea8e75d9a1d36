"""ckdn (checkdown): a deterministic check runner and log digester.

The package root stays import-free on purpose: ``ckdn run`` on a trivial check
must cost little more than starting Python, so every submodule is imported only
by the code path that needs it.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
