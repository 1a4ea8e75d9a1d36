"""SARIF: valid against the official 2.1.0 schema, and what GitHub code scanning ingests.

The schema is vendored (data/SOURCE.md says from where); GitHub's documented
ingestion rules are checked by :func:`github_problems`, one line per broken rule.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.core.reports.conftest import PY, RUFF_OUT, RealRun, make_run
from tests.project import Project

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@cache
def validator() -> Any:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def schema_errors(log: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator().iter_errors(log)]


def github_problems(text: str) -> list[str]:
    """What GitHub code scanning's upload would refuse or misplace in this SARIF log."""
    problems = []
    if len(gzip.compress(text.encode("utf-8"))) > 10 * 1000 * 1000:
        problems.append("over 10 MB gzipped")
    log = json.loads(text)
    if log.get("version") != "2.1.0":
        problems.append("version is not 2.1.0")
    runs = log.get("runs", [])
    if len(runs) > 20:
        problems.append(f"{len(runs)} runs (at most 20)")
    categories = [run.get("automationDetails", {}).get("id") for run in runs]
    if len(set(categories)) != len(categories) or None in categories:
        problems.append(f"automationDetails.id missing or repeated: {categories}")
    for n, run in enumerate(runs):
        driver = run["tool"]["driver"]
        rules = driver.get("rules", [])
        if not driver.get("name"):
            problems.append(f"run {n}: tool.driver.name missing")
        if len(run.get("results", [])) > 5000:
            problems.append(f"run {n}: more than 5,000 results")
        if len({rule["id"] for rule in rules}) != len(rules):
            problems.append(f"run {n}: a rule id listed twice")
        for k, result in enumerate(run.get("results", [])):
            where = f"run {n} result {k}"
            index = result.get("ruleIndex")
            if not isinstance(index, int) or not 0 <= index < len(rules) \
                    or rules[index]["id"] != result.get("ruleId"):
                problems.append(f"{where}: ruleIndex does not name its ruleId")
            if result.get("level") not in ("error", "warning", "note", "none"):
                problems.append(f"{where}: level {result.get('level')!r}")
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}: no message text")
            if not result.get("partialFingerprints"):
                problems.append(f"{where}: no partialFingerprints")
            locations = result.get("locations") or []
            if not locations:
                problems.append(f"{where}: no location")
            for location in locations[:1]:
                physical = location["physicalLocation"]
                artifact = physical["artifactLocation"]
                uri = artifact["uri"]
                if artifact.get("uriBaseId") != "%SRCROOT%" or uri.startswith("/") \
                        or "://" in uri or " " in uri:
                    problems.append(f"{where}: uri {uri!r} is not repo-relative to %SRCROOT%")
                region = physical.get("region")
                if region is not None and region.get("startLine", 0) < 1:
                    problems.append(f"{where}: region without a startLine")
    return problems


def test_the_vendored_schema_is_the_recorded_file() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256


@pytest.mark.parametrize("name", ["ruff", "mypy", "pytest"])
def test_sarif_of_a_real_run_is_valid_and_ingestible(real_runs: dict[str, RealRun],
                                                     name: str) -> None:
    text = real_runs[name].annotate("sarif")
    log = json.loads(text)
    assert schema_errors(log) == []
    assert github_problems(text) == []
    run = log["runs"][0]
    assert run["automationDetails"]["id"] == f"ckdn/{name}/"
    assert run["tool"]["driver"]["name"] == name
    assert run["results"], "a red run has results"
    assert all(r["locations"][0]["physicalLocation"].get("region", {}).get("startLine")
               for r in run["results"] if name != "ruff")


def test_a_schema_violation_is_caught_by_the_validator() -> None:
    """The validator can fail: a result with a level SARIF does not define is refused."""
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"message": {"text": "m"},
                                                      "level": "fatal"}]}]}
    assert schema_errors(log)


def findings_file(run: RealRun) -> list[dict[str, Any]]:
    (run_dir,) = [p for p in run.project.run_dirs() if (p / "findings.jsonl").exists()]
    lines = (run_dir / "findings.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_partial_fingerprints_are_the_findings_files_fingerprints(
        real_runs: dict[str, RealRun]) -> None:
    run = real_runs["ruff"]
    results = json.loads(run.annotate("sarif"))["runs"][0]["results"]
    assert sorted(r["partialFingerprints"]["ckdn/v1"] for r in results) == \
        sorted(row["fingerprint"] for row in findings_file(run))


