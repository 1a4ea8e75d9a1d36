"""One tox invocation as ckdn sees it: its ckdn config, its zero-config envs, its digests.

tox calls plugin hooks as module functions and runs envs in worker threads (one
worker for ``tox run``, several for ``tox p``), so the per-invocation state lives
in one :class:`Session` reached through :func:`current`. ``tox_add_option`` is
the first hook of every invocation and starts a fresh one, so invocations in
one process (tox's own test harness) never see each other's state.

Envs record their aggregate members under a lock; the end-of-run aggregate
orders them as tox lists its envs, not by which parallel env finished first.
tox has no end-of-run hook: the aggregate is written by a wrapper around the
command handlers tox registers on its parser (:func:`wrap_handlers`), which
runs in the main thread once tox has printed its own report.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tox.config.loader.memory import MemoryLoader
from tox.tox_env.errors import Fail

from ckdn.app import PASS, SKIPPED, encode, gate_requested, load_config
from ckdn.app.host import (
    GITHUB_ENV,
    Member,
    begin_host_run,
    build_aggregate,
    gate_over,
    github_reporting,
    report_to_github,
    store_aggregate,
)
from ckdn.errors import CkdnError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from tox.config.cli.parser import ToxParser
    from tox.config.sets import ConfigSet
    from tox.execute import Outcome as ToxOutcome
    from tox.session.state import State

    from ckdn.app import Config
    from ckdn.app.host import HostLog, HostRun

__all__ = ["AGGREGATE", "OBSERVED_PREFIX", "Observation", "Session", "ZeroConfigEnvs", "current",
           "start", "wrap_handlers", "write_outcomes"]

#: The alias name of the aggregate over every env of one tox run.
AGGREGATE = "tox"
#: Runs of what tox ran itself (observe mode, an env tox failed) are named ``tox-<env>``.
OBSERVED_PREFIX = "tox-"

_LOGGER = logging.getLogger(__name__)
#: tox commands that run one given command in an env: no checks, nothing observed.
_AD_HOC_COMMANDS = ("exec", "e")


class Observation:
    """An observed env between ``tox_before_run_commands`` and ``tox_after_run_commands``."""

    __slots__ = ("config", "run")

    def __init__(self, config: Config, run: HostRun) -> None:
        self.config = config
        self.run = run


class Session:
    """What one tox invocation needs across hooks and threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state: State | None = None
        self.root = Path.cwd()
        self.observe = False
        self.gate = False  # judge ckdn_checks by their baseline gate (ckdn_gate, CKDN_GATE)
        self.github = True  # report to GitHub in a GitHub job (ckdn_github, CKDN_GITHUB)
        #: False under ``tox exec``: it runs one ad hoc command in an env, nothing else.
        self.active = True
        self._config: Config | None = None
        self._error: str | None = None
        #: Envs added from ckdn.toml, in config order: name -> tox description.
        self.zero_config: dict[str, str] = {}
        self._members: dict[str, list[Member]] = {}
        #: env -> (run name, its gate or None): what ckdn_checks ran, judged by the gate
        self._gates: dict[str, list[tuple[str, Any]]] = {}
        self._gated: set[str] = set()  # the aggregate members those gates account for
        self._watched: dict[str, Observation] = {}
        self._ran = False
        #: env -> (tox's exit code, its commands' outcomes): envs tox failed by themselves
        self._failed: dict[str, tuple[int, list[ToxOutcome]]] = {}

    # -- configuration -----------------------------------------------------------------------

    def configure(self, core: ConfigSet, state: State) -> None:
        """Add the core keys, load ckdn.toml once, and seed an env per check and alias."""
        core.add_config(
            keys=["ckdn_config"], of_type=str, default="",
            desc="ckdn.toml to read, relative to tox_root (default: $CKDN_CONFIG, else "
                 "ckdn.toml in tox_root)")
        core.add_config(
            keys=["ckdn_observe"], of_type=bool, default=False,
            desc="record every env's commands as a ckdn digest named tox-<env> (as --ckdn)")
        core.add_config(
            keys=["ckdn_github"], of_type=bool, default=True,
            desc="in a GitHub Actions job, annotate the findings of the checks tox ran and "
                 "add their step summary (also: CKDN_GITHUB=0 turns it off)")
        core.add_config(
            keys=["ckdn_gate"], of_type=bool, default=False,
            desc="judge ckdn_checks by their baseline gate, as ckdn run --gate (also: "
                 "CKDN_GATE=1)")
        self.state = state
        self.root = Path(core["tox_root"])
        self.active = getattr(state.conf.options, "command", None) not in _AD_HOC_COMMANDS
        self.observe = bool(getattr(state.conf.options, "ckdn_observe", False)
                            or core["ckdn_observe"])

        self.gate = bool(core["ckdn_gate"]) or gate_requested()

        self.github = bool(core["ckdn_github"]) and os.environ.get(GITHUB_ENV, "").strip() \
            .lower() not in ("0", "false", "no", "off")
        named = core["ckdn_config"]
        # tox.ini's own paths are relative to the tox root, wherever tox was started.
        self._load(os.path.join(self.root, os.path.expanduser(named)) if named else None)
        if self._config is None:
            # Observe mode needs the config only to know where evidence goes: without it
            # the envs run as tox runs them, unrecorded (it never changes an outcome).
            _LOGGER.warning("ckdn: %s; no tox env added from it%s", self._error,
                            ", and observe mode records nothing" if self.observe else "")
            return
        self._seed(state, self._config)

    def _load(self, explicit: str | None) -> None:
        try:
            self._config = load_config(self.root, explicit, required=False)
        except CkdnError as exc:
            self._error = exc.message

    def _seed(self, state: State, config: Config) -> None:
        """Define an env for every check and alias that tox's own config does not define.

        The seed comes before the config file's loaders, so it wins over what the
        env would inherit from ``env_run_base`` / ``[testenv]``: an inherited
        ``commands = ["pytest"]`` must not run in place of the check. Everything
        else (deps, packaging, pass_env, set_env) is inherited as usual.
        """
        defined = _defined_envs(state)
        for name, description in _targets(config):
            if name in defined:
                continue
            state.conf.memory_seed_loaders[name].append(MemoryLoader(
                ckdn_checks=[name], commands=[], commands_pre=[], commands_post=[],
                description=description))
            self.zero_config[name] = description

    def config(self) -> Config:
        """The ckdn config; a config that did not load fails the env in one line."""
        if self._config is None:
            raise Fail(f"ckdn: {self._error}")
        return self._config

    def loaded(self) -> Config | None:
        return self._config

    def posargs(self) -> tuple[str, ...]:
        """tox's positional arguments, with paths made relative to tox_root (the checks' cwd)."""
        if self.state is None:
            return ()
        return tuple(self.state.conf.pos_args(self.root) or ())

    # -- results -----------------------------------------------------------------------------

    def record(self, env: str, members: list[Member], *, ran: bool = True,
               gate: tuple[str, Any] | None = None) -> None:
        """Add aggregate members for ``env``; ``ran`` says a digest was written; ``gate``
        is the (name, gate) of a run judged by its gate."""
        with self._lock:
            self._members.setdefault(env, []).extend(members)
            self._ran = self._ran or ran
            if gate is not None:
                self._gates.setdefault(env, []).append(gate)
                self._gated.update(member.check for member in members)

    def failed(self, env: str, rc: int, outcomes: Sequence[ToxOutcome]) -> None:
        """Note an env tox failed by its own commands (sealed at the end if ckdn ran)."""
        with self._lock:
            self._failed[env] = (rc, list(outcomes))

    def members_of(self, env: str) -> list[Member]:
        with self._lock:
            return list(self._members.get(env, ()))

    def recorded(self, env: str) -> set[str]:
        """Run names already recorded for ``env``."""
        with self._lock:
            return {member.check for member in self._members.get(env, ())}

    def watch(self, env: str, seen: Observation) -> None:
        with self._lock:
            self._watched[env] = seen

    def unwatch(self, env: str) -> Observation | None:
        with self._lock:
            return self._watched.pop(env, None)

    def finish(self, host_rc: int | None = None) -> None:
        """Print and store one ``ckdn.aggregate/1`` over every env, if ckdn ran at all.

        A tox run that failed is never a green aggregate: each env tox failed by its own
        commands gets a run of its own, and a failure ckdn saw no env for one of tox's."""
        with self._lock:
            if not self._ran or self._config is None:
                return
            failed, self._failed = self._failed, {}
        for env, (rc, outcomes) in failed.items():
            with self._lock:
                env_gates = list(self._gates.get(env, ()))
            if self._green(self.members_of(env), env_gates):
                self.record(env, [_host_failure(self._config, self._argv(), env, rc, outcomes)])
        with self._lock:
            members = [member for env in self._env_order() for member in self._members[env]]
            gates = [gate for env in self._env_order() for gate in self._gates.get(env, ())]
        if host_rc and self._green(members, gates):
            members.append(_host_failure(self._config, self._argv(), AGGREGATE, host_rc, ()))

        aggregate = build_aggregate(alias=AGGREGATE, members=members,
                                    gate=self._gate(members, gates))
        try:
            store_aggregate(self._config, aggregate)
        except CkdnError as exc:
            sys.stderr.write(f"ckdn: {exc.message}\n")

        if github_reporting(choice=self.github):  # before the aggregate: that is the last line
            report_to_github(self._config, aggregate)
        sys.stdout.write(encode(aggregate).decode("utf-8") + "\n")
        sys.stdout.flush()

    def _green(self, members: list[Member], gates: list[tuple[str, Any]]) -> bool:
        """Whether what ckdn recorded reads green as tox judged it: every member passed, or,
        under ``ckdn_gate``, every gate passed and accounts for each member that did not."""
        if all(member.status == PASS for member in members):
            return True
        return (self.gate and bool(gates)
                and all(isinstance(gate, dict) and gate.get("status") == "pass"
                        for _name, gate in gates)
                and all(member.status == PASS or member.check in self._gated
                        for member in members))

    def _gate(self, members: list[Member],
              gates: list[tuple[str, Any]]) -> Any:
        """Under ``ckdn_gate``, the gate over every run judged by it, as an alias's is, so
        the last line agrees with tox's verdict; a red member no gate accounts for (an env
        tox failed by its own commands, an observed one) fails it, a skipped one leaves it
        ``unavailable``."""
        if not self.gate or not gates:
            return None
        policy = next((gate["policy"] for _name, gate in gates
                       if isinstance(gate, dict) and "policy" in gate), "no_new_findings")
        others: list[tuple[str, Any]] = []
        for member in members:
            if member.status == PASS or member.check in self._gated:
                continue
            if member.status == SKIPPED:
                others.append((member.check, None))
            else:
                others.append((member.check, {
                    "status": "fail", "policy": policy,
                    "reason": f"status {member.status}, not a check judged by its gate"}))
        return gate_over([*gates, *others])

    def _argv(self) -> list[str]:
        return ["tox", *(self.state.args if self.state is not None else ())]

    def _env_order(self) -> list[str]:
        """Recorded envs in the order tox lists them; any it does not list, after, by name."""
        listed: list[str] = []
        if self.state is not None:
            listed = [name for name in self.state.envs.iter(only_active=False)
                      if name in self._members]
        return [*listed, *sorted(set(self._members) - set(listed))]


