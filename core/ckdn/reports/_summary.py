"""Markdown for ``$GITHUB_STEP_SUMMARY``: a table of the checks, then each red one's findings."""

from __future__ import annotations

from ckdn.documents.textcap import inert
from ckdn.reports._escape import html, markdown
from ckdn.reports._model import GREEN, imported_label, level_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ckdn.reports._model import Checked, Report
    from ckdn.reports._reporter import Rendering

__all__ = ["SUMMARY_BYTES", "render", "summary"]

# GitHub keeps a step's summary only while it is at most 1 MiB, and loses an
# oversized one whole. So the summary is written against a byte budget
# (:data:`SUMMARY_BYTES` by default, less what the step's summary file already
# holds): each part is added only while it fits, and when one does not, a footer
# says how much was left out and where it is. Findings come from the digests
# (their ``top``, bounded), with their first detail lines folded in ``<details>``.
# Stored text is escaped as Markdown (and as HTML inside ``<pre>``), so it shows as
# written and never becomes a link, an image, a table cell or markup.

#: GitHub's limit for one step's summary: 1 MiB.
SUMMARY_BYTES = 1 << 20
#: Findings listed per check, and detail lines shown per finding.
TOP = 20
DETAIL_LINES = 20
#: Characters of one message or detail line shown.
TEXT_CHARS = 500
#: Room kept for the truncation footer.
FOOTER_BYTES = 600
_ICON = {"pass": "✅", "fail": "❌", "error": "⚠️", "parse_mismatch": "⚠️", "skipped": "⏭️"}


class _Budget:
    """Markdown parts added while they fit in ``limit`` bytes; what did not, counted."""

    __slots__ = ("limit", "omitted", "parts", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.parts: list[str] = []
        self.omitted = 0

    def add(self, part: str) -> bool:
        size = len(part.encode("utf-8"))
        if self.omitted or self.used + size > self.limit:
            self.omitted += 1
            return False
        self.parts.append(part)
        self.used += size
        return True


def render(report: Report, rendering: Rendering) -> str:
    """The summary format's reporter, within the rendering's byte budget (default 1 MiB)."""
    return summary(report, budget=rendering.summary_budget or SUMMARY_BYTES)


def summary(report: Report, *, budget: int = SUMMARY_BYTES) -> str:
    """The step summary of ``report``, at most ``budget`` bytes of UTF-8."""
    out = _Budget(max(0, budget - FOOTER_BYTES))
    status = report.status
    title = f"## {_ICON.get(status, '')} ckdn: {markdown(report.name)} {markdown(status)}"
    rc = report.document.get("rc")
    out.add(f"{title} ({'imported' if rc is None else f'rc {rc}'})\n\n")
    gate = report.document.get("gate")
    if isinstance(gate, dict):
        out.add(f"Baseline gate ({markdown(str(gate.get('policy')))}): "
                f"**{markdown(str(gate.get('status')))}**"
                f"{_reason(gate.get('reason'))}\n\n")
    out.add("| check | status | rc | findings | new | gate |\n"
            "| --- | --- | --- | --- | --- | --- |\n")
    by_dir = {checked.run_dir: checked for checked in report.checks}
    rows = report.members or [report.document]
    for member in rows:
        # a member is its digest's run dir (a tox member's name is CHECK@ENV, its digest's CHECK)
        checked = by_dir.get(str(member.get("run_dir")))
        out.add(_row(member, checked))
    out.add("\n")
    for run_dir, why in report.missing:
        out.add(f"- ⚠️ {markdown(run_dir)}: {markdown(why)}\n")
    for checked in report.checks:
        if checked.status != GREEN:
            _check(out, checked)
    if out.omitted:
        return "".join(out.parts) + _footer(report, out.omitted, budget)
    return "".join(out.parts)


def _footer(report: Report, omitted: int, budget: int) -> str:
    """The truncation footer, itself cut to fit the room kept for it."""
    dirs = ", ".join(checked.run_dir for checked in report.checks[:3])
    more = ", ..." if len(report.checks) > 3 else ""
    text = (f"\n---\n*Summary cut to stay under GitHub's {budget:,}-byte limit: {omitted:,} "
            f"part(s) left out. The run dirs hold every digest ({markdown(dirs[:300])}{more}); "
            "`ckdn annotate RUN --format text` shows one.*\n")
    room = min(FOOTER_BYTES, budget)
    return text.encode("utf-8")[:room].decode("utf-8", "ignore")


def _reason(reason: Any) -> str:
    return f": {markdown(str(reason)[:TEXT_CHARS])}" if reason else ""


def _row(member: Mapping[str, Any], checked: Checked | None) -> str:
    status = str(member.get("status", "?"))
    findings = new = gate = "-"
    if checked is not None:
        digest = checked.digest
        findings = f"{checked.total:,}"
        baseline = digest.get("baseline")
        if isinstance(baseline, dict):
            new = f"{baseline.get('new', 0):,}"
        if isinstance(digest.get("gate"), dict):
            gate = markdown(str(digest["gate"].get("status")))
    rc = member.get("rc", "-")
    if checked is not None and imported_label(checked.digest):
        rc = "imported"
    return (f"| {markdown(str(member.get('check', '?')))} | {_ICON.get(status, '')} "
            f"{markdown(status)} | {rc} | {findings} | {new} | {gate} |\n")


def _check(out: _Budget, checked: Checked) -> None:
    digest = checked.digest
    out.add(f"### {markdown(checked.check)}: {markdown(checked.status)}"
            f"{_reason(digest.get('status_reason'))}\n\n")
    label = imported_label(digest)
    if label:
        out.add(f"> ⚠️ {markdown(label)}\n\n")
    findings = digest.get("findings") or []
    for finding in findings[:TOP]:
        if not isinstance(finding, dict):
            continue
        out.add(_finding(finding))
    more = checked.total - min(len(findings), TOP)
    if more > 0:
        out.add(f"\n{more:,} more finding(s) in `{_code(checked.run_dir)}`\n")
    for key, label in (("gate_failures", "Gate failures"), ("notes", "Notes")):
        items = digest.get(key) or []
        if items:
            out.add(f"\n<details><summary>{label} ({len(items)})</summary>\n\n<pre>"
                    + "\n".join(html(str(item)[:TEXT_CHARS]) for item in items[:TOP])
                    + "</pre>\n</details>\n")
    out.add(f"\nEvidence: `{_code(checked.run_dir)}`\n\n")


def _finding(finding: Mapping[str, Any]) -> str:
    kind = str(finding.get("kind", "?"))
    level = level_of(kind)
    mark = "" if not finding.get("baselined") else " *(baselined)*"
    place = finding.get("location")
    where = f"`{_code(str(place))}` " if place else ""
    test = f" {markdown(str(finding['id']))}" if kind.startswith("test_") \
        and finding.get("id") else ""
    head = (f"- **{markdown(level)}** {where}{markdown(kind)}{test}: "
            f"{markdown(str(finding.get('message', ''))[:TEXT_CHARS])}{mark}\n")
    detail = finding.get("detail") or []
    if not detail:
        return head
    body = "\n".join(html(str(line)[:TEXT_CHARS]) for line in detail[:DETAIL_LINES])
    return f"{head}  <details><summary>details</summary>\n\n<pre>{body}</pre>\n  </details>\n"


def _code(text: str) -> str:
    """Text for inside a code span: one line, inert, no backtick to end it early."""

    return inert(" ".join(text.splitlines())).replace("`", "'")[:TEXT_CHARS]
