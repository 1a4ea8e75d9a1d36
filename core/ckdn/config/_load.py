"""Finding and reading ckdn.toml into frozen values, refusing every mistake at load."""

from __future__ import annotations

import os

from ckdn._lite import Record, read_plain, record, split_command
from ckdn.errors import ConfigError, UsageError, suggest
from ckdn.evidence_files import NotRegular, read_regular
from ckdn.parsers import get_parser
from ckdn.parsers.base import OptionError, option_names
from ckdn.redact import DEFAULT, RedactSettings
from ckdn.redact import DEFAULT as DEFAULT_REDACT
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any


# -- The values a validated ``ckdn.toml`` becomes: frozen, and safe to hand to any room.

# ``Config.cwd`` and ``RunSettings.runs_dir`` are absolute; a check's ``argv``
# keeps ``{run_dir}`` as written (the app substitutes it per run); ``env`` and
# ``options`` are read-only mappings.

CONFIG_NAME = "ckdn.toml"
CONFIG_ENV = "CKDN_CONFIG"
#: Between a check's name and a host's env in the name of a run the host made (tox's
#: ``pytest@py312``); never part of a check's name (``_NAME_CHARS``).
HOST_SEPARATOR = "@"

if TYPE_CHECKING:
    from types import MappingProxyType
else:  # types.MappingProxyType without importing types, a module of its own on the run path
    MappingProxyType = type(type.__dict__)
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



# -- Finding and reading ``ckdn.toml`` into frozen values, refusing every mistake at load.

# -- each table, validated in full, and how a mistake is worded: a mistake found halfway
# through an alias would leave an agent with half a verdict ----------------------------------

CHECK_KEYS = ("command", "parser", "timeout", "env", "top", "description", "requires",
              "env_allow", "reads_files")
ALIAS_KEYS = ("members", "fail_fast", "description")
IMPORT_CHECK_KEYS = ("import", "top", "description")
#: The formats ``ckdn import`` reads (:data:`ckdn.imports.FORMATS`, which a test holds
#: this to: config is loaded on every run and must not load the importers).
IMPORT_FORMATS = ("checkstyle", "cobertura", "codequality", "ctrf", "junit", "lcov", "rdjson",
                  "rdjsonl", "sarif", "tap")

#: The distribution-name part of a PEP 508 requirement, and what may follow it
#: (compiled by ``re``'s cache when a check first names ``requires``).
_REQUIREMENT = r"\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:[\[(<>=!~;@]|\Z)"

#: The words a POSIX shell reads as operators (or redirections) when they stand alone.
#: ckdn runs no shell, so in a string command they would reach the program as
#: arguments: ``pytest | tee log`` runs pytest with ``|``, ``tee`` and ``log``.
SHELL_OPERATORS = frozenset({"|", "||", "|&", "&", "&&", ";", ";;", "<", "<<", "<<<", ">", ">>",
                             ">|", "&>", "&>>", "2>", "2>>", "2>&1", "1>&2", ">&2"})

#: A timeout past a year is a unit mistake, and far larger values overflow the
#: OS timer APIs the runner waits with.
_TIMEOUT_MAX = 365 * 24 * 3600


