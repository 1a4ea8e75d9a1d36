"""The diff-scoped gate end to end: `ckdn run CHECK --diff-base REF` / `--diff FILE` on a real
git repository, the check a small linter (mypy's output format) run on both trees.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.config._load import DIFF_SCOPES
from ckdn.identity.scope import SCOPES
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
    assert gate["policy"] == "diff_scope"
    assert gate["scope"]["gated"] == 1
    assert gate["scope"]["counts"]["added"]["new"] == 1
    assert gate["scope"]["counts"]["file"]["known"] == 1
    assert gate["scope"]["origin"] == "base_run"
    assert doc["findings"][0]["message"].startswith('Name "brand_new"')
    assert "(first: app.py:14:name-defined)" in gate["reason"]


def test_a_caller_broken_on_an_untouched_line_is_gated_by_touched_not_by_added(
        repo: Project) -> None:
    (repo.root / "lib.py").write_text("def surface():\n    pass\n")
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("fail", 1)
    assert doc["gate"]["scope"]["counts"]["outside"] == {"known": 1, "moved": 0, "new": 1}
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
    assert doc["gate"]["scope"]["counts"]["file"]["known"] == 1


def test_a_move_only_change_gates_nothing(repo: Project) -> None:
    (repo.root / "app.py").write_text("x = 1\nuse area\n" + "y = 2\n" * 10)
    (repo.root / "other.py").write_text("z = 3\nuse missing\n")
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["gate"]["scope"]["counts"]["added"]["moved"] == 1  # other.py is untracked


def test_an_empty_change_passes_with_a_reason(repo: Project) -> None:
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["status"], proc.returncode) == ("pass", 0)
    assert doc["gate"]["reason"] == "the change touches no file"


@pytest.mark.parametrize(("setup", "fix"), [
    ("shallow", "git fetch --unshallow"),
    ("unknown", "no such commit"),
    ("unrelated", "no merge base"),
])
def test_every_base_failure_is_gate_error_naming_the_fix(repo: Project, tmp_path: Path,
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
    assert doc["gate"]["status"] == "error"
    assert fix in doc["gate"]["reason"]
    assert "\n" not in doc["gate"]["reason"]
    assert proc.returncode != 0


def test_a_diff_it_cannot_read_is_gate_error(repo: Project) -> None:
    (repo.root / "bad.diff").write_bytes(b"\x1b[1mdiff --git a/x b/x\x1b[m\n")
    proc, doc = gated_run(repo, "--diff", "bad.diff", "--diff-base", "HEAD")
    assert doc["gate"]["status"] == "error"
    assert "escape byte" in doc["gate"]["reason"]
    assert proc.returncode == 1  # the check's own rc; never 0 for a gate error


def test_an_empty_diff_file_is_refused_as_a_dead_producer_would_write_it(
        repo: Project) -> None:
    (repo.root / "empty.diff").write_bytes(b"")
    _, doc = gated_run(repo, "--diff", "empty.diff", "--diff-base", "HEAD")
    assert doc["gate"]["status"] == "error"
    assert "pipefail" in doc["gate"]["reason"]


def test_a_diff_without_a_base_or_a_baseline_is_gate_error(repo: Project) -> None:
    (repo.root / "app.py").write_text("use new_one\n")
    diff = git(repo.root, "diff", "--no-color", "HEAD")
    (repo.root / "c.diff").write_text(diff)
    _, doc = gated_run(repo, "--diff", "c.diff")
    assert doc["gate"]["status"] == "error"
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
    assert doc["gate"]["scope"]["origin"] == "baseline"
    assert doc["gate"]["scope"]["counts"]["added"]["new"] == 1
    assert (doc["gate"]["status"], proc.returncode) == ("fail", 1)


def test_meta_records_the_base_the_head_and_the_diff_hash_and_both_validate(
        repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    _, doc = gated_run(repo, "--diff-base", "HEAD")
    run_dir = repo.root / doc["run_dir"]
    meta = json.loads((run_dir / "meta.json").read_text())
    head = git(repo.root, "rev-parse", "HEAD").strip()
    assert meta["diff"]["base"] == meta["diff"]["head"] == head
    assert len(meta["diff"]["sha256"]) == 64
    Draft202012Validator(load_schema("ckdn.meta/1")).validate(meta)
    Draft202012Validator(load_schema("ckdn.digest/2")).validate(doc)


def test_a_run_without_a_diff_keeps_the_published_gate_shape(repo: Project) -> None:
    _, doc = gated_run(repo, "--diff-base", "HEAD")
    assert set(doc) - {"gate"} <= set(json.loads(json.dumps(doc)))
    proc = repo.ckdn("run", "lint")
    assert "gate" not in repo.digest(proc)


def test_the_config_default_scope_is_used_and_checked(repo: Project) -> None:
    (repo.root / "lib.py").write_text("def surface():\n    pass\n")
    repo.config('[run]\ndiff_scope = "added"\n\n' + CONFIG)
    proc, doc = gated_run(repo, "--diff-base", "HEAD")
    assert (doc["gate"]["scope"]["policy"], doc["gate"]["status"]) == ("added", "pass")
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
    assert doc["gate"]["policy"] == "diff_scope"
    assert proc.returncode == 1
    Draft202012Validator(load_schema("ckdn.aggregate/1")).validate(doc)


def test_a_second_run_on_the_same_base_reuses_the_stored_base_run(repo: Project) -> None:
    with (repo.root / "app.py").open("a") as handle:
        handle.write("use brand_new\n")
    _, first = gated_run(repo, "--diff-base", "HEAD")
    _, again = gated_run(repo, "--diff-base", "HEAD")
    assert (first["gate"]["scope"]["origin"], again["gate"]["scope"]["origin"]) == (
        "base_run", "stored_base_run")
    assert again["gate"]["scope"]["counts"] == first["gate"]["scope"]["counts"]
    git(repo.root, "commit", "-q", "-am", "next")  # another base: run again
    (repo.root / "app.py").write_text("use missing\nuse area\n")
    _, moved_on = gated_run(repo, "--diff-base", "HEAD")
    assert moved_on["gate"]["scope"]["origin"] == "base_run"
    assert moved_on["gate"]["status"] == "pass"
    assert [p.name for p in repo.run_dirs()].count(".base-runs") == 0  # not a run dir
