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
# text reads back as the same document.

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


def render(doc: Mapping[str, Any]) -> str:
    """The human form: indented, keys in reading order."""


    text = json.dumps(_ordered(doc, _ORDER), indent=2, ensure_ascii=False)
    return "\n".join(inert(line) for line in text.split("\n"))


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
