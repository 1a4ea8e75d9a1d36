"""The door for ``ckdn doctor``: is this installation the program it claims to be?

This project is published as the distribution ``checkdown``; its import package
and command are ``ckdn``. An unrelated distribution on PyPI is called ``ckdn``
and installs a package of the same name, so ``pip install ckdn`` (or a tox
``requires`` naming it) gets a different program, and installing both in one
environment leaves the ``ckdn`` package to whichever was installed last. Each
check here costs a look at the installed metadata, which is why it runs only
when asked (``ckdn doctor``), never on ``ckdn run``'s path.
"""

from __future__ import annotations

import os

from ckdn import DISTRIBUTION, __version__

__all__ = ["OTHER_DISTRIBUTION", "installation_problems", "installed"]

#: The unrelated distribution that owns the same package name.
OTHER_DISTRIBUTION = "ckdn"


def installed() -> str:
    """``checkdown 0.1.0 (ckdn package at /.../ckdn)``."""
    import ckdn

    where = os.path.dirname(ckdn.__file__ or "?")
    return f"{DISTRIBUTION} {__version__} (ckdn package at {where})"


def installation_problems() -> list[str]:
    """One line per thing wrong with this installation; empty when there is nothing."""
    from importlib import metadata

    problems: list[str] = []
    try:
        ours = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        ours = None
        problems.append(f"no {DISTRIBUTION} distribution is installed for this ckdn package "
                        f"({installed()}); run it from a checkout's venv or `pip install "
                        f"{DISTRIBUTION}`")
    if ours is not None and ours != __version__:
        problems.append(f"the ckdn package says {__version__} but the installed {DISTRIBUTION} "
                        f"is {ours}: another install overwrote its files; reinstall with "
                        f"`pip install --force-reinstall {DISTRIBUTION}`")
    try:
        other = metadata.version(OTHER_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        other = None
    if other is not None:
        problems.append(f"the unrelated `{OTHER_DISTRIBUTION}` distribution {other} is installed "
                        f"too and owns the same `ckdn` package; `pip uninstall "
                        f"{OTHER_DISTRIBUTION}`, then `pip install --force-reinstall "
                        f"{DISTRIBUTION}`")
    return problems
