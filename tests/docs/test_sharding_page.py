"""docs/sharding.md: the GitHub Actions matrix and the GitLab `parallel:` pipeline parse, and
their jobs, played one by one on a real suite (a checkout each, the artifacts laid out as the
CI's download step lays them out), plan, run, merge green and fold the ledger."""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project import Project
from tests.shard_suite import json_out, write_suite
from tests.shared import shared_dir
from tests.tox_ckdn.realtox import examples
from tests.tox_ckdn.yamlish import load

PAGE = examples("sharding.md")
WORKFLOW: dict[str, Any] = load(PAGE[".github/workflows/tests.yml"])
GITLAB: dict[str, Any] = load(PAGE[".gitlab-ci.yml"])
ENV = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def checkout(root: Path, ledger: Path | None) -> Project:
    """The repository as a job checks it out: sources, ckdn.toml, the committed ledger."""
    root.mkdir(parents=True)
    project = Project(root)
    project.config(PAGE["ckdn.toml"])
    write_suite(root)
    if ledger is not None:
        shutil.copy(ledger, root / "ckdn.durations.json")
    return project


def make_ledger(root: Path) -> None:
    """The first ledger, made by hand as the page says."""
    dev = checkout(root / "developer", None)
    assert dev.digest(dev.ckdn("run", "tests", env=ENV))["status"] == "pass"
    assert dev.ckdn("durations", "update", "tests", env=ENV).returncode == 0


@pytest.fixture
def committed_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed ledger, made once a suite run (every test only copies it)."""
    made = shared_dir(tmp_path_factory, "sharding-ledger", make_ledger)
    return made / "developer" / "ckdn.durations.json"


def sh(project: Project, line: str, env: dict[str, str]) -> Any:
    """One script line as the job's shell runs it: ckdn, or a file move; installs skipped."""
    for name, value in env.items():
        line = line.replace(f"${name}", value)
    argv = shlex.split(line)
    if argv[:4] == ["python", "-m", "pip", "install"]:
        return None
    if argv[0] == "mkdir":
        (project.root / argv[-1]).mkdir(parents=True, exist_ok=True)
        return None
    if argv[0] == "mv":
        shutil.move(project.root / argv[1], project.root / argv[2])
        return None
    assert argv[0] == "ckdn", line
    expanded = [hit for arg in argv[1:]
                for hit in (sorted(glob.glob(arg, root_dir=project.root)) or [arg])]
    return project.ckdn(*expanded, env={**ENV, **env})


# ------------------------------------------------------------------- GitHub Actions


def step(job: str, name: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = WORKFLOW["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name", "") == name)


