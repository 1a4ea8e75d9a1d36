"""Issue 28 end to end: a real pytest suite planned into 2 and 4 shards, each run by
`ckdn run --shard K/N --plan`, merged green with `ckdn merge --plan`, and red for each way
shards can fail to run the plan exactly once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ckdn.identity.plan import make_plan
from tests.project import Project
from tests.shard_suite import designed_durations, json_out, sharded_project, write_ledger


def plan(project: Project, shards: int, *extra: str) -> dict[str, object]:
    proc = project.ckdn("plan", "tests", "--shards", str(shards), "-o", "plan.json", *extra)
    assert proc.returncode == 0, proc.stderr
    document: dict[str, object] = json.loads((project.root / "plan.json").read_text())
    return document


def run_shard(project: Project, spec: str, *extra: str, plan_file: str = "plan.json",
              env: dict[str, str] | None = None) -> str:
    proc = project.ckdn("run", "tests", "--shard", spec, "--plan", plan_file, *extra, env=env)
    digest = project.digest(proc)
    assert digest["status"] == "pass", proc.stdout + proc.stderr
    return str(digest["run_dir"])


def merge(project: Project, *runs: str, plan_file: str = "plan.json") -> dict[str, object]:
    proc = project.ckdn("merge", "--check", "tests", "--plan", plan_file, *runs)
    return project.digest(proc)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The suite with a designed ledger (``ckdn.durations.json``): every plan below is the
    same at any load, where a plan from a measured run moved with the timing (a flake)."""
    project = sharded_project(tmp_path / "p")
    write_ledger(project.root)
    return project


def test_a_first_plan_without_a_ledger_reads_the_newest_whole_run(tmp_path: Path) -> None:
    project = sharded_project(tmp_path / "p")
    whole = project.digest(project.ckdn("run", "tests"))
    assert whole["status"] == "pass"
    document = plan(project, 2)
    assert document["tests"] == 24
    assert sum(s["seconds"] for s in document["shards"]) > 0  # type: ignore[attr-defined]
    merged = merge(project, run_shard(project, "1/2"), run_shard(project, "2/2"))
    assert merged["status"] == "pass", merged


@pytest.mark.parametrize("shards", [2, 4])
def test_a_suite_planned_into_shards_merges_green_with_its_plan(project: Project,
                                                                shards: int) -> None:
    document = plan(project, shards)
    assert document["plan_id"] == make_plan("tests", designed_durations(), shards).plan_id
    runs = [run_shard(project, f"{k}/{shards}") for k in range(1, shards + 1)]
    counts = []
    for k, run in enumerate(runs, 1):
        record = json.loads((project.root / run / "shard.json").read_text())
        assert (record["index"], record["total"], record["plan_id"]) == (
            k, shards, document["plan_id"])
        digest = json.loads((project.root / run / "digest.json").read_text())
        assert any(f"shard {k}/{shards} (plan {document['plan_id']})" in note
                   for note in digest["notes"])
        counts.append(digest["summary"]["counts"]["tests"])
    assert sum(counts) == 24
    merged = merge(project, *runs)
    assert merged["status"] == "pass", merged
    assert merged["summary"]["counts"] == {"passed": 24, "tests": 24}  # type: ignore[index]


def test_each_way_shards_miss_the_plan_makes_the_merge_red(project: Project) -> None:
    document = plan(project, 2)
    shard_tests: list[list[str]] = [s["tests"] for s in document["shards"]]  # type: ignore[attr-defined]
    assert shard_tests[0][0] == "tests/test_m00.py::test_quick"  # the designed plan: -k keeps
    assert "tests/test_m00.py::test_slow" in shard_tests[0]      # shard 1 non-empty below
    one, two = run_shard(project, "1/2"), run_shard(project, "2/2")
    assert merge(project, one, two)["status"] == "pass"

    missing = merge(project, one)
    assert missing["status"] == "error"  # part of the plan never ran, at exit code 0
    assert "no shard ran shard(s) 2/2" in str(missing["notes"])

    dropped = run_shard(project, "1/2", "--", "-k", f"not {shard_tests[0][0].split('::')[1]}")
    red = merge(project, dropped, two)
    assert red["status"] == "error"
    assert "planned test(s) run by no shard" in str(red["notes"])

    twice = merge(project, one, run_shard(project, "1/2"), two)
    assert twice["status"] == "parse_mismatch"  # a contradiction, not a part unrun
    assert "shard 1/2 again" in str(twice["notes"])

    # a JUnit report that names a test of the other shard, and a test nobody planned
    junit = project.root / two / "junit.xml"
    text = junit.read_text()
    module, name = shard_tests[0][0].split("::")
    classname = module.removesuffix(".py").replace("/", ".")
    ghost = '<testcase classname="tests.test_ghost" name="test_boo" time="0.001" />'
    junit.write_text(text.replace("</testsuite>", f'<testcase classname="{classname}" '
                                  f'name="{name}" time="0.001" />{ghost}</testsuite>'))
    mutated = merge(project, one, two)
    assert mutated["status"] == "parse_mismatch"
    said = str(mutated["notes"])
    assert "run by more than one shard" in said
    assert "tests/test_ghost.py::test_boo" in said


