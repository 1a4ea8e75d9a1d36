"""The ``tox`` entry point: hook functions only; the work lives in private modules.

Installing ckdn makes tox load this plugin; it stays inert (no digest, no
aggregate) unless an env runs ckdn checks or observe mode is on:

* env key ``ckdn_checks = ["lint", "mypy"]``: those checks run through ckdn
  inside the env after its deps and package are installed; their ``requires``
  join its ``deps``;
* zero config: every check and alias of ``ckdn.toml`` that tox's config does
  not define is a tox env of the same name (``tox -e ruff``);
* ``tox --ckdn`` or core key ``ckdn_observe = true``: every env's own commands
  are recorded as a ``generic`` digest named ``tox-<env>``;
* at the end of a run that produced a digest, one ``ckdn.aggregate/1`` named
  ``tox`` over every env is printed and stored.

See docs/tox.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tox.plugin import impl

from tox_ckdn import _checks, _env, _session

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tox.config.cli.parser import ToxParser
    from tox.config.sets import ConfigSet, EnvConfigSet
    from tox.execute import Outcome
    from tox.session.state import State
    from tox.tox_env.api import ToxEnv

__all__ = [
    "tox_add_core_config",
    "tox_add_env_config",
    "tox_add_option",
    "tox_after_run_commands",
    "tox_before_run_commands",
    "tox_env_teardown",
    "tox_extend_envs",
]


@impl(trylast=True)
def tox_add_option(parser: ToxParser) -> None:
    """Start the invocation's session; trylast so tox's own commands exist to be wrapped."""
    _session.start()
    parser.add_argument(
        "--ckdn", action="store_true", dest="ckdn_observe", default=False,
        help="ckdn observe mode: record every env's commands as a ckdn digest named tox-<env>")
    _session.wrap_handlers(parser)


@impl
def tox_extend_envs() -> Iterable[str]:
    return _session.ZeroConfigEnvs()


@impl
def tox_add_core_config(core_conf: ConfigSet, state: State) -> None:
    _session.current().configure(core_conf, state)


@impl
def tox_add_env_config(env_conf: EnvConfigSet, state: State) -> None:
    _checks.add_config(env_conf, _session.current())


@impl
def tox_before_run_commands(tox_env: ToxEnv) -> None:
    _env.before_commands(_session.current(), tox_env)


@impl
def tox_after_run_commands(tox_env: ToxEnv, exit_code: int, outcomes: list[Outcome]) -> None:
    _env.after_commands(_session.current(), tox_env, exit_code, outcomes)


@impl
def tox_env_teardown(tox_env: ToxEnv) -> None:
    _env.teardown(_session.current(), tox_env)
