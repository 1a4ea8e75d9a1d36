"""``ckdn.lock.toml``: a reviewed config pinned by hashes, so an edit cannot quietly go green
(``require_lock`` refuses a changed check; docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib

from ckdn.errors import ConfigError, RefusedError
from ckdn.evidence_files import NotRegular, read_regular
from ckdn.store import shown_path, write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ckdn.config import Alias, Check, Config

__all__ = ["LOCK_NAME", "SCHEMA", "Differences", "enforce", "lock_path", "verify", "write_lock"]

LOCK_NAME = "ckdn.lock.toml"
SCHEMA = "ckdn.lock/1"
#: Env names whose values are not locked (they may be secrets): only that they are set.
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH")
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_HEADER = ("# ckdn.lock.toml: written by `ckdn lock-config`; `ckdn verify-config` compares\n"
           "# ckdn.toml with it. Each value is the SHA-256 of one setting as ckdn read it:\n"
           "# review a change to ckdn.toml, then lock again.\n")


def lock_path(config: Config) -> str:
    """``ckdn.lock.toml`` beside the config file (in the cwd when there is none)."""
    folder = os.path.dirname(config.path) if config.path is not None else config.cwd
    return os.path.join(folder, LOCK_NAME)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _relative(config: Config, path: str | None) -> str | None:
    return None if path is None else shown_path(path, config.cwd)


def _run_fields(config: Config) -> dict[str, Any]:
    run = config.run
    return {"runs_dir": _relative(config, run.runs_dir), "keep": run.keep, "top": run.top,
            "max_snippet_lines": run.max_snippet_lines, "log_tail_lines": run.log_tail_lines,
            "baseline": _relative(config, run.baseline), "command_policy": run.command_policy,
            "command_allowlist": list(run.allowlist), "require_lock": run.require_lock,
            "private": run.private, "max_age_days": run.max_age_days,
            "max_bytes": run.max_bytes, "inherit_env": run.inherit_env}


def _secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in _SECRET_WORDS)


def _check_fields(check: Check) -> dict[str, Any]:
    return {"command": list(check.argv), "parser": check.parser, "timeout": check.timeout,
            "top": check.top, "env_keys": sorted(check.env),
            "env_values": {k: v for k, v in sorted(check.env.items()) if not _secret(k)},
            "env_allow": None if check.env_allow is None else list(check.env_allow),
            "options": dict(check.options)}


def _alias_fields(alias: Alias) -> dict[str, Any]:
    return {"members": list(alias.members), "fail_fast": alias.fail_fast}


def entries(config: Config) -> dict[str, dict[str, str]]:
    """Every lockable entry (``run``, ``check.NAME``, ``alias.NAME``) and its field hashes."""
    out = {"run": {k: _digest(v) for k, v in _run_fields(config).items()}}
    for name, check in config.checks.items():
        out[f"check.{name}"] = {k: _digest(v) for k, v in _check_fields(check).items()}
    for name, alias in config.aliases.items():
        out[f"alias.{name}"] = {k: _digest(v) for k, v in _alias_fields(alias).items()}
    return out


def _key(name: str) -> str:
    if name and _BARE.issuperset(name):
        return name
    return json.dumps(name, ensure_ascii=False)  # a TOML basic string: the same escapes


def render(config: Config) -> str:
    """The lock file's text: sorted tables, sorted keys, nothing that varies between runs."""
    lines = [_HEADER, f'schema = "{SCHEMA}"']
    found = entries(config)
    for entry in sorted(found, key=lambda e: (e != "run", e)):
        kind, _, name = entry.partition(".")
        header = kind if not name else f"{kind}.{_key(name)}"
        lines.append(f"\n[{header}]")
        lines.extend(f'{field} = "{value}"' for field, value in sorted(found[entry].items()))
    return "\n".join(lines) + "\n"


