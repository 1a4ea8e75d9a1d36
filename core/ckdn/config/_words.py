"""How config mistakes are worded: near-miss suggestions and short renderings of values.

Every refusal names the file, the table and the key, and says what was found
(``not an array``, ``not 'abc'...``) and, for a near miss, what was meant.
``difflib`` is imported only on that error path.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

#: What a TOML key may be made of unquoted.
BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def unknown(what: str, key: str, known: Iterable[str]) -> str:
    names = list(known)
    hint = suggest(key, names)
    return f"unknown {what} {key!r}{hint}" if hint else (
        f"unknown {what} {key!r} (known: {', '.join(names)})")


def suggest(word: str, candidates: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for a near miss, else empty. difflib only on this error path."""
    import difflib  # lazy: only error messages need it

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


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

