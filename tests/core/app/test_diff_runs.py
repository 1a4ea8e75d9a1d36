"""`ckdn diff A B` on real ruff runs of a real small project: edit, run again, compare."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ckdn.schema import load_schema
from tests.project import Project, parse_reads

ROOT = Path(__file__).resolve().parents[3]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))  # the dev extra's ruff

CONFIG = f"""
[run]
top = {{top}}

[check.ruff]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{{{run_dir}}}}/ruff.json", "."]
parser = "ruff"

[check.other]
command = "true"
parser = "generic"
"""

APP = "import os\nimport sys\n\n\ndef f():\n    x = 1\n    return 2\n"
LIB = "import json\n"
#: `sys` removed (fixed), three comment lines above `f` (its F841 moves), `re` added (new).
APP_EDITED = "import os\n\n# one\n# two\n# three\n\ndef f():\n    x = 1\n    return 2\n"
LIB_EDITED = "import json\nimport re\n"


@pytest.fixture
def ruff_project(project: Project) -> Project:
    assert RUFF is not None
    project.config(CONFIG.format(top=20))
    (project.root / "app.py").write_text(APP)
    (project.root / "lib.py").write_text(LIB)
    return project


def run_ruff(project: Project) -> dict[str, Any]:
    proc = project.ckdn("run", "ruff")
    assert proc.returncode == 1, proc.stderr
    return project.digest(proc)


def diff(project: Project, *refs: str) -> tuple[int, dict[str, Any]]:
    proc = project.ckdn("diff", *refs, "--json")
    assert proc.stderr == ""
    doc: dict[str, Any] = json.loads(proc.stdout)
    return proc.returncode, doc


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["id"] for entry in entries]


def test_a_red_run_records_every_finding_with_its_fingerprint_in_findings_jsonl(
        ruff_project: Project) -> None:
    ruff_project.config(CONFIG.format(top=1))  # the digest keeps one; the file has all four
    digest = run_ruff(ruff_project)
    assert len(digest["findings"]) == 1
    lines = (ruff_project.root / digest["run_dir"] / "findings.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"schema": "ckdn.findings/1", "check": "ruff", "total": 4}
    rows = [json.loads(line) for line in lines[1:]]
    assert [row["id"] for row in rows] == ["app.py:1:8:F401", "app.py:2:8:F401",
                                           "app.py:6:5:F841", "lib.py:1:8:F401"]
    assert all(set(row) == {"fingerprint", "id", "kind", "line_hash", "location", "message"}
               for row in rows)
    assert "findings.jsonl" in digest["artifacts"]


def test_a_green_run_writes_no_findings_file(ruff_project: Project) -> None:
    (ruff_project.root / "app.py").write_text("def f():\n    return 2\n")
    (ruff_project.root / "lib.py").write_text("")
    proc = ruff_project.ckdn("run", "ruff")
    assert proc.returncode == 0
    (run_dir,) = ruff_project.run_dirs()
    assert not (run_dir / "findings.jsonl").exists()


def test_diff_after_fixing_one_adding_one_and_moving_one_shows_exactly_that(
        ruff_project: Project) -> None:
    first = run_ruff(ruff_project)
    (ruff_project.root / "app.py").write_text(APP_EDITED)
    (ruff_project.root / "lib.py").write_text(LIB_EDITED)
    second = run_ruff(ruff_project)
    rc, doc = diff(ruff_project, first["run_dir"], "latest")
    assert rc == 1  # B has a new finding
    assert doc["counts"] == {"new": 1, "fixed": 1, "moved": 1, "unchanged": 2}
    assert ids(doc["new"]) == ["lib.py:2:8:F401"]
    assert ids(doc["fixed"]) == ["app.py:2:8:F401"]
    assert [(e["was"], e["location"]) for e in doc["moved"]] == [("app.py:6:5", "app.py:8:5")]
    assert ids(doc["unchanged"]) == ["app.py:1:8:F401", "lib.py:1:8:F401"]
    assert doc["a"]["run_dir"] == first["run_dir"]
    assert doc["b"]["run_dir"] == second["run_dir"]
    jsonschema.Draft202012Validator(load_schema("ckdn.diff/1")).validate(doc)
    # -1: the run of B's check before B, the same comparison, by the runs' names: a write
    # into A's dir since (its mtime newer than B's) does not make A the later run
    later = (ruff_project.root / second["run_dir"]).stat().st_mtime + 60
    os.utime(ruff_project.root / first["run_dir"], (later, later))
    assert diff(ruff_project, "-1", second["run_dir"]) == (rc, doc)


def test_the_text_summary_names_the_counts_and_each_changed_finding(
        ruff_project: Project) -> None:
    run_ruff(ruff_project)
    (ruff_project.root / "app.py").write_text(APP_EDITED)
    (ruff_project.root / "lib.py").write_text(LIB_EDITED)
    second = run_ruff(ruff_project)
    proc = ruff_project.ckdn("diff", "-1", "latest")
    assert proc.returncode == 1
    # One run named is that run against the one before it: `ckdn diff ruff` said
    # "the following arguments are required: b".
    assert ruff_project.ckdn("diff", "ruff").stdout == proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("ruff: 1 new, 1 fixed, 1 moved, 2 unchanged (")
    assert lines[0].endswith(f" -> {second['run_dir']})")
    assert lines[1:] == ["new    lib.py:2:8  F401 `re` imported but unused",
                         "fixed  app.py:2:8  F401 `sys` imported but unused",
                         "moved  app.py:6:5 -> app.py:8:5  F841 Local variable `x` is "
                         "assigned to but never used"]


def test_diff_with_nothing_new_exits_0_and_lists_only_the_top_of_each_class(
        ruff_project: Project) -> None:
    ruff_project.config(CONFIG.format(top=1))
    first = run_ruff(ruff_project)
    (ruff_project.root / "app.py").write_text("\n\n" + APP)  # everything in app.py moves
    run_ruff(ruff_project)
    rc, doc = diff(ruff_project, first["run_dir"], "latest")
    assert rc == 0
    assert doc["counts"] == {"new": 0, "fixed": 0, "moved": 3, "unchanged": 1}
    assert len(doc["moved"]) == 1
    assert doc["top"] == 1


def test_from_a_green_run_everything_is_new_and_to_a_green_run_everything_is_fixed(
        ruff_project: Project) -> None:
    (ruff_project.root / "app.py").write_text("def f():\n    return 2\n")
    (ruff_project.root / "lib.py").write_text("")
    assert ruff_project.ckdn("run", "ruff").returncode == 0
    (ruff_project.root / "app.py").write_text(APP)
    (ruff_project.root / "lib.py").write_text(LIB)
    run_ruff(ruff_project)
    rc, doc = diff(ruff_project, "-1", "latest")
    assert (rc, doc["counts"]) == (1, {"new": 4, "fixed": 0, "moved": 0, "unchanged": 0})
    assert doc["a"] == {"run_dir": doc["a"]["run_dir"], "status": "pass", "findings_total": 0}
    (ruff_project.root / "app.py").write_text("def f():\n    return 2\n")
    (ruff_project.root / "lib.py").write_text("")
    assert ruff_project.ckdn("run", "ruff").returncode == 0
    rc, doc = diff(ruff_project, "-1", "latest")
    assert (rc, doc["counts"]) == (0, {"new": 0, "fixed": 4, "moved": 0, "unchanged": 0})
    assert ids(doc["fixed"]) == ["app.py:1:8:F401", "app.py:2:8:F401", "app.py:6:5:F841",
                                 "lib.py:1:8:F401"]
    jsonschema.Draft202012Validator(load_schema("ckdn.diff/1")).validate(doc)


def refused(project: Project, *refs: str) -> str:
    proc = project.ckdn("diff", *refs)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("ckdn: ")
    return proc.stderr


def test_runs_of_two_checks_are_refused(ruff_project: Project) -> None:
    first = run_ruff(ruff_project)
    assert ruff_project.ckdn("run", "other").returncode == 0
    assert "compares two runs of one check" in refused(ruff_project, first["run_dir"], "latest")


def test_an_unfinished_run_is_refused(ruff_project: Project) -> None:
    first = run_ruff(ruff_project)
    second = run_ruff(ruff_project)
    os.remove(ruff_project.root / second["run_dir"] / "digest.json")
    assert "is unfinished" in refused(ruff_project, first["run_dir"], second["run_dir"])


def test_an_alias_run_is_refused(ruff_project: Project) -> None:
    with open(ruff_project.root / "ckdn.toml", "a") as config:
        config.write('[check.lint]\nmembers = ["ruff"]\n')
    first = run_ruff(ruff_project)
    assert ruff_project.ckdn("run", "lint").returncode == 1
    assert "is an alias run" in refused(ruff_project, first["run_dir"], "latest")


def test_a_run_with_findings_but_no_findings_file_is_refused(ruff_project: Project) -> None:
    first = run_ruff(ruff_project)
    run_ruff(ruff_project)
    os.remove(ruff_project.root / first["run_dir"] / "findings.jsonl")
    assert "but no findings.jsonl" in refused(ruff_project, "-1", "latest")


@pytest.mark.parametrize("garbage", [b"", b"not json\n", b"\x00\xff" * 50,
                                     b'{"schema":"ckdn.findings/1","check":"ruff","total":4}\n'])
def test_a_findings_file_that_is_not_one_ckdn_wrote_is_refused(
        ruff_project: Project, garbage: bytes) -> None:
    first = run_ruff(ruff_project)
    run_ruff(ruff_project)
    (ruff_project.root / first["run_dir"] / "findings.jsonl").write_bytes(garbage)
    assert "findings.jsonl" in refused(ruff_project, "-1", "latest")


def test_a_reference_before_the_first_run_or_an_unknown_one_is_refused(
        ruff_project: Project) -> None:
    run_ruff(ruff_project)
    assert "0 earlier run(s)" in refused(ruff_project, "-1", "latest")
    assert "no run" in refused(ruff_project, "nope", "latest")
    assert "-N names a run before B" in refused(ruff_project, "latest", "-1")


def example(name: str) -> str:
    page = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", page, re.DOTALL)
    assert found is not None, name
    return found.group(1)


def test_the_diff_pages_examples_are_what_ckdn_prints_for_that_edit(
        ruff_project: Project) -> None:
    first = run_ruff(ruff_project)
    (ruff_project.root / "app.py").write_text(APP_EDITED)
    (ruff_project.root / "lib.py").write_text(LIB_EDITED)
    second = run_ruff(ruff_project)
    text = ruff_project.ckdn("diff", "-1", "latest").stdout
    shown = example("ckdn diff -1 latest --json")
    documented = json.loads(shown)
    names = (documented["a"]["run_dir"], documented["b"]["run_dir"])
    for old, new in zip(names, (first["run_dir"], second["run_dir"]), strict=True):
        text = text.replace(new, old)
    assert text == example("ckdn diff -1 latest")
    _rc, real = diff(ruff_project, "-1", "latest")
    real["a"]["run_dir"], real["b"]["run_dir"] = names
    assert real == documented
    assert shown == json.dumps(documented, indent=2) + "\n"


def test_with_a_baseline_one_parse_serves_the_digest_the_gate_and_the_findings_file(
        ruff_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn import app

    ruff_project.config(CONFIG.format(top=1).replace(
        "[run]\n", '[run]\nbaseline = "ckdn.baseline.json"\n'))
    config = app.load_config(str(ruff_project.root))
    app.record_baseline(config, "ruff")
    recorded = json.loads((ruff_project.root / "ckdn.baseline.json").read_text())
    reads = parse_reads(monkeypatch)  # the `top` of each parse
    digest = app.run(config, "ruff").digest
    assert digest["gate"]["status"] == "pass"
    assert reads == [None]  # the digest's (the check's top): every finding handed over in it
    lines = (ruff_project.root / digest["run_dir"] / "findings.jsonl").read_text().splitlines()
    prints = sorted(json.loads(line)["fingerprint"] for line in lines[1:])
    assert prints == recorded["checks"]["ruff"]  # one fingerprint function for both


def untapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser hands no finding over as it goes (as a plugin's may not): the run reads
    its evidence again for the file, the way it did before the tap."""
    from ckdn.parsers.base import FindingSink, ParseContext

    monkeypatch.setattr(ParseContext, "sink", lambda self: FindingSink(self.top))


