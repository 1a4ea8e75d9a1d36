"""GitLab Code Quality: a JSON array of issues, each with a fingerprint of its own."""

from __future__ import annotations

import hashlib
import json

from ckdn.reports._model import GREEN, headline, imported_label, level_of, rule_id, where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.reports._model import Report
    from ckdn.reports._reporter import Rendering

__all__ = ["CODEQUALITY_LIMITS", "codequality", "render"]

# GitLab keys an issue by its ``fingerprint`` and collapses duplicates, so two
# findings sharing one would show as one. Each fingerprint here hashes the check
# and the finding's identity (:mod:`ckdn.identity`: rule, path, the flagged line's
# content and an occurrence index), so it is unique within a run and stable across
# runs, and a collision is made unique all the same. Bounded like the SARIF log:
# at most :data:`CODEQUALITY_LIMITS` issues and bytes; one ``info`` issue more says
# how many findings are left out and in which run dirs.

CODEQUALITY_LIMITS = {"issues": 10_000, "bytes": 10_000_000}
_SEVERITY = {"error": "major", "warning": "minor", "note": "info"}
MESSAGE_CHARS = 1000
#: Bytes kept for the note counting what is left out (its text is cut to fit).
NOTE_BYTES = 16 << 10


def render(report: Report, rendering: Rendering) -> str:
    """The Code Quality format's reporter."""
    return codequality(report)


def codequality(report: Report) -> str:
    """The Code Quality report of ``report`` (JSON text)."""

    dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), sort_keys=True).encode
    issues: list[str] = []
    used = 2
    room = CODEQUALITY_LIMITS["bytes"] - NOTE_BYTES
    seen: set[str] = set()
    left: dict[str, int] = {}
    for checked in report.checks:
        if checked.status == GREEN:
            continue
        counted = 0
        prefix = "[imported] " if imported_label(checked.digest) else ""
        for row in checked.each():
            counted += 1
            if len(issues) >= CODEQUALITY_LIMITS["issues"]:
                continue
            path, line, _ = where(row.location)
            key = hashlib.sha256(f"{checked.check}\0{row.fingerprint}".encode()).hexdigest()[:32]
            while key in seen:  # never collapsed by GitLab, whatever the rows say
                key = hashlib.sha256(key.encode()).hexdigest()[:32]
            issue: dict[str, Any] = {
                "check_name": f"{checked.check}/{rule_id(row, path)}",
                "description": (prefix + headline(row))[:MESSAGE_CHARS],
                "fingerprint": key,
                "location": {"path": path or report.anchor,
                             "lines": {"begin": line if line > 0 else 1}},
                "severity": _SEVERITY[level_of(row.kind)],
                "type": "issue",
            }
            encoded = dumps(issue)
            if used + len(encoded) + 1 > room:
                continue
            seen.add(key)
            issues.append(encoded)
            used += len(encoded) + 1
            left[checked.run_dir] = left.get(checked.run_dir, 0) - 1
        left[checked.run_dir] = left.get(checked.run_dir, 0) + max(counted, checked.total)
    left = {run_dir: count for run_dir, count in left.items() if count > 0}
    if left:
        total = sum(left.values())
        where_ = "; ".join(f"{count:,} in {run_dir[:100]}"
                           for run_dir, count in sorted(left.items())[:10])
        note = {"check_name": "ckdn/truncated",
                "description": f"{total:,} more finding(s) not in this report (at most "
                               f"{CODEQUALITY_LIMITS['issues']:,} issues, "
                               f"{CODEQUALITY_LIMITS['bytes']:,} bytes): {where_}"[:1500],
                "fingerprint": hashlib.sha256(f"ckdn/truncated\0{report.name}".encode())
                .hexdigest()[:32],
                "location": {"path": report.anchor[:1000], "lines": {"begin": 1}},
                "severity": "info", "type": "issue"}
        issues.append(dumps(note))
    return "[" + ",\n".join(issues) + "]\n"