class Tables:
    """Reads the tables of one file; every error names ``shown`` and the table."""

    def __init__(self, shown: str, cwd: str) -> None:
        self.shown = shown
        self.cwd = cwd

    def error(self, table: str | None, text: str) -> ConfigError:
        head = f"{self.shown}: [{table}] " if table else f"{self.shown}: "
        return ConfigError(head + text)

    def alias(self, where: str, name: str, table: dict[str, Any],
              raw_checks: dict[str, Any]) -> Alias:
        for key in table:
            if key in ALIAS_KEYS:
                continue
            if key == "command":
                raise self.error(where, "has both 'command' (atomic check) and 'members' "
                                        "(alias); keep one")
            if key in CHECK_KEYS:
                raise self.error(where, f"{key}: belongs to atomic checks; an alias takes only "
                                        f"{', '.join(ALIAS_KEYS)}")
            raise self.error(where, unknown("key", key, ALIAS_KEYS))
        members = table["members"]
        if (not isinstance(members, list) or not members
                or not all(isinstance(m, str) and m for m in members)):
            raise self.error(where, f"members: must be a non-empty array of check names, "
                                    f"not {show(members)}")
        seen: set[str] = set()
        for member in members:
            if member == name:
                raise self.error(where, f"members: {member!r} is this alias itself")
            if member in seen:
                raise self.error(where, f"members: {member!r} is listed twice")
            seen.add(member)
            target = raw_checks.get(member)
            if target is None:
                atomics = [n for n, t in raw_checks.items()
                           if isinstance(t, dict) and "members" not in t]
                raise self.error(where, f"members: unknown check {member!r}"
                                        + suggest(member, atomics))
            if isinstance(target, dict) and "members" in target:
                raise self.error(where, f"members: {member!r} is an alias; aliases do not "
                                        "nest, list its members instead")
        fail_fast = table.get("fail_fast", True)
        if not isinstance(fail_fast, bool):
            raise self.error(where, f"fail_fast: must be true or false, not {show(fail_fast)}")
        return Alias(name=name, members=tuple(members), fail_fast=fail_fast,
                     description=self.description(where, table))

    def atomic(self, where: str, name: str, table: dict[str, Any]) -> Check:
        if "import" in table:
            return self.imported(where, name, table)
        if "command" not in table:
            for key, value in table.items():
                if isinstance(value, dict) and ("command" in value or "members" in value):
                    dotted = toml_key(f"{name}.{key}")
                    raise self.error(where, f"{key}: is a table; a check name with a dot is "
                                            f"quoted: [check.{dotted}]")
                hint = suggest(key, ("command", "members"))
                if hint:
                    raise self.error(where, f"unknown key {key!r}{hint}")
            raise self.error(where, "needs 'command' (an atomic check) or 'members' (an alias)")
        command, argv = self.command(where, name, table["command"])
        parser_name = table.get("parser")
        if parser_name is None:
            for key in table:  # `parsr = "pytest"`: name the typo, not only the absence
                hint = suggest(key, ("parser",))
                if hint:
                    raise self.error(where, f"unknown key {key!r}{hint}")
            raise self.error(where, "parser: missing; every atomic check names a parser "
                                    "(parser = \"generic\" reads the exit code only)")
        if not isinstance(parser_name, str) or not parser_name:
            raise self.error(where, f"parser: must be a parser name, not {show(parser_name)}")
        timeout = table.get("timeout")
        if timeout is not None:
            timeout = self.timeout(where, timeout)
        top = table.get("top")
        if top is not None:
            top = self.integer(where, "top", top, 1)
        options = {k: v for k, v in table.items() if k not in CHECK_KEYS}
        self.options(where, parser_name, options)
        return Check(
            name=name, command=command, argv=argv, parser=parser_name, timeout=timeout,
            env=MappingProxyType(self.env(where, table.get("env", {}))), top=top,
            options=MappingProxyType(options), description=self.description(where, table),
            requires=self.requires(where, table.get("requires", [])),
            env_allow=self.env_allow(where, table.get("env_allow")),
            reads_files=self.reads_files(where, table.get("reads_files", True)),
        )

    def reads_files(self, where: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, f"reads_files: must be true or false (false: the check "
                                    f"reads no files, so no tree state is recorded), "
                                    f"not {show(value)}")
        return value

    def imported(self, where: str, name: str, table: dict[str, Any]) -> Check:
        """``import = {format = "junit", path = "..."}``: a check made by no process."""
        for key in table:
            if key not in IMPORT_CHECK_KEYS:
                raise self.error(where, unknown("key", key, IMPORT_CHECK_KEYS)
                                 + ("; an imported check runs no command" if key in CHECK_KEYS
                                    else ""))
        spec = table["import"]
        if not isinstance(spec, dict) or set(spec) != {"format", "path"}:
            raise self.error(where, f"import: must be {{format = \"junit\", path = \"...\"}}, "
                                    f"not {show(spec)}")
        fmt, path = spec["format"], spec["path"]
        if not isinstance(fmt, str) or fmt not in IMPORT_FORMATS:
            raise self.error(where, f"import.format: {show(fmt)} is not one of "
                                    f"{', '.join(IMPORT_FORMATS)}")
        if not isinstance(path, str) or not path.strip() or "\0" in path:
            raise self.error(where, f"import.path: must be a non-empty path string, "
                                    f"not {show(path)}")
        top = table.get("top")
        if top is not None:
            top = self.integer(where, "top", top, 1)
        source = ImportSource(fmt, _absolute(os.path.join(self.cwd, os.path.expanduser(path))))
        return Check(name=name, command="", argv=(), parser=f"import:{fmt}", top=top,
                     description=self.description(where, table), imported=source)

    def command(self, where: str, name: str,
                value: Any) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
        if isinstance(value, str):
            try:
                argv = tuple(split_command(value))
            except ValueError as exc:
                raise self.error(where, f"command: cannot be split like a shell line: {exc} "
                                        "(no shell runs it; quote each argument)") from None
            command: str | tuple[str, ...] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            argv = command = tuple(value)
        else:
            raise self.error(where, f"command: must be a string or an array of strings, "
                                    f"not {show(value)}")
        if not argv or not argv[0]:
            raise self.error(where, "command: names no program to run")
        if isinstance(value, str) and not SHELL_OPERATORS.isdisjoint(argv):
            operator = bare_operator(value)
            if operator is not None:
                raise self.error(where, (
                    f"command: {operator!r} is a shell operator, but no shell runs this "
                    f"command: {argv[0]} would get {operator!r} as an argument; put the shell "
                    f"line in a script and run that (command = \"sh scripts/{name}.sh\"), "
                    f"or quote {operator!r} if it is an argument"))
        if any("\0" in arg for arg in argv):
            raise self.error(where, "command: contains a NUL character")
        return command, argv

    def timeout(self, where: str, value: Any) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and isinstance(value, int):
            ok = 0 < value <= _TIMEOUT_MAX
        elif ok:
            ok = 0 < value <= _TIMEOUT_MAX  # false for NaN and infinity too
        if not ok:
            raise self.error(where, f"timeout: must be a number > 0 (seconds, at most "
                                    f"{_TIMEOUT_MAX}), not {show(value)}")
        return float(value)

    def integer(self, where: str, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(where, f"{key}: must be an integer >= {minimum}, not {show(value)}")
        return value

    def description(self, where: str, table: dict[str, Any]) -> str | None:
        value = table.get("description")
        if value is not None and not isinstance(value, str):
            raise self.error(where, f"description: must be a string, not {show(value)}")
        return value

    def env(self, where: str, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.error(where, f"env: must be a table of strings, not {show(value)}")
        for key, item in value.items():
            if not key or "=" in key or "\0" in key:
                raise self.error(where, f"env: {key!r} is not a valid variable name")
            if not isinstance(item, str):
                raise self.error(where, f"env: {key} must be a string, not {show(item)}")
            if "\0" in item:
                raise self.error(where, f"env: {key} contains a NUL character")
        return dict(value)

    def env_allow(self, where: str, value: Any) -> tuple[str, ...] | None:
        """Names the child keeps from ckdn's environment (``NAME``, or ``PREFIX*``)."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(where, f"env_allow: must be an array of variable names, "
                                    f"not {show(value)}")
        for name in value:
            bare = name[:-1] if name.endswith("*") else name
            if not bare or "=" in bare or "*" in bare or "\0" in bare:
                raise self.error(where, f"env_allow: {name!r} is not a variable name (NAME, or"
                                        " PREFIX* for every name that starts with PREFIX)")
        return tuple(value)

    def requires(self, where: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(where, f"requires: must be an array of requirement strings, "
                                    f"not {show(value)}")
        if not value:
            return ()
        import re  # here: `re` costs every run, and only a check with requires needs it

        for item in value:
            if (not isinstance(item, str) or not re.match(_REQUIREMENT, item)
                    or not item.isprintable()):
                raise self.error(where, f"requires: {show(item)} is not a PEP 508 requirement "
                                        "(e.g. \"ruff>=0.5\")")
        return tuple(value)

    def options(self, where: str, parser_name: str, options: dict[str, Any]) -> None:
        for key in options:
            if key in ALIAS_KEYS:
                raise self.error(where, f"{key}: belongs to aliases (members = [...]); an "
                                        "atomic check does not take it")
        try:
            parser = get_parser(parser_name)
        except ConfigError as exc:
            raise self.error(where, f"parser: {exc.message}") from None
        validate = getattr(parser, "validate_options", None)
        if validate is None:
            return
        try:
            validate(options)
        except OptionError as exc:
            declared = option_names(parser)
            if exc.key not in declared:
                hint = suggest(exc.key, [*CHECK_KEYS, *declared])
                text = (f"unknown key {exc.key!r}{hint}" if hint
                        else f"unknown key {exc.key!r}: {exc.message}")
            elif f"'{exc.key}'" in exc.message:
                text = exc.message
            else:
                text = f"{exc.key}: {exc.message}"
            raise self.error(where, text) from None


def bare_operator(command: str) -> str | None:
    """The first shell operator that stands in ``command`` as a word with no quote or escape.

    ``shlex.split`` loses the quoting (``'|'`` and ``|`` both give ``|``), so the
    line is read again with shlex's POSIX rules, only to see which words were
    written bare. Called only when the split already produced an operator.
    """
    quote = ""
    escaped = quoted = False
    word: list[str] = []
    for char in f"{command} ":
        if escaped:
            escaped = False
            word.append(char)
        elif quote == "'":
            if char == "'":
                quote = ""
        elif quote:
            if char == "\\":
                escaped = True
            elif char == '"':
                quote = ""
        elif char in " \t\r\n":
            if word and not quoted and "".join(word) in SHELL_OPERATORS:
                return "".join(word)
            word, quoted = [], False
        elif char in "'\"":
            quote, quoted = char, True
            word.append(char)
        elif char == "\\":
            escaped = quoted = True
        else:
            word.append(char)
    return None


# -- wording ---------------------------------------------------------------------------

#: What a TOML key may be made of unquoted.
BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def unknown(what: str, key: str, known: Iterable[str]) -> str:
    names = list(known)
    hint = suggest(key, names)
    return f"unknown {what} {key!r}{hint}" if hint else (
        f"unknown {what} {key!r} (known: {', '.join(names)})")


def show(value: Any) -> str:
    """A short, one-line rendering of a TOML value for 'not X' in a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:40]) + "..."
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def toml_key(name: str) -> str:
    """``name`` as it would be written in a TOML table header."""
    if name and BARE_KEY.issuperset(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- [run].redact ---------------------------------------------------------------------------

REDACT_KEYS = ("enabled", "full_log", "high_entropy", "allow", "names", "patterns")
_WHERE = "run.redact"
_RULE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def redact_settings(tables: Tables, value: Any) -> RedactSettings:
    """The settings ``[run].redact`` gives (``value``: true/false or the table; a pattern
    is compiled now, and refused in one line when it does not compile or matches "")."""
    if isinstance(value, bool):
        return DEFAULT if value else RedactSettings(enabled=False)
    if not isinstance(value, dict):
        raise tables.error("run", f"redact: must be true, false or a table [run.redact], "
                                  f"not {show(value)}")
    for key in value:
        if key not in REDACT_KEYS:
            raise tables.error(_WHERE, unknown("key", key, REDACT_KEYS))
    flags = {}
    for key in ("enabled", "full_log", "high_entropy"):
        flag = value.get(key, key == "enabled")
        if not isinstance(flag, bool):
            raise tables.error(_WHERE, f"{key}: must be true or false, not {show(flag)}")
        flags[key] = flag
    return RedactSettings(**flags, allow=_strings(tables, value, "allow"),
                          names=_strings(tables, value, "names"),
                          patterns=_patterns(tables, value.get("patterns", {})))


def _strings(tables: Tables, table: dict[str, Any], key: str) -> tuple[str, ...]:
    items = table.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise tables.error(_WHERE, f"{key}: must be an array of non-empty strings, "
                                   f"not {show(items)}")
    return tuple(items)


def _patterns(tables: Tables, table: Any) -> tuple[tuple[str, str], ...]:
    where = f"{_WHERE}.patterns"
    if not isinstance(table, dict):
        raise tables.error(_WHERE, f"patterns: must be a table [{where}] of rule name = "
                                   f"regular expression, not {show(table)}")
    out: list[tuple[str, str]] = []
    for name, source in table.items():
        if not name or not _RULE_CHARS.issuperset(name) or len(name) > 40:
            raise tables.error(where, f"{name!r}: a rule name is lower-case letters, digits "
                                      "and '-' (at most 40); it is shown as [REDACTED:name]")
        if not isinstance(source, str) or not source:
            raise tables.error(where, f"{name}: must be a regular expression string, "
                                      f"not {show(source)}")
        import re  # here: `re` costs every run, and only a config with patterns needs it

        try:
            compiled = re.compile(source)
        except (re.error, OverflowError, RecursionError) as exc:
            raise tables.error(where, f"{name}: not a valid regular expression: {exc}"
                               ) from None
        if compiled.fullmatch(""):
            raise tables.error(where, f"{name}: matches the empty string, so it would match "
                                      "everywhere; make it need at least one character")
        out.append((name, source))
    return tuple(out)


# -- the file, its top level and [run] -----------------------------------------------------

# Every wrong type, unknown key and broken alias is a
# :class:`~ckdn.errors.ConfigError` of one line naming the file, the table and the
# key, raised before anything runs. Loading happens on every ``ckdn run``: the
# plain-TOML reader (:mod:`ckdn._lite.read_plain`) reads nearly every config, and
# ``tomllib`` is imported only for a file beyond plain TOML.

_RUN_KEYS = ("runs_dir", "keep", "top", "max_snippet_lines", "log_tail_lines", "baseline",
             "command_policy", "command_allowlist", "require_lock", "private", "inherit_env",
             "max_age_days", "max_bytes", "redact", "required", "gate_requires_native",
             "diff_scope")
#: ``[run].diff_scope``, the default first (kept equal to ``ckdn.identity.scope.SCOPES``
#: by a test: the config room does not import the identity room)
DIFF_SCOPES = ("touched", "added", "new-anywhere")
_INT_KEYS = {"keep": 0, "top": 1, "max_snippet_lines": 0, "log_tail_lines": 0}  # the minimums
_BOOL_KEYS = ("require_lock", "private", "inherit_env", "gate_requires_native")
_POLICIES = ("workspace", "allowlist", "off")
#: ``command_policy = "allowlist"`` without a ``[run.command_allowlist]`` table: the
#: published contract's built-in prefixes.
DEFAULT_ALLOWLIST = ("uv run", "uvx", "true", "false")
_TOP_KEYS = ("run", "check")

#: Names become run directory names and lock names: no separators, nothing a
#: shell or a filesystem treats specially, nothing hidden. At most 64 characters.
_NAME_FIRST = (BARE_KEY - {"-"}) | {"+"}
_NAME_CHARS = BARE_KEY | {"+", "."}
_NAME_RULE = ("use letters, digits, '_', '-', '.', '+' (at most 64, not starting with '.' or '-')")

_BOM = b"\xef\xbb\xbf"
#: The starter catalogue is about 10 KB; a config file past this is not one.
MAX_CONFIG_BYTES = 1 << 20


def config_path(cwd: str | os.PathLike[str], explicit: str | None = None) -> str:
    """The config file to read: ``--config``, else ``$CKDN_CONFIG``, else ``cwd/ckdn.toml``.

    A named file is taken from the process's working directory, as every other
    command's config flag is (``ckdn --cwd proj --config sub.toml`` reads
    ``./sub.toml``); ``cwd`` (``--cwd``) only says where the default
    ``ckdn.toml`` is, where checks run and what relative ``[run]`` paths mean.
    """
    chosen = explicit if explicit is not None else os.environ.get(CONFIG_ENV) or None
    if chosen is None:
        return os.path.join(_absolute(cwd), CONFIG_NAME)
    return _absolute(os.path.expanduser(chosen))


def default_config(cwd: str | os.PathLike[str]) -> Config:
    """The settings in force when there is no config file (read-only commands)."""
    base = _absolute(cwd)
    return Config(path=None, cwd=base, run=RunSettings(runs_dir=os.path.join(base, ".agent-runs")))


def load_config(cwd: str | os.PathLike[str], explicit: str | None = None, *,
                required: bool = True) -> Config:
    """Read and validate the config file for ``cwd``.

    A missing default ``ckdn.toml`` gives :func:`default_config` when not
    ``required``. A file named by ``--config`` or ``$CKDN_CONFIG`` must exist
    either way: silently ignoring a file the user pointed at would run the
    wrong checks.
    """
    base = _absolute(cwd)
    path = config_path(base, explicit)
    named = explicit is not None or bool(os.environ.get(CONFIG_ENV))
    # A named file is shown from where it was named (the process cwd), the default one
    # from --cwd: either way the path in a message is the one the user can type.
    shown = shown_path(path, _absolute(os.getcwd()) if named else base)
    try:
        data = _read_regular(path, shown)
    except FileNotFoundError:
        if named:
            source = "--config" if explicit is not None else f"${CONFIG_ENV}"
            looked = "" if shown == path else f"; looked for {path}"
            message = f"{shown}: no such config file (named by {source}{looked})"
            raise ConfigError(message) from None
        if not required:
            return default_config(base)
        raise ConfigError(f"no {CONFIG_NAME} in {base}; run `ckdn init` or pass --config"
                          ) from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read config file: {exc.strerror or exc}") from None
    return _Loader(shown, base).load(path, data)



def _read_regular(path: str, shown: str) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most :data:`MAX_CONFIG_BYTES`.

    Anything else is refused unread: ``/dev/zero`` would be read until memory
    runs out, a FIFO would block ``open`` until a writer came (hence
    ``O_NONBLOCK``, which changes nothing for a regular file). A symlink to a
    config is followed: it is the user's own file. ``OSError`` as ``open``.
    """
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, follow=True)
    except NotRegular:
        if os.path.isdir(path):
            raise ConfigError(f"{shown}: cannot read config file: Is a directory") from None
        raise ConfigError(f"{shown}: not a regular file; ckdn reads its config only from"
                          " a regular file (name a ckdn.toml with --config)") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES >> 20} MiB; a ckdn.toml"
                          " is a few kilobytes: name the right file")
    return data


class _Loader(Tables):
    """Reads one file: its top-level structure, the [run] table, the check names."""

    def load(self, path: str, data: bytes) -> Config:
        doc = self.parse_toml(data)
        for key in doc:
            if key not in _TOP_KEYS:
                raise self.error(None, unknown("top-level key", key, _TOP_KEYS))
        run = self.run_settings(doc.get("run", {}))
        raw_checks = doc.get("check", {})
        if not isinstance(raw_checks, dict):
            raise self.error(None, f"check: must be tables [check.NAME], not {show(raw_checks)}")
        checks: dict[str, Check] = {}
        aliases: dict[str, Alias] = {}
        folded: dict[str, str] = {}
        for name, table in raw_checks.items():
            where = f"check.{toml_key(name)}"
            if not isinstance(table, dict) and name in (*CHECK_KEYS, *ALIAS_KEYS):
                raise self.error("check", f"{name}: belongs in a check's own table: "
                                          f"[check.NAME], then {name} = ...")
            self.check_name(where, name, folded)
            if not isinstance(table, dict):
                raise self.error(where, f"must be a table, not {show(table)}")
            if "members" in table:
                aliases[name] = self.alias(where, name, table, raw_checks)
            else:
                checks[name] = self.atomic(where, name, table)
        self.required(run.required, checks, aliases)
        return Config(path=path, cwd=self.cwd, run=run, checks=MappingProxyType(checks),
                      aliases=MappingProxyType(aliases))

    def required(self, names: tuple[str, ...], checks: dict[str, Check],
                 aliases: dict[str, Alias]) -> None:
        """``[run].required`` names only checks and aliases the file defines."""
        for name in names:
            if name not in checks and name not in aliases:
                raise self.error("run", f"required: unknown check {name!r}"
                                 + suggest(name, [*checks, *aliases]))

    def parse_toml(self, data: bytes) -> dict[str, Any]:
        # A leading byte order mark is skipped, as "utf-8-sig" would (without loading that codec).
        skip = len(_BOM) if data.startswith(_BOM) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = skip + exc.start
            raise self.error(None, f"invalid TOML: not UTF-8 (byte {data[offset]:#04x} "
                                   f"at offset {offset})") from None
        plain = read_plain(text)
        if plain is not None:
            return plain
        # Imported here: tomllib costs every run, and ckdn._lite.read_plain reads plain TOML.
        import tomllib

        try:
            return tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or int() refusing a 5000-digit number
            raise self.error(None, f"invalid TOML: {exc}") from None
        except RecursionError:
            raise self.error(None, "invalid TOML: nested too deeply") from None

    def run_settings(self, table: Any) -> RunSettings:
        if not isinstance(table, dict):
            raise self.error(None, f"run: must be a table [run], not {show(table)}")
        for key in table:
            if key not in _RUN_KEYS:
                raise self.error("run", unknown("key", key, _RUN_KEYS))
        runs_dir = table.get("runs_dir", ".agent-runs")
        if not isinstance(runs_dir, str) or not runs_dir.strip() or "\0" in runs_dir:
            raise self.error("run", f"runs_dir: must be a non-empty path string, "
                                    f"not {show(runs_dir)}")
        ints: dict[str, Any] = {key: self.integer("run", key, table[key], minimum)
                                for key, minimum in _INT_KEYS.items() if key in table}
        ints.update((key, self.boolean("run", key, table[key]))
                    for key in _BOOL_KEYS if key in table)
        if "baseline" in table:
            baseline = table["baseline"]
            if not isinstance(baseline, str) or not baseline.strip() or "\0" in baseline:
                raise self.error("run", f"baseline: must be a non-empty path string, "
                                        f"not {show(baseline)}")
        policy, allowlist = self.command_policy(table)
        runs = os.path.join(self.cwd, os.path.expanduser(runs_dir))
        baseline = table.get("baseline")
        if baseline is not None:
            baseline = _absolute(os.path.join(self.cwd, os.path.expanduser(baseline)))
        redact = DEFAULT_REDACT
        if "redact" in table:
            redact = redact_settings(self, table["redact"])
        required = table.get("required", [])
        if (not isinstance(required, list) or len(set(required)) != len(required)
                or not all(isinstance(n, str) and n for n in required)):
            raise self.error("run", f"required: must be an array of distinct check or alias "
                                    f"names, not {show(required)}")
        scope = table.get("diff_scope", DIFF_SCOPES[0])
        if scope not in DIFF_SCOPES:
            raise self.error("run", f"diff_scope: must be one of {', '.join(DIFF_SCOPES)}, "
                                    f"not {show(scope)}")
        return RunSettings(runs_dir=_absolute(runs), baseline=baseline, command_policy=policy,
                           allowlist=allowlist, max_age_days=self.retention_age(table),
                           max_bytes=self.retention_bytes(table), redact=redact,
                           required=tuple(required), diff_scope=scope, **ints)

    def boolean(self, where: str, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, f"{key}: must be true or false, not {show(value)}")
        return value

    def retention_age(self, table: dict[str, Any]) -> float | None:
        value = table.get("max_age_days")
        if value is None:
            return None
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not 0 < value <= 100_000):  # NaN fails the comparison too
            raise self.error("run", f"max_age_days: must be a number of days > 0 (runs older"
                                    f" are removed; leave it out for no limit), not {show(value)}")
        return float(value)

    def retention_bytes(self, table: dict[str, Any]) -> int | None:
        value = table.get("max_bytes")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error("run", f"max_bytes: must be an integer number of bytes >= 1 (the"
                                    f" total size finished runs may take; leave it out for no"
                                    f" limit), not {show(value)}")
        return value

    def command_policy(self, table: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        """``command_policy`` and the prefixes of ``[run.command_allowlist]``: a table
        that would not be read (an allowlist beside another policy) is refused too, since
        its author believes it is in force."""
        policy = table.get("command_policy", "workspace")
        if policy not in _POLICIES:
            raise self.error("run", f"command_policy: must be one of "
                                    f"{', '.join(map(repr, _POLICIES))}, not {show(policy)}")
        prefixes: tuple[str, ...] = ()
        if "command_allowlist" in table:
            prefixes = self.allowlist(table["command_allowlist"])
            if policy != "allowlist":
                raise self.error("run.command_allowlist", f"is read only with command_policy"
                                 f" = 'allowlist' (it is {policy!r}); set that or remove the"
                                 " table")
        elif policy == "allowlist":
            prefixes = DEFAULT_ALLOWLIST
        return policy, prefixes

    def allowlist(self, table: Any) -> tuple[str, ...]:
        where = "run.command_allowlist"
        if not isinstance(table, dict):
            raise self.error("run", f"command_allowlist: must be a table "
                                    f"[run.command_allowlist], not {show(table)}")
        for key in table:
            if key != "prefixes":
                raise self.error(where, unknown("key", key, ("prefixes",)))
        prefixes = table.get("prefixes")
        if (not isinstance(prefixes, list) or not prefixes
                or not all(isinstance(p, str) and p.strip() for p in prefixes)):
            raise self.error(where, f"prefixes: must be a non-empty list of non-empty "
                                    f"strings, not {show(prefixes)}")

        for prefix in prefixes:
            try:
                split_command(prefix)
            except ValueError as exc:
                raise self.error(where, f"prefixes: {show(prefix)} cannot be split like a shell"
                                        f" line: {exc}") from None
        return tuple(prefixes)

    def check_name(self, where: str, name: str, folded: dict[str, str]) -> None:
        if not (0 < len(name) <= 64 and name[0] in _NAME_FIRST and _NAME_CHARS.issuperset(name)):
            raise self.error(where, f"invalid check name {name!r}: {_NAME_RULE}")
        # Names become run-dir and lock names: two that differ only in case
        # would share them on a case-insensitive filesystem.
        other = folded.setdefault(name.casefold(), name)
        if other != name:
            raise self.error(where, f"check name {name!r} differs from {other!r} only in "
                                    "letter case; rename one")


def _absolute(path: str | os.PathLike[str]) -> str:
    """Absolute and normalised, without following symlinks (so relative displays hold)."""
    return os.path.abspath(path)
