"""The door for ``ckdn doctor``: is this installation the program it claims to be, and
would the configured checks run as their author thinks?

This project is published as the distribution ``checkdown``; its import package
and command are ``ckdn``. An unrelated distribution on PyPI is called ``ckdn``
and installs a package of the same name, so ``pip install ckdn`` (or a tox
``requires`` naming it) gets a different program, and installing both in one
environment leaves the ``ckdn`` package to whichever was installed last. Each
check here costs a look at the installed metadata, which is why it runs only
when asked (``ckdn doctor``), never on ``ckdn run``'s path.

The config's checks are looked at statically: nothing runs. The command policy's
verdict is the one :mod:`ckdn.app._running.policy` gives ``ckdn run``, from the same
function on the same argv and environment, so doctor and run never disagree
(:mod:`ckdn.app._install.diagnose` holds the rules, made on first use).
"""

from __future__ import annotations

import os

from ckdn import DISTRIBUTION, __version__

__all__ = ["OTHER_DISTRIBUTION", "diagnose", "doctor_lines", "installation_problems",
           "installed"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.config import Config


def diagnose(config: Config | None, *, config_error: str | None = None) -> dict[str, Any]:
    """The ``ckdn doctor --json`` report (``ckdn.doctor/1``, docs/cli.md): this installation's
    problems, then every configured check's (``config`` None: no config file, or the one
    line it was refused with as ``config_error``)."""
    from ckdn.app._install.diagnose import report

    return report(config, installation_problems(), installed(), config_error=config_error)


#: The unrelated distribution that owns the same package name.
OTHER_DISTRIBUTION = "ckdn"


def doctor_lines(doc: dict[str, Any]) -> list[str]:
    """The text form of a report's problems, one line each (an installation problem as its
    own sentence, as before doctor looked at checks)."""
    lines = []
    for problem in doc["problems"]:
        if problem["rule"] == "installation":
            lines.append(problem["message"])
            continue
        where = f"[check.{problem['check']}] " if "check" in problem else ""
        lines.append(f"{problem['level']}: {where}{problem['message']}")
    return lines


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
