"""What a nox session contributes to a ckdn run: its environment and its installer.

A check run from a session must see exactly what ``session.run`` would give a
command: the session's variables (nox marks some as ``None``, meaning "remove
from the child's environment") and its virtualenv's bin directories first on
``PATH``. Only public ``Session`` attributes are read, so a nox release that
reshuffles its internals does not break the translation.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

TYPE_CHECKING = False
if TYPE_CHECKING:
    import nox

__all__ = ["ProjectInstall", "base_env", "install_requirements", "install_the_project",
           "parametrized_label", "unique"]

#: How a session installs the project: True (``pip install .``), "editable" (``-e .``), False.
ProjectInstall = bool | Literal["editable"]

#: What makes a directory a project pip can install.
_PROJECT_FILES = ("pyproject.toml", "setup.py")


def base_env(session: nox.Session) -> dict[str, str]:
    """The environment ``session.run`` would give a command, as ckdn's base environment."""
    env = dict(os.environ)
    for key, value in session.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    bins = session.bin_paths  # None when the session has no virtualenv
    if bins:
        env["PATH"] = os.pathsep.join([*bins, *([env["PATH"]] if env.get("PATH") else [])])
    return env


def parametrized_label(session: nox.Session) -> str | None:
    """What a parametrized session's name adds to its function's (``tests-3.12``: ``3.12``,
    ``tests(django='5')``: ``django=5``, both: ``3.12,django=5``), else None.

    A check the session runs is then stored as ``NAME@LABEL``: each parametrization is its
    own history, as each Python of a registered session is. Read from the public
    ``session.name`` (nox's ``NAME[-PYTHON][(PARAMS)]``) and ``session.python``.
    """
    name, params = session.name, ""
    if name.endswith(")") and "(" in name:
        name, params = name[:-1].split("(", 1)
    parts = []
    python = session.python
    if isinstance(python, str) and python and name.endswith(f"-{python}"):
        parts.append(python)
    if params:
        parts.append(",".join(part.strip().replace("'", "").replace('"', "")
                              for part in params.split(",")))
    label = ",".join(parts)
    return "".join("_" if char in "/\\\0" or char.isspace() else char for char in label) or None


def unique(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, first occurrence kept: pip sees each requirement once."""
    return list(dict.fromkeys(items))


def install_requirements(session: nox.Session, requirements: Iterable[str]) -> None:
    """Install into the session's virtualenv; without one, the tools must already be there.

    nox refuses ``session.install`` outside a virtualenv (it would change the
    interpreter nox runs in), so a session without one says what it expects on
    ``PATH`` instead of installing.
    """
    wanted = unique(requirements)
    if not wanted:
        return
    if session.venv_backend == "none":
        session.log(f"ckdn: no virtualenv, not installing {' '.join(wanted)} "
                    "(they must already be on PATH or in this Python)")
        return
    session.install(*wanted)


def install_the_project(session: nox.Session, how: ProjectInstall) -> None:
    """Install the project in the session's directory, after the tools (as tox does).

    Last, so that the checkout's code replaces a release of the same project a
    tool pulled in (pytest depends on packaging: packaging's own tests must not
    test the release). Nothing without a virtualenv: the session then uses the
    interpreter nox runs in, as it is.
    """
    if not how or session.venv_backend == "none":
        return
    here = Path.cwd()
    if not any((here / name).is_file() for name in _PROJECT_FILES):
        session.log(f"ckdn: no pyproject.toml or setup.py in {here}: the project is not "
                    "installed")
        return
    session.install(*(["-e", "."] if how == "editable" else ["."]))
