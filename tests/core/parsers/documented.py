"""The examples in docs/parsers/*.md are what the parsers really report.

A page's example is a JSON block after a marker comment, and a test parses the
fixture the marker names and compares. Two markers exist:

* ``<!-- tested-example: case=CASE findings=N [option=value ...] -->``: the facts
  and the status they reconcile to (:func:`outcome`), checked by
  :func:`check_documented_example`;
* ``<!-- example: MARKER -->`` (the pytest and coverage pages): the facts alone
  (:func:`as_documented`), found by :func:`marked_example`.

The lead assembles docs/parsers.md from these pages, so a marker is looked up
there too when the page itself does not have it.

``python -m tests.core.parsers.documented`` rewrites every ``tested-example``
block from its fixture (after a parser's facts change on purpose); the test then
holds the page to it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ckdn.parsers.base import BaseParser, ParseContext, ParseResult
from ckdn.reconcile import Exit, reconcile

from .conftest import FIXTURES, CaseLoader

__all__ = [
    "DOCS",
    "as_documented",
    "check_documented_example",
    "documented_example",
    "marked_example",
    "outcome",
]

DOCS = FIXTURES.parents[1] / "docs"
_TESTED = re.compile(r"<!-- tested-example: (.*?) -->\n```json\n(.*?)\n```", re.S)


def outcome(ctx: ParseContext, result: ParseResult, shown: int) -> dict[str, object]:
    """The parser's facts and their status, in the sparse shape the docs show."""
    verdict = reconcile(Exit(ctx.rc), result)
    facts: dict[str, object] = {"status": verdict.status}
    if verdict.reason:
        facts["status_reason"] = verdict.reason
    facts.update(rc=ctx.rc, summary=result.summary)
    if result.total:
        facts["findings_total"] = result.total
    findings = []
    for finding in result.findings[:shown]:
        item: dict[str, object] = {"id": finding.id, "kind": finding.kind,
                                   "message": finding.message}
        if finding.location:
            item["location"] = finding.location
        if finding.detail:
            item["detail"] = list(finding.detail)
        findings.append(item)
    if findings:
        facts["findings"] = findings
    if result.gate_failures:
        facts["gate_failures"] = result.gate_failures
    if result.notes:
        facts["notes"] = result.notes
    return facts


def documented_example(family: str) -> tuple[dict[str, str], dict[str, object]]:
    """The ``tested-example`` block of docs/parsers/<family>.md: its parameters and JSON.

    Parameters are ``case=`` (the fixture), ``findings=`` (how many are shown) and
    any parser option (``format=json``).
    """
    page = DOCS / "parsers" / f"{family}.md"
    match = _TESTED.search(page.read_text(encoding="utf-8"))
    assert match, f"docs/parsers/{family}.md has no tested-example block"
    params = dict(item.split("=", 1) for item in match.group(1).split())
    shown: dict[str, object] = json.loads(match.group(2))
    return params, shown


def check_documented_example(family: str, parser: BaseParser, load_case: CaseLoader) -> None:
    """Assert that the ``tested-example`` of ``family`` is what ``parser`` reports."""
    params, shown = documented_example(family)
    case, count = params.pop("case"), int(params.pop("findings"))
    ctx = load_case(family, case, options=params)
    assert outcome(ctx, parser.parse(ctx), count) == shown


def marked_example(family: str, marker: str) -> dict[str, Any]:
    """The JSON block after ``<!-- example: MARKER -->`` in the ``family`` page."""
    for doc in (DOCS / "parsers" / f"{family}.md", DOCS / "parsers.md"):
        if doc.exists():
            found = re.search(rf"<!-- example: {re.escape(marker)} -->\s*```json\n(.*?)```",
                              doc.read_text(encoding="utf-8"), re.S)
            if found:
                example: dict[str, Any] = json.loads(found.group(1))
                return example
    raise AssertionError(f"no example {marker!r} in the docs")


def as_documented(result: ParseResult, shown: int) -> dict[str, Any]:
    """The facts alone, in the shape of an ``example:`` block."""
    doc: dict[str, Any] = {}
    if result.gate_failures:
        doc["gate_failures"] = result.gate_failures
    doc["summary"] = result.summary
    doc["findings_total"] = result.total
    doc["findings"] = [{k: v for k, v in (("id", f.id), ("kind", f.kind), ("message", f.message),
                                          ("location", f.location), ("detail", list(f.detail)))
                        if v} for f in result.findings[:shown]]
    return doc


def regenerate() -> list[str]:
    """Rewrite each page's ``tested-example`` JSON from what its parser reports now."""
    import shutil
    import tempfile
    from pathlib import Path

    from ckdn.parsers import get_parser

    changed: list[str] = []
    for page in sorted((DOCS / "parsers").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        match = _TESTED.search(text)
        if match is None:
            continue
        params = dict(item.split("=", 1) for item in match.group(1).split())
        case, count = params.pop("case"), int(params.pop("findings"))
        family = page.stem
        meta = json.loads((FIXTURES / family / case / "case.json").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = Path(tmp) / "run"
            shutil.copytree(FIXTURES / family / case, run_dir,
                            ignore=shutil.ignore_patterns("case.json"))
            ctx = ParseContext(check=family, run_dir=run_dir, cwd=Path(meta["cwd"]),
                               rc=meta["rc"], options=dict(params))
            facts = outcome(ctx, get_parser(family).parse(ctx), count)
        block = json.dumps(facts, indent=2, ensure_ascii=False)
        new = text[:match.start(2)] + block + text[match.end(2):]
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(str(page.relative_to(DOCS.parent)))
    return changed


if __name__ == "__main__":
    for name in regenerate():
        print("rewrote", name)
