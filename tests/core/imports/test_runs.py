"""An imported run is an ordinary stored run, visibly weaker: every verb reads it, every view
labels it, a native-only gate refuses it, and a native ``ckdn run`` never loads an importer."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.app import load_config
from ckdn.app.importing import import_results
from ckdn.schema import load_schema
from tests.project import Project, clean_env

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
SUREFIRE = FIXTURES / "junit" / "surefire.xml"


def valid(doc: dict[str, object], schema: str = "ckdn.digest/2") -> list[str]:
    return [e.message for e in Draft202012Validator(load_schema(schema)).iter_errors(doc)]


def test_an_import_is_stored_with_rc_null_and_its_origin(project: Project) -> None:
    project.config("")
    proc = project.ckdn("import", "junit", str(SUREFIRE), "--as", "java")
    assert proc.returncode == 1, proc.stderr
    doc = project.digest(proc)
    assert doc["rc"] is None
    assert doc["status"] == "fail"
    origin = doc["origin"]["imported"]
    assert (origin["format"], origin["variant"], origin["producer"]) == (
        "junit", "surefire", "maven-surefire")
    assert origin["bytes"] == SUREFIRE.stat().st_size
    assert doc["import_summary"] == {"read": 4, "attached": 4, "unattached_by_reason": {}}
    assert valid(doc) == []
    run_dir = project.root / doc["run_dir"]
    assert (run_dir / "imported.xml").read_bytes() == SUREFIRE.read_bytes()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["parser"] == "import:junit"
    assert valid(meta, "ckdn.meta/1") == []


def test_a_refused_import_exits_2_in_one_line_and_leaves_no_run(project: Project) -> None:
    project.config("")
    bad = project.root / "bad.xml"
    bad.write_text("<results/>")
    proc = project.ckdn("import", "junit", str(bad), "--as", "java")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "<results>" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert project.run_dirs() == []


def test_every_verb_reads_an_import_and_every_view_labels_it(project: Project) -> None:
    project.config("")
    for _ in range(2):
        assert project.ckdn("import", "junit", str(SUREFIRE), "--as", "java").returncode == 1
    show = project.ckdn("show", "--json")
    assert json.loads(show.stdout)["origin"]["imported"]["format"] == "junit"
    listed = json.loads(project.ckdn("list", "--json").stdout)["runs"]
    assert [(run["check"], run["status"]) for run in listed] == [("java", "fail")] * 2
    diff = project.ckdn("diff", "-1", "latest", "--json")
    assert diff.returncode == 0, diff.stderr
    for fmt, label in (("text", "imported junit (surefire"), ("github", "java (imported)"),
                       ("summary", "imported junit"), ("sarif", "imported junit"),
                       ("codequality", "[imported]")):
        out = project.ckdn("annotate", "--format", fmt)
        assert out.returncode == 0, out.stderr
        assert label in out.stdout, fmt


def test_a_gate_that_requires_native_runs_refuses_an_import(project: Project) -> None:
    project.config("""
        [run]
        baseline = "ckdn.baseline.json"
        gate_requires_native = true
        """)
    doc = project.digest(project.ckdn("import", "tap", str(FIXTURES / "tap" / "tape.tap"),
                                      "--as", "js"))
    assert doc["gate"]["status"] == "fail"
    assert "gate_requires_native" in doc["gate"]["reason"]
    assert valid(doc) == []


def test_a_check_table_imports_inside_an_alias(project: Project) -> None:
    project.config(f"""
        [check.ok]
        command = "true"
        parser = "generic"
        [check.java]
        import = {{format = "junit", path = "{SUREFIRE}"}}
        [check.all]
        members = ["ok", "java"]
        fail_fast = false
        """)
    proc = project.ckdn("run", "all")
    assert proc.returncode == 1, proc.stderr
    aggregate = project.digest(proc)
    members = {m["check"]: m for m in aggregate["members"]}
    assert members["java"]["status"] == "fail"
    assert members["java"]["rc"] == 1  # an aggregate's member keeps an integer
    assert valid(aggregate, "ckdn.aggregate/1") == []
    assert project.ckdn("checks").returncode == 0
    refused = project.ckdn("run", "java", "--", "-x")
    assert refused.returncode == 2
    assert "runs no command" in refused.stderr


def test_a_merge_of_one_imported_file_twice_is_never_green_and_says_why(
        project: Project) -> None:
    # Two runs of one check table read the same file: one CI job's evidence counted twice
    # (tests/core/imports/test_merge.py merges imports of different files).
    passing = FIXTURES / "junit" / "pytest-xunit2.xml"
    project.config(f"""
        [check.java]
        import = {{format = "junit", path = "{passing}"}}
        """)
    runs = [project.digest(project.ckdn("run", "java"))["run_dir"] for _ in range(2)]
    proc = project.ckdn("merge", "--check", "java", "--expect", "2", *runs)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode != 0
    merged = project.digest(proc)
    assert merged["status"] == "error"
    assert merged["rc"] is None
    assert any("the same imported file as" in note for note in merged["notes"]), merged["notes"]
    assert valid(merged) == []


def test_a_check_table_import_is_refused_with_a_command_beside_it(project: Project) -> None:
    project.config("""
        [check.java]
        import = {format = "junit", path = "a.xml"}
        command = "true"
        """)
    proc = project.ckdn("run", "java")
    assert proc.returncode == 2
    assert "an imported check runs no command" in proc.stderr


def test_a_native_run_loads_no_importer(project: Project) -> None:
    project.config("""
        [check.ok]
        command = "true"
        parser = "generic"
        """)
    code = ("import sys; from ckdn.cli import main; main(['run', '-q', 'ok']); "
            "print(sorted(m for m in sys.modules if m.startswith(('ckdn.imports', "
            "'ckdn.app._running.importing', 'ckdn.app.exchange', 'ckdn.reports'))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=project.root, env=clean_env(),
                          capture_output=True, text=True, check=False)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


def test_every_finding_of_an_import_is_recorded_beyond_the_digests_top(project: Project) -> None:
    project.config("""
        [run]
        top = 3
        """)
    cases = "".join(f'<testcase classname="c" name="t{i}"><failure message="m{i}"/></testcase>'
                    for i in range(7))
    junit = project.root / "many.xml"
    junit.write_text(f'<testsuite name="s" tests="7" failures="7">{cases}</testsuite>')
    results = ",".join(json.dumps({"ruleId": "R", "level": "error", "message": {"text": f"r{i}"},
                                   "locations": [{"physicalLocation": {
                                       "artifactLocation": {"uri": f"a{i}.py"}}}]})
                       for i in range(7))
    sarif = project.root / "many.sarif"
    sarif.write_text('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, '
                     f'"results": [{results}]}}]}}')
    for fmt, path in (("junit", junit), ("sarif", sarif)):
        doc = project.digest(project.ckdn("import", fmt, str(path), "--as", fmt))
        assert (doc["findings_total"], len(doc["findings"])) == (7, 3)
        rows = (project.root / doc["run_dir"] / "findings.jsonl").read_text().splitlines()
        assert len(rows) == 1 + 7, fmt


def test_doctor_and_verify_config_judge_an_imported_check_by_its_file(project: Project) -> None:
    project.config("""
        [check.java]
        import = {format = "junit", path = "missing.xml"}
        """)
    doctor = json.loads(project.ckdn("doctor", "--json").stdout)
    assert [(p["check"], p["rule"]) for p in doctor["problems"] if p.get("check")] == [
        ("java", "not-found")]
    assert project.ckdn("lock-config", "-o", "lock.toml").returncode == 0
    assert project.ckdn("verify-config", "--lock-file", "lock.toml").returncode == 0


def test_an_imported_check_records_a_baseline_its_gate_then_passes(project: Project) -> None:
    project.config(f"""
        [run]
        baseline = "ckdn.baseline.json"
        [check.java]
        import = {{format = "junit", path = "{SUREFIRE}"}}
        """)
    assert project.ckdn("baseline", "java").returncode == 0
    gated = project.ckdn("run", "java", "--gate")
    assert gated.returncode == 0, gated.stderr
    assert project.digest(gated)["gate"]["status"] == "pass"


def test_checks_json_says_what_an_imported_check_reads(project: Project) -> None:
    project.config("""
        [check.java]
        import = {format = "junit", path = "build/TEST-app.xml"}
        """)
    row = json.loads(project.ckdn("checks", "--json").stdout)["checks"][0]
    assert (row["parser"], row["command"]) == ("import:junit", "")
    assert row["import"] == {"format": "junit",
                             "path": str(project.root / "build" / "TEST-app.xml")}


def _big_junit(path: Path, cases: int) -> bytes:
    body = "".join(f'<testcase classname="c" name="t{i}" time="0.001"/>' for i in range(cases))
    data = f'<testsuite name="s" tests="{cases}">{body}</testsuite>'.encode()
    path.write_bytes(data)
    return data


def test_the_copy_is_the_file_byte_for_byte_and_its_sha256_the_files(project: Project) -> None:
    project.config("")
    data = _big_junit(project.root / "big.xml", 50_000)  # > 2 MiB: several kernel copies
    assert len(data) > 1 << 21
    proc = project.ckdn("import", "junit", "big.xml", "--as", "big")
    assert proc.returncode == 0, proc.stderr
    doc = project.digest(proc)
    origin = doc["origin"]["imported"]
    assert (origin["sha256"], origin["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data))
    assert (project.root / doc["run_dir"] / "imported.xml").read_bytes() == data


def test_where_the_kernel_cannot_copy_the_file_is_copied_in_chunks(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.config("")
    data = _big_junit(project.root / "big.xml", 40_000)
    calls = []

    def refused(*args: object) -> int:
        calls.append(args)
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "sendfile", refused)
    monkeypatch.chdir(project.root)
    outcome = import_results(load_config(cwd=str(project.root)), "junit", "big.xml",
                             name="big")
    assert calls
    doc: dict[str, Any] = dict(outcome.document)
    origin = doc["origin"]["imported"]
    assert (origin["sha256"], origin["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data))
    assert (project.root / doc["run_dir"] / "imported.xml").read_bytes() == data
