"""Observe mode: an env's own commands, as tox ran them, recorded as a ``generic`` digest.

For tox configs that name no ckdn checks: ``tox --ckdn`` (or ``ckdn_observe =
true``) leaves a run dir named ``tox-<env>`` for every env that has commands.
tox runs the commands exactly as it would anyway; this module only takes the
run dir (and its lock) before they start, and afterwards writes what tox saw of
each command into ``full.log`` and seals it with the ``generic`` parser's facts
and tox's exit code. So the digest is ``pass`` exactly when tox says the env
passed, and a red env's digest carries the tail of its output.

tox captures a command's stdout and stderr apart, so ``full.log`` holds, per
command, a ``$ <command>`` line, its stdout, its stderr and an ``[exit code N]``
line: not the interleaving a terminal showed. Output is written in bounded
chunks; tox itself already holds it in memory.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from tox.tox_env.errors import Fail

from tox_ckdn._report import members_of, show

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tox.execute import Outcome as ToxOutcome
    from tox.tox_env.api import ToxEnv

    from ckdn.app import Outcome
    from ckdn.config import Config
    from ckdn.store import RunDir, Store
    from tox_ckdn._session import Session

__all__ = ["PREFIX", "Observation", "begin", "has_commands", "run_name", "seal"]

#: Observed runs are named ``tox-<env>``.
PREFIX = "tox-"
#: Characters encoded and written at a time.
_CHUNK = 1 << 20
_COMMAND_KEYS = ("commands_pre", "commands", "commands_post")


def run_name(env: str) -> str:
    return f"{PREFIX}{env}"


def has_commands(tox_env: ToxEnv) -> bool:
    return any(tox_env.conf[key] for key in _COMMAND_KEYS)


class Observation:
    """An observed env between ``tox_before_run_commands`` and ``tox_after_run_commands``."""

    __slots__ = ("config", "run", "started_at", "store")

    def __init__(self, config: Config, store: Store, run: RunDir) -> None:
        self.config = config
        self.store = store
        self.run = run
        self.started_at = time.time()


def begin(session: Session, tox_env: ToxEnv) -> Observation | None:
    """Take the env's run dir and lock before its commands run; None when it has none."""
    from ckdn.app import store_for
    from ckdn.errors import CkdnError

    if not has_commands(tox_env):
        return None
    config = session.config()
    store = store_for(config)
    try:
        run = store.begin(run_name(tox_env.name))
    except CkdnError as exc:
        raise Fail(f"ckdn: {exc.message}") from None
    return Observation(config, store, run)


def seal(session: Session, seen: Observation, tox_env: ToxEnv, exit_code: int,
         outcomes: Sequence[ToxOutcome]) -> Outcome:
    """Write ``full.log`` from tox's outcomes and seal the run as ``generic`` would."""
    from ckdn.app import parse_safely
    from ckdn.app import seal as seal_run
    from ckdn.errors import CkdnError
    from ckdn.parsers import get_parser
    from ckdn.parsers.base import ParseContext
    from ckdn.reconcile import Exit

    config, run = seen.config, seen.run
    try:
        log_sha256, log_bytes = _write_log(Path(run.path, "full.log"), outcomes)
        name = run_name(tox_env.name)
        exit = Exit(rc=exit_code, duration=sum(o.elapsed for o in outcomes))
        ctx = ParseContext(check=name, run_dir=run.path, cwd=config.cwd, rc=exit_code,
                           options={}, top=config.run.top,
                           max_snippet_lines=config.run.max_snippet_lines)
        result = parse_safely(get_parser("generic"), ctx)
        argv = ["tox", *(session.state.args if session.state is not None else ())]
        outcome = seal_run(config, seen.store, run, check=name, parser="generic", argv=argv,
                           exit=exit, result=result, started_at=seen.started_at,
                           finished_at=time.time(), log_sha256=log_sha256,
                           log_bytes=log_bytes)
    except CkdnError as exc:
        raise Fail(f"ckdn: {exc.message}") from None
    except OSError as exc:
        where = Path(run.path, "full.log")
        raise Fail(f"ckdn: cannot write {where}: {exc.strerror or exc}") from None
    finally:
        run.release()
    session.record(tox_env.name, members_of(outcome))
    show(tox_env, config.cwd, outcome.document)
    return outcome


def _write_log(path: Path, outcomes: Sequence[ToxOutcome]) -> tuple[str, int]:
    """Write what tox captured of each command; returns the log's sha256 and size."""
    with open(path, "wb") as handle:
        log = _HashedLog(handle)
        for outcome in outcomes:
            log.write(f"$ {outcome.request.shell_cmd_redacted}\n")
            for stream in (outcome.out, outcome.err):
                if stream:
                    log.write(stream)
                    if not stream.endswith("\n"):
                        log.write("\n")
            if outcome.start_error is not None:
                log.write(f"[did not start: {outcome.start_error}]\n")
            else:
                log.write(f"[exit code {outcome.exit_code}]\n")
    return log.sha.hexdigest(), log.size


class _HashedLog:
    """Encodes text in bounded chunks, hashing and counting what it writes."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, text: str) -> None:
        for start in range(0, len(text), _CHUNK):
            data = text[start:start + _CHUNK].encode("utf-8", "backslashreplace")
            self.handle.write(data)
            self.sha.update(data)
            self.size += len(data)
