"""One nox session per check and per alias of ``ckdn.toml``, from one call in the noxfile.

nox has no plugin system: sessions are whatever the noxfile registered with
``nox.session`` while it was imported. :func:`sessions` does that for every
configured name, so ``nox -l`` lists them, ``nox -s lint`` runs them and
``nox -j`` children (which import the noxfile again) see the same ones.

The sessions are not nox defaults unless the noxfile says so (``default=True``):
a bare ``nox`` runs the noxfile's own sessions, not every check (a test suite
once ran twice that way); ``nox -t ckdn`` runs them. Each installs its checks'
``requires`` and then the project itself, as a tox env installs its package.

A ``ckdn.toml`` that cannot be read must not make the checks vanish quietly
(``nox -t ckdn`` would then pass), nor break the hand-written sessions of the
same noxfile with a traceback: the error is logged once and a single session
called ``ckdn`` is registered that fails with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import nox
from nox.logger import logger
from nox.registry import get as registered

from ckdn.app import Alias, Check, Config, load_config
from ckdn.app.queries import requirements
from ckdn.errors import CkdnError
from nox_ckdn._run import ConfigPath, execute
from nox_ckdn._session import ProjectInstall, install_requirements, install_the_project, unique

__all__ = ["BROKEN_CONFIG_SESSION", "ProjectInstall", "Python", "sessions"]

#: The python= values nox accepts: a version, several, False (no venv) or None (nox's own).
Python = str | Sequence[str] | bool | None

#: The one session registered when ``ckdn.toml`` (or ``only=``) is refused.
BROKEN_CONFIG_SESSION = "ckdn"

_TAG = "ckdn"
#: The refusal session this process registered, with the messages already logged.
_REFUSALS: dict[str, tuple[Callable[[nox.Session], None], list[str]]] = {}
#: ``install`` arguments that name the project directory itself.
_PROJECT_ARGS = frozenset({".", "./", "-e.", "-e./", "--editable=.", "--editable=./"})


def sessions(*, config: ConfigPath = None, only: Iterable[str] | None = None,
             prefix: str = "", python: Python = None, venv_backend: str | None = None,
             venv_params: Sequence[str] = (), reuse_venv: bool | None = None,
             install: Sequence[str] = (), install_project: ProjectInstall = True,
             tags: Sequence[str] = (), default: bool = False,
             allow_parallel: bool | None = None, gate: bool | None = None,
             github: bool | None = None) -> list[str]:
    """Register a nox session for every check and alias of ``ckdn.toml``; returns their names.

    ``config`` names the file (default ``$CKDN_CONFIG``, else ``ckdn.toml``
    next to the noxfile); ``only`` limits which checks and aliases become
    sessions; ``prefix`` is put before each session name. ``python``,
    ``venv_backend``, ``venv_params``, ``reuse_venv``, ``default`` and
    ``allow_parallel`` go to ``nox.session`` unchanged, except that ``default``
    is False unless given: a bare ``nox`` runs the noxfile's own sessions, not
    every check (``nox -t ckdn`` runs those). ``install`` is installed before
    the checks' own ``requires``; then the project itself (``pip install .``,
    as a tox env installs its package; ``install_project="editable"`` for
    ``-e .``, False for neither), unless ``install`` already names it (``"."``).
    Nothing is installed in a session without a virtualenv. ``gate`` (default:
    ``$CKDN_GATE`` when the session runs) judges each check by its baseline gate,
    as ``ckdn run --gate`` does: a red check whose findings are all known passes.
    ``github`` (default: on in a GitHub Actions job unless ``CKDN_GITHUB=0``) writes
    each check's annotations and step summary there (docs/ci.md).
    """
    options: dict[str, Any] = {"python": python, "venv_backend": venv_backend,
                               "venv_params": list(venv_params), "reuse_venv": reuse_venv,
                               "default": default}
    if allow_parallel is not None:  # older nox has no parallel mode and no such keyword
        options["allow_parallel"] = allow_parallel
    try:
        loaded = load_config(Path.cwd(), None if config is None else os.fspath(config))
        targets = _targets(loaded, only)
    except CkdnError as exc:
        return [_register_refusal(nox, exc.message, [*tags], options)]

    taken = registered()
    names: list[str] = []
    for target in targets:
        session_name = prefix + target.name
        if session_name in taken:
            _logger().warning(f"ckdn: nox session {session_name!r} is already defined in the"
                              " noxfile, so ckdn does not register its own; pass prefix= or"
                              " only= to sessions()")
            continue
        kind = "alias" if isinstance(target, Alias) else "check"
        body = _session_body(loaded, target.name,
                             unique([*install, *requirements(loaded, [target.name],
                                                             have=install)]),
                             False if _installs_project(install) else install_project, gate,
                             session_name=session_name, github=github)
        _named(body, session_name, _description(target))
        nox.session(name=session_name, tags=[_TAG, kind, *tags], **options)(body)
        names.append(session_name)
    return names


def _installs_project(install: Sequence[str]) -> bool:
    """Whether ``install`` already installs the project (``["-e", "."]``, the old advice)."""
    return any(arg in _PROJECT_ARGS for arg in install)


def _targets(config: Config, only: Iterable[str] | None) -> list[Check | Alias]:
    if only is None:
        return [*config.checks.values(), *config.aliases.values()]
    return [config.get(name) for name in unique(only)]


def _session_body(config: Config, name: str, requirements: list[str],
                  project: ProjectInstall, gate: bool | None, *, session_name: str,
                  github: bool | None = None) -> Callable[[nox.Session], None]:
    def body(session: nox.Session) -> None:
        install_requirements(session, requirements)
        install_the_project(session, project)
        execute(session, config, name, session.posargs, gate=gate, github=github,
                env_label=_python_label(session, session_name))

    return body


def _python_label(session: nox.Session, session_name: str) -> str | None:
    """The Python a session was parametrized over (``tests-3.12``: ``3.12``), else None.

    Its runs are then stored as ``NAME@3.12``: two interpreters' runs of one check are
    two histories (``ckdn diff``, ``merge``, the lock under ``nox -j``), as in tox.
    """
    if session.name == session_name:
        return None
    python = session.python
    return python if isinstance(python, str) and python else session.name


def _description(target: Check | Alias) -> str:
    """What ``nox -l`` shows after the arrow: the configured description, else what it is."""
    if target.description:
        return target.description
    if isinstance(target, Alias):
        return f"ckdn alias of {', '.join(target.members)}"
    return f"ckdn check, parser {target.parser}"


def _named(func: Callable[..., Any], name: str, doc: str) -> None:
    """nox lists a session's docstring and names tracebacks after ``__name__``."""
    func.__name__ = func.__qualname__ = name
    func.__doc__ = doc


