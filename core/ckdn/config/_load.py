"""Finding and reading ``ckdn.toml`` into frozen values, refusing every mistake at load.

Every wrong type, unknown key and broken alias is a
:class:`~ckdn.errors.ConfigError` of one line naming the file, the table and the
key, raised before anything runs. Loading happens on every ``ckdn run``: the
plain-TOML reader (:mod:`ckdn._lite.toml`) reads nearly every config, and
``tomllib`` is imported only for a file beyond plain TOML.
"""

from __future__ import annotations

import os
from types import MappingProxyType

from ckdn._lite.toml import read_plain
from ckdn.config._tables import ALIAS_KEYS, BARE_KEY, CHECK_KEYS, Tables, show, toml_key, unknown
from ckdn.config._values import CONFIG_ENV, CONFIG_NAME, Alias, Check, Config, RunSettings
from ckdn.errors import ConfigError
from ckdn.redact import DEFAULT as DEFAULT_REDACT
from ckdn.regular import NotRegular, read_regular
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

_RUN_KEYS = ("runs_dir", "keep", "top", "max_snippet_lines", "log_tail_lines", "baseline",
             "command_policy", "command_allowlist", "require_lock", "private", "inherit_env",
             "max_age_days", "max_bytes", "redact")
_INT_KEYS = {"keep": 0, "top": 1, "max_snippet_lines": 0, "log_tail_lines": 0}  # the minimums
_BOOL_KEYS = ("require_lock", "private", "inherit_env")
_POLICIES = ("workspace", "allowlist", "off")
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
        return Config(path=path, cwd=self.cwd, run=run, checks=MappingProxyType(checks),
                      aliases=MappingProxyType(aliases))

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
        import tomllib  # lazy: only a file beyond plain TOML needs it (see ckdn._lite.toml)

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
            from ckdn.config._redact import redact_settings  # lazy: only a config with the key

            redact = redact_settings(self, table["redact"])
        return RunSettings(runs_dir=_absolute(runs), baseline=baseline, command_policy=policy,
                           allowlist=allowlist, max_age_days=self.retention_age(table),
                           max_bytes=self.retention_bytes(table), redact=redact, **ints)

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
            raise self.error("run", "command_policy: 'allowlist' needs a [run.command_allowlist]"
                                    " table with prefixes = [\"ruff check\", ...]")
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
        from ckdn._lite.argv import split_command

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