def test_one_parse_writes_every_finding_past_the_old_reread_limit_without_a_baseline(
        ruff_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn import app
    from ckdn.app._running import findings, parsing

    monkeypatch.setattr(findings, "REREAD_LIMIT", 2)  # what a parser that hands none over gets
    reads = parse_reads(monkeypatch)
    ruff_project.config(CONFIG.format(top=1))
    digest = app.run(app.load_config(str(ruff_project.root)), "ruff").digest
    assert digest["findings_total"] == 4
    assert len(digest["findings"]) == 1
    assert reads == [None]  # one parse: the evidence was not read again
    assert "findings.jsonl" in digest["artifacts"]
    run = ruff_project.root / digest["run_dir"]
    lines = (run / "findings.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["total"] == 4
    assert len(lines) == 5
    assert not (run / parsing.SPOOL).exists()  # the spool is gone once the file is written
    assert [json.loads(line)["id"] for line in lines[1:2]] == [digest["findings"][0]["id"]]


def test_a_run_whose_findings_cannot_all_be_read_again_gets_no_file_and_a_note(
        ruff_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn import app
    from ckdn.app._running import parsing

    untapped(monkeypatch)
    ruff_project.config(CONFIG.format(top=1))
    real_parse = parsing.parse_run

    def short_reread(*args: Any, **kwargs: Any) -> Any:
        result = real_parse(*args, **kwargs)
        if kwargs.get("top") == parsing.ALL_FINDINGS:  # the report changed meanwhile, say
            del result.findings[2:]
        return result

    monkeypatch.setattr(parsing, "parse_run", short_reread)
    digest = app.run(app.load_config(str(ruff_project.root)), "ruff").digest
    assert digest["status"] == "fail"
    assert "findings.jsonl not written: 4 findings, only 2 could be read again" in digest["notes"]
    assert "findings.jsonl" not in digest["artifacts"]
    run_ruff(ruff_project)
    assert "but no findings.jsonl" in refused(ruff_project, "-1", "latest")


def test_past_the_reread_limit_an_untapped_run_without_a_baseline_gets_no_file_and_a_note(
        ruff_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn import app
    from ckdn.app._running import findings

    monkeypatch.setattr(findings, "REREAD_LIMIT", 2)
    untapped(monkeypatch)
    reads = parse_reads(monkeypatch)
    ruff_project.config(CONFIG.format(top=1))
    config = app.load_config(str(ruff_project.root))
    digest = app.run(config, "ruff").digest
    assert digest["findings_total"] == 4
    assert reads == [None]  # the evidence was not read again
    assert "findings.jsonl" not in digest["artifacts"]
    assert ("findings.jsonl not written: 4 findings, more than the 2 read again for it "
            "without a baseline; set [run].baseline (or a top that keeps them all) for "
            "`ckdn diff`") in digest["notes"]
    ruff_project.config(CONFIG.format(top=20))  # the parser keeps them all: no re-read needed
    config = app.load_config(str(ruff_project.root))
    digest = app.run(config, "ruff").digest
    assert "findings.jsonl" in digest["artifacts"]
    proc = ruff_project.ckdn("diff", "-1", "latest")
    assert proc.returncode == 2
    assert "findings.jsonl" in proc.stderr


def test_the_diff_pages_findings_file_is_what_ckdn_writes(ruff_project: Project) -> None:
    digest = run_ruff(ruff_project)
    lines = (ruff_project.root / digest["run_dir"] / "findings.jsonl").read_text().splitlines()
    shown = example("findings.jsonl").splitlines()
    assert shown[:2] == lines[:2]
    assert shown[2:] == ["..."]
    row = json.loads(lines[1])
    assert lines[1] == json.dumps(row, separators=(",", ":"), sort_keys=True)