def _register_refusal(nox_module: Any, message: str, tags: list[str],
                      options: dict[str, Any]) -> str:
    """Register the failing ``ckdn`` session once, however many ``sessions()`` calls refuse.

    A noxfile that calls ``sessions()`` per Python or per group read the same broken file
    each time: it logged the error each time, and nox warned that ``ckdn`` was redefined
    (a future nox makes that an error, breaking the noxfile's own sessions).
    """
    ours = _REFUSALS.get(BROKEN_CONFIG_SESSION)
    existing = registered().get(BROKEN_CONFIG_SESSION)
    if ours is not None and getattr(existing, "func", None) is ours[0]:
        if message not in ours[1]:
            ours[1].append(message)
            _logger().error(f"ckdn: {message}")
        return BROKEN_CONFIG_SESSION

    def body(session: nox.Session) -> None:
        session.error(f"ckdn: {message}")

    _REFUSALS[BROKEN_CONFIG_SESSION] = (body, [message])
    _logger().error(f"ckdn: {message}")
    _named(body, BROKEN_CONFIG_SESSION, f"ckdn.toml was refused: {message}")
    # No virtualenv: there is nothing to install and nothing will run.
    nox_module.session(name=BROKEN_CONFIG_SESSION, tags=[_TAG, *tags],
                       **{**options, "python": False, "venv_backend": "none"})(body)
    return BROKEN_CONFIG_SESSION


def _logger() -> Any:
    return logger
