"""``pytest --ckdn-digest --ckdn-diff-base REF`` gives the same diff-scoped gate as ``ckdn run``
of the same tests with ``--diff-base REF``: the session runs again on the base tree, in a
git worktree, and its exit status follows the gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.diffgate_repo import gate_facts, git
from tests.project import UNUSED_ADDOPTS, UNUSED_PLUGINS, Project, clean_env

TESTS = "def test_area():\n    from mod import area\n    assert area() == 1\n\n" \
        "def test_known_broken():\n    assert 0\n"
LEAN = UNUSED_ADDOPTS
CONFIG = f"""\
[check.tests]
command = "{sys.executable} -m pytest -q -p no:randomly -p no:cacheprovider {LEAN} --ckdn-digest"
parser = "pytest"
"""


def pytest_digest(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p",
                           "no:cacheprovider", *UNUSED_PLUGINS, "--ckdn-digest", *args], cwd=root,
                          env=clean_env(), capture_output=True, text=True, check=False,
                          timeout=120)
    return proc.returncode, Project(root).digest(
        subprocess.CompletedProcess(proc.args, proc.returncode,
                                    proc.stdout.strip().splitlines()[-1], proc.stderr))


def test_a_test_broken_by_a_change_elsewhere_is_gated_as_ckdn_run_gates_it(
        tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "ckdn.toml").write_text(CONFIG)
    (root / "mod.py").write_text("def area():\n    return 1\n")
    (root / "test_mod.py").write_text(TESTS)
    (root / ".gitignore").write_text(".agent-runs/\n__pycache__/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    code, doc = pytest_digest(root, "--ckdn-diff-base", "HEAD")
    assert (code, doc["gate"]["status"]) == (0, "pass")  # the known failure is not the change's
    (root / "mod.py").write_text("def area():\n    return 2\n")
    code, doc = pytest_digest(root, "--ckdn-diff-base", "HEAD")
    proc = Project(root).ckdn("run", "tests", "--gate", "--diff-base", "HEAD")
    assert (code, proc.returncode) == (1, 1)
    assert gate_facts(doc) == gate_facts(Project(root).digest(proc))
    assert gate_facts(doc)[:2] == ("fail", 1)


def test_a_base_it_cannot_trust_fails_a_green_session(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "test_ok.py").write_text("def test_ok():\n    pass\n")
    (root / ".gitignore").write_text(".agent-runs/\n__pycache__/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    code, doc = pytest_digest(root, "--ckdn-diff-base", "no-such-ref")
    assert (doc["status"], doc["gate"]["status"], code) == ("pass", "unavailable", 1)
    assert "no such commit" in doc["gate"]["reason"]


def test_diff_base_under_ckdn_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = {**clean_env(), "CKDN_RUN_DIR": str(tmp_path), "CKDN_CHECK": "tests"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--ckdn-digest", "--ckdn-diff-base",
                           "HEAD", "-p", "no:cacheprovider", *UNUSED_PLUGINS], cwd=tmp_path,
                          env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 4
    assert "--ckdn-diff-base under ckdn run: pass --diff-base to ckdn run instead" in proc.stderr
