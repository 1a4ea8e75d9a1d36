"""`ckdn status` answers "may I say it is done?" from the tree as it is now.

Real git repositories with real edits (tracked, untracked, ignored, deleted, committed), and
real pytest sessions under `ckdn run` that lose tests or gain a skip marker.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ckdn.app._running.run_facts import SourceState, blob_id, weakened
from ckdn.app._stored.freshness import changed_paths
from ckdn.schema import load_schema
from tests.project import Project

CONFIG = f"""
[check.tests]
command = ["{sys.executable}", "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
           "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
           "--junitxml", "{{run_dir}}/junit.xml"]
parser = "pytest"

[check.ok]
command = "true"
parser = "generic"

[check.probe]
command = "true"
parser = "generic"
reads_files = false

[check.both]
members = ["tests", "ok"]
"""
TESTS = """\
import pytest


def test_one():
    assert True


def test_two():
    assert True
"""
CONTRACT_DIGEST_KEYS = {"schema", "check", "status", "rc", "run_dir", "status_reason",
                        "timed_out", "interrupted", "summary", "gate_failures", "notes",
                        "artifacts", "findings_total", "findings_truncated", "findings",
                        "log_tail", "baseline", "gate"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "PATH": "/usr/bin:/bin", "HOME": str(root)})


@pytest.fixture
def repo(project: Project) -> Project:
    project.config(CONFIG)
    (project.root / "test_it.py").write_text(TESTS)
    (project.root / ".gitignore").write_text("__pycache__/\nbuild/\n")
    git(project.root, "init", "-q")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "init")
    return project


def run(project: Project, *args: str) -> dict[str, Any]:
    proc = project.ckdn("run", *args)
    assert proc.returncode in (0, 1), proc.stderr
    digest: dict[str, Any] = json.loads(proc.stdout)
    return digest


def status(project: Project, *args: str, code: int | None = None) -> dict[str, Any]:
    proc = project.ckdn("status", "--json", *args)
    assert proc.stderr == "", proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(load_schema("ckdn.status/1")).validate(doc)
    assert proc.returncode == (0 if doc["verdict"] == "green" else 1)
    if code is not None:
        assert proc.returncode == code
    return doc


def entry(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in doc["checks"] if e["check"] == name)
    return found


def test_a_check_never_run_is_missing_and_a_fresh_pass_is_green(repo: Project) -> None:
    doc = status(repo, "tests", code=1)
    assert entry(doc, "tests") == {"check": "tests", "state": "missing", "green": False}
    assert run(repo, "tests")["status"] == "pass"
    doc = status(repo, "tests", code=0)
    assert entry(doc, "tests")["state"] == "fresh"
    assert doc["verdict"] == "green"
    assert (Path(repo.root) / ".agent-runs" / "latest" / "source.json").is_file()


def test_a_check_run_only_by_a_host_is_missing_and_says_which_runs_exist(repo: Project) -> None:
    # tox envs and nox sessions record the check as CHECK@ENV: not this check's own run.
    run_dir = Path(repo.root, run(repo, "ok")["run_dir"])
    run_dir.rename(run_dir.with_name(run_dir.name.replace("-ok", "-ok@py311")))
    doc = status(repo, "ok", code=1)
    assert entry(doc, "ok") == {
        "check": "ok", "state": "missing", "green": False,
        "reason": "only host runs as ok@py311; `ckdn run ok` records its own"}


def test_an_edit_of_a_tracked_file_makes_the_run_stale_and_names_it(repo: Project) -> None:
    run(repo, "tests")
    (repo.root / "test_it.py").write_text(TESTS + "\n# edited\n")
    tests = entry(status(repo, "tests", code=1), "tests")
    assert tests["state"] == "stale"
    assert tests["changed"] == ["test_it.py"]
    assert tests["changed_total"] == 1
    (repo.root / "test_it.py").write_text(TESTS)  # put back: the tree the run saw
    assert entry(status(repo, "tests", code=0), "tests")["state"] == "fresh"


def test_an_untracked_file_makes_it_stale_and_an_ignored_one_does_not(repo: Project) -> None:
    run(repo, "tests")
    (repo.root / "build").mkdir()
    (repo.root / "build" / "out.txt").write_text("ignored\n")
    assert entry(status(repo, "tests"), "tests")["state"] == "fresh"
    (repo.root / "conftest.py").write_text("# new\n")
    tests = entry(status(repo, "tests"), "tests")
    assert (tests["state"], tests["changed"]) == ("stale", ["conftest.py"])


def test_pythons_bytecode_cache_is_no_change_of_the_tree_even_where_git_does_not_ignore_it(
        repo: Project) -> None:
    # The interpreter writes __pycache__ on import: the run itself would make its tree stale
    # in a repo whose .gitignore forgets it (and a flaky test would read as a regression).
    (repo.root / ".gitignore").write_text("build/\n")
    git(repo.root, "commit", "-qam", "no pycache rule")
    run(repo, "tests")
    for cache in ("__pycache__/test_it.cpython-311.pyc", "pkg/__pycache__/m.cpython-311.pyc",
                  "legacy.pyc", "old.pyo"):
        (repo.root / cache).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / cache).write_bytes(b"\xa7\r\r\n" + os.urandom(16))
    assert entry(status(repo, "tests", code=0), "tests")["state"] == "fresh"
    (repo.root / "pkg" / "__pycache__.py").write_text("# a module, not a cache\n")
    tests = entry(status(repo, "tests", code=1), "tests")
    assert (tests["state"], tests["changed"]) == ("stale", ["pkg/__pycache__.py"])


def test_an_edit_before_the_run_is_fresh_after_it_and_after_a_commit_of_it(
        repo: Project) -> None:
    (repo.root / "test_it.py").write_text(TESTS + "\n\ndef test_three():\n    assert True\n")
    (repo.root / "helper.py").write_text("X = 1\n")
    run(repo, "tests")  # the run saw both files dirty
    assert entry(status(repo, "tests"), "tests")["state"] == "fresh"
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "the same content, committed")
    assert entry(status(repo, "tests", code=0), "tests")["state"] == "fresh"
    (repo.root / "helper.py").write_text("X = 2\n")
    git(repo.root, "commit", "-qam", "then another content")
    tests = entry(status(repo, "tests"), "tests")
    assert (tests["state"], tests["changed"]) == ("stale", ["helper.py"])


def test_many_changed_files_are_named_ten_and_counted(repo: Project) -> None:
    run(repo, "ok")
    for i in range(14):
        (repo.root / f"m{i:02}.py").write_text(f"N = {i}\n")
    ok = entry(status(repo, "ok"), "ok")
    assert ok["changed"] == [f"m{i:02}.py" for i in range(10)]
    assert ok["changed_total"] == 14
    text = repo.ckdn("status", "ok").stdout
    assert "14 file(s) changed: m00.py" in text
    assert "(+4 more)" in text


def test_a_deleted_test_is_stale_then_a_weakened_green_until_accepted(repo: Project) -> None:
    run(repo, "tests")
    (repo.root / "test_it.py").write_text(TESTS.replace("def test_two():\n    assert True\n",
                                                        ""))
    tests = entry(status(repo, "tests"), "tests")
    assert (tests["state"], tests["changed"]) == ("stale", ["test_it.py"])
    digest = run(repo, "tests")
    assert digest["status"] == "pass"
    assert set(digest) <= CONTRACT_DIGEST_KEYS  # the note rides in notes: no new key
    assert [n for n in digest["notes"] if n.startswith("weakened")] == [
        f"weakened since the last green run {repo.run_dirs()[0].name}: 1 fewer tests (2 -> 1)"]
    tests = entry(status(repo, "tests", code=1), "tests")
    assert tests["state"] == "fresh"
    assert tests["weakened"] == ["1 fewer tests (2 -> 1)"]
    assert tests["green"] is False
    accepted = status(repo, "tests", "--accept-weakened", code=0)
    assert entry(accepted, "tests")["green"] is True
    assert "not green: tests weakened" in repo.ckdn("status", "tests").stdout


def test_a_new_skip_marker_is_stale_then_weakened(repo: Project) -> None:
    run(repo, "tests")
    (repo.root / "test_it.py").write_text(TESTS.replace("def test_two", "@pytest.mark.skip\n"
                                                                        "def test_two"))
    assert entry(status(repo, "tests"), "tests")["state"] == "stale"
    digest = run(repo, "tests")
    assert "weakened since the last green run" in " ".join(digest["notes"])
    assert entry(status(repo, "tests"), "tests")["weakened"] == ["1 more skipped (0 -> 1)"]


def test_extra_arguments_are_a_weakening_and_not_the_configured_check(repo: Project) -> None:
    run(repo, "tests")
    digest = run(repo, "tests", "--", "-k", "test_one")
    note = next(n for n in digest["notes"] if n.startswith("weakened"))
    assert "1 fewer tests (2 -> 1)" in note
    assert "the command changed" in note
    assert note.endswith("the command changed (... {run_dir}/junit.xml -> ... "
                         "{run_dir}/junit.xml -k test_one)")
    tests = entry(status(repo, "tests"), "tests")
    assert tests["state"] == "stale"
    assert "other settings or arguments" in tests["reason"]


def test_a_green_run_is_compared_with_the_last_green_run_on_its_branch(repo: Project) -> None:
    run(repo, "tests")
    git(repo.root, "checkout", "-qb", "other")
    (repo.root / "test_it.py").write_text("def test_only():\n    assert True\n")
    assert "notes" not in run(repo, "tests")  # no green run on this branch before
    git(repo.root, "checkout", "-q", "-f", "master")
    assert "notes" not in run(repo, "tests")  # compared with master's green run: the same


def test_without_git_every_check_is_unknown_never_fresh(project: Project) -> None:
    project.config(CONFIG)
    (project.root / "test_it.py").write_text(TESTS)
    run(project, "ok")
    doc = status(project, "ok", "probe", code=1)
    assert entry(doc, "ok")["state"] == "unknown"
    assert entry(doc, "ok")["reason"] == "no git repository"
    assert entry(doc, "probe")["state"] == "missing"
    run(project, "probe")
    assert entry(status(project, "probe", code=0), "probe")["state"] == "fresh"


def test_a_run_that_recorded_no_tree_is_unknown_once_there_is_git(project: Project) -> None:
    project.config(CONFIG)
    run(project, "ok")  # no repository yet: nothing recorded
    git(project.root, "init", "-q")
    ok = entry(status(project, "ok"), "ok")
    assert ok["state"] == "unknown"
    assert "recorded no source state" in ok["reason"]


def test_the_default_is_every_check_or_run_required_and_aliases_expand(repo: Project) -> None:
    assert [e["check"] for e in status(repo)["checks"]] == ["tests", "ok", "probe"]
    assert [e["check"] for e in status(repo, "both")["checks"]] == ["tests", "ok"]
    repo.config('[run]\nrequired = ["both"]\n' + CONFIG)
    assert [e["check"] for e in status(repo)["checks"]] == ["tests", "ok"]


def test_status_refusals_are_one_line_and_exit_2(repo: Project) -> None:
    proc = repo.ckdn("status", "nosuch")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.count("\n") == 1
    assert "nosuch" in proc.stderr
    proc = repo.ckdn("status", "testss")  # worded as `ckdn run tset` words it
    assert proc.stderr == repo.ckdn("run", "testss").stderr
    assert "did you mean 'tests'" in proc.stderr
    assert "(configured: tests, ok, probe, both)" in proc.stderr
    repo.config('[run]\nrequired = ["tset"]\n' + CONFIG)
    proc = repo.ckdn("status")
    assert proc.returncode == 2
    assert "required: unknown check 'tset'" in proc.stderr
    repo.config(CONFIG.replace("reads_files = false", 'reads_files = "no"'))
    proc = repo.ckdn("status")
    assert proc.returncode == 2
    assert "reads_files: must be true or false" in proc.stderr


def test_run_reruns_what_is_stale_or_missing_then_answers(repo: Project) -> None:
    run(repo, "ok")
    (repo.root / "new.py").write_text("x = 1\n")
    doc = status(repo, "tests", "ok", "--run", code=0)
    assert doc["ran"] == ["tests", "ok"]
    assert [e["state"] for e in doc["checks"]] == ["fresh", "fresh"]
    assert status(repo, "tests", "ok", "--run")["ran"] == []


def test_a_red_fresh_run_is_not_green(repo: Project) -> None:
    (repo.root / "test_it.py").write_text(TESTS.replace("assert True", "assert False", 1))
    assert run(repo, "tests")["status"] == "fail"
    tests = entry(status(repo, "tests", code=1), "tests")
    assert (tests["state"], tests["status"], tests["green"]) == ("fresh", "fail", False)
    assert "not green: tests fail" in repo.ckdn("status", "tests").stdout


def state(head: str | None, paths: dict[str, tuple[str | None, str | None]],
          tree: str) -> SourceState:
    return SourceState(head, "main", paths, 0, tree)


def test_changed_paths_compares_contents_across_commits() -> None:
    then = state("c1", {"a.py": ("A2", "A1"), "new.py": ("N", None)}, "t1")
    same_commit = state("c1", {"a.py": ("A1", "A1")}, "t2")
    assert changed_paths(then, same_commit, lambda old, new: {}) == (["a.py", "new.py"], True)
    committed = state("c2", {}, "t3")  # both committed with the content the run saw
    between = {"a.py": ("A1", "A2"), "new.py": (None, "N")}
    assert changed_paths(then, committed, lambda old, new: between) == ([], True)
    assert changed_paths(then, committed, lambda old, new: None) is None
    assert changed_paths(then, state("c1", {}, "t1"), lambda old, new: {}) == ([], True)


def test_weakened_names_each_kind_of_loss() -> None:
    before = {"settings": "s", "command": "mypy src", "measures": {"tests": 5, "files": 40},
              "thresholds": {"fail_under": 90}}
    after = {"settings": "s", "command": "mypy src", "measures": {"tests": 5, "files": 12,
                                                                  "deselected": 3},
             "thresholds": {"fail_under": 80.5}}
    assert weakened(before, after) == ["28 fewer files checked (40 -> 12)",
                                       "3 more deselected (0 -> 3)",
                                       "fail_under lowered (90 -> 80.5)"]
    assert weakened(before, {**before, "settings": "t"}) == [
        "the check's options, env or extra arguments changed"]
    assert weakened(before, {"settings": "s", "command": "mypy src"}) == [
        "no tests counted (it was 5)", "no files checked counted (it was 40)",
        "fail_under removed (it was 90)"]
    assert weakened(after, before) == []


DAEMON = """
[check.daemon]
command = ["sh", "-c", "sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; exec sleep 30' \
</dev/null >/dev/null 2>&1 &); while [ ! -s stray.pid ]; do sleep 0.01; done"]
parser = "generic"
"""


def test_the_git_status_beside_a_check_is_neither_its_leftover_nor_in_the_way_of_its_stop(
        repo: Project) -> None:
    assert "notes" not in run(repo, "ok")  # git ran beside it: not called a leftover
    repo.config(CONFIG + DAEMON)
    (repo.root / ".gitignore").write_text("__pycache__/\nbuild/\nstray.pid\n")
    digest = run(repo, "daemon")
    stray = int((repo.root / "stray.pid").read_text())
    try:
        # ckdn adopted the daemon as the tree's subreaper though git was its child too
        assert digest["notes"] == [
            "stopped 1 leftover process(es) still running after the command exited, 1 of them"
            " outside its process group (SIGTERM)"]
        assert (repo.root / ".agent-runs" / "latest" / "source.json").is_file()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stray, signal.SIGKILL)


#: A single-threaded interpreter (as the `ckdn` process is) without a cgroup of its own:
#: the git status beside the check must not keep ckdn from being the tree's subreaper.
SUBREAPER_DRIVER = r"""
import json, os, sys
from ckdn.app._running.run_facts import SourceWatch
from ckdn.process import _cgroup, run_process

