"""One env's life as the plugin follows it: before its commands, after them, at teardown."""

# Before the commands (deps and package installed): the env's ``ckdn_checks`` run,
# then, in observe mode, the env's run dir is taken. After the commands: the observed
# run is sealed; an env that tox failed by its own commands is noted, so the tox run's
# aggregate is never green over it (Session.finish). At teardown, whatever the env was
# to record but never did (its setup failed, tox skipped it, fail-fast cancelled it)
# goes into the aggregate as ``skipped``: a check that never ran is never green.

from __future__ import annotations

from typing import TYPE_CHECKING

from tox.tox_env.runner import RunToxEnv

from ckdn.app import SKIPPED
from ckdn.app.host import Member
from tox_ckdn import _checks, _observe

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tox.execute import Outcome as ToxOutcome
    from tox.tox_env.api import ToxEnv

    from tox_ckdn._session import Session

__all__ = ["after_commands", "before_commands", "teardown"]


def before_commands(session: Session, tox_env: ToxEnv) -> None:
    if not session.active:
        return
    _checks.run_checks(session, tox_env)
    if session.observe:
        seen = _observe.begin(session, tox_env)
        if seen is not None:
            session.watch(tox_env.name, seen)


def after_commands(session: Session, tox_env: ToxEnv, exit_code: int,
                   outcomes: Sequence[ToxOutcome]) -> None:
    seen = session.unwatch(tox_env.name)
    if seen is not None:
        _observe.seal(session, seen, tox_env, exit_code, outcomes)
    elif exit_code != 0 and session.active:
        session.failed(tox_env.name, exit_code, outcomes)


def teardown(session: Session, tox_env: ToxEnv) -> None:
    if not isinstance(tox_env, RunToxEnv) or not session.active:
        return
    env = tox_env.name
    seen = session.unwatch(env)
    if seen is not None:  # commands never reported back: leave the run unfinished, unlocked
        seen.run.release()
    recorded = session.recorded(env)
    missing = [name for name in _expected(session, tox_env) if name not in recorded]
    if missing:
        session.record(env, [Member(check=name, status=SKIPPED) for name in missing], ran=False)


def _expected(session: Session, tox_env: ToxEnv) -> list[str]:
    """Run names the env would have recorded; unreadable settings expect nothing.

    A setting tox cannot convert has already failed the env with tox's message;
    teardown must not raise on top of that (tox would lose the other envs).
    """
    try:
        names = list(tox_env.conf[_checks.KEY])
        observed = (session.observe and session.loaded() is not None
                    and _observe.has_commands(tox_env))
    except (TypeError, ValueError):
        return []
    expected = _checks.planned(session.loaded(), names, tox_env.name)
    if observed:
        expected.append(_observe.run_name(tox_env.name))
    return expected
