"""The human form of a stored document: what ``ckdn show`` and the hosts print."""

from __future__ import annotations

import json

from ckdn.documents.textcap import inert

__all__ = ["render"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# Indented JSON with keys in reading order (the stored form sorts them), so a
# person reads a digest top-down: what ran, its status and why, the findings,
# then where the evidence is. Inert, whatever the stored file holds: a character
# that would act on a terminal is written as JSON's ``\\uXXXX`` escape, so the
# text reads back as the same document. A list of plain numbers (a coverage
# file's ``missing_lines_preview``) is written inline and wrapped, not one number
# a line: 40 missing lines take two lines, and the text is still the same JSON.

_ORDER = (
    "schema", "check", "alias", "status", "status_reason", "rc", "origin", "import_summary",
    "timed_out", "interrupted",
    "started", "gate", "baseline", "summary", "findings_total", "findings",
    "findings_truncated", "gate_failures", "notes", "log_tail", "members",
    "argv", "cwd", "started_at", "finished_at", "duration_s", "parser", "log_bytes",
    "log_sha256", "ckdn_version", "python", "run_dir", "artifacts",
)
_FINDING_ORDER = ("id", "kind", "message", "location", "detail", "baselined")
_MEMBER_ORDER = ("check", "status", "rc", "run_dir")
#: Width an inline list of numbers wraps at, its indentation included.
NUMBERS_WIDTH = 88
_INDENT = "  "


def render(doc: Mapping[str, Any]) -> str:
    """The human form: indented, keys in reading order."""
    text = _dumped(_ordered(doc, _ORDER), 0)
    return "\n".join(inert(line) for line in text.split("\n"))


def _dumped(value: Any, depth: int, column: int = 0) -> str:
    """``json.dumps(value, indent=2)``, except that a list of numbers keeps to a few lines.

    ``column``: where the value starts on its line (after its key), for the wrapping.
    """
    inner = _INDENT * (depth + 1)
    if isinstance(value, dict) and value:
        items = []
        for key, item in value.items():
            head = f"{inner}{_scalar(key)}: "
            items.append(head + _dumped(item, depth + 1, len(head)))
        return "{\n" + ",\n".join(items) + "\n" + _INDENT * depth + "}"
    if isinstance(value, list) and value:
        if all(_is_number(item) for item in value):
            return _numbers(value, len(inner), column)
        return ("[\n" + ",\n".join(f"{inner}{_dumped(item, depth + 1, len(inner))}"
                                    for item in value)
                + "\n" + _INDENT * depth + "]")
    return _scalar(value)


def _numbers(values: list[Any], indent: int, column: int) -> str:
    """``[5, 6, 7, 10, ...]``, wrapped before ``NUMBERS_WIDTH``, continued at ``indent``."""
    lines: list[str] = []
    line, start = "", column + 1  # after the "["
    for text in (_scalar(v) for v in values):
        if line and start + len(line) + len(text) + 3 > NUMBERS_WIDTH:  # ", " and "," or "]"
            lines.append(line + ",")
            line, start = "", indent
        line = f"{line}, {text}" if line else text
    lines.append(line)
    return "[" + ("\n" + " " * indent).join(lines) + "]"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ordered(node: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    rank = {key: index for index, key in enumerate(order)}
    unknown = len(order) - 2  # keys not in the order go just before run_dir and artifacts
    out: dict[str, Any] = {}
    for key in sorted(node, key=lambda k: (rank.get(k, unknown), k)):
        value = node[key]
        if key == "findings" and isinstance(value, list):
            value = [_ordered(f, _FINDING_ORDER) if isinstance(f, dict) else f for f in value]
        elif key == "members" and isinstance(value, list):
            value = [_ordered(m, _MEMBER_ORDER) if isinstance(m, dict) else m for m in value]
        elif isinstance(value, dict):
            value = _ordered(value, ())
        out[key] = value
    return out
