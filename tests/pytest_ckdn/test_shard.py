"""`pytest --ckdn-shard K/N --ckdn-plan FILE`: the plugin selects one shard as pytest collects,
counts the rest as deselected, and a recorded session keeps the record `ckdn merge --plan`
checks. Real pytest sessions on a real suite."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project import UNUSED_PLUGINS, Project, clean_env
from tests.shard_suite import sharded_project, write_ledger
from tests.shared import shared_dir

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:xdist",
          "-p", "no:cacheprovider", *UNUSED_PLUGINS]


def pytest_run(root: Path, *args: str, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYTEST, *args], cwd=root, env={**clean_env(), **(env or {})},
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def suite(tmp_path: Path) -> Project:
    """The suite alone: what a session planning nothing (or from a ledger) needs."""
    return sharded_project(tmp_path / "p")


def record_whole_session(root: Path) -> None:
    """The suite in ``root/p`` after one recorded whole session."""
    suite = sharded_project(root / "p")
    whole = pytest_run(suite.root, "--ckdn-digest", "--ckdn-check", "tests")
    assert whole.returncode == 0, whole.stdout + whole.stderr


@pytest.fixture
def recorded_suite(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The suite after one recorded whole session, once a suite run (one session less a
    test); read only: :func:`project` copies it."""
    return Project(shared_dir(tmp_path_factory, "shard-recorded-suite", record_whole_session)
                   / "p")


@pytest.fixture
def project(recorded_suite: Project, tmp_path: Path) -> Project:
    """A copy of the recorded suite: the run a first plan reads, and no other test's runs
    (a merged run is a whole run too, and the newest would be the one planned from)."""
    root = tmp_path / "p"
    shutil.copytree(recorded_suite.root, root, symlinks=True)
    return Project(root)


@pytest.mark.parametrize("shards", [2, 4])
def test_recorded_shard_sessions_merge_green_with_their_plan(project: Project,
                                                             shards: int) -> None:
    planned = project.ckdn("plan", "tests", "--shards", str(shards), "-o", "plan.json")
    assert planned.returncode == 0, planned.stderr  # durations from the session's tests.jsonl
    runs = []
    for k in range(1, shards + 1):
        proc = pytest_run(project.root, "--ckdn-digest", "--ckdn-check", "tests",
                          "--ckdn-shard", f"{k}/{shards}", "--ckdn-plan", "plan.json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        digest = json.loads(proc.stdout.strip().splitlines()[-1])
        assert digest["summary"]["counts"]["deselected"] == 24 - digest["summary"]["counts"][
            "tests"]
        runs.append(digest["run_dir"])
    merged = project.digest(project.ckdn("merge", "--check", "tests", "--plan", "plan.json",
                                         *runs))
    assert merged["status"] == "pass", merged
    assert merged["summary"]["counts"] == {"passed": 24, "tests": 24}
    dropped = project.digest(project.ckdn("merge", "--check", "tests", "--plan", "plan.json",
                                          *runs[1:]))
    assert dropped["status"] != "pass"


@pytest.fixture(scope="module")
def first_shard(tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Project, subprocess.CompletedProcess[str]]:
    """The suite and a plain session of its shard 1/2, once a module: what the session says
    and the tests it ran (``-v``), which ``--ckdn-shard auto`` must also run."""
    suite = sharded_project(tmp_path_factory.mktemp("plain") / "p")
    return suite, pytest_run(suite.root, "--ckdn-shard", "1/2", "-v")


def test_a_plain_session_runs_its_shard_and_says_so(
        first_shard: tuple[Project, subprocess.CompletedProcess[str]]) -> None:
    suite, proc = first_shard
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ckdn: shard 1/2 (no plan: every test by hash)" in proc.stdout
    ran = int(proc.stdout.split(" passed")[0].split()[-1])
    other = pytest_run(suite.root, "--ckdn-shard", "2/2", "-q")
    assert ran + int(other.stdout.split(" passed")[0].split()[-1]) == 24
    assert f"{24 - ran} deselected" in proc.stdout


def test_shard_auto_without_ci_variables_stops_pytest_in_one_line(suite: Project) -> None:
    proc = pytest_run(suite.root, "--ckdn-shard", "auto")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "ckdn: --shard auto: no CI shard variable is set" in proc.stderr
    assert "passed" not in proc.stdout


def test_shard_auto_reads_circlecis_zero_based_index(
        first_shard: tuple[Project, subprocess.CompletedProcess[str]]) -> None:
    suite, one = first_shard
    auto = pytest_run(suite.root, "--ckdn-shard", "auto", "-v",
                      env={"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "2"})
    assert auto.returncode == 0, auto.stderr
    assert " PASSED " in auto.stdout
    assert auto.stdout.splitlines()[:-1] == one.stdout.splitlines()[:-1]  # but the time


def test_pytest_xdist_workers_select_the_same_shard_and_the_controller_keeps_the_record(
        suite: Project) -> None:
    project = suite
    write_ledger(project.root)  # the designed durations: the same plan at any load
    planned = project.ckdn("plan", "tests", "--shards", "2", "-o", "plan.json")
    assert planned.returncode == 0, planned.stderr
    runs = []
    for k in (1, 2):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
             *UNUSED_PLUGINS, "-n", "2", "--ckdn-digest", "--ckdn-check", "tests",
             "--ckdn-shard", f"{k}/2", "--ckdn-plan", "plan.json"], cwd=project.root,
            env=clean_env(), capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        digest = json.loads(proc.stdout.strip().splitlines()[-1])
        assert any(note.startswith(f"shard {k}/2 (plan ") for note in digest["notes"])
        record = json.loads((project.root / digest["run_dir"] / "shard.json").read_text())
        assert record["index"] == k
        runs.append(digest["run_dir"])
    merged = project.digest(project.ckdn("merge", "--check", "tests", "--plan", "plan.json",
                                         *runs))
    assert merged["status"] == "pass", merged
    assert merged["summary"]["counts"]["tests"] == 24
