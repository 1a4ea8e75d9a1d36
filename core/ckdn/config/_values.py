"""The values a validated ``ckdn.toml`` becomes: frozen, and safe to hand to any room."""

from __future__ import annotations

from types import MappingProxyType

from ckdn._lite.record import Record, record
from ckdn.errors import UsageError, suggest
from ckdn.redact import DEFAULT as DEFAULT_REDACT
from ckdn.redact import RedactSettings
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# ``Config.cwd`` and ``RunSettings.runs_dir`` are absolute; a check's ``argv``
# keeps ``{run_dir}`` as written (the app substitutes it per run); ``env`` and
# ``options`` are read-only mappings.

CONFIG_NAME = "ckdn.toml"
CONFIG_ENV = "CKDN_CONFIG"
#: Between a check's name and a host's env in the name of a run the host made (tox's
#: ``pytest@py312``); never part of a check's name (``_NAME_CHARS``).
HOST_SEPARATOR = "@"

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@record
class RunSettings(Record):
    """The ``[run]`` table; ``runs_dir`` and ``baseline`` are absolute, taken from the
    invocation cwd (``baseline`` None: no baseline gate).

    The guard rails (docs/security.md): ``command_policy`` (``workspace``, ``allowlist``
    with its ``allowlist`` prefixes, ``off``); ``require_lock`` (a check that changed
    since ``ckdn lock-config`` is refused); ``private`` (run dirs 0700, files 0600);
    ``max_age_days`` and ``max_bytes`` (retention beyond ``keep``; None: no limit);
    ``inherit_env`` (False: the child gets a minimal environment); ``redact`` is
    ``[run].redact``; ``required`` the checks and aliases ``ckdn status`` answers for
    by default (empty: every atomic check); ``gate_requires_native``: an imported run's
    gate always fails (a foreign pass may inform, never satisfy a gate); ``diff_scope``
    the policy of a diff-scoped gate (docs/diff-gate.md).
    """

    __slots__ = ("allowlist", "baseline", "command_policy", "diff_scope", "gate_requires_native",
                 "inherit_env", "keep", "log_tail_lines", "max_age_days", "max_bytes",
                 "max_snippet_lines", "private", "redact", "require_lock", "required",
                 "runs_dir", "top")
    runs_dir: str
    keep: int
    top: int
    max_snippet_lines: int
    log_tail_lines: int
    baseline: str | None
    command_policy: str
    allowlist: tuple[str, ...]
    require_lock: bool
    private: bool
    max_age_days: float | None
    max_bytes: int | None
    inherit_env: bool
    redact: RedactSettings
    required: tuple[str, ...]
    gate_requires_native: bool
    diff_scope: str

    def __init__(self, runs_dir: str, keep: int = 20, top: int = 20,
                 max_snippet_lines: int = 12, log_tail_lines: int = 40, *,
                 baseline: str | None = None, command_policy: str = "workspace",
                 allowlist: tuple[str, ...] = (), require_lock: bool = False,
                 private: bool = True, max_age_days: float | None = None,
                 max_bytes: int | None = None, inherit_env: bool = True,
                 redact: RedactSettings = DEFAULT_REDACT, required: tuple[str, ...] = (),
                 gate_requires_native: bool = False, diff_scope: str = "touched") -> None:
        self._assign(runs_dir, keep, top, max_snippet_lines, log_tail_lines, baseline,
                     command_policy, allowlist, require_lock, private, max_age_days, max_bytes,
                     inherit_env, redact, required, gate_requires_native, diff_scope)


@record
class Check(Record):
    """An atomic check: one command, run without a shell, read by one parser.

    ``argv`` keeps ``{run_dir}`` as written: the app substitutes it per run.
    ``options`` are every key that is not a check key, already accepted by the
    parser. ``requires`` is information for installers; running ignores it.
    ``env`` and ``options`` default to an empty read-only mapping. ``env_allow`` (None:
    not set) names the variables of ckdn's environment the child keeps beside the minimal
    set; setting it gives the check a minimal environment whatever ``[run].inherit_env`` says.
    ``reads_files`` False: the check reads no files of the tree (a probe, a service's health),
    so its runs record no source state and ``ckdn status`` never calls them stale.
    """

    __slots__ = ("argv", "command", "description", "env", "env_allow", "imported", "name",
                 "options", "parser", "reads_files", "requires", "timeout", "top")
    name: str
    command: str | tuple[str, ...]
    argv: tuple[str, ...]
    parser: str
    timeout: float | None
    env: Mapping[str, str]
    top: int | None
    options: Mapping[str, Any]
    description: str | None
    requires: tuple[str, ...]
    env_allow: tuple[str, ...] | None
    reads_files: bool
    imported: ImportSource | None

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, name: str, command: str | tuple[str, ...], argv: tuple[str, ...], parser: str,
            timeout: float | None = None, env: Mapping[str, str] = _EMPTY,
            top: int | None = None, options: Mapping[str, Any] = _EMPTY,
            description: str | None = None, requires: tuple[str, ...] = (),
            env_allow: tuple[str, ...] | None = None, reads_files: bool = True,
            imported: ImportSource | None = None) -> None:
        self._assign(name, command, argv, parser, timeout, env, top, options, description,
                     requires, env_allow, reads_files, imported)


@record
class ImportSource(Record):
    """What an imported check reads instead of running a command: ``import = {format =
    "junit", path = "..."}``; ``path`` absolute, taken from the project's directory."""

    __slots__ = ("format", "path")
    format: str
    path: str

    def __init__(self, format: str, path: str) -> None:
        self._assign(format, path)


@record
class Alias(Record):
    """A named, ordered group of atomic checks (never of other aliases)."""

    __slots__ = ("description", "fail_fast", "members", "name")
    name: str
    members: tuple[str, ...]
    fail_fast: bool
    description: str | None

    def __init__(self, name: str, members: tuple[str, ...], fail_fast: bool = True,
                 description: str | None = None) -> None:
        self._assign(name, members, fail_fast, description)


@record
class Config(Record):
    """A validated ``ckdn.toml`` (``path`` None: no file, defaults in use)."""

    __slots__ = ("aliases", "checks", "cwd", "path", "run")
    path: str | None
    cwd: str
    run: RunSettings
    checks: Mapping[str, Check]
    aliases: Mapping[str, Alias]

    def __init__(self, path: str | None, cwd: str, run: RunSettings,
                 checks: Mapping[str, Check] = _EMPTY,
                 aliases: Mapping[str, Alias] = _EMPTY) -> None:
        self._assign(path, cwd, run, checks, aliases)

    def check_of_run(self, run_name: str) -> Check | None:
        """The atomic check a run named ``run_name`` is a run of: its own name, or the
        name a host gave it in an env (``NAME@ENV``: tox; check names never hold ``@``)."""
        found = self.checks.get(run_name)
        if found is None:
            base, sep, _env = run_name.partition(HOST_SEPARATOR)
            found = self.checks.get(base) if sep else None
        return found

    def get(self, name: str) -> Check | Alias:
        """The atomic check or alias called ``name``; UsageError naming the choices."""
        found = self.checks.get(name) or self.aliases.get(name)
        if found is not None:
            return found
        names = [*self.checks, *self.aliases]
        if not names:
            where = (f"no {CONFIG_NAME} in {self.cwd}" if self.path is None
                     else f"{shown_path(self.path, self.cwd)} defines no checks")
            raise UsageError(
                f"unknown check {name!r}; {where}; run `ckdn init` or pass --config")
        hint = suggest(name, names)
        raise UsageError(f"unknown check {name!r}{hint} (configured: {', '.join(names)})")