def write_lock(config: Config, output: str | None = None) -> str:
    """Write the lock file (default: beside the config); its path."""
    path = lock_path(config) if output is None else os.path.abspath(output)
    try:
        write_atomic(path, render(config).encode("utf-8"))
    except OSError as exc:
        raise RefusedError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def read_lock(path: str, shown: str) -> dict[str, dict[str, str]]:
    """The entries a lock file holds; one-line ConfigError for anything but a lock file."""
    try:
        data = read_regular(path, 1 << 22, follow=True)  # never blocks on a FIFO
    except NotRegular:
        raise ConfigError(f"{shown}: not a regular file; not read as a lock file") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read lock file: {exc.strerror or exc}") from None
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{shown}: not a lock file ({exc}); write it again with"
                          " `ckdn lock-config`") from None
    if doc.get("schema") != SCHEMA:
        raise ConfigError(f"{shown}: not a {SCHEMA} lock file; write it again with"
                          " `ckdn lock-config`")
    out: dict[str, dict[str, str]] = {}
    for kind in ("run", "check", "alias"):
        table = doc.get(kind, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{shown}: [{kind}] is not a table")
        if kind == "run":
            out["run"] = {k: str(v) for k, v in table.items()}
            continue
        for name, fields in table.items():
            if not isinstance(fields, dict):
                raise ConfigError(f"{shown}: [{kind}.{name}] is not a table")
            out[f"{kind}.{name}"] = {k: str(v) for k, v in fields.items()}
    return out


class Differences:
    """What the config changed since the lock: per entry, the fields that differ."""

    def __init__(self, changed: dict[str, list[str]], missing: list[str], extra: list[str],
                 required: bool) -> None:
        self.changed = changed
        self.missing = missing
        self.extra = extra
        #: The locked config had ``require_lock = true``.
        self.required = required

    def __bool__(self) -> bool:
        return bool(self.changed or self.missing or self.extra)

    def about(self, names: Iterable[str]) -> list[str]:
        """The lines that concern ``run`` and these entries."""
        wanted = {"run", *names}
        return [line for entry, line in self._lines() if entry in wanted]

    def lines(self) -> list[str]:
        return [line for _, line in self._lines()]

    def _lines(self) -> list[tuple[str, str]]:
        out = [(entry, f"changed: [{entry}] {', '.join(fields)}")
               for entry, fields in sorted(self.changed.items())]
        out.extend((entry, f"missing: [{entry}] is locked but no longer configured")
                   for entry in self.missing)
        out.extend((entry, f"extra: [{entry}] is configured but not locked")
                   for entry in self.extra)
        return out

    def as_json(self) -> dict[str, Any]:
        return {"changed": [{"entry": e, "fields": f} for e, f in sorted(self.changed.items())],
                "missing": self.missing, "extra": self.extra}


def verify(config: Config, path: str | None = None) -> Differences:
    """Compare the config with its lock file (which must exist)."""
    lock = lock_path(config) if path is None else os.path.abspath(path)
    locked = read_lock(lock, shown_path(lock, config.cwd))
    current = entries(config)
    changed = {}
    for entry in sorted(set(locked) & set(current)):
        fields = sorted(f for f in set(locked[entry]) | set(current[entry])
                        if locked[entry].get(f) != current[entry].get(f))
        if fields:
            changed[entry] = fields
    required = locked.get("run", {}).get("require_lock") == _digest(True)
    return Differences(changed, sorted(set(locked) - set(current)),
                       sorted(set(current) - set(locked)), required)


def enforce(config: Config, names: Iterable[str]) -> None:
    """Refuse (exit 2) to run these checks or aliases when the lock is required and they,
    or ``[run]``, are not as they were locked."""
    path = lock_path(config)
    shown = shown_path(path, config.cwd)
    if not os.path.exists(path):
        if config.run.require_lock:
            raise RefusedError(f"[run].require_lock is set but there is no {shown}; review"
                               " ckdn.toml and run `ckdn lock-config`")
        return
    differences = verify(config)
    if not (config.run.require_lock or differences.required):
        return
    entries_of = []
    for name in names:
        if name in config.aliases:
            entries_of.append(f"alias.{name}")
            entries_of.extend(f"check.{m}" for m in config.aliases[name].members)
        else:
            entries_of.append(f"check.{name}")
    problems = differences.about(entries_of)
    if problems:
        more = f" (and {len(problems) - 1} more: `ckdn verify-config`)" if len(problems) > 1 else ""
        raise RefusedError(f"the config is not as {shown} locked it ({problems[0]}{more});"
                           " nothing ran: review the change, then `ckdn lock-config`")
