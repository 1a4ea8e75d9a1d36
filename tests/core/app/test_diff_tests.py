"""`ckdn diff` of two real pytest runs compares tests by node id, and knows flaky from changed.

A real project in a real git repository; each run is a real `ckdn run` of pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.app import load_config, run_check
from ckdn.app._stored.freshness import tree_now
from ckdn.identity.diff import TEST_CLASSES, compare_tests
from ckdn.parsers.outcomes import OUTCOMES
from ckdn.schema import load_schema
from tests.project import Project

CONFIG = f"""
[check.tests]
command = ["{sys.executable}", "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
           "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
           "--junitxml", "{{run_dir}}/junit.xml"]
parser = "pytest"
"""
TESTS = """\
import os


def test_steady():
    assert True


def test_env():
    assert not os.environ.get("FLIP")


def test_edited():
    assert {edited}
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "PATH": "/usr/bin:/bin", "HOME": str(root)})


@pytest.fixture
def repo(project: Project) -> Project:
    project.config(CONFIG)
    (project.root / "test_it.py").write_text(TESTS.format(edited="True"))
    git(project.root, "init", "-q")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "init")
    return project


def run(project: Project, env: dict[str, str] | None = None) -> None:
    proc = project.ckdn("run", "tests", env=env)
    assert proc.returncode in (0, 1), proc.stderr


def diff(project: Project) -> dict[str, Any]:
    proc = project.ckdn("diff", "-1", "latest", "--json")
    assert proc.stderr == "", proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(doc, load_schema("ckdn.diff/1"))
    tests: dict[str, Any] = doc["tests"]
    return tests


def ids(tests: dict[str, Any], name: str) -> list[str]:
    return [entry["id"] for entry in tests[name]]


def test_a_test_that_fails_after_an_edit_is_newly_failing_and_then_fixed(repo: Project) -> None:
    run(repo)
    (repo.root / "test_it.py").write_text(TESTS.format(edited="False"))
    run(repo)
    tests = diff(repo)
    assert tests["same_source"] is False
    assert ids(tests, "newly_failing") == ["test_it.py::test_edited"]
    assert tests["newly_failing"][0] == {"id": "test_it.py::test_edited", "a": "passed",
                                         "b": "failed"}
    assert tests["counts"]["flaky"] == 0
    run(repo)
    assert ids(diff(repo), "still_failing") == ["test_it.py::test_edited"]
    (repo.root / "test_it.py").write_text(TESTS.format(edited="True"))
    run(repo)
    assert ids(diff(repo), "fixed") == ["test_it.py::test_edited"]


def test_a_test_that_changes_outcome_on_the_same_source_tree_is_flaky(repo: Project) -> None:
    run(repo)
    run(repo, env={"FLIP": "1"})  # nothing in the tree changed: only the outcome
    tests = diff(repo)
    assert tests["same_source"] is True
    assert ids(tests, "flaky") == ["test_it.py::test_env"]
    assert tests["counts"] == {"newly_failing": 0, "fixed": 0, "still_failing": 0, "flaky": 1}
    proc = repo.ckdn("diff", "-1", "latest")
    assert "1 flaky (the same source tree)" in proc.stdout
    assert "flaky  test_it.py::test_env  passed -> failed" in proc.stdout


def test_an_untracked_file_makes_the_tree_another_so_nothing_is_called_flaky(
        repo: Project) -> None:
    run(repo)
    (repo.root / "conftest.py").write_text("# a new file the tests may import\n")
    run(repo, env={"FLIP": "1"})
    tests = diff(repo)
    assert tests["same_source"] is False
    assert ids(tests, "newly_failing") == ["test_it.py::test_env"]


def test_a_run_without_its_junit_report_is_not_compared_and_says_why(repo: Project) -> None:
    run(repo)
    run(repo)
    runs = repo.run_dirs()
    (runs[0] / "junit.xml").unlink()
    tests = diff(repo)
    assert tests == {"compared": False,
                     "reason": "A: no record of every test's outcome (a JUnit report in the "
                               "run dir, or tests.jsonl)"}


