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
