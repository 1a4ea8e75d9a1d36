"""Past the digest's findings, the ruff parser hands each diagnostic to the findings writer
as its fields (``FindingSink.located``), a notebook cell's too: no Finding built for it, and
``findings.jsonl`` the same bytes as when every finding is built and handed over (real ruff
report, real sources).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ckdn.app._running.parsing import FindingTap
from ckdn.identity import FindingsWriter
from ckdn.parsers import ruff_json
from ckdn.parsers.base import Finding, ParseContext
from ckdn.parsers.ruff_json import RuffParser

from .conftest import FIXTURES, case_meta

CASE = FIXTURES / "ruff" / "violations"


def checkout(root: Path) -> tuple[Path, Path, list[dict[str, object]]]:
    """The recorded project copied to ``root``, and its report naming the copy's files."""
    cwd = root / "project"
    shutil.copytree(FIXTURES / "ruff" / "projects" / "violations", cwd)
    run_dir = root / "run"
    run_dir.mkdir()
    recorded = case_meta("ruff", "violations")["cwd"]
    text = (CASE / "ruff.json").read_text(encoding="utf-8").replace(recorded, str(cwd))
    (run_dir / "ruff.json").write_text(text, encoding="utf-8")
    shutil.copy(CASE / "full.log", run_dir / "full.log")
    return cwd, run_dir, json.loads(text)


def parse(cwd: Path, run_dir: Path, top: int) -> tuple[bytes, list[str]]:
    tap = FindingTap(str(run_dir), str(cwd), check="ruff", top=top)
    ctx = ParseContext("ruff", run_dir, cwd, 1, top=top, tap=tap)
    result = RuffParser().parse(ctx)
    assert result.parser_ok
    assert tap.covers(result)
    spool = tap.spool
    assert isinstance(spool, FindingsWriter)  # no baseline: written as the findings came
    try:
        return b"".join(spool.encode("ruff")), [f.id for f in result.findings]
    finally:
        tap.discard()


@pytest.mark.parametrize("top", [0, 1, 2, 7])
def test_findings_past_the_top_are_not_built_and_write_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, top: int) -> None:
    cwd, run_dir, report = checkout(tmp_path)
    built: list[str] = []

    def counted(*args: object) -> Finding:
        built.append(str(args[0]))
        return Finding(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ruff_json, "Finding", counted)
    fields, shown = parse(cwd, run_dir, top)
    # the digest's findings (at least the first: the sink is asked for the fields after it)
    assert len(built) == max(top, 1) < len(report)
    monkeypatch.setattr(FindingTap, "located", lambda self: None)  # every finding built
    built.clear()
    every, shown_built = parse(cwd, run_dir, top)
    assert len(built) == len(report)
    assert fields == every
    assert shown == shown_built
    assert fields.count(b"\n") == len(report) + 1
    assert b'"line_hash"' in fields


def parse_gated(cwd: Path, run_dir: Path, top: int,
                baseline: Path) -> tuple[bytes, dict[int, tuple[str, str, str | None]], bytes]:
    """The findings file a baseline run writes (the gate's marks in it), the findings the
    tap held as maybe new, and the gate's flags."""
    from ckdn.identity import BaselineIndex, match

    tap = FindingTap(str(run_dir), str(cwd), check="ruff", top=top, baseline=str(baseline))
    ctx = ParseContext("ruff", run_dir, cwd, 1, top=top, tap=tap)
    result = RuffParser().parse(ctx)
    assert result.parser_ok
    assert tap.covers(result)
    table, index = tap.table, tap.index
    assert table is not None
    assert isinstance(index, BaselineIndex)
    flags = match(index, table).flags
    held = {p: (f.id, f.message, f.location) for p, f in tap.held.items()}
    spool = tap.spool
    assert not isinstance(spool, FindingsWriter)  # a baseline: a table, and a spool
    try:
        return b"".join(spool.encode("ruff", table.fingerprints(), flags)), held, bytes(flags)
    finally:
        tap.discard()


@pytest.mark.parametrize("top", [1, 2, 7])
def test_a_baseline_run_builds_no_finding_past_the_top_and_writes_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, top: int) -> None:
    """The gate's path: past the digest's findings, each diagnostic goes into the identity
    table and the spool as its fields; only one held as maybe new is built (by the tap)."""
    from ckdn.identity import write_baseline

    cwd, run_dir, report = checkout(tmp_path)
    fields, _ = parse(cwd, run_dir, len(report))
    prints = [json.loads(line)["fingerprint"] for line in fields.splitlines()[1:]]
    baseline = tmp_path / "ckdn.baseline.json"
    write_baseline(str(baseline), {"ruff": prints[::2]})  # half known
    built: list[str] = []

    def counted(*args: object) -> Finding:
        built.append(str(args[0]))
        return Finding(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ruff_json, "Finding", counted)
    gated, held, flags = parse_gated(cwd, run_dir, top, baseline)
    assert len(built) == top < len(report)  # the parser built the digest's findings alone
    assert held  # the new ones past the top, built by the tap from their fields
    monkeypatch.setattr(FindingTap, "located", lambda self: None)  # every finding built
    built.clear()
    every, held_built, flags_built = parse_gated(cwd, run_dir, top, baseline)
    assert len(built) == len(report)
    assert gated == every
    assert held == held_built
    assert flags == flags_built
    assert 0 < flags.count(1) < len(report)
    assert gated.count(b'"baselined":true') == flags.count(1)


def odd_report(report: list[dict[str, object]]) -> list[object]:
    """The real report with what the general way takes mixed in past the first findings:
    an item that is no object, one without a location, a row that is no number, a code that
    is null, keys missing (``cell``, ``fix``), a file met again."""
    first = dict(report[0])
    no_cell = {k: v for k, v in report[1].items() if k not in ("cell", "fix")}
    bad_row = dict(report[2], location={"row": "3", "column": 1})
    no_code = dict(report[3], code=None, name="syntax-error")
    no_where = {k: v for k, v in report[4].items() if k != "location"}
    return [*report, 7, no_where, bad_row, no_cell, no_code, first, *report[:3], "x", no_cell]


@pytest.mark.parametrize("top", [1, 3])
def test_odd_items_among_a_files_findings_at_once_keep_their_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, top: int) -> None:
    cwd, run_dir, report = checkout(tmp_path)
    (run_dir / "full.log").write_text("")  # the log's count would not match the odd report
    (run_dir / "ruff.json").write_text(json.dumps(odd_report(report), indent=2))

    def parsed() -> tuple[bytes, dict[str, object]]:
        tap = FindingTap(str(run_dir), str(cwd), check="ruff", top=top)
        ctx = ParseContext("ruff", run_dir, cwd, 1, top=top, tap=tap)
        result = RuffParser().parse(ctx)
        spool = tap.spool
        assert isinstance(spool, FindingsWriter)  # no baseline: written as the findings came
        try:
            return b"".join(spool.encode("ruff")), {
                "summary": result.summary, "total": result.total, "ok": result.parser_ok,
                "ids": [f.id for f in result.findings], "notes": result.notes}
        finally:
            tap.discard()

    by_file = parsed()
    monkeypatch.setattr(FindingTap, "located_file", lambda self: None)  # one at a time
    one_by_one = parsed()
    monkeypatch.setattr(FindingTap, "located", lambda self: None)  # every finding built
    built = parsed()
    assert by_file == one_by_one == built
    assert by_file[1]["ok"] is False  # the malformed entries are said
    assert by_file[1]["total"] == len(report) + 8  # eleven more, three malformed