def test_the_tree_state_follows_tracked_edits_and_untracked_files_not_ignored_ones(
        tmp_path: Path) -> None:
    assert source_state(str(tmp_path)) is None  # no repository: not known
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    clean = source_state(str(tmp_path))
    assert clean is not None
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("ignored\n")
    assert source_state(str(tmp_path)) == clean
    (tmp_path / "a.py").write_text("x = 2\n")
    edited = source_state(str(tmp_path))
    assert edited not in (None, clean)
    (tmp_path / "a.py").write_text("x = 3\n")  # the same file, other content: another tree
    assert source_state(str(tmp_path)) not in (edited, clean)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert source_state(str(tmp_path)) == clean
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.py").write_text("y = 1\n")
    assert source_state(str(tmp_path / "sub")) not in (None, clean)  # from a subdirectory too


def source_state(cwd: str) -> str | None:
    """The tree's hash now, as a run records it (None: git cannot say)."""
    state, _why = tree_now(cwd)
    return None if state is None else state.tree


OUTCOME = st.sampled_from(OUTCOMES)
RUN = st.dictionaries(st.sampled_from("abcdefgh"), OUTCOME, max_size=8)


@given(RUN, RUN, st.booleans())
def test_every_test_red_in_b_or_turned_green_is_in_exactly_one_class(
        a: dict[str, str], b: dict[str, str], same: bool) -> None:
    counts, lists = compare_tests(a, b, same_source=same, top=100)
    red = {"failed", "error"}
    expected = {i for i in b if b[i] in red or (i in a and a[i] in red)}
    listed = [entry["id"] for name in TEST_CLASSES for entry in lists[name]]
    assert sorted(listed) == sorted(expected)
    assert sum(counts.values()) == len(expected)
    if not same:
        assert counts["flaky"] == 0
    for entry in lists["flaky"]:
        assert (entry["a"] in red) != (entry["b"] in red)


def run_in_env(project: Project, label: str, env: dict[str, str] | None = None) -> None:
    """A run of ``tests`` stored as ``tests@LABEL``, as a nox session or tox env stores it."""
    config = load_config(project.root)
    outcome = run_check(config, config.checks["tests"], as_name=f"tests@{label}", env=env)
    assert outcome.digest["check"] == f"tests@{label}"


def test_one_checks_runs_in_two_envs_compare_and_a_changed_outcome_is_not_flaky(
        repo: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLIP", raising=False)
    run_in_env(repo, "3.11")
    monkeypatch.setenv("FLIP", "1")  # the same tree, another env: the env's doing
    run_in_env(repo, "3.12")
    proc = repo.ckdn("diff", "tests@3.11", "tests@3.12", "--json")
    assert proc.returncode == 1, proc.stderr  # B has a new finding
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, load_schema("ckdn.diff/1"))
    assert doc["check"] == "tests"
    assert (doc["a"]["check"], doc["b"]["check"]) == ("tests@3.11", "tests@3.12")
    assert doc["counts"]["new"] == 1
    tests = doc["tests"]
    assert tests["same_source"] is True
    assert ids(tests, "newly_failing") == ["test_it.py::test_env"]
    assert tests["counts"]["flaky"] == 0
    text = repo.ckdn("diff", "tests@3.11", "tests@3.12").stdout
    assert text.startswith("tests (tests@3.11 -> tests@3.12): 1 new,")
    assert "two envs: no change is called flaky" in text


def test_runs_of_two_checks_are_refused_with_the_command_that_compares_b(
        repo: Project) -> None:
    repo.config(CONFIG + CONFIG.replace("[check.tests]", "[check.other]"))
    run(repo)
    assert repo.ckdn("run", "other").returncode in (0, 1)
    proc = repo.ckdn("diff", "tests", "other")
    assert proc.returncode == 2
    b = sorted(p.name for p in repo.run_dirs() if p.name.endswith("-other"))[-1]
    assert proc.stderr.strip().endswith(
        f"ckdn diff compares two runs of one check (in one env or two: NAME@ENV); to compare"
        f" B with its check's run before it: ckdn diff -1 {b}")
