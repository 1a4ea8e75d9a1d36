"""Canonical JSON bytes without :mod:`json`: the stand-in for ``json.dumps`` that documents use."""

from __future__ import annotations

# Stands in for ``json.dumps(value, sort_keys=True, separators=(",", ":"),
# ensure_ascii=False, allow_nan=False)``, encoded to UTF-8, and gives its bytes
# exactly (pinned by a differential property test in tests/core/lite/test_canonical.py).
# Why not json itself: importing it loads its decoder and scanner, about a tenth of
# a trivial ``ckdn run``, which only writes. Strings, the bulk of every document,
# go through the same C escaper ``json`` uses (``_json.encode_basestring``); where
# it is missing, the fallback is json.encoder's own Python escaper.
#
# Lone surrogates (which the document builders already replace) become ``?``
# rather than an exception: writing evidence must not fail on one odd character.

try:  # the escaper json.dumps(ensure_ascii=False) uses; json.encoder has it in Python too
    from _json import encode_basestring as _quote
except ImportError:  # pragma: no cover - CPython always has _json
    from json.encoder import encode_basestring as _quote

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["canonical", "encoded_size"]

_INF = float("inf")


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON bytes: sorted keys, no spaces, UTF-8, no trailing newline."""
    parts: list[str] = []
    _emit(value, parts.append)
    return "".join(parts).encode("utf-8", "replace")


def encoded_size(value: Any) -> int:
    """How many bytes :func:`canonical` makes of ``value``."""
    return len(canonical(value))


def _emit(value: Any, out: Callable[[str], object]) -> None:
    if isinstance(value, str):
        out(_quote(value))
    elif value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        if not -_INF < value < _INF:  # NaN compares false too
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        out(float.__repr__(value))
    elif isinstance(value, dict):
        out("{")
        for index, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out(("," if index else "") + _quote(key) + ":")
            _emit(value[key], out)
        out("}")
    elif isinstance(value, list | tuple):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(",")
            _emit(item, out)
        out("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
