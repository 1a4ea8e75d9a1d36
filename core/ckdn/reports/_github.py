"""GitHub workflow commands: annotations within GitHub's budgets, and nothing lost silently."""

from __future__ import annotations

from ckdn.reports._escape import escape_data, escape_property
from ckdn.reports._model import GREEN, headline, imported_label, level_of, where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ckdn.reports._model import Checked, Report
    from ckdn.reports._reporter import Rendering

__all__ = ["GITHUB_LIMITS", "github", "render"]

# GitHub shows at most 10 error and 10 warning annotations per step and 50 per
# job, and drops the rest without a word. So this view chooses: the annotations it
# prints are the ones a reviewer should see first (a red run with no finding to
# point at, then new findings before those the baseline knows, then by level,
# kind and place), at most :data:`GITHUB_LIMITS` of each level and never more than
# the job has left; and when anything is left out, one notice says how many
# findings are not shown and in which run dir they are. Every message and
# property is escaped as GitHub's toolkit does (:mod:`ckdn.reports._escape`).

#: GitHub's per-step display limits by level, and its per-job limit.
GITHUB_LIMITS = {"error": 10, "warning": 10, "notice": 10, "job": 50}
_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}
#: Characters of a message shown in an annotation (GitHub cuts far longer ones itself).
MESSAGE_CHARS = 1000
#: Characters of an annotation's title and file (a check name or path is short; a
#: hostile digest's need not be).
TITLE_CHARS = 200
#: Run dirs the overflow notice names; the rest are counted.
NAMED_RUNS = 10


