"""Every file ckdn reads goes through the one regular-file reader: a baseline or a lock file
that is a FIFO is refused in one line, never waited on; a tests.jsonl line of the wrong
shape is refused naming the file, never an internal error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ckdn.errors import UsageError
from tests.project import Project, clean_env

CHECK = '[check.ok]\ncommand = "true"\nparser = "generic"\n'


def _ckdn(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ckdn, killed after 20 s: a reader that blocks must fail, not hang the suite."""
    return subprocess.run([sys.executable, "-m", "ckdn", *args], cwd=project.root,
                          env=clean_env(), capture_output=True, text=True, timeout=20,
                          check=False)


def test_a_baseline_that_is_a_fifo_is_refused_in_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "baseline.json")
    code = ("from ckdn.identity._baseline import read_baseline\n"
            "from ckdn.errors import ConfigError\n"
            "try:\n    read_baseline('baseline.json')\n"
            "except ConfigError as exc:\n    print(exc.message)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=20, check=False)
    assert proc.stdout == "[run] baseline: baseline.json is not a regular file; not read\n"


@pytest.mark.parametrize("verb", [("verify-config",), ("run", "ok")])
def test_a_lock_file_that_is_a_fifo_is_refused_not_blocked(project: Project,
                                                           verb: tuple[str, ...]) -> None:
    project.config(CHECK)
    os.mkfifo(project.root / "ckdn.lock.toml")
    proc = _ckdn(project, *verb)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("ckdn: ")
    assert proc.stderr.strip().count("\n") == 0
    assert "ckdn.lock.toml: not a regular file" in proc.stderr


def test_a_symlinked_lock_file_is_the_projects_own_and_read(project: Project) -> None:
    project.config(CHECK)
    assert _ckdn(project, "lock-config", "-o", "real.lock.toml").returncode == 0
    (project.root / "ckdn.lock.toml").symlink_to("real.lock.toml")
    proc = _ckdn(project, "verify-config")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("line", [
    '{"id": "t::a", "outcome": []}', '{"id": "t::a", "outcome": {"x": 1}}',
    '{"id": ["t"], "outcome": "passed"}', '[1, 2]', '"passed"', '{"id": "t::a"}'])
def test_a_malformed_tests_file_line_is_refused_naming_the_file(tmp_path: Path,
                                                                line: str) -> None:
    from ckdn.app._stored.outcomes import _read_tests_file

    path = tmp_path / "tests.jsonl"
    path.write_text('{"schema": "ckdn.tests/1", "check": "t", "total": 1}\n' + line + "\n")
    with pytest.raises(UsageError) as info:
        _read_tests_file(str(path), "RUN/tests.jsonl", "t")
    assert info.value.message == "RUN/tests.jsonl:2: not a test line of ckdn.tests/1"


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mypy"


def test_a_mypy_error_digest_does_not_repeat_its_findings_in_the_log_tail(
        project: Project) -> None:
    records = (FIXTURES / "json_errors" / "full.log").read_text()
    (project.root / "out.txt").write_text(records + "Traceback (most recent call last):\n"
                                          "  mypy crashed here\n")
    printer = json.dumps([sys.executable, "-c",
                          "import sys; sys.stdout.write(open('out.txt').read()); sys.exit(2)"])
    project.config(f'[check.types]\ncommand = {printer}\nparser = "mypy"\n'
                   'format = "json"\n')
    proc = _ckdn(project, "run", "types")
    digest = project.digest(proc)
    assert digest["status"] == "error", digest
    assert digest["findings_total"] >= 1
    assert [line for line in digest["log_tail"] if line.startswith('{"file":')] == []
    assert "  mypy crashed here" in digest["log_tail"]
    assert any(note.startswith("log tail: ") for note in digest["notes"])