def matrix() -> list[str]:
    found: list[str] = WORKFLOW["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    return [str(value) for value in found]


def run_step(project: Project, job: str, name: str, **values: str) -> Any:
    found = step(job, name)
    env = {key: value.replace("${{ matrix.shard }}", values.get("shard", ""))
           for key, value in found.get("env", {}).items()}
    return sh(project, found["run"].replace("${{ matrix.shard }}", values.get("shard", "")), env)


def shard_jobs(root: Path, ledger: Path, cache: Path) -> Path:
    """The plan job and every matrix job, each shard uploaded: the artifacts' directory.
    ``cache``: actions/cache's store."""
    artifacts = root / "artifacts"
    planner = checkout(root / "plan-job", ledger)
    if cache.exists():  # Restore the durations ledger
        shutil.copy(cache, planner.root / "ckdn.durations.json")
    planned = run_step(planner, "plan", "Plan the shards")
    assert planned.returncode == 0, planned.stderr
    (artifacts / "plan").mkdir(parents=True)
    shutil.copy(planner.root / step("plan", "Upload the plan")["with"]["path"],
                artifacts / "plan")
    for value in matrix():
        job = checkout(root / f"shard-job-{value}", ledger)
        shutil.copy(artifacts / "plan" / "plan.json", job.root)  # download-artifact, name: plan
        proc = run_step(job, "shard", "Run this shard of the tests through ckdn", shard=value)
        assert job.digest(proc)["status"] == "pass", proc.stderr
        upload = step("shard", "Upload the shard")["with"]
        shutil.copytree(job.root / upload["path"], artifacts / upload["name"].replace(
            "${{ matrix.shard }}", value), symlinks=True)
    return artifacts


@pytest.fixture
def first_shards(tmp_path_factory: pytest.TempPathFactory, committed_ledger: Path) -> Path:
    """The artifacts of the first pipeline's plan and shard jobs (no ledger in the cache
    yet), played once a suite run: each test merges a copy of them."""
    made = shared_dir(tmp_path_factory, "sharding-first-shards",
                      lambda root: shard_jobs(root, committed_ledger, root / "no-cache"))
    return made / "artifacts"


def merge_pipeline(root: Path, ledger: Path, cache: Path, artifacts: Path,
                   skip: str | None = None) -> dict[str, Any]:
    """The merge job over ``artifacts`` (less shard ``skip``, which never uploaded), then
    the ledger folded into ``cache``; the merge's digest."""
    merger = checkout(root / "merge-job", ledger)
    shutil.copy(artifacts / "plan" / "plan.json", merger.root)
    for shard in sorted(artifacts.glob("shard-*")):  # pattern: shard-*, path: shards
        if shard.name != f"shard-{skip}":
            shutil.copytree(shard, merger.root / "shards" / shard.name, symlinks=True)
    merged = run_step(merger, "merge", "Merge the shards against the plan")
    digest = merger.digest(merged)
    if cache.exists():
        shutil.copy(cache, merger.root / "ckdn.durations.json")
    folded = run_step(merger, "merge", "Fold this pipeline into the ledger")
    assert folded.returncode == 0, folded.stderr
    shutil.copy(merger.root / "ckdn.durations.json", cache)  # Save the durations ledger
    return digest


def test_the_workflow_plans_once_shards_by_matrix_and_merges_against_the_plan() -> None:
    jobs = WORKFLOW["jobs"]
    assert jobs["shard"]["needs"] == "plan"
    assert jobs["merge"]["needs"] == ["plan", "shard"]
    assert jobs["merge"]["if"] == "always()"
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    plan = shlex.split(step("plan", "Plan the shards")["run"])
    assert plan[plan.index("--shards") + 1] == str(len(matrix())) == "4"
    run = step("shard", "Run this shard of the tests through ckdn")
    assert run["env"]["CKDN_SHARD"] == "${{ matrix.shard }}/4"
    assert "--shard auto" in run["run"]
    assert step("shard", "Upload the shard")["with"]["include-hidden-files"] is True
    assert step("merge", "Save the durations ledger")["with"]["path"] == "ckdn.durations.json"


def test_the_documented_matrix_merges_green_and_keeps_the_ledger(
        tmp_path: Path, committed_ledger: Path, first_shards: Path) -> None:
    cache = tmp_path / "cache" / "ckdn.durations.json"
    cache.parent.mkdir()
    first = merge_pipeline(tmp_path / "pipeline-1", committed_ledger, cache, first_shards)
    assert first["status"] == "pass", json.dumps(first)
    assert first["summary"]["counts"] == {"passed": 24, "tests": 24}
    assert len(json.loads(cache.read_text())["checks"]["tests"]) == 24
    second = tmp_path / "pipeline-2"  # planned from the cache
    digest = merge_pipeline(second, committed_ledger, cache,
                            shard_jobs(second, committed_ledger, cache))
    assert digest["status"] == "pass", json.dumps(digest)


def test_the_documented_matrix_is_red_when_a_shard_never_uploaded(
        tmp_path: Path, committed_ledger: Path, first_shards: Path) -> None:
    digest = merge_pipeline(tmp_path, committed_ledger, tmp_path / "cache.json", first_shards,
                            skip="3")
    assert digest["status"] != "pass"
    assert digest["status_reason"].endswith("3 shard(s) given, 4 expected (missing) (and 1 more "
                                            "problem(s))")
    assert "no shard ran shard(s) 3/4" in str(digest["notes"])


def test_a_shard_job_whose_matrix_value_is_lost_refuses_to_run_the_whole_suite(
        tmp_path: Path, committed_ledger: Path) -> None:
    job = checkout(tmp_path / "job", committed_ledger)
    assert run_step(job, "plan", "Plan the shards").returncode == 0
    proc = sh(job, step("shard", "Run this shard of the tests through ckdn")["run"], {})
    assert proc.returncode == 2
    assert "no CI shard variable is set" in proc.stderr
    assert not job.runs.exists() or not job.run_dirs()


# ------------------------------------------------------------------- GitLab


def test_the_gitlab_pipeline_runs_parallel_shards_and_merges_green(
        tmp_path: Path, committed_ledger: Path) -> None:
    assert GITLAB["stages"] == ["plan", "test", "merge"]
    parallel = int(GITLAB["tests"]["parallel"])
    ledger = committed_ledger
    planner = checkout(tmp_path / "plan", ledger)
    for line in GITLAB["plan"]["script"]:
        sh(planner, line, {})
    document = json.loads((planner.root / "plan.json").read_text())
    assert document["total"] == parallel == 4
    shards = tmp_path / "artifacts"
    for index in range(1, parallel + 1):  # `tests 1/4` ... `tests 4/4`
        job = checkout(tmp_path / f"tests-{index}", ledger)
        shutil.copy(planner.root / "plan.json", job.root)  # the plan job's artifacts
        env = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(parallel)}
        for line in GITLAB["tests"]["script"]:
            proc = sh(job, line, env)
            if proc is not None:
                assert job.digest(proc)["status"] == "pass", proc.stderr
        for line in GITLAB["tests"]["after_script"]:
            sh(job, line, env)
        assert GITLAB["tests"]["artifacts"]["paths"] == ["shards/"]
        shutil.copytree(job.root / "shards", shards, dirs_exist_ok=True, symlinks=True)
    merger = checkout(tmp_path / "merge", ledger)
    shutil.copy(planner.root / "plan.json", merger.root)
    shutil.copytree(shards, merger.root / "shards")
    assert sorted(p.name for p in (merger.root / "shards").iterdir()) == [
        f"shard-{k}" for k in range(1, 5)]
    procs = [sh(merger, line, {}) for line in GITLAB["merge"]["script"]]
    digest = json_out(procs[-1])
    assert digest["status"] == "pass", json.dumps(digest)
    assert digest["summary"]["counts"] == {"passed": 24, "tests": 24}