_cgroup._cgroup_home = False
os.makedirs("spool", exist_ok=True)
watch = SourceWatch(os.getcwd(), "spool")
script = ("sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; exec sleep 30' </dev/null >/dev/null"
          " 2>&1 &); while [ ! -s stray.pid ]; do sleep 0.01; done")
ran = run_process(["sh", "-c", script], cwd=os.getcwd(), env=dict(os.environ),
                  log_path="full.log", timeout=30)
state = watch.result()
print(json.dumps({"notes": ran.exit.notes, "tree": state is not None}))
"""


def test_ckdn_stays_the_trees_subreaper_beside_its_git_status(repo: Project) -> None:
    (repo.root / ".gitignore").write_text("__pycache__/\nspool/\nstray.pid\nfull.log\n")
    proc = subprocess.run([sys.executable, "-c", SUBREAPER_DRIVER], cwd=repo.root,
                          capture_output=True, text=True, timeout=60, check=False)
    stray = int((repo.root / "stray.pid").read_text())
    try:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == {"notes": [
            "stopped 1 leftover process(es) still running after the command exited, 1 of them"
            " outside its process group (SIGTERM)"], "tree": True}
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stray, signal.SIGKILL)


def test_a_files_content_is_hashed_as_git_hashes_its_blob(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(bytes(range(256)) * 5000)
    (tmp_path / "empty").write_bytes(b"")
    for name in ("a.bin", "empty"):
        expected = subprocess.run(["git", "hash-object", str(tmp_path / name)], check=True,
                                  capture_output=True, text=True).stdout.strip()
        assert blob_id(str(tmp_path / name)) == expected
    assert blob_id(str(tmp_path / "gone")) is None
    assert blob_id(str(tmp_path)) == "directory"


def test_a_check_that_reads_no_files_records_no_tree_and_is_never_stale(repo: Project) -> None:
    run(repo, "probe")
    latest = repo.root / ".agent-runs" / "latest"
    assert not (latest / "source.json").exists()
    assert (latest / "facts.json").is_file()
    (repo.root / "test_it.py").write_text("# edited\n")
    probe = entry(status(repo, "probe", code=0), "probe")
    assert (probe["state"], probe["green"]) == ("fresh", True)


def test_files_a_check_writes_into_the_tree_are_named_as_new_and_untracked(
        repo: Project) -> None:
    # towncrier's suite under pytest leaves its temporary projects in the checkout: its
    # run was stale at once, with nothing saying the files were new, nor what to do.
    litter = "import pathlib; [pathlib.Path(f'tmp-{i}.txt').write_text('x') for i in range(3)]"
    repo.config(CONFIG + f"""
[check.litter]
command = [{json.dumps(sys.executable)}, "-c", {json.dumps(litter)}]
parser = "generic"
""")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "litter")
    run(repo, "litter")
    found = entry(status(repo, "litter", code=1), "litter")
    assert (found["state"], found["changed"]) == ("stale", ["tmp-0.txt", "tmp-1.txt",
                                                            "tmp-2.txt"])
    assert found["reason"].startswith("all of them untracked and not ignored, new since the"
                                       " run: if a check writes them")
    (repo.root / "test_it.py").write_text(TESTS + "\n# edited\n")
    text = repo.ckdn("status", "litter").stdout.splitlines()[0]
    assert text.endswith("4 file(s) changed: test_it.py, tmp-0.txt, tmp-1.txt, tmp-2.txt"
                         " (3 of them untracked and not ignored, new since the run: if a check"
                         " writes them (its tests' temporary files, a report), ignore them in"
                         " .gitignore or write them into {run_dir})")
    (repo.root / "test_it.py").write_text(TESTS)
    (repo.root / ".gitignore").write_text("__pycache__/\nbuild/\ntmp-*\n")
    git(repo.root, "commit", "-qam", "ignore the litter")
    assert "reason" not in entry(status(repo, "litter"), "litter")
