"""A `pytest --ckdn-digest` session records every test's outcome and its source tree, so
`ckdn diff` compares its tests by node id and `ckdn merge` compares its shards."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.project import UNUSED_PLUGINS, Project, clean_env

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
          "-p", "no:xdist", *UNUSED_PLUGINS, "-q", "--ckdn-digest"]
TESTS = """
import os

import pytest


@pytest.fixture
def broken():
    raise RuntimeError("setup")


def test_pass():
    pass


def test_fail():
    assert False


def test_setup_error(broken):
    pass


def test_skip():
    pytest.skip("no")


@pytest.mark.xfail
def test_xfail():
    assert False


def test_env():
    assert not os.environ.get("FLIP")
"""


@pytest.fixture
def repo(project: Project) -> Project:
    project.config('[check.pytest]\ncommand = "pytest --ckdn-digest"\nparser = "pytest"\n')
    (project.root / "test_outcomes_sample.py").write_text(TESTS)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(project.root)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=project.root, env=env, check=True,
                       capture_output=True)
    return project


def session(project: Project, **env: str) -> dict[str, Any]:
    proc = subprocess.run(PYTEST, cwd=project.root, env={**clean_env(), **env},
                          capture_output=True, text=True, check=False)
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


def test_a_session_records_every_tests_outcome_and_its_source_tree(repo: Project) -> None:
    doc = session(repo)
    run_dir = repo.root / doc["run_dir"]
    lines = (run_dir / "tests.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"schema": "ckdn.tests/1", "check": "pytest", "total": 6}
    outcomes = {row["id"].split("::")[1]: row["outcome"] for row in map(json.loads, lines[1:])}
    assert outcomes == {"test_pass": "passed", "test_fail": "failed",
                        "test_setup_error": "error", "test_skip": "skipped",
                        "test_xfail": "xfailed", "test_env": "passed"}
    assert json.loads((run_dir / "source.json").read_text())["schema"] == "ckdn.source/2"


def test_two_sessions_on_the_same_tree_show_a_changed_outcome_as_flaky(repo: Project) -> None:
    session(repo)
    session(repo, FLIP="1")
    proc = repo.ckdn("diff", "-1", "latest", "--json")
    tests = json.loads(proc.stdout)["tests"]
    assert tests["same_source"] is True
    assert [t["id"] for t in tests["flaky"]] == ["test_outcomes_sample.py::test_env"]
    assert [t["id"] for t in tests["still_failing"]] == [
        "test_outcomes_sample.py::test_fail", "test_outcomes_sample.py::test_setup_error"]


def test_shards_of_sessions_that_disagree_on_a_test_do_not_merge_green(repo: Project) -> None:
    a = session(repo)["run_dir"]
    b = session(repo, FLIP="1")["run_dir"]
    proc = repo.ckdn("merge", "--check", "pytest", a, b)
    doc = json.loads(proc.stdout)
    assert proc.returncode != 0
    assert doc["status"] == "error"
    assert "shards disagree on test_outcomes_sample.py::test_env: failed in" in " ".join(
        [doc["status_reason"], *doc["notes"]])
