"""One parse serves the digest, the baseline gate and findings.jsonl (the parse's tap).

Real ruff on a real small project with many findings: the tapped run (findings
handed over as the parser reports them, none kept past ``top``) must give
exactly what the old way gives (every finding held in a list, the evidence read
again): the same gate, the same counts, the same digest findings in the same
order, the same findings.jsonl bytes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project import Project, parse_reads

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))  # the dev extra's ruff

CONFIG = f"""
[run]
top = 3
baseline = "ckdn.baseline.json"

[check.ruff]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
parser = "ruff"
"""

#: 30 unused imports over three files, the same line twice in one of them, and an
#: unused local.
FILES = {
    "a.py": "import os\nimport sys\nimport os\n" + "".join(f"import m{i}\n" for i in range(8)),
    "b.py": "".join(f"import n{i}\n" for i in range(10)) + "\n\ndef f():\n    x = 1\n",
    "c.py": "".join(f"import k{i}\n" for i in range(9)),
}


@pytest.fixture
def many(project: Project) -> Project:
    assert RUFF is not None
    project.config(CONFIG)
    for name, text in FILES.items():
        (project.root / name).write_text(text)
    return project


def untapped(monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn.parsers.base import FindingSink, ParseContext

    monkeypatch.setattr(ParseContext, "sink", lambda self: FindingSink(self.top))


def run(project: Project) -> tuple[dict[str, Any], bytes]:
    from ckdn import app

    digest: dict[str, Any] = dict(app.run(app.load_config(str(project.root)), "ruff").digest)
    return digest, (project.root / digest["run_dir"] / "findings.jsonl").read_bytes()


def same(tapped: dict[str, Any], old: dict[str, Any]) -> None:
    """The same facts and findings in the same order; the tapped run shows a new finding
    past the parser's top with its detail (the old way read it again without)."""
    for key in ("status", "gate", "baseline", "findings_total", "summary"):
        assert tapped.get(key) == old.get(key), key

    def facts(digest: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(f["id"], f["kind"], f.get("location"), f["message"], f.get("baselined"))
                for f in digest["findings"]]

    assert facts(tapped) == facts(old)
    assert all("[+" not in line for f in tapped["findings"] for line in f.get("detail", []))


def record(project: Project) -> None:
    from ckdn import app

    app.record_baseline(app.load_config(str(project.root)), "ruff")