def _host_failure(config: Config, argv: list[str], env: str, rc: int,
                  outcomes: Sequence[ToxOutcome]) -> Member:
    """A run of what tox failed outside any check: its commands' output as tox captured it,
    sealed with tox's exit code (``generic``), so the aggregate routes to evidence."""
    try:
        run = begin_host_run(config, f"{OBSERVED_PREFIX}{env}")
    except CkdnError as exc:  # its lock is held, the runs dir unwritable: still not green
        sys.stderr.write(f"ckdn: {exc.message}\n")
        return Member(check=f"{OBSERVED_PREFIX}{env}", status=SKIPPED)
    try:
        write_outcomes(run.open_log(), outcomes)
        if not outcomes:
            run.open_log().write(f"tox exited with {rc}; no env's commands failed\n")
        outcome = run.seal(argv=argv, rc=rc, duration=sum(o.elapsed for o in outcomes),
                           parser="generic")
    finally:
        run.release()
    doc = outcome.digest
    rc = doc["rc"] if doc["rc"] is not None else 1  # null only on an import, which tox never makes
    return Member(check=str(doc["check"]), status=str(doc["status"]), rc=int(rc),
                  run_dir=str(doc["run_dir"]))


def write_outcomes(log: HostLog, outcomes: Sequence[ToxOutcome]) -> None:
    """Write what tox captured of each command: ``$ command``, its stdout, its stderr, its code."""
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


