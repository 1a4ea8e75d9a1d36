"""Running a check or alias from inside a nox session, and turning the outcome into nox's terms.

ckdn decides everything (the run dir, the lock, the status); this module only
hands it the session's context and reports back through nox's own channels:
``session.log`` for the digest, nox's ``CommandFailed`` to fail the session
when a check is red (nox reports it *failed*, as for a command that exited
nonzero), ``session.error`` when ckdn refused to run anything (nox reports it
*aborted*), and ``KeyboardInterrupt`` when the check was stopped by Ctrl-C, so
nox stops too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from nox.command import CommandFailed
from nox.logger import logger

from ckdn.app import (
    HOST_SEPARATOR,
    PASS,
    Config,
    change_requested,
    encode,
    gate_requested,
    green,
    load_config,
)
from ckdn.app import run as run_target
from ckdn.app.host import github_reporting, report_to_github
from ckdn.app.queries import headline, red_members, render, requirements
from ckdn.errors import CkdnError
from nox_ckdn._session import base_env, install_requirements, parametrized_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    import nox

    from ckdn.app.types import Document

__all__ = ["ConfigPath", "execute", "install", "run"]

#: A path to ``ckdn.toml`` as ``ckdn --config`` takes it (relative to the project dir).
ConfigPath = str | os.PathLike[str] | None


def run(session: nox.Session, name: str, *, args: Sequence[str] | None = None,
        fail: bool = True, config: ConfigPath = None, gate: bool | None = None,
        github: bool | None = None) -> Document:
    """Run the check or alias ``name`` through ckdn with this session's environment.

    ``args`` (default: ``session.posargs``) are the check's extra arguments.
    Returns the digest (``ckdn.digest/2``) or, for an alias, the aggregate
    (``ckdn.aggregate/1``). A non-green status fails the session unless
    ``fail=False``; a refusal (config error, lock held, unknown name) always
    fails it, since there is no digest to return. ``gate`` (default: ``$CKDN_GATE``)
    judges the check by its baseline gate instead, as ``ckdn run --gate`` does.
    ``github`` (default: on in a GitHub Actions job unless ``CKDN_GITHUB=0``) writes the
    run's annotations and step summary there (docs/ci.md). A parametrized session stores
    its runs as ``NAME@LABEL`` (``tests@3.12,django=5``): one history per parametrization.
    """
    loaded = load(session, config)
    extra = list(session.posargs if args is None else args)
    return execute(session, loaded, name, extra, fail=fail, gate=gate, github=github,
                   env_label=parametrized_label(session))


def install(session: nox.Session, *names: str, config: ConfigPath = None) -> list[str]:
    """Install the ``requires`` of these checks or aliases into the session; returns them.

    Each requirement once, in order; nothing is installed without a virtualenv.
    """
    loaded = load(session, config)
    try:
        wanted = requirements(loaded, names)
    except CkdnError as exc:
        session.error(f"ckdn: {exc.message}")
    install_requirements(session, wanted)
    return wanted


def load(session: nox.Session, config: ConfigPath) -> Config:
    """The config for the session's current directory; a refusal fails the session in one line."""
    try:
        return load_config(Path.cwd(), None if config is None else os.fspath(config))
    except CkdnError as exc:
        session.error(f"ckdn: {exc.message}")


def execute(session: nox.Session, config: Config, name: str, extra_args: Sequence[str], *,
            fail: bool = True, gate: bool | None = None,
            github: bool | None = None, env_label: str | None = None) -> Document:
    """Hand the session's context to ckdn and report the outcome the nox way.

    ``env_label`` (a Python version) stores the runs as ``NAME@LABEL``, as tox names its envs'.
    """
    change = change_requested()  # CKDN_DIFF_BASE: judged by the diff-scoped gate
    by_gate = (gate_requested() if gate is None else gate) or change is not None
    if by_gate and config.run.baseline is None and change is None:
        session.error("ckdn: judging by the gate (gate=True or CKDN_GATE) needs a baseline: "
                      "set baseline under [run] in ckdn.toml")

    try:
        outcome = run_target(config, name, extra_args=extra_args, env=base_env(session),
                             run_name=_labelled(env_label), host_bins=session.bin_paths,
                             change=change, by_gate=by_gate)
    except CkdnError as exc:
        session.error(f"ckdn: {exc.message}")
    doc = outcome.document
    if github_reporting(choice=github):
        report_to_github(config, doc)
    judged_green = green(doc, gate=True) if by_gate else outcome.status == PASS
    if outcome.status == PASS and judged_green:  # a red gate fails a green run too
        session.log(_compact(doc))
        return doc
    if judged_green:
        _report(session, config, doc)
        session.log(f"ckdn: {name} is {outcome.status}, and its "
                    f"{'diff-scoped' if change is not None else 'baseline'} gate passes")
        return doc
    interrupted = _report(session, config, doc)
    if interrupted:
        raise KeyboardInterrupt
    if fail:
        _fail(f"ckdn: {headline(doc)}", int(doc["rc"] or 1))  # rc null: an import
    return doc


def _labelled(label: str | None) -> Callable[[str], str]:
    """The name a check or alias is stored under: ``NAME@LABEL`` with a label, else its own."""
    if label is None:
        return str
    return lambda name: f"{name}{HOST_SEPARATOR}{label}"


def _fail(message: str, rc: int) -> NoReturn:
    """End the session as *failed*, as a command that exited nonzero does.

    ``session.error`` would report it *aborted*, which nox reserves for a
    session that gave up; a red check is a check that ran and failed. nox logs
    no reason for a failed session, so the line is logged first.
    """
    logger.error(message)
    raise CommandFailed(message, return_code=rc)


def _report(session: nox.Session, config: Config, doc: Document) -> bool:
    """Log the rendered document and, for an alias, each red member's digest.

    The aggregate only routes; the member digests are what a reader acts on,
    so they are printed right here rather than left for ``ckdn show``.
    Returns whether a run was interrupted (Ctrl-C reached ckdn, not nox).
    """
    what = f"digest of {doc['check']}" if "check" in doc else f"aggregate of {doc['alias']}"
    session.log(f"ckdn: {what} ({doc['status']}):\n{render(doc)}")
    interrupted = bool(doc.get("interrupted"))
    for run_dir, member in red_members(config, doc):
        if member is None:
            session.warn(f"ckdn: no readable digest in {run_dir}")
            continue
        session.log(f"ckdn: digest of {member['check']} ({member['status']}):\n"
                    f"{render(member)}")
        interrupted = interrupted or bool(member.get("interrupted"))
    return interrupted


def _compact(doc: Document) -> str:
    return encode(doc).decode("utf-8")
