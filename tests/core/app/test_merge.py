"""`ckdn merge` on real shard runs: real pytest with coverage.py, real ruff, in a real project.

Each shard is a real `ckdn run` of a slice of the project's tests (as a CI matrix
job runs it); the merge reads what those runs left in their run dirs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ckdn.schema import load_schema
from tests.project import Project

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))

CONFIG = f"""
[check.tests]
command = ["{sys.executable}", "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
           "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
           "--junitxml", "{{{{run_dir}}}}/junit.xml", "--cov=calc",
           "--cov-report=json:{{{{run_dir}}}}/coverage.json"]
parser = "coverage"
fail_under = 95
timeout = {{timeout}}
env = {{{{ COVERAGE_FILE = "{{{{run_dir}}}}/.coverage" }}}}

[check.lint]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{{{run_dir}}}}/ruff.json", "calc"]
parser = "ruff"
"""

CALC = """\
import os


def add(a, b):
    return a + b


def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0
"""
TEST_A = """\
from calc import add, sign


def test_add():
    assert add(1, 2) == 3


def test_positive():
    assert sign(3) == 1
"""
TEST_B = """\
import os

from calc import sign


def test_rest():
    assert sign(-3) == -1
    assert sign(0) == 0


def test_flip():
    assert not os.environ.get("FLIP"), "flipped"
