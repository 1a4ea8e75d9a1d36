"""``[run].redact``: the redaction settings, validated like every other key.

``redact = false`` turns redaction off; a table configures it::

    [run.redact]
    enabled = true          # the default
    full_log = false        # true: full.log is redacted too (streamed)
    high_entropy = false    # true: the generic long-random-token rule as well
    allow = ["AKIAIOSFODNN7EXAMPLE"]   # values never redacted
    names = ["*_DSN"]       # more variable names whose values are secrets

    [run.redact.patterns]
    corp-token = "corp_[a-z0-9]{32}"   # rule name = regular expression

A pattern is compiled at load (``re`` is imported only for a config that has
one), and refused in one line when it does not compile or matches the empty
string (it would match everywhere).
"""

from __future__ import annotations

from ckdn.redact import DEFAULT, RedactSettings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.config._tables import Tables

__all__ = ["REDACT_KEYS", "redact_settings"]

REDACT_KEYS = ("enabled", "full_log", "high_entropy", "allow", "names", "patterns")
_WHERE = "run.redact"
_RULE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def redact_settings(tables: Tables, value: Any) -> RedactSettings:
    """The settings ``[run].redact`` gives (``value``: true/false or the table)."""
    from ckdn.config._tables import show, unknown

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
    from ckdn.config._tables import show

    items = table.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise tables.error(_WHERE, f"{key}: must be an array of non-empty strings, "
                                   f"not {show(items)}")
    return tuple(items)


def _patterns(tables: Tables, table: Any) -> tuple[tuple[str, str], ...]:
    from ckdn.config._tables import show

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
        import re  # lazy: only a config with patterns compiles any

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
