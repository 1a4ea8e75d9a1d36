"""The diff-scoped gate end to end: `ckdn run CHECK --diff-base REF` / `--diff FILE` on a real
git repository, the check a small linter (mypy's output format) run on both trees.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.app import Outcome, gate_exit_code, green
from ckdn.app._running.steps import DIFF_POLICY_PREFIX
from ckdn.config._load import DIFF_SCOPES
from ckdn.identity.scope import POLICY_PREFIX, SCOPES, scope_policy
from ckdn.schema import load_schema
from tests.diffgate_repo import CONFIG, git, make_repo
from tests.project import Project, clean_env


@pytest.fixture
def repo(project: Project) -> Project:
    """A project in a git repository: a library, a caller, one known error, committed."""
    make_repo(project.root)
    return project


def gated_run(project: Project, *args: str) -> tuple[subprocess.CompletedProcess[str],
                                                    dict[str, Any]]:
    proc = project.ckdn("run", "lint", "--gate", *args)
    return proc, project.digest(proc)


def test_a_new_finding_on_an_added_line_fails_the_gate_listed_first(repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    gate = doc["gate"]
    assert (doc["status"], gate["status"], proc.returncode) == ("fail", "fail", 1)
    assert gate["policy"] == "diff:touched"
    assert doc["summary"]["diff_scope"]["gated"] == 1
    assert doc["summary"]["diff_scope"]["counts"]["added"]["new"] == 1
    assert doc["summary"]["diff_scope"]["counts"]["file"]["known"] == 1
    assert doc["summary"]["diff_scope"]["origin"] == "base_run"
    assert doc["findings"][0]["message"].startswith('Name "brand_new"')
    assert "(first: app.py:14:name-defined)" in gate["reason"]


def test_a_caller_broken_on_an_untouched_line_is_gated_by_touched_not_by_added(
        repo: Project) -> None:
    (repo.root / "lib.py").write_text("def surface():\n    pass\n")
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("fail", 1)
    assert doc["summary"]["diff_scope"]["counts"]["outside"] == {"known": 1, "moved": 0, "new": 1}
    proc, doc = gated_run(repo, "--diff-base", "HEAD", "--scope", "added")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["status"] == "fail"  # the scope changes the gate, never the status


def test_a_rename_only_commit_gates_nothing(repo: Project) -> None:
    git(repo.root, "checkout", "-q", "-b", "topic")
    (repo.root / "pkg").mkdir()
    git(repo.root, "mv", "app.py", "pkg/app.py")
    git(repo.root, "commit", "-q", "-m", "move")
    proc, doc = gated_run(repo, "--diff-base", "main")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["summary"]["diff_scope"]["counts"]["file"]["known"] == 1


def test_a_move_only_change_gates_nothing(repo: Project) -> None:
    (repo.root / "app.py").write_text("x = 1\nuse area\n" + "y = 2\n" * 10)
    (repo.root / "other.py").write_text("z = 3\nuse missing\n")
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["summary"]["diff_scope"]["counts"]["added"]["moved"] == 1  # other.py is untracked


def test_an_empty_change_passes_with_a_reason(repo: Project) -> None:
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["gate"]["reason"] == "the change touches no file"


@pytest.mark.parametrize(("setup", "fix"), [
    ("shallow", "git fetch --unshallow"),
    ("unknown", "no such commit"),
    ("unrelated", "no merge base"),
])
def test_every_base_failure_is_gate_unavailable_naming_the_fix(repo: Project, tmp_path: Path,
                                                         setup: str, fix: str) -> None:
    project, ref = repo, "HEAD"
    if setup == "shallow":
        (repo.root / "app.py").write_text("use area\n")
        git(repo.root, "commit", "-q", "-am", "two")
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}",
                        str(clone)], check=True, capture_output=True)
        project = Project(clone)
    elif setup == "unknown":
        ref = "no-such-branch"
    else:
        git(repo.root, "checkout", "-q", "--orphan", "other")
        git(repo.root, "commit", "-q", "-m", "unrelated")
        ref = "main"
    proc, doc = gated_run(project, "--diff-base", ref)
    assert doc["gate"]["status"] == "unavailable"
    assert fix in doc["gate"]["reason"]
    assert "\n" not in doc["gate"]["reason"]
    assert proc.returncode != 0


def test_a_diff_it_cannot_read_is_gate_unavailable(repo: Project) -> None:
    (repo.root / "bad.diff").write_bytes(b"\x1b[1mdiff --git a/x b/x\x1b[m\n")
    proc, doc = gated_run(repo, "--diff", "bad.diff", "--diff-base", "HEAD")
    assert doc["gate"]["status"] == "unavailable"
    assert "escape byte" in doc["gate"]["reason"]
    assert proc.returncode == 1  # the check's own rc; never 0 for a base failure


def test_an_empty_diff_file_is_refused_as_a_dead_producer_would_write_it(
        repo: Project) -> None:
    (repo.root / "empty.diff").write_bytes(b"")
    _, doc = gated_run(repo, "--diff", "empty.diff", "--diff-base", "HEAD")
    assert doc["gate"]["status"] == "unavailable"
    assert "pipefail" in doc["gate"]["reason"]


def test_a_diff_without_a_base_or_a_baseline_is_gate_unavailable(repo: Project) -> None:
    (repo.root / "app.py").write_text("use new_one\n")
    diff = git(repo.root, "diff", "--no-color", "HEAD")
    (repo.root / "c.diff").write_text(diff)
    _, doc = gated_run(repo, "--diff", "c.diff")
    assert doc["gate"]["status"] == "unavailable"
    assert "--diff-base REF" in doc["gate"]["reason"]


def test_a_diff_on_stdin_against_the_baseline(repo: Project) -> None:
    repo.config(CONFIG.replace("[check.lint]", '[run]\nbaseline = "ckdn-baseline.json"\n\n'
                               "[check.lint]"))
    assert repo.ckdn("baseline", "lint").returncode == 0
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "baseline")
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    diff = git(repo.root, "diff", "--no-color", "HEAD")
    proc = subprocess.run([sys.executable, "-m", "ckdn", "run", "lint", "--gate", "--diff", "-"],
                          cwd=repo.root, input=diff, capture_output=True, text=True,
                          check=False, env=clean_env())
    doc = json.loads(proc.stdout)
    assert doc["summary"]["diff_scope"]["origin"] == "baseline"
    assert doc["summary"]["diff_scope"]["counts"]["added"]["new"] == 1
    assert (doc["gate"]["status"], proc.returncode) == ("fail", 1)


def test_change_json_records_the_base_the_head_and_the_diff_and_every_file_validates(
        repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    _, doc = gated_run(repo, "--diff-base", "HEAD")
    run_dir = repo.root / doc["run_dir"]
    meta = json.loads((run_dir / "meta.json").read_text())
    change = json.loads((run_dir / "change.json").read_text())
    head = git(repo.root, "rev-parse", "HEAD").strip()
    diff = subprocess.run(["git", "-C", str(repo.root), "diff", "--no-color", "--no-ext-diff",
                           "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "-M",
                           "--relative", head, "--"], capture_output=True, check=True).stdout
    assert change["base"] == change["head"] == head
    assert change["diff"] == {"sha256": hashlib.sha256(diff).hexdigest(), "bytes": len(diff)}
    assert (change["policy"], change["gate"], change["gated"]) == ("touched", "fail", 1)
    assert change["counts"] == doc["summary"]["diff_scope"]["counts"]
    assert doc["summary"]["diff_scope"]["head"] == head
    assert "diff" not in meta
    Draft202012Validator(load_schema("ckdn.meta/1")).validate(meta)
    Draft202012Validator(load_schema("ckdn.digest/2")).validate(doc)
    Draft202012Validator(load_schema("ckdn.change/1")).validate(change)


def test_a_run_without_a_diff_keeps_the_published_gate_shape(repo: Project) -> None:
    _, doc = gated_run(repo, "--diff-base", "HEAD")
    assert set(doc) - {"gate"} <= set(json.loads(json.dumps(doc)))
    proc = repo.ckdn("run", "lint")
    assert "gate" not in repo.digest(proc)


def test_the_config_default_scope_is_used_and_checked(repo: Project) -> None:
    (repo.root / "lib.py").write_text("def surface():\n    pass\n")
    repo.config('[run]\ndiff_scope = "added"\n\n' + CONFIG)
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["summary"]["diff_scope"]["policy"], doc["gate"]["status"]) == ("added", "pass")
    repo.config('[run]\ndiff_scope = "everything"\n\n' + CONFIG)
    proc = repo.ckdn("run", "lint", "--diff-base", "HEAD")
    assert proc.returncode == 2
    assert "diff_scope: must be one of touched, added, new-anywhere" in proc.stderr


def test_the_config_scopes_are_the_gate_scopes() -> None:
    assert DIFF_SCOPES == SCOPES


def test_scope_without_a_diff_is_a_usage_error(repo: Project) -> None:
    proc = repo.ckdn("run", "lint", "--scope", "added")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "--scope needs --diff" in proc.stderr


def test_an_untrusted_status_is_never_softened(repo: Project) -> None:
    repo.config(CONFIG.replace("lint.py", "no-such-file.py"))
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert doc["status"] in ("error", "fail")
    assert doc["gate"]["status"] != "pass"
    assert proc.returncode != 0


def test_an_alias_is_gated_by_its_worst_member(repo: Project) -> None:
    repo.config(CONFIG + '\n[check.all]\nmembers = ["lint"]\n')
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    proc = repo.ckdn("run", "all", "--gate", "--diff-base", "HEAD")
    doc = repo.digest(proc)
    assert doc["gate"]["status"] == "fail"
    assert doc["gate"]["policy"] == "diff:touched"
    assert proc.returncode == 1
    Draft202012Validator(load_schema("ckdn.aggregate/1")).validate(doc)


def test_a_second_run_on_the_same_base_reuses_the_stored_base_run(repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    _, first = gated_run(repo, "--diff-base", "HEAD")
    _, again = gated_run(repo, "--diff-base", "HEAD")
    assert (first["summary"]["diff_scope"]["origin"],
            again["summary"]["diff_scope"]["origin"]) == ("base_run", "stored_base_run")
    assert again["summary"]["diff_scope"]["counts"] == first["summary"]["diff_scope"]["counts"]
    git(repo.root, "commit", "-q", "-am", "next")  # another base: run again
    (repo.root / "app.py").write_text("use missing\nuse area\n")
    _, moved_on = gated_run(repo, "--diff-base", "HEAD")
    assert moved_on["summary"]["diff_scope"]["origin"] == "base_run"
    assert moved_on["gate"]["status"] == "pass"
    assert [p.name for p in repo.run_dirs()].count(".base-runs") == 0  # not a run dir


def test_a_base_failure_on_a_green_run_is_red_under_the_gate(repo: Project) -> None:
    (repo.root / "app.py").write_text("x = 1\nuse area\n")  # the check passes
    proc, doc = gated_run(repo, "--diff-base", "no-such-branch")
    assert (doc["status"], doc["gate"]["status"], proc.returncode) == ("pass", "unavailable", 1)
    assert doc["gate"]["policy"] == "diff:touched"
    proc = repo.ckdn("run", "lint", "--diff-base", "no-such-branch")  # no --gate: the status's
    assert proc.returncode == 0


def _document(status: str, policy: str) -> dict[str, Any]:
    return {"schema": "ckdn.digest/2", "check": "x", "status": "pass", "rc": 0, "run_dir": "r",
            "gate": {"status": status, "policy": policy, "reason": "why"}}


@pytest.mark.parametrize(("status", "policy", "code", "is_green"), [
    ("unavailable", "diff:touched", 1, False),
    ("unavailable", "diff:added", 1, False),
    ("unavailable", "no_new_findings", 0, True),  # the baseline gate's: the run's own
    ("pass", "diff:touched", 0, True),
    ("fail", "diff:touched", 1, False),
])
def test_every_host_reads_an_unavailable_diff_gate_as_red(status: str, policy: str, code: int,
                                                          is_green: bool) -> None:
    """gate_exit_code (CLI, MCP, pytest) and green (nox, tox) are what the hosts judge by."""
    doc = _document(status, policy)
    assert gate_exit_code(Outcome(doc, 0)) == code  # type: ignore[arg-type]
    assert green(doc, gate=True) is is_green  # type: ignore[arg-type]


def test_the_gate_policy_names_the_scope() -> None:
    assert [scope_policy(s) for s in SCOPES] == ["diff:touched", "diff:added",
                                                 "diff:new-anywhere"]
    assert POLICY_PREFIX == DIFF_POLICY_PREFIX


def _git_logged(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A ``git`` first on PATH that logs each call's subcommand, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    bin_dir, log = tmp_path / "logged-bin", tmp_path / "git.log"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def _subcommands(log: Path) -> list[str]:
    """Each logged call's subcommand (``-C DIR`` and ``-c KEY=VALUE`` skipped), sorted;
    ``worktree`` with its verb."""
    out = []
    for line in log.read_text().splitlines():
        words = line.split()
        while words and words[0] in ("-C", "-c"):
            words = words[2:]
        out.append(" ".join(words[:2]) if words[0] == "worktree" else words[0])
    return sorted(out)


def test_a_fresh_base_run_starts_six_gits_and_a_stored_one_four(repo: Project,
                                                                tmp_path: Path) -> None:
    """The base resolved in one rev-parse, the diff and the untracked files, the worktree
    added and removed, and the run's own `git status` (source.json): the count cannot creep."""
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    env, log = _git_logged(tmp_path)
    proc = repo.ckdn("run", "lint", "--gate", "--diff-base", "HEAD", env=env)
    assert repo.digest(proc)["summary"]["diff_scope"]["origin"] == "base_run"
    assert _subcommands(log) == ["diff", "ls-files", "rev-parse", "status", "worktree add",
                                 "worktree remove"]
    log.unlink()
    proc = repo.ckdn("run", "lint", "--gate", "--diff-base", "HEAD", env=env)
    assert repo.digest(proc)["summary"]["diff_scope"]["origin"] == "stored_base_run"
    assert _subcommands(log) == ["diff", "ls-files", "rev-parse", "status"]
    assert not git(repo.root, "worktree", "list", "--porcelain").count("worktree ") - 1


