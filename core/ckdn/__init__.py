"""ckdn (checkdown): a deterministic check runner and log digester.

The package root stays import-free on purpose: ``ckdn run`` on a trivial check
must cost little more than starting Python, so every submodule is imported only
by the code path that needs it.
"""

__version__ = "0.1.0"
#: The distribution this package is published as: ``pip install checkdown``. The
#: import package and the command are ``ckdn``; an unrelated distribution on PyPI
#: is called ``ckdn`` and installs a package of the same name (``ckdn doctor``).
DISTRIBUTION = "checkdown"

__all__ = ["DISTRIBUTION", "__version__"]
