"""The text view: what a person at a terminal reads of a run."""

from __future__ import annotations

from ckdn.documents.textcap import inert
from ckdn.reports._model import GREEN, imported_label, level_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ckdn.reports._model import Checked, Report
    from ckdn.reports._reporter import Rendering

__all__ = ["render", "text"]

# A status line, the counts, the findings with their place and first detail line,
# the notes and gate failures, and where the evidence is; for an aggregate, one
# line per member and then each red member's digest. It shows the digests' own
# findings (their ``top``: already bounded) and says how many more the run has.
# Every stored string is made inert (:func:`~ckdn.documents.textcap.inert`), so
# the only control bytes in the text are the colours this view adds itself, and
# only when asked for (a terminal, without ``NO_COLOR``).

_COLOURS = {"pass": "32", "fail": "31", "error": "33", "parse_mismatch": "33",
            "skipped": "2", "new": "1", "dim": "2"}
#: Characters of one message or detail line shown.
LINE_CHARS = 300
#: Findings, notes, summary keys shown per check (a digest keeps at most its `top`).
MAX_ITEMS = 50


class _Paint:
    __slots__ = ("on",)

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, what: str) -> str:
        code = _COLOURS.get(what)
        return f"\x1b[{code}m{text}\x1b[0m" if self.on and code else text


def render(report: Report, rendering: Rendering) -> str:
    """The text format's reporter (colours when the rendering asks for them)."""
    return text(report, color=rendering.color)


def text(report: Report, *, color: bool = False) -> str:
    """The text view of ``report``; ``color``: with ANSI colours (for a terminal)."""
    paint = _Paint(color)
    lines: list[str] = []
    doc = report.document
    if report.is_aggregate:
        lines.append(f"{_show(report.name)} {paint(report.status, report.status)} "
                     f"(rc {doc.get('rc')}): {len(report.members)} member(s)")
        _gate(lines, doc, paint)
        for member in report.members:
            status = str(member.get("status", "?"))
            rc = f" (rc {member['rc']})" if "rc" in member else ""
            where = f"  {_show(str(member['run_dir']))}" if member.get("run_dir") else ""
            lines.append(f"  {_show(str(member.get('check', '?')))}: "
                         f"{paint(status, status)}{rc}{where}")
        for run_dir, why in report.missing:
            lines.append(f"  {_show(run_dir)}: {_show(why)}")
        for checked in report.checks:
            if checked.status != GREEN:
                lines.append("")
                _digest(lines, checked, paint)
    else:
        for checked in report.checks:
            _digest(lines, checked, paint)
    return "\n".join(lines) + "\n"


def _show(value: str, width: int = LINE_CHARS) -> str:
    """One line of stored text, inert, cut to ``width`` characters with a count."""
    flat = " ".join(value.splitlines())
    if len(flat) > width:
        flat = f"{flat[:width]}... [+{len(flat) - width} chars]"
    return inert(flat)


def _gate(lines: list[str], doc: Mapping[str, Any], paint: _Paint) -> None:
    gate = doc.get("gate")
    if isinstance(gate, dict):
        status = str(gate.get("status"))
        reason = f": {_show(str(gate['reason']))}" if gate.get("reason") else ""
        lines.append(f"  gate {_show(str(gate.get('policy')))}: "
                     f"{paint(status, 'pass' if status == 'pass' else 'fail')}{reason}")


def _digest(lines: list[str], checked: Checked, paint: _Paint) -> None:
    digest = checked.digest
    status = checked.status
    reason = f": {_show(str(digest['status_reason']))}" if digest.get("status_reason") else ""
    flags = "".join(f" [{flag}]" for flag in ("timed_out", "interrupted") if digest.get(flag))
    label = imported_label(digest)
    rc = "imported" if label else f"rc {digest.get('rc')}"
    lines.append(f"{_show(checked.check)} {paint(status, status)} ({rc}){flags}{reason}")
    if label:
        lines.append(f"  {_show(label)}")
    findings = [f for f in digest.get("findings") or [] if isinstance(f, dict)]
    total = checked.total
    counts = f"  {total:,} finding(s)" if total else ""
    baseline = digest.get("baseline")
    if isinstance(baseline, dict):
        counts += f" ({baseline.get('new', 0):,} new, {baseline.get('known', 0):,} baselined)"
    if counts:
        lines.append(counts)
    _gate(lines, digest, paint)
    summary = digest.get("summary")
    if isinstance(summary, dict) and summary:
        shown = ", ".join(f"{_show(str(k), 60)}={_show(_flat(v), 80)}"
                          for k, v in list(summary.items())[:MAX_ITEMS])
        lines.append(f"  summary: {shown}")
    for finding in findings[:MAX_ITEMS]:
        place = f"{_show(str(finding['location']))}: " if finding.get("location") else ""
        kind = str(finding.get("kind", "?"))
        level = level_of(kind)
        known = paint(" (baselined)", "dim") if finding.get("baselined") else ""
        test = f" {_show(str(finding['id']))}" if kind.startswith("test_") \
            and finding.get("id") else ""
        lines.append(f"  {place}{paint(level, 'fail' if level == 'error' else 'error')} "
                     f"{_show(kind, 60)}{test}: {_show(str(finding.get('message', '')))}{known}")
        detail = finding.get("detail") or []
        if detail:
            lines.append(f"      {paint(_show(str(detail[0])), 'dim')}")
    more = total - min(len(findings), MAX_ITEMS)
    if more > 0:
        lines.append(f"  ... {more:,} more in {_show(checked.run_dir)}")
    for key, label in (("gate_failures", "gate failure"), ("notes", "note")):
        for item in (digest.get(key) or [])[:MAX_ITEMS]:
            lines.append(f"  {label}: {_show(str(item))}")
    lines.append(f"  evidence: {_show(checked.run_dir)}/full.log")


def _flat(value: Any, depth: int = 0) -> str:
    """A summary value on one line: nesting past 3 levels and items past 10 elided."""
    if isinstance(value, (dict, list)) and depth >= 3:
        return "{...}" if isinstance(value, dict) else "[...]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flat(v, depth + 1)}"
                               for k, v in list(value.items())[:10]) + \
            (", ..." if len(value) > 10 else "") + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v, depth + 1) for v in value[:10]) + \
            (", ..." if len(value) > 10 else "") + "]"
    return str(value)