def test_shards_of_another_plan_make_the_merge_red(project: Project) -> None:
    plan(project, 2)
    write_ledger(project.root, name="ledger.json", durations={
        f"tests/test_m{i:02}.py::test_quick": 1.0 + i for i in range(12)})
    proc = project.ckdn("plan", "tests", "--shards", "2", "-o", "other.json",
                        "--durations", "ledger.json")
    assert proc.returncode == 0, proc.stderr
    other = json.loads((project.root / "other.json").read_text())
    one = run_shard(project, "1/2")
    foreign = run_shard(project, "2/2", plan_file="other.json")
    red = merge(project, one, foreign)
    assert red["status"] == "error"
    assert f"of plan {other['plan_id']}, not of plan" in str(red["notes"])


def test_a_test_added_after_the_plan_runs_once_by_hash_and_is_listed(project: Project) -> None:
    plan(project, 2)
    (project.root / "tests" / "test_new.py").write_text("def test_added():\n    pass\n")
    runs = [run_shard(project, f"{k}/2") for k in (1, 2)]
    merged = merge(project, *runs)
    assert merged["status"] == "pass", merged
    assert "1 unplanned test(s), placed by hash: tests/test_new.py::test_added" in str(
        merged["notes"])
    assert merged["summary"]["counts"]["tests"] == 25  # type: ignore[index]


def test_shard_auto_without_ci_variables_is_exit_2_and_runs_nothing(project: Project) -> None:
    plan(project, 2)
    before = project.run_dirs()
    proc = project.ckdn("run", "tests", "--shard", "auto", "--plan", "plan.json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert re.fullmatch(r"ckdn: --shard auto: no CI shard variable is set .*\n", proc.stderr)
    assert project.run_dirs() == before


def test_shard_auto_reads_gitlabs_variables(project: Project) -> None:
    plan(project, 2)
    run = run_shard(project, "auto", env={"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2"})
    assert json.loads((project.root / run / "shard.json").read_text())["index"] == 2


@pytest.mark.parametrize(("args", "said"), [
    (("run", "lint", "--shard", "1/2"), "is not a pytest check"),
    (("run", "tests", "--shard", "1/3", "--plan", "plan.json"), "the plan has 2 shards"),
    (("run", "tests", "--plan", "plan.json"), "--plan needs --shard"),
    (("plan", "tests", "--shards", "25"), "24 test(s) for 25 shards"),
])
def test_shard_mistakes_are_one_line_and_exit_2(project: Project, args: tuple[str, ...],
                                                said: str) -> None:
    plan(project, 2)
    proc = project.ckdn(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert said in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_the_ledger_folds_merged_runs_and_keeps_tests_that_did_not_run(
        project: Project) -> None:
    plan(project, 2)
    merged = merge(project, *(run_shard(project, f"{k}/2") for k in (1, 2)))
    assert merged["status"] == "pass"
    (project.root / "ckdn.durations.json").write_text(json.dumps({
        "schema": "ckdn.durations/1", "checks": {"tests": {"tests/old.py::test_gone": 7.5}}}))
    proc = project.ckdn("durations", "update", "tests", "--last", "2")
    report = json_out(proc)
    assert report["runs"][0] == Path(str(merged["run_dir"])).name  # the merge, not a shard
    assert report["kept"] == 1
    ledger = json.loads((project.root / "ckdn.durations.json").read_text())["checks"]["tests"]
    assert ledger["tests/old.py::test_gone"] == 7.5
    assert len(ledger) == 25
    # the merged run's measured seconds: its test_slow sleeps 0.03 s, a lower bound at any
    # load (test_quick, doing nothing, could be descheduled for longer: no comparison)
    assert ledger["tests/test_m03.py::test_slow"] >= 0.03
    document = plan(project, 2)
    assert document["tests"] == 25  # the ledger's tests are planned (a gone test too)


def test_a_shard_marked_as_a_rerun_replaces_its_earlier_run(project: Project) -> None:
    plan(project, 2)
    (project.root / "tests" / "conftest.py").write_text(
        "import os\n\nimport pytest\n\n\n@pytest.fixture(autouse=True)\ndef flaky():\n"
        "    assert not os.environ.get('FLAKY')\n")
    first = project.digest(project.ckdn("run", "tests", "--shard", "1/2", "--plan", "plan.json",
                                        env={"FLAKY": "1"}))
    assert first["status"] == "fail"
    again = run_shard(project, "1/2", "--rerun")
    two = run_shard(project, "2/2")
    record = json.loads((project.root / again / "shard.json").read_text())
    assert record["rerun"] is True
    merged = merge(project, str(first["run_dir"]), again, two)
    assert merged["status"] == "pass", merged
    assert f"shard {first['run_dir']}: replaced by its rerun {again}" in str(merged["notes"])
    unmarked = merge(project, str(first["run_dir"]), run_shard(project, "1/2"), two)
    assert unmarked["status"] != "pass"  # two runs of one shard, neither a rerun: not a whole