def test_a_torn_stored_base_run_is_run_again_never_read(repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    _, first = gated_run(repo, "--diff-base", "HEAD")
    stored = list((repo.root / ".agent-runs" / ".base-runs").iterdir())
    assert [p.suffix for p in stored] == [".bin"]
    stored[0].write_bytes(stored[0].read_bytes()[:-3])  # not a whole record
    _, again = gated_run(repo, "--diff-base", "HEAD")
    assert again["summary"]["diff_scope"]["origin"] == "base_run"
    assert again["summary"]["diff_scope"]["counts"] == first["summary"]["diff_scope"]["counts"]


def test_the_change_is_read_from_the_tree_the_check_left(project: Project) -> None:
    """The base's worktree is readied while the check runs; git's diff and untracked files
    are read after it (a file the check writes is in the change), never racing it."""
    writer = ("import runpy, time\ntime.sleep(0.3)\n"
              "open('made.py', 'w').write('use brand_new\\n')\nrunpy.run_path('lint.py')\n")
    make_repo(project.root, CONFIG.replace("lint.py", "writer.py"),
              files={"writer.py": writer})
    (project.root / "app.py").write_text("x = 1\nuse area\nuse missing\n")
    _, doc = gated_run(project, "--diff-base", "HEAD")
    counts = doc["summary"]["diff_scope"]["counts"]
    # made.py (written on the base too, so its finding moved): an untracked file, all added
    assert counts["added"] == {"known": 0, "moved": 1, "new": 0}, counts
    assert counts["outside"] == {"known": 0, "moved": 0, "new": 0}
