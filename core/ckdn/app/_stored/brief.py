"""A red run briefed for an agent's hook: every red check's findings grouped by rule, in a
byte budget, so the model can act on the first red without another call.

The digest is bounded but made for a program; a hook's stderr is read by a model as
the reason it must go on. So the brief is text: one line per red check (status, rc,
how many findings in how many files, its run id), then its rules, most findings
first, each with its first message and where it is. 200 findings of one rule fit
in a few lines; what the budget leaves out is counted, never dropped silently.
"""

from __future__ import annotations

import os

from ckdn.app._annotating import report_of
from ckdn.documents.textcap import clean_line
from ckdn.reports import rule_id, where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ckdn.config import Config
    from ckdn.identity import FindingRow
    from ckdn.reports import Checked

__all__ = ["BRIEF_BYTES", "brief_red"]

#: The whole brief's budget, in UTF-8 bytes.
BRIEF_BYTES = 2048
#: Characters of one message shown; of one line of the brief.
MESSAGE_CHARS = 120
LINE_CHARS = 200
#: Rules kept while the findings are read (the rest are counted as "other rules"), and
#: places remembered per rule.
MAX_RULES = 50
PLACES = 12
#: Lines of the log's tail shown for a red check without findings.
TAIL_LINES = 5
_FOOTER_BYTES = 160


class _Rule:
    """One rule's findings: how many, in which files (counted up to a bound), the first
    message, the first places."""

    __slots__ = ("count", "files", "message", "places")

    def __init__(self, message: str) -> None:
        self.count = 0
        self.files: set[str] = set()
        self.message = message
        self.places: list[tuple[str, str]] = []

    def add(self, row: FindingRow) -> None:
        self.count += 1
        path = where(row.location)[0]
        if path and len(self.files) < 1000:
            self.files.add(path)
        if len(self.places) < PLACES:
            place = row.location or (row.id if row.kind.startswith("test_") else "")
            self.places.append((place, row.message))


def _short(text: str, width: int = MESSAGE_CHARS) -> str:
    return clean_line(text.strip().splitlines()[0] if text.strip() else "", width)


def _rules(checked: Checked) -> tuple[list[tuple[str, _Rule]], int, int]:
    """``(rules by findings, most first; findings read; files)`` of one check."""
    rules: dict[str, _Rule] = {}
    files: set[str] = set()
    other = _Rule("findings of other rules")
    read = 0
    for row in checked.each():
        read += 1
        path = where(row.location)[0]
        if path and len(files) < 10_000:
            files.add(path)
        rule = rule_id(row, path)
        group = rules.get(rule)
        if group is None:
            if len(rules) >= MAX_RULES:
                other.add(row)
                continue
            group = rules[rule] = _Rule(row.message)
        group.add(row)
    ordered = sorted(rules.items(), key=lambda item: -item[1].count)
    if other.count:
        ordered.append(("(other rules)", other))
    return ordered, read, len(files)


def _group_lines(rule: str, group: _Rule) -> list[str]:
    files = len(group.files)
    spread = f" in {files} files" if files > 1 else ""
    head = f"  {rule} x{group.count}{spread}: {_short(group.message)}"
    places: list[str] = []
    width = 4
    for place, message in group.places:
        if not place:
            continue
        if _short(message) != _short(group.message):
            place = f"{place} {_short(message, 80)}"
        if width + len(place) + 2 > LINE_CHARS - 12:
            break
        places.append(place)
        width += len(place) + 2
    lines = [head]
    if places:
        more = group.count - len(places)
        lines.append("    " + ", ".join(places) + (f", +{more} more" if more > 0 else ""))
    return lines


def _check_lines(checked: Checked) -> tuple[str, list[list[str]]]:
    """``(the check's line, its groups)``: each group a rule's lines, or the log's tail."""
    digest = checked.digest
    rules, read, files = _rules(checked)
    total = max(checked.total, read)
    run = os.path.basename(checked.run_dir.rstrip("/"))
    parts = [f"{checked.check} {checked.status} (rc {digest.get('rc')})"]
    if digest.get("status_reason") and (checked.status != "fail" or not total):
        parts[0] += f": {_short(str(digest['status_reason']), 160)}"
    if total:
        parts.append(f"{total} finding{'s' if total != 1 else ''}" + (
            f" in {files} file{'s' if files != 1 else ''}" if files else ""))
    parts.append(f"run {run}")
    groups = [_group_lines(rule, group) for rule, group in rules]
    if not rules:
        tail = [str(line) for line in digest.get("log_tail") or () if str(line).strip()]
        groups = [[f"  | {_short(line, 160)}"] for line in tail[-TAIL_LINES:]]
    return "; ".join(parts), groups


def _size(line: str) -> int:
    return len(line.encode("utf-8")) + 1


def brief_red(config: Config, document: Mapping[str, Any], budget: int = BRIEF_BYTES) -> str:
    """The brief of a run's red checks (a digest, or an aggregate's red members) in at
    most ``budget`` bytes; "" when nothing is red."""
    if document.get("status") == "pass":
        return ""
    report = report_of(config, document)
    checks = [c for c in report.checks if c.status != "pass"]
    shown: list[str] = []
    if report.is_aggregate:
        members = report.members
        red = [str(m.get("check")) for m in members if m.get("status") not in ("pass",
                                                                                "skipped")]
        shown.append(_short(f"{report.name} {report.status}: {len(red)} of {len(members)}"
                            f" members red ({', '.join(red)})", LINE_CHARS))
    used = sum(len(line.encode("utf-8")) + 1 for line in shown)
    left_out = 0
    room = budget - _FOOTER_BYTES
    for index, checked in enumerate(checks):
        share = used + (room - used) // (len(checks) - index)
        head, groups = _check_lines(checked)
        head = head[:LINE_CHARS]
        if used + _size(head) > room:
            left_out += 1 + sum(len(g) for g in groups)
            continue
        shown.append(head)
        used += _size(head)
        for number, group in enumerate(groups):
            lines = [line[:LINE_CHARS] for line in group]
            while lines and used + sum(_size(line) for line in lines) > share:
                lines.pop()  # a rule without its places, rather than no rule
            if not lines:
                left_out += sum(len(g) for g in groups[number:])
                break
            left_out += len(group) - len(lines)
            shown.extend(lines)
            used += sum(_size(line) for line in lines)
    for run_dir, why in report.missing[:3]:
        shown.append(_short(f"{run_dir}: {why}", LINE_CHARS))
    if left_out:
        shown.append(f"({left_out} more lines left out; every finding: ckdn show RUN,"
                     " or get_evidence)")
    return "\n".join(shown) + "\n" if shown else ""