def test_the_tapped_gate_gives_what_the_old_way_gives_with_new_findings_past_the_top(
        many: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    record(many)
    # new findings far past the digest's top: the tap holds them, the digest lists them first
    (many.root / "c.py").write_text(FILES["c.py"] + "import late1\nimport late2\n")
    (many.root / "a.py").write_text("\n\n" + FILES["a.py"])  # every finding of a.py moves
    tapped, tapped_file = run(many)
    assert tapped["gate"]["status"] == "fail"
    assert tapped["baseline"] == {"known": 31, "new": 2}
    assert [f["id"] for f in tapped["findings"][:2]] == ["c.py:10:8:F401", "c.py:11:8:F401"]
    assert "baselined" not in tapped["findings"][0]
    assert tapped["findings"][2]["baselined"] is True
    untapped(monkeypatch)
    old, old_file = run(many)
    same(tapped, old)
    assert tapped_file == old_file


def second_copy(many: Project) -> None:
    # the same unused local in a second function: its line's content is the known one's
    (many.root / "b.py").write_text(FILES["b.py"] + "\n\ndef g():\n    x = 1\n")


def test_a_second_copy_of_a_known_line_past_the_top_is_held_and_listed_first(
        many: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline has an entry like it (its first copy), but a second copy in one file
    may be new: the tap holds it, and the evidence is read once."""

    record(many)
    second_copy(many)
    reads = parse_reads(monkeypatch)
    tapped, tapped_file = run(many)
    assert reads == [None]
    assert tapped["baseline"] == {"known": 31, "new": 1}
    assert tapped["findings"][0]["id"] == "b.py:18:5:F841"
    untapped(monkeypatch)
    old, old_file = run(many)
    same(tapped, old)
    assert tapped_file == old_file


def test_a_new_finding_the_tap_did_not_hold_is_read_again_by_position(
        many: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn.app._running import parsing

    monkeypatch.setattr(parsing, "_HELD", 0)  # the tap holds nothing past the top
    record(many)
    second_copy(many)
    reads = parse_reads(monkeypatch)
    tapped, tapped_file = run(many)
    assert reads == [None, 1]  # the run's parse, then the one finding read again
    assert tapped["findings"][0]["id"] == "b.py:18:5:F841"
    untapped(monkeypatch)
    old, old_file = run(many)
    same(tapped, old)
    assert tapped_file == old_file


def test_a_run_the_baseline_knows_whole_reads_its_evidence_once(
        many: Project, monkeypatch: pytest.MonkeyPatch) -> None:

    record(many)
    reads = parse_reads(monkeypatch)
    digest, file = run(many)
    assert reads == [None]
    assert digest["gate"]["status"] == "pass"
    rows = [json.loads(line) for line in file.splitlines()[1:]]
    assert len(rows) == 31
    assert all(row["baselined"] is True for row in rows)


def test_an_unreadable_baseline_makes_the_tapped_gate_unavailable(many: Project) -> None:
    (many.root / "ckdn.baseline.json").write_text("{not json")
    digest, _ = run(many)
    assert digest["gate"]["status"] == "unavailable"
    assert digest["gate"]["reason"].startswith("[run] baseline: ckdn.baseline.json is not JSON")
    assert digest["status"] == "fail"  # the gate never changes the status


def test_a_missing_baseline_is_named_as_the_config_names_it(many: Project) -> None:
    digest, _ = run(many)
    assert digest["gate"]["status"] == "unavailable"
    assert digest["gate"]["reason"].startswith("[run] baseline: ckdn.baseline.json not found")


REPLAY = """
[run]
top = 1
baseline = "ckdn.baseline.json"

[check.ruff]
command = "sh -c 'cp report.json {run_dir}/ruff.json; exit 1'"
parser = "ruff"
"""


def diagnostic(filename: str, row: int) -> dict[str, Any]:
    return {"code": "F841", "message": "Local variable `x` is assigned to but never used",
            "filename": filename, "location": {"row": row, "column": 5},
            "end_location": {"row": row, "column": 6}, "fix": None, "url": None}


def test_a_new_first_copy_the_report_lists_before_its_known_twin_is_held(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Occurrences go by line, not by the report's order: a report that lists line 4
    before line 2 (same content) has its first copy new and its second known. The tap
    holds both, so the evidence is read once (it used to be read again by position)."""
    project.config(REPLAY)
    (project.root / "a.py").write_text("def f():\n    x = 1\n")
    (project.root / "d.py").write_text("def f():\n    x = 1\ndef g():\n    x = 1\n")
    report = project.root / "report.json"
    report.write_text(json.dumps([diagnostic("a.py", 2), diagnostic("d.py", 2)]))
    record(project)
    report.write_text(json.dumps([diagnostic("a.py", 2), diagnostic("d.py", 4),
                                  diagnostic("d.py", 2)]))
    reads = parse_reads(monkeypatch)
    digest, _ = run(project)
    assert reads == [None]
    assert digest["baseline"] == {"known": 2, "new": 1}
    assert digest["findings"][0]["id"] == "d.py:4:5:F841"


def test_a_second_copy_of_a_finding_the_digest_kept_is_held(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first copy is among the ``top`` findings the digest keeps, the second (new)
    comes after: the tap counts the kept ones' copies too, so it holds the second."""
    project.config(REPLAY)
    (project.root / "d.py").write_text("def f():\n    x = 1\ndef g():\n    x = 1\n")
    report = project.root / "report.json"
    report.write_text(json.dumps([diagnostic("d.py", 2)]))
    record(project)
    report.write_text(json.dumps([diagnostic("d.py", 2), diagnostic("d.py", 4)]))
    reads = parse_reads(monkeypatch)
    digest, _ = run(project)
    assert reads == [None]
    assert digest["baseline"] == {"known": 1, "new": 1}
    assert digest["findings"][0]["id"] == "d.py:4:5:F841"