def _defined_envs(state: State) -> set[str]:
    """Env names tox's config file has a section for (what tox's env selection reads too)."""
    names: set[str] = set()
    for section in state.conf.sections():
        if not getattr(section, "is_test_env", True):
            continue
        names.update(getattr(section, "names", [section.name]))
    return names


def _targets(config: Config) -> Iterator[tuple[str, str]]:
    """Every check and alias with the description ``tox list`` shows for its env."""
    for name, check in config.checks.items():
        yield name, f"ckdn check {name}" + (f": {check.description}" if check.description else "")
    for name, alias in config.aliases.items():
        members = ", ".join(alias.members)
        yield name, f"ckdn alias {name} ({members})" + (
            f": {alias.description}" if alias.description else "")


class ZeroConfigEnvs:
    """What ``tox_extend_envs`` returns: the env names ckdn.toml adds, read when tox reads them.

    tox calls ``tox_extend_envs`` before any configuration is loaded, so the names
    cannot be known then; tox iterates the result only when it selects envs,
    after ``tox_add_core_config`` has loaded ckdn.toml.
    """

    def __iter__(self) -> Iterator[str]:
        return iter(list(current().zero_config))


def wrap_handlers(parser: ToxParser) -> None:
    """Make every tox command write the end-of-run aggregate when it returns."""
    wrapped: dict[int, Callable[[State], int]] = {}
    for name, (sub_parser, handler) in list(parser.handlers.items()):
        if getattr(handler, "__ckdn_finishes__", False):
            continue
        if id(handler) not in wrapped:
            wrapped[id(handler)] = _finishing(handler)
        parser.handlers[name] = (sub_parser, wrapped[id(handler)])


def _finishing(handler: Callable[[State], int]) -> Callable[[State], int]:
    def run_then_aggregate(state: State) -> int:
        host_rc: int | None = 1  # an exception out of tox is a failed run
        try:
            host_rc = handler(state)
            return host_rc
        finally:
            current().finish(host_rc)

    run_then_aggregate.__doc__ = handler.__doc__
    run_then_aggregate.__ckdn_finishes__ = True  # type: ignore[attr-defined]
    return run_then_aggregate


_current = Session()


def start() -> Session:
    """A fresh session for a new tox invocation."""
    global _current  # noqa: PLW0603 - tox's hooks are module functions; this is their state
    _current = Session()
    return _current


def current() -> Session:
    return _current