"""
TEST_SLOW = "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"


@pytest.fixture
def shards(project: Project) -> Project:
    project.config(CONFIG.format(timeout=20))
    (project.root / "calc").mkdir()
    (project.root / "calc" / "__init__.py").write_text(CALC)
    (project.root / "tests").mkdir()
    (project.root / "tests" / "test_a.py").write_text(TEST_A)
    (project.root / "tests" / "test_b.py").write_text(TEST_B)
    (project.root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    return project


def shard(project: Project, *args: str, check: str = "tests",
          env: dict[str, str] | None = None) -> str:
    """Run one shard; the run dir it left, relative to the project."""
    proc = project.ckdn("run", check, *(("--", *args) if args else ()), env=env)
    assert proc.returncode != 2, proc.stderr
    run_dir: str = project.digest(proc)["run_dir"]
    return run_dir


def merge(project: Project, *args: str) -> tuple[int, dict[str, Any]]:
    proc = project.ckdn("merge", *args)
    assert proc.stderr == "", proc.stderr
    digest = project.digest(proc)
    jsonschema.validate(digest, load_schema("ckdn.digest/2"))
    return proc.returncode, digest


def test_two_coverage_shards_that_each_miss_fail_under_pass_together_by_coverage_combine(
        shards: Project) -> None:
    a = shard(shards, "tests/test_a.py")
    b = shard(shards, "tests/test_b.py")
    for run in (a, b):  # each shard alone covers too little: its own gate fails
        stored = json.loads((shards.root / run / "digest.json").read_text())
        assert stored["status"] == "fail"
        assert stored["gate_failures"][0].startswith("coverage total of")
    rc, digest = merge(shards, "--check", "tests", "--expect", "2", a, b)
    assert (rc, digest["status"]) == (0, "pass"), digest
    assert digest["summary"]["coverage"]["percent"] == 100.0
    assert digest["summary"]["counts"]["tests"] == 4
    assert digest["summary"]["counts"]["passed"] == 4
    merged = shards.root / digest["run_dir"]
    assert json.loads((merged / "coverage.json").read_text())["totals"]["percent_covered"] == 100
    meta = json.loads((merged / "meta.json").read_text())
    assert meta["parser"] == "merge"
    assert meta["command"][:4] == ["ckdn", "merge", "--check", "tests"]


def test_a_missing_shard_is_never_a_pass_of_the_shards_that_arrived(shards: Project) -> None:
    a = shard(shards, "tests/test_a.py")
    b = shard(shards, "tests/test_b.py")
    rc, digest = merge(shards, "--check", "tests", "--expect", "3", a, b)
    assert rc != 0
    assert digest["status"] in ("error", "parse_mismatch")
    assert "2 shard(s) given, 3 expected (missing)" in digest["status_reason"]
    rc, digest = merge(shards, "--check", "tests", "--expect", "2", a, "shard-3/never-arrived")
    assert rc != 0
    assert digest["status"] != "pass"
    assert "shard shard-3/never-arrived: not found" in digest["status_reason"]


def test_a_test_two_shards_report_with_different_outcomes_is_not_green(shards: Project) -> None:
    a = shard(shards, "tests/test_b.py")
    b = shard(shards, "tests/test_b.py", env={"FLIP": "1"})
    rc, digest = merge(shards, "--check", "tests", a, b)
    assert rc != 0
    assert digest["status"] == "error"  # one shard failed (rc 1): error, not parse_mismatch
    assert (f"shards disagree on tests/test_b.py::test_flip: failed in {b}; passed in {a}"
            in digest["status_reason"])


def test_an_interrupted_shard_fails_the_merge_and_its_rc_is_the_merges(shards: Project) -> None:
    shards.config(CONFIG.format(timeout=2))
    (shards.root / "tests" / "test_slow.py").write_text(TEST_SLOW)
    a = shard(shards, "tests/test_a.py")
    slow = shard(shards, "tests/test_slow.py")
    rc, digest = merge(shards, "--check", "tests", a, slow)
    assert digest["status"] == "error"
    assert (rc, digest["rc"]) == (124, 124)
    assert f"shard {slow}: timed out" in " ".join(digest["notes"])


def test_a_shard_of_another_check_or_given_twice_is_refused_as_part_of_the_whole(
        shards: Project) -> None:
    a = shard(shards, "tests/test_a.py")
    lint = shard(shards, check="lint")
    rc, digest = merge(shards, "--check", "tests", a, lint)
    assert rc != 0
    assert digest["status"] != "pass"
    assert f"shard {lint}: a run of 'lint', not of 'tests'" in digest["status_reason"]
    rc, digest = merge(shards, "--check", "lint", lint, lint + "/digest.json")
    assert rc != 0
    assert digest["status"] == "error"
    assert f"the same run as {lint}" in digest["status_reason"]


def test_findings_of_shards_are_deduplicated_by_fingerprint_and_copies_stay(
        shards: Project) -> None:
    one = shard(shards, check="lint")
    two = shard(shards, check="lint")  # the same lint in another job: the same findings
    rc, digest = merge(shards, "--check", "lint", one, two)
    assert (rc, digest["status"], digest["findings_total"]) == (1, "fail", 1)
    assert digest["findings"][0]["id"] == "calc/__init__.py:1:8:F401"
    assert digest["summary"]["violation_count"] == 2  # counts are summed, findings deduplicated
    (shards.root / "calc" / "__init__.py").write_text(CALC + "\nimport os\n")  # a second copy
    three = shard(shards, check="lint")
    rc, digest = merge(shards, "--check", "lint", one, three)
    assert digest["findings_total"] == 2  # the new copy is a finding of its own
    merged = shards.root / digest["run_dir"] / "findings.jsonl"
    rows = [json.loads(line) for line in merged.read_text().splitlines()[1:]]
    assert len({row["fingerprint"] for row in rows}) == 2


def test_coverage_shards_without_data_files_cannot_be_combined_and_fail_closed(
        shards: Project) -> None:
    shards.config(CONFIG.format(timeout=20).replace(
        'env = { COVERAGE_FILE = "{run_dir}/.coverage" }', ""))
    a = shard(shards, "tests/test_a.py")
    b = shard(shards, "tests/test_b.py")
    rc, digest = merge(shards, "--check", "tests", a, b)
    assert rc != 0
    assert digest["status"] != "pass"
    assert "cannot be combined: no coverage.py data file" in digest["status_reason"]


def test_merge_refuses_what_names_no_shards_in_one_line(shards: Project) -> None:
    for args, said in ((["--check", "tests"], "name the shards to merge"),
                       (["--check", "nope", "x"], "unknown check 'nope'"),
                       (["--check", "tests", "--expect", "0", "x"], "at least 1")):
        proc = shards.ckdn("merge", *args)
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert said in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("planted", [{"summary": "x"}, {"findings": 5},
                                     {"gate_failures": "abc"}, {"findings_total": "2"}])
def test_a_digest_with_keys_of_the_wrong_shape_is_an_unusable_shard_not_a_traceback(
        shards: Project, planted: dict[str, object]) -> None:
    a = shard(shards, check="lint")
    forged = shards.root / "forged"
    forged.mkdir()
    doc = {"schema": "ckdn.digest/2", "check": "lint", "status": "pass", "rc": 0,
           "run_dir": "forged", **planted}
    (forged / "digest.json").write_text(json.dumps(doc))
    rc, digest = merge(shards, "--check", "lint", a, "forged")
    assert rc != 0
    assert digest["status"] == "error"
    assert "shard forged: its digest's" in digest["status_reason"]


@pytest.mark.parametrize("planted", [
    {"schema": None}, {"schema": "ckdn.aggregate/1"}, {"schema": "ckdn.digest/1"},
    {"schema": 2}, "list", "number"])
def test_a_shard_whose_digest_is_not_a_ckdn_digest_is_unusable_and_named(
        shards: Project, planted: object) -> None:
    a = shard(shards, check="lint")
    forged = shards.root / "forged"
    forged.mkdir()
    doc: object = {"schema": "ckdn.digest/2", "check": "lint", "status": "pass", "rc": 0,
                   "run_dir": "forged"}
    if planted == "list":
        doc = [doc]
    elif planted == "number":
        doc = 0
    else:
        assert isinstance(planted, dict)
        assert isinstance(doc, dict)
        doc = {key: value for key, value in {**doc, **planted}.items() if value is not None}
    (forged / "digest.json").write_text(json.dumps(doc))
    rc, digest = merge(shards, "--check", "lint", a, "forged")
    assert rc != 0
    assert digest["status"] == "error", digest
    assert "shard forged: " in digest["status_reason"]
    assert "\n" not in digest["status_reason"]


def test_a_merge_of_other_shards_is_not_weakened_and_status_says_why_it_is_stale(
        shards: Project) -> None:
    runs = [shard(shards, "tests/test_a.py"), shard(shards, "tests/test_b.py")]
    rc, first = merge(shards, "--check", "tests", "--expect", "2", *runs)
    assert (rc, first["status"]) == (0, "pass"), first
    runs = [shard(shards, "tests/test_a.py"), shard(shards, "tests/test_b.py")]
    rc, second = merge(shards, "--check", "tests", "--expect", "2", *runs)
    assert (rc, second["status"]) == (0, "pass"), second
    # the shards named are the evidence, not what is checked: no "the command changed"
    assert not any(note.startswith("weakened") for note in second.get("notes", []))
    facts = json.loads((shards.root / second["run_dir"] / "facts.json").read_text())
    assert facts["command"] == "ckdn merge --check tests"
    meta = json.loads((shards.root / second["run_dir"] / "meta.json").read_text())
    assert meta["command"][4:] == runs  # meta.json still names every shard
    proc = shards.ckdn("status", "tests", "--json")
    entry = json.loads(proc.stdout)["checks"][0]
    assert (entry["state"], entry["green"]) == ("stale", False)
    assert entry["reason"].startswith("a merge of shards (ckdn merge) records neither the "
                                      "settings nor the source tree its shards ran with")
    assert "weakened" not in entry
