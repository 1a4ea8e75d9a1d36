"""The baseline gate end to end: real ruff on a small project in a temporary git repo.

Record a baseline on a dirty project, then do what happens between two runs of a
real project (insert lines above the findings, reindent, reword, `git mv`): the
gate stays pass. Add a new copy of a known finding: the gate fails naming it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn import app
from ckdn.documents.types import GateDoc
from ckdn.identity import SCHEMA_BASELINE, decide, worst_gate
from ckdn.schema import load_schema
from tests.project import Project, parse_reads

#: Real ruff and git runs: command 1 leaves them to the whole suite (ckdn.toml).
pytestmark = pytest.mark.slow

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
DIRTY = "import os\nimport sys\n\n\ndef total(items):\n    return sum(items) + unused_name\n"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


@pytest.fixture
def dirty(project: Project) -> Project:
    assert RUFF is not None  # the dev extra's
    command = [RUFF, "check", "--no-cache", "--isolated", "--select", "F", "--output-format",
               "json", "--output-file", "{run_dir}/ruff.json", "."]
    project.config(f"""
        [run]
        baseline = "ckdn.baseline.json"

        [check.ruff]
        command = {json.dumps(command)}
        parser = "ruff"

        [check.fine]
        command = ["{sys.executable}", "-c", "pass"]
        parser = "generic"

        [check.both]
        members = ["ruff", "fine"]
        fail_fast = false

        [check.halting]
        members = ["ruff", "fine"]
    """)
    (project.root / "app.py").write_text(DIRTY)
    git(project.root, "init", "-q")
    git(project.root, "add", ".")
    git(project.root, "commit", "-qm", "dirty")
    return project


def gated(project: Project, *args: str) -> tuple[dict[str, Any], int]:
    proc = project.ckdn("run", *args)
    assert proc.stderr == "", proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    schema = load_schema("ckdn.aggregate/1" if "alias" in doc else "ckdn.digest/2")
    Draft202012Validator(schema).validate(doc)
    return doc, proc.returncode


def test_a_recorded_baseline_holds_every_finding_sorted_and_the_gate_passes(
        dirty: Project) -> None:
    proc = dirty.ckdn("baseline", "ruff")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"baseline": "ckdn.baseline.json",
                                       "checks": {"ruff": {"recorded": 3}}}
    data = json.loads((dirty.root / "ckdn.baseline.json").read_text())
    assert data["schema"] == SCHEMA_BASELINE
    assert data["checks"]["ruff"] == sorted(data["checks"]["ruff"])
    assert len(data["checks"]["ruff"]) == 3
    doc, code = gated(dirty, "ruff", "--gate")
    assert doc["status"] == "fail"  # the gate never changes the status
    assert doc["gate"] == {"status": "pass", "policy": "no_new_findings"}
    assert doc["baseline"] == {"known": 3, "new": 0}
    assert all(f["baselined"] for f in doc["findings"])
    assert code == 0
    assert gated(dirty, "ruff")[1] == 1  # without --gate, the tool's exit code


def test_edits_that_keep_the_findings_keep_the_gate_green(dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    app = dirty.root / "app.py"
    app.write_text('"""Totals."""\n\n# inserted above\n' + DIRTY.replace(
        "    return sum(items) + unused_name",
        "    if items:\n        return sum(items) + unused_name"))
    doc, code = gated(dirty, "ruff", "--gate")
    assert (doc["gate"]["status"], doc["baseline"], code) == ("pass", {"known": 3, "new": 0}, 0)
    git(dirty.root, "mv", "app.py", "totals.py")
    doc, code = gated(dirty, "ruff", "--gate")
    assert [f["location"].split(":")[0] for f in doc["findings"]] == ["totals.py"] * 3
    assert (doc["gate"]["status"], doc["baseline"], code) == ("pass", {"known": 3, "new": 0}, 0)


def test_a_new_copy_of_a_known_finding_fails_the_gate_naming_it_first(dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    (dirty.root / "app.py").write_text(DIRTY + "\n\ndef again():\n    return unused_name\n")
    doc, code = gated(dirty, "ruff", "--gate")
    assert doc["gate"]["status"] == "fail"
    assert doc["gate"]["reason"] == ("1 new finding(s) not in the baseline "
                                     "(first: app.py:10:12:F821)")
    assert doc["baseline"] == {"known": 3, "new": 1}
    assert doc["findings"][0]["id"] == "app.py:10:12:F821"
    assert "baselined" not in doc["findings"][0]
    assert [bool(f.get("baselined")) for f in doc["findings"]] == [False, True, True, True]
    assert code == 1


def test_a_fixed_finding_is_counted_stale_and_prune_drops_it_without_adding_new_ones(
        dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    (dirty.root / "app.py").write_text(DIRTY.replace("import sys\n", "") +
                                       "\n\ndef again():\n    return unused_name\n")
    doc, _ = gated(dirty, "ruff")
    assert doc["summary"]["baseline_stale"] == 1
    proc = dirty.ckdn("baseline", "ruff", "--prune")
    assert json.loads(proc.stdout)["checks"] == {
        "ruff": {"kept": 2, "dropped": 1, "new_not_added": 1}}
    doc, code = gated(dirty, "ruff", "--gate")
    assert (doc["baseline"], doc["gate"]["status"], code) == ({"known": 2, "new": 1}, "fail", 1)
    assert "baseline_stale" not in doc.get("summary", {})


def test_a_green_run_passes_the_gate_without_a_baseline_key(dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    doc, code = gated(dirty, "fine", "--gate")
    assert doc["gate"] == {"status": "pass", "policy": "no_new_findings"}
    assert "baseline" not in doc
    assert code == 0


def test_an_alias_carries_its_worst_members_gate(dirty: Project) -> None:
    dirty.ckdn("baseline", "both")
    doc, code = gated(dirty, "both", "--gate")
    assert doc["gate"] == {"status": "pass", "policy": "no_new_findings"}
    assert code == 0
    (dirty.root / "app.py").write_text(DIRTY + "x = other_name\n")
    doc, code = gated(dirty, "both", "--gate")
    assert doc["gate"]["status"] == "fail"
    assert doc["gate"]["reason"].startswith("ruff: 1 new finding(s)")
    assert code == 1


def test_under_the_gate_fail_fast_stops_at_a_failed_gate_not_at_known_findings(
        dirty: Project) -> None:
    dirty.ckdn("baseline", "halting")
    doc, code = gated(dirty, "halting", "--gate")
    assert [m["status"] for m in doc["members"]] == ["fail", "pass"]  # fine still ran
    assert (doc["status"], doc["gate"]["status"], code) == ("fail", "pass", 0)
    doc, code = gated(dirty, "halting")  # by the status, as without a baseline: it stops
    assert [m["status"] for m in doc["members"]] == ["fail", "skipped"]
    assert code == 1
    (dirty.root / "app.py").write_text(DIRTY + "x = other_name\n")
    doc, code = gated(dirty, "halting", "--gate")
    assert [m["status"] for m in doc["members"]] == ["fail", "skipped"]
    assert (doc["gate"]["status"], code) == ("fail", 1)


def test_without_the_file_the_gate_is_unavailable_and_a_red_run_stays_red(
        dirty: Project) -> None:
    doc, code = gated(dirty, "ruff", "--gate")
    assert doc["gate"]["status"] == "unavailable"
    assert "ckdn.baseline.json not found" in doc["gate"]["reason"]
    assert code == 1  # the run's own exit code


def test_a_run_whose_findings_may_be_incomplete_is_refused_and_the_file_unchanged(
        dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    before = (dirty.root / "ckdn.baseline.json").read_bytes()
    (dirty.root / "app.py").write_text("def broken(:\n")  # ruff reports the syntax error...
    (dirty.root / "ckdn.toml").write_text((dirty.root / "ckdn.toml").read_text().replace(
        '"--output-file", "{run_dir}/ruff.json", "."', '"."'))  # ...but writes no report
    proc = dirty.ckdn("baseline", "ruff")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ckdn: ruff: status error (")
    assert "ckdn.baseline.json unchanged" in proc.stderr
    assert (dirty.root / "ckdn.baseline.json").read_bytes() == before


def test_a_baselined_check_no_longer_configured_is_reported_stale_and_pruned(
        dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    data = json.loads((dirty.root / "ckdn.baseline.json").read_text())
    data["checks"]["gone"] = data["checks"]["ruff"][:1]
    (dirty.root / "ckdn.baseline.json").write_text(json.dumps(data))
    assert json.loads(dirty.ckdn("baseline", "fine").stdout)["stale_checks"] == ["gone"]
    assert json.loads(dirty.ckdn("baseline", "fine", "--prune").stdout)["dropped_checks"] == [
        "gone"]
    assert "gone" not in json.loads((dirty.root / "ckdn.baseline.json").read_text())["checks"]


def test_a_baseline_file_that_is_not_one_makes_the_gate_unavailable(dirty: Project) -> None:
    (dirty.root / "ckdn.baseline.json").write_text('{"schema": "other"}')
    doc, _ = gated(dirty, "ruff", "--gate")
    assert doc["gate"]["status"] == "unavailable"
    assert "is not a ckdn.baseline/1 file" in doc["gate"]["reason"]


def test_baseline_without_a_configured_file_and_gate_without_one_are_refused(
        project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    proc = project.ckdn("baseline", "ok")
    assert (proc.returncode, proc.stderr) == (2, "ckdn: no baseline is configured: add "
                                              'baseline = "ckdn.baseline.json" under [run] in '
                                              "ckdn.toml\n")
    for argv in (("run", "ok", "--gate"), ("run", "--all", "--gate")):
        proc = project.ckdn(*argv)
        assert proc.returncode == 2
        assert proc.stderr == ("ckdn: --gate needs a baseline: set baseline under [run] in "
                               "ckdn.toml\n")
        assert proc.stdout == ""  # refused before running: exit 2 means nothing ran
    assert project.run_dirs() == []


@pytest.mark.parametrize(("status", "kwargs", "expected"), [
    ("error", {"total": 2, "classified": 2, "new": 0}, "unavailable"),
    ("parse_mismatch", {"total": 0, "classified": 0, "new": 0}, "unavailable"),
    ("fail", {"total": 3, "classified": 2, "new": 0}, "unavailable"),
    ("fail", {"total": 0, "classified": 0, "new": 0}, "fail"),  # an exit code alone
    ("fail", {"total": 2, "classified": 2, "new": 0, "gate_failures": 1}, "fail"),
    ("fail", {"total": 2, "classified": 2, "new": 1}, "fail"),
    ("fail", {"total": 2, "classified": 2, "new": 0}, "pass"),
    ("pass", {"total": 0, "classified": 0, "new": 0}, "pass"),
])
def test_the_gate_decision(status: str, kwargs: dict[str, int], expected: str) -> None:
    gate = decide(status, 1, total=kwargs["total"], classified=kwargs["classified"],
                  new=kwargs["new"], gate_failures=kwargs.get("gate_failures", 0))
    assert gate["status"] == expected


def test_an_alias_gate_never_passes_a_member_that_did_not_run() -> None:
    passed: GateDoc = {"status": "pass", "policy": "no_new_findings"}
    assert worst_gate([("a", passed), ("b", None)])["status"] == "unavailable"
    failed: GateDoc = {"status": "fail", "policy": "no_new_findings", "reason": "1 new"}
    assert worst_gate([("a", failed), ("b", None)]) == {
        "status": "fail", "policy": "no_new_findings", "reason": "a: 1 new"}
    unjudged: GateDoc = {"status": "unavailable", "policy": "no_new_findings",
                         "reason": "status is error"}
    # the member fail-fast stopped at is the reason, not the ones it then skipped
    assert worst_gate([("a", unjudged), ("b", None)]) == {
        "status": "unavailable", "policy": "no_new_findings", "reason": "a: status is error"}


def test_a_symlinked_baseline_has_its_target_rewritten(dirty: Project) -> None:
    target = dirty.root / "shared" / "baseline.json"
    target.parent.mkdir()
    target.write_text('{"checks": {}, "schema": "ckdn.baseline/1"}\n')
    (dirty.root / "ckdn.baseline.json").symlink_to(target)
    assert dirty.ckdn("baseline", "ruff").returncode == 0
    assert (dirty.root / "ckdn.baseline.json").is_symlink()
    assert len(json.loads(target.read_text())["checks"]["ruff"]) == 3


def test_diff_pairs_the_findings_of_a_file_moved_with_git_mv(dirty: Project) -> None:
    """The later run's findings.jsonl keeps each finding's line hash, so `ckdn diff`
    retries a finding of a renamed file under its old path, as the gate does."""
    gated(dirty, "ruff")
    git(dirty.root, "mv", "app.py", "totals.py")
    gated(dirty, "ruff")
    proc = dirty.ckdn("diff", "-1", "latest", "--json")
    doc = json.loads(proc.stdout)
    assert doc["counts"] == {"new": 0, "fixed": 0, "moved": 3, "unchanged": 0}
    assert [entry["was"].split(":")[0] for entry in doc["moved"]] == ["app.py"] * 3
    assert proc.returncode == 0


def test_prune_keeps_the_entries_of_a_file_moved_with_git_mv(dirty: Project) -> None:
    dirty.ckdn("baseline", "ruff")
    git(dirty.root, "mv", "app.py", "totals.py")
    proc = dirty.ckdn("baseline", "ruff", "--prune")
    assert json.loads(proc.stdout)["checks"] == {
        "ruff": {"kept": 3, "dropped": 0, "new_not_added": 0}}
    doc, code = gated(dirty, "ruff", "--gate")  # the entries now name totals.py's findings
    assert (doc["baseline"], doc["gate"]["status"], code) == ({"known": 3, "new": 0}, "pass", 0)


def test_baseline_records_the_fingerprints_the_run_wrote_reading_its_evidence_once(
        dirty: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn import app

    reads = parse_reads(monkeypatch)
    config = app.load_config(str(dirty.root))
    assert app.record_baseline(config, "ruff")["checks"] == {"ruff": {"recorded": 3}}
    assert reads == [None]  # the run's own parse: no second one for the baseline
    latest = dirty.root / ".agent-runs" / "latest" / "findings.jsonl"
    rows = [json.loads(line) for line in latest.read_text().splitlines()[1:]]
    recorded = json.loads((dirty.root / "ckdn.baseline.json").read_text())
    assert recorded["checks"]["ruff"] == sorted(row["fingerprint"] for row in rows)


def test_stored_records_from_the_newest_stored_run_without_running_the_check(
        dirty: Project) -> None:
    """A nox session's or tox env's tools live in its virtualenv: record from its run."""
    refused = dirty.ckdn("baseline", "ruff", "--stored")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.startswith("ckdn: ruff: no stored run to record from; run it first")
    assert dirty.ckdn("run", "ruff").returncode == 1
    before = dirty.run_dirs()
    proc = dirty.ckdn("baseline", "ruff", "--stored")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["checks"]["ruff"]
    assert report == {"recorded": 3, "from": f".agent-runs/{before[-1].name}"}
    assert dirty.run_dirs() == before  # nothing ran
    stored = json.loads((dirty.root / "ckdn.baseline.json").read_text())
    assert dirty.ckdn("baseline", "ruff").returncode == 0  # the same fingerprints, run again
    assert json.loads((dirty.root / "ckdn.baseline.json").read_text()) == stored
    doc, code = gated(dirty, "ruff", "--gate")
    assert (doc["gate"]["status"], code) == ("pass", 0)


def test_stored_reads_the_newer_of_ckdn_runs_run_and_one_hosts(dirty: Project) -> None:
    """An old ``ckdn run ruff`` (made before the tools moved into a tox env) does not hide
    the env's newer run, nor the env's an even newer ``ckdn run``."""
    def backdate(suffix: str, stamp: str) -> None:
        """Run dir names order the runs (whole seconds): give one an earlier stamp."""
        made, = (path for path in dirty.run_dirs() if path.name.endswith(f"Z-{suffix}")
                 and not path.name.startswith("2000"))
        made.rename(made.with_name(f"{stamp}-{suffix}"))

    config = app.load_config(dirty.root)
    assert dirty.ckdn("run", "ruff").returncode == 1
    backdate("ruff", "20000101T000000Z")
    app.run(config, "ruff", run_name=lambda name: f"{name}@lint")
    proc = dirty.ckdn("baseline", "ruff", "--stored")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checks"]["ruff"]["from"].endswith("-ruff@lint")
    backdate("ruff@lint", "20000101T000001Z")
    assert dirty.ckdn("run", "ruff").returncode == 1
    proc = dirty.ckdn("baseline", "ruff", "--stored")
    shown = json.loads(proc.stdout)["checks"]["ruff"]["from"]
    assert shown.endswith("Z-ruff")
    assert not shown.startswith(".agent-runs/2000")


def test_stored_reads_a_hosts_run_of_the_check_and_refuses_two_hosts_or_a_partial_run(
        dirty: Project) -> None:
    config = app.load_config(dirty.root)  # the host's door, as tox calls it: runs NAME@ENV
    app.run(config, "ruff", run_name=lambda name: f"{name}@lint")
    proc = dirty.ckdn("baseline", "ruff", "--stored")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checks"]["ruff"]["from"].endswith("-ruff@lint")
    app.run(config, "ruff", run_name=lambda name: f"{name}@py311")
    proc = dirty.ckdn("baseline", "ruff", "--stored")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ckdn: ruff: runs of ruff@lint, ruff@py311 are stored;")
    assert "`ckdn baseline ruff@lint --stored`" in proc.stderr
    proc = dirty.ckdn("baseline", "ruff@py311", "--stored")  # the env named: its run
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checks"]["ruff"]["from"].endswith("-ruff@py311")
    proc = dirty.ckdn("baseline", "ruff@py311")  # running is the env's job, not ckdn's
    assert proc.returncode == 2
    assert proc.stderr == ("ckdn: ruff@py311 is a run a tox env or nox session made: add "
                           "--stored to record from it (`ckdn baseline ruff@py311 --stored`)\n")
    proc = dirty.ckdn("baseline", "ruff@py312", "--stored")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ckdn: ruff@py312: no stored run to record from")
    (dirty.root / "app.py").write_text("def broken(:\n")  # ruff's syntax error: still fail
    dirty.config((dirty.root / "ckdn.toml").read_text().replace(
        '[check.fine]', '[check.missing]\ncommand = "no-such-program-here"\nparser = "generic"\n'
        '\n[check.fine]'))
    assert dirty.ckdn("run", "missing").returncode == 127
    proc = dirty.ckdn("baseline", "missing", "--stored")
    assert proc.returncode == 2
    assert "a baseline is recorded only from a run whose findings are complete" in proc.stderr