def test_without_a_findings_file_the_digest_is_fingerprinted_by_the_same_function(
        tmp_path: Path) -> None:
    run = make_run(tmp_path, "ruff")
    before = json.loads(run.annotate("sarif"))["runs"][0]["results"]
    for path in run.project.run_dirs():
        (path / "findings.jsonl").unlink(missing_ok=True)
    after = json.loads(run.annotate("sarif"))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in after] == \
        [r["partialFingerprints"] for r in before]


def test_a_baselined_run_says_which_results_are_new(tmp_path: Path) -> None:
    run = make_run(tmp_path, "ruff", extra_config='[run]\nbaseline = "ckdn-baseline.json"\n')
    proc = run.project.ckdn("baseline", "ruff")
    assert proc.returncode == 0, proc.stderr
    shell = run.project.root / "pkg" / "shell.py"
    shell.write_text("import json\n" + shell.read_text(encoding="utf-8"), encoding="utf-8")
    run.project.ckdn("run", "ruff")
    text = run.annotate("sarif")
    assert schema_errors(json.loads(text)) == []
    results = json.loads(text)["runs"][0]["results"]
    states = [r["baselineState"] for r in results]
    assert states[0] == "new"
    assert "unchanged" in states
    new = [r["message"]["text"] for r in results if r["baselineState"] == "new"]
    assert any("`json` imported but unused" in m for m in new), new
    first = run.annotate("github").splitlines()[0]
    assert "`json` imported but unused" in first


JSON = "--output-format json"


def many_findings(root: Path, count: int) -> Project:
    """A real ruff run with ``count`` findings (each an unused import), all in its
    findings file (``top`` keeps them)."""
    source = root / "src"
    source.mkdir(parents=True)
    (source / "many.py").write_text("".join(f"import os as m{i}\n" for i in range(count)))
    project = Project(root)
    project.config(f"""
        [run]
        top = {count}
        [check.ruff]
        command = "{PY} -m ruff check --no-cache --isolated --select F401 {JSON} {RUFF_OUT} src"
        parser = "ruff"
    """)
    assert project.ckdn("run", "ruff").returncode == 1
    return project


def test_a_run_over_5000_findings_is_cut_to_5000_results_with_a_note(tmp_path: Path) -> None:
    project = many_findings(tmp_path, 6000)
    proc = project.ckdn("annotate", "--format", "sarif")
    log = json.loads(proc.stdout)
    assert schema_errors(log) == []
    assert github_problems(proc.stdout) == []
    run_doc = log["runs"][0]
    assert len(run_doc["results"]) == 5000
    notes = [n["message"]["text"]
             for n in run_doc["invocations"][0]["toolExecutionNotifications"]]
    assert any(n.startswith("1,000 of 6,000 findings not in this log") for n in notes), notes


def test_a_findings_file_that_is_a_symlink_is_not_followed_and_the_digest_stands_in(
        tmp_path: Path) -> None:
    run = make_run(tmp_path, "ruff")
    (run_dir,) = run.project.run_dirs()
    (tmp_path / "elsewhere.jsonl").write_bytes((run_dir / "findings.jsonl").read_bytes())
    (run_dir / "findings.jsonl").unlink()
    (run_dir / "findings.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    log = json.loads(run.annotate("sarif"))
    assert schema_errors(log) == []
    run_doc = log["runs"][0]
    assert len(run_doc["results"]) == 19
    notes = [n["message"]["text"]
             for n in run_doc["invocations"][0]["toolExecutionNotifications"]]
    assert any("findings.jsonl is not a regular file" in n for n in notes), notes


def test_a_torn_findings_file_is_read_as_far_as_it_goes_and_said_so(tmp_path: Path) -> None:
    run = make_run(tmp_path, "ruff")
    (run_dir,) = run.project.run_dirs()
    lines = (run_dir / "findings.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run_dir / "findings.jsonl").write_text("".join(lines[:6]), encoding="utf-8")
    run_doc = json.loads(run.annotate("sarif"))["runs"][0]
    assert len(run_doc["results"]) == 5
    notes = [n["message"]["text"]
             for n in run_doc["invocations"][0]["toolExecutionNotifications"]]
    assert any("5 findings, its header says 19 (a torn file)" in n for n in notes), notes
    assert any(n.startswith("14 of 19 findings not in this log") for n in notes), notes
