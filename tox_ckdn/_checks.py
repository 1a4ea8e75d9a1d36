"""An env's ``ckdn_checks``: their ``requires`` join its deps, and they run through ckdn.

They run when tox has installed the env's deps and package and before its own
commands, with the env's environment as tox gives it to commands (its ``bin``
first on ``PATH``, ``pass_env``, ``set_env``). ckdn does the running, the lock,
the parsing and the status; this module hands it the env's context and turns a
status that is not ``pass`` into tox's own :class:`~tox.tox_env.errors.Fail`.

Run names. A check keeps its name when the env is named after it (``tox -e
ruff``); anywhere else its runs are named ``<check>@<env>``. Two envs of one
``tox p`` (say ``3.12`` and ``3.13``, both running ``pytest``) then take
different locks and run dirs instead of one refusing the other, and the
aggregate says which env each digest came from. ``@`` is not allowed in a
ckdn.toml name, so a run name can never be taken for another check's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tox.config.of_type import ConfigDynamicDefinition
from tox.tox_env.errors import Fail
from tox.tox_env.python.pip.req_file import PythonDeps

from ckdn.app import HOST_SEPARATOR, Alias, ChangeRequest, change_requested, green, run
from ckdn.app.queries import headline
from ckdn.app.queries import requirements as requirements_of
from ckdn.errors import CkdnError
from tox_ckdn._interrupt import stop_on_interrupt
from tox_ckdn._report import members_of, show

if TYPE_CHECKING:
    from tox.config.sets import EnvConfigSet
    from tox.tox_env.api import ToxEnv

    from ckdn.app import Check, Config, Outcome
    from ckdn.app.host import StopRequest
    from tox_ckdn._session import Session

__all__ = ["KEY", "add_config", "add_requires", "planned", "run_checks", "run_name"]

#: The env key naming the checks and aliases to run.
KEY = "ckdn_checks"

_LOGGER = logging.getLogger(__name__)


def run_name(name: str, env: str) -> str:
    """The name a check or alias runs under in ``env`` (see the module docstring)."""
    return name if name == env else f"{name}{HOST_SEPARATOR}{env}"


def add_config(env_conf: EnvConfigSet, session: Session) -> None:
    env_conf.add_config(
        keys=[KEY], of_type=list[str], default=[],
        desc="ckdn checks and aliases (from ckdn.toml) to run in this env after its deps and "
             "package are installed; their requires are added to deps")
    add_requires(env_conf, session)


def add_requires(env_conf: EnvConfigSet, session: Session) -> None:
    """Append the ``requires`` of the env's checks to its ``deps`` when tox reads them.

    ``deps`` is registered by tox's Python run envs before plugins see the env,
    so the plugin extends the loaded value through the definition's
    ``post_process``, after whatever tox (or another plugin) does to it.
    """
    for definition in env_conf.get_configs():
        if "deps" in definition.keys and isinstance(definition, ConfigDynamicDefinition):
            previous = definition.post_process

            def with_requires(value: object, previous: object = previous) -> object:
                if callable(previous):
                    value = previous(value)
                return _extended(value, env_conf, session)

            definition.post_process = with_requires
            return


def _extended(deps: object, env_conf: EnvConfigSet, session: Session) -> object:
    names = env_conf[KEY]
    if not names:
        return deps
    if not isinstance(deps, PythonDeps) or session.state is None:
        return deps
    have = deps.lines()
    wanted = requirements(session.config(), names, have=have)
    missing = [req for req in wanted if req not in have]
    if not missing:
        return deps
    added = PythonDeps("\n".join(missing), session.state.conf.core["toxinidir"])
    return deps + added if have else added


def requirements(config: Config, names: list[str], *, have: list[str]) -> list[str]:
    """The ``requires`` of these checks and aliases' members, in order, each once, and
    this checkdown for a ``--ckdn-digest`` check unless ``have`` (the deps) names it."""
    try:
        return requirements_of(config, names, have=have)
    except CkdnError as exc:
        raise Fail(f"ckdn: {KEY}: {exc.message}") from None


def run_checks(session: Session, tox_env: ToxEnv) -> None:
    """Run the env's ``ckdn_checks`` in order; any that is not ``pass`` fails the env.

    Every entry runs (so one CI job reports every red check); an alias stops at
    its first red member when its own ``fail_fast`` says so.
    """
    names = list(tox_env.conf[KEY])
    if not names:
        return
    config = session.config()
    env = tox_env.name
    change = change_requested()  # CKDN_DIFF_BASE: judged by the diff-scoped gate
    by_gate = session.gate or change is not None
    if session.gate and config.run.baseline is None and change is None:
        raise Fail(f"ckdn: tox env {env!r}: judging by the gate (ckdn_gate or CKDN_GATE) needs "
                   "a baseline: set baseline under [run] in ckdn.toml")
    targets = [_target(config, name) for name in names]
    extra = session.posargs()
    if extra:
        _refuse_posargs(env, names, targets, extra)
    base = dict(tox_env.environment_variables)
    bins = _bin_dirs(tox_env)
    red = []
    with stop_on_interrupt(tox_env) as stop:
        for target in targets:
            label = run_name(target.name, env)
            _LOGGER.warning("ckdn run %s%s", target.name,
                            "" if label == target.name else f" (as {label})")
            outcome = _run(config, target, env, extra, base, stop=stop, bins=bins,
                           change=change, by_gate=by_gate)
            doc = outcome.document
            session.record(env, members_of(outcome),
                           gate=(label, doc.get("gate")) if by_gate else None)
            show(tox_env, config, outcome.document)
            if not green(outcome.document, gate=by_gate):
                red.append(headline(outcome.document))
            if stop.requested:
                break  # tox was interrupted: the env's remaining checks do not start
    if red:
        raise Fail("ckdn: " + "; ".join(red))


def planned(config: Config | None, names: list[str], env: str) -> list[str]:
    """The run names the env's ``ckdn_checks`` would record (an alias's members, flattened)."""
    out: list[str] = []
    for name in names:
        alias = None if config is None else config.aliases.get(name)
        members = alias.members if alias is not None else (name,)
        out.extend(run_name(member, env) for member in members)
    return out


def _bin_dirs(tox_env: ToxEnv) -> list[str] | None:
    """The env's own bin directory (tox's ``env_bin_dir``); None for an env without one."""
    try:
        return [str(tox_env.conf["env_bin_dir"])]
    except KeyError:
        return None


def _run(config: Config, target: Check | Alias, env: str, extra: tuple[str, ...],
         base: dict[str, str], *, stop: StopRequest, bins: list[str] | None,
         change: ChangeRequest | None = None, by_gate: bool = False) -> Outcome:
    try:
        return run(config, target.name, extra_args=extra, env=base, stop=stop,
                   run_name=lambda name: run_name(name, env), host_bins=bins, change=change,
                   by_gate=by_gate)
    except CkdnError as exc:
        raise Fail(f"ckdn: {exc.message}") from None


def _target(config: Config, name: str) -> Check | Alias:
    try:
        return config.get(name)
    except CkdnError as exc:
        raise Fail(f"ckdn: {KEY}: {exc.message}") from None


def _refuse_posargs(env: str, names: list[str], targets: list[Check | Alias],
                    extra: tuple[str, ...]) -> None:
    """Extra arguments go to one atomic check, as ``ckdn run`` takes them (never to an alias)."""
    first = targets[0]
    example = first.members[0] if isinstance(first, Alias) else first.name
    hint = f"e.g. `tox -e {example} -- {' '.join(extra)}`"
    if len(targets) > 1:
        raise Fail(f"ckdn: tox env {env!r} runs {', '.join(names)}: positional arguments"
                   f" (after --) go to exactly one check; run that check's own env, {hint}")
    if isinstance(first, Alias):
        raise Fail(f"ckdn: {first.name!r} is an alias: positional arguments (after --) are not"
                   f" accepted for an alias; pass them to one of its checks"
                   f" ({', '.join(first.members)}), {hint}")
