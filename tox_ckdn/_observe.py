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

from typing import TYPE_CHECKING

from tox.tox_env.errors import Fail

from ckdn.app.host import begin_host_run
from ckdn.errors import CkdnError
from tox_ckdn._report import members_of, show
from tox_ckdn._session import OBSERVED_PREFIX, Observation, Session, write_outcomes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tox.execute import Outcome as ToxOutcome
    from tox.tox_env.api import ToxEnv

    from ckdn.app import Outcome

__all__ = ["PREFIX", "begin", "has_commands", "run_name", "seal"]

#: Observed runs are named ``tox-<env>``.
PREFIX = OBSERVED_PREFIX
_COMMAND_KEYS = ("commands_pre", "commands", "commands_post")


def run_name(env: str) -> str:
    return f"{PREFIX}{env}"


def has_commands(tox_env: ToxEnv) -> bool:
    return any(tox_env.conf[key] for key in _COMMAND_KEYS)


def begin(session: Session, tox_env: ToxEnv) -> Observation | None:
    """Take the env's run dir and lock before its commands run; None when it has none."""
    config = session.loaded()
    if config is None or not has_commands(tox_env):
        return None  # a ckdn.toml that did not load: the env runs unobserved (said once)
    try:
        run = begin_host_run(config, run_name(tox_env.name))
    except CkdnError as exc:
        raise Fail(f"ckdn: {exc.message}") from None
    return Observation(config, run)


def seal(session: Session, seen: Observation, tox_env: ToxEnv, exit_code: int,
         outcomes: Sequence[ToxOutcome]) -> Outcome:
    """Write ``full.log`` from tox's outcomes and seal the run as ``generic`` would."""
    config, run = seen.config, seen.run
    try:
        write_outcomes(run.open_log(), outcomes)
        argv = ["tox", *(session.state.args if session.state is not None else ())]
        outcome = run.seal(argv=argv, rc=exit_code, duration=sum(o.elapsed for o in outcomes),
                           parser="generic")
    except CkdnError as exc:
        raise Fail(f"ckdn: {exc.message}") from None
    except OSError as exc:
        raise Fail(f"ckdn: cannot write {run.log_path}: {exc.strerror or exc}") from None
    finally:
        run.release()
    session.record(tox_env.name, members_of(outcome))
    show(tox_env, config, outcome.document)
    return outcome