class _Best:
    """The ``size`` smallest ``(key, value)`` pairs seen, in bounded memory."""

    __slots__ = ("items", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: list[tuple[tuple[Any, ...], Any]] = []

    def add(self, key: tuple[Any, ...], value: Any) -> None:
        items = self.items
        items.append((key, value))
        if len(items) >= 4 * self.size + 64:
            self.trim()

    def trim(self) -> list[tuple[tuple[Any, ...], Any]]:
        self.items.sort(key=lambda pair: pair[0])
        del self.items[self.size:]
        return self.items


def render(report: Report, rendering: Rendering) -> str:
    """The GitHub format's reporter: within what the job's ledger says is left, which it
    then charges with the annotations printed."""
    ledger, step = rendering.ledger, rendering.step
    job_used, step_used = ledger.used(step) if ledger is not None else (0, {})
    out, counts = github(report, job_left=GITHUB_LIMITS["job"] - job_used, step_used=step_used)
    if ledger is not None and any(counts.values()):
        ledger.spend(step, counts)
    return out


def github(report: Report, *, job_left: int = GITHUB_LIMITS["job"],
           step_used: Mapping[str, int] | None = None) -> tuple[str, dict[str, int]]:
    """The workflow commands for ``report`` and how many annotations of each command
    (``error``, ``warning``, ``notice``) they are.

    ``job_left``: how many annotations the job may still show (50 at its start);
    ``step_used``: how many of each command this step has shown already (another host
    or ``ckdn annotate`` earlier in the same step). Both come from the job's ledger.
    """
    used = step_used or {}
    step_left = {command: max(0, GITHUB_LIMITS[command] - used.get(command, 0))
                 for command in _COMMAND.values()}
    per_level = {level: step_left[command] for level, command in _COMMAND.items()}
    per_level["note"] = max(0, per_level["note"] - 1)  # the notice counting the rest
    best = {level: _Best(size) for level, size in per_level.items()}
    totals: dict[str, int] = {}  # run dir -> findings the run counted
    sequence = 0
    levels: dict[str, str] = {}  # a run has few kinds and many findings
    for checked in report.checks:
        if checked.status == GREEN:
            continue
        run_dir, shown_check = checked.run_dir, _shown(checked)
        seen = 0
        for row in checked.each():
            seen += 1
            kind = row.kind
            level = levels.get(kind) or levels.setdefault(kind, level_of(kind))
            path, line, column = where(row.location)
            key = (1, row.baselined, kind, path == "", path, line, column, sequence)
            best[level].add(key, (shown_check, run_dir, kind, row, path, line, column))
            sequence += 1
        counted = max(seen, checked.total)
        totals[run_dir] = totals.get(run_dir, 0) + counted
        if counted == 0:  # red with nothing to point at: a crash, a timeout, a generic check
            reason = str(checked.digest.get("status_reason") or checked.status)
            best["error"].add((0, False, "", True, "", 0, 0, sequence),
                              (shown_check, run_dir, checked.status,
                               f"{reason} (evidence: {run_dir})", "", 0, 0))
            sequence += 1
            totals[run_dir] += 1
    for run_dir, why in report.missing:
        best["error"].add((0, False, "", True, "", 0, 0, sequence),
                          ("ckdn", run_dir, "unreadable", f"{why} ({run_dir})", "", 0, 0))
        sequence += 1
        totals[run_dir] = totals.get(run_dir, 0) + 1
    chosen = {level: [value for _, value in picker.trim()] for level, picker in best.items()}
    wanted = sum(totals.values())
    room = max(0, job_left)
    if min(sum(len(values) for values in chosen.values()), room) < wanted:
        room -= 1  # the notice that counts the rest needs its place
    lines: list[str] = []
    shown: dict[str, int] = {}
    for level in ("error", "warning", "note"):
        for check, run_dir, kind, what, path, line, column in chosen[level]:
            if len(lines) >= room:
                break
            message = what if isinstance(what, str) else headline(what)
            lines.append(_command(_COMMAND[level], check, kind, message, (path, line, column)))
            shown[run_dir] = shown.get(run_dir, 0) + 1
    left = {run_dir: total - shown.get(run_dir, 0) for run_dir, total in totals.items()}
    left = {run_dir: count for run_dir, count in left.items() if count > 0}
    counts = dict.fromkeys(_COMMAND.values(), 0)
    for command in lines:
        counts[command[2:command.index(" ")]] += 1
    if left and job_left > len(lines) and step_left["notice"] > counts["notice"]:
        lines.append(_overflow(left))
        counts["notice"] += 1
    return "".join(f"{line}\n" for line in lines), counts


def _shown(checked: Checked) -> str:
    """The check as an annotation's title names it: an import says so on every one."""
    return f"{checked.check} (imported)" if imported_label(checked.digest) else checked.check


def _command(command: str, check: str, kind: str, message: str,
             place: tuple[str, int, int]) -> str:
    path, line, column = place
    props: list[tuple[str, str]] = []
    if path:
        props.append(("file", path[:MESSAGE_CHARS]))
        if line > 0:
            props += (("line", str(line)), ("endLine", str(line)))
            if column > 0:
                props.append(("col", str(column)))
    props.append(("title", f"{check}: {kind}"[:TITLE_CHARS]))
    shown = ",".join(f"{name}={escape_property(value)}" for name, value in props)
    return f"::{command} {shown}::{escape_data(message[:MESSAGE_CHARS] or kind)}"


def _overflow(left: dict[str, int]) -> str:
    total = sum(left.values())
    named = sorted(left.items(), key=lambda item: (-item[1], item[0]))
    parts = [f"{count:,} in {run_dir[:TITLE_CHARS]}" for run_dir, count in named[:NAMED_RUNS]]
    if len(named) > NAMED_RUNS:
        rest = sum(count for _, count in named[NAMED_RUNS:])
        parts.append(f"{rest:,} in {len(named) - NAMED_RUNS} more run dirs")
    message = (f"{total:,} more finding(s) not annotated (GitHub shows at most "
               f"{GITHUB_LIMITS['error']} errors and {GITHUB_LIMITS['warning']} warnings a "
               f"step, {GITHUB_LIMITS['job']} a job): {'; '.join(parts)}")
    return f"::notice title={escape_property('ckdn')}::{escape_data(message)}"
