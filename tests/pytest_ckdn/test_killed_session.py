"""A ``pytest --ckdn-digest`` session killed with SIGKILL is the latest run, unfinished.

Real pytest subprocesses, a real SIGKILL, the real CLI and the MCP door: no reader may
skip back to the green session before it, not even after ``ckdn gc``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ckdn.app import load_config
from ckdn.app.queries import read_document
from tests.project import Project, clean_env

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
          "-p", "no:hypothesispytest", "-p", "no:randomly", "-p", "no:xdist", "--ckdn-digest"]

TESTS = """\
import os, pathlib, time

def test_ok():
    if os.environ.get("HANG_AFTER"):
        pathlib.Path(os.environ["HANG_AFTER"]).touch()
        time.sleep(60)
"""


def session(project: Project, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(PYTEST, cwd=project.root, env={**clean_env(), **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
def killed(project: Project) -> Path:
    """A green session, then one SIGKILLed mid-test: the killed one's run dir."""
    project.config(f'[check.pytest]\ncommand = {json.dumps(PYTEST)}\nparser = "pytest"\n')
    (project.root / "test_sample.py").write_text(TESTS)
    assert session(project).wait(timeout=60) == 0
    [green] = project.run_dirs()
    started = project.root / "started"
    proc = session(project, HANG_AFTER=str(started))
    deadline = time.monotonic() + 60
    while not started.exists():
        assert proc.poll() is None, "the session ended before its test started"
        assert time.monotonic() < deadline, "the session never started its test"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    [newer] = [d for d in project.run_dirs() if d != green]
    assert not (newer / "digest.json").exists()
    return newer


def assert_latest_is_unfinished(project: Project, run_dir: Path) -> None:
    shown = project.ckdn("show")
    assert (shown.returncode, shown.stdout) == (2, ""), shown.stdout
    [line] = shown.stderr.splitlines()
    assert line.startswith(f"ckdn: .agent-runs/{run_dir.name} is unfinished: no digest yet")
    assert "killed" in line
    listed = json.loads(project.ckdn("list", "--json").stdout)["runs"]
    assert (listed[-1]["run_id"], listed[-1]["kind"], listed[-1]["status"]) == (
        run_dir.name, "unfinished", "?")
    answer = read_document(load_config(str(project.root)), None)  # what MCP's latest reads
    assert answer["run_id"] == run_dir.name
    assert "digest" not in answer
    assert "is unfinished" in answer["unfinished"]


def test_a_sigkilled_session_is_the_latest_never_the_green_before_it(
        project: Project, killed: Path) -> None:
    assert_latest_is_unfinished(project, killed)


def test_gc_keeps_a_dead_session_while_it_is_the_latest(project: Project, killed: Path) -> None:
    gc = project.ckdn("gc")
    assert gc.returncode == 0, gc.stderr
    assert killed.is_dir()
    assert (killed / ".abandoned").exists()  # the next gc after a newer run collects it
    assert_latest_is_unfinished(project, killed)


def test_gc_collects_the_dead_session_once_a_newer_run_is_the_latest(
        project: Project, killed: Path) -> None:
    assert project.ckdn("gc").returncode == 0
    assert session(project).wait(timeout=60) == 0
    assert project.ckdn("gc").returncode == 0
    assert not killed.exists()
    assert json.loads(project.ckdn("show", "--json").stdout)["status"] == "pass"
