"""The log contradicts the report: a clean report at exit 0 beside a log saying something
failed is ``parse_mismatch``, never a pass (one rule in the parser base, issue 24).

The evidence is made by the real tools here (pytest, coverage.py, ruff, mypy, ruff format),
each clean report beside the log of another, failing run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ckdn.parsers import get_parser
from ckdn.parsers._logsays import says_failed
from ckdn.reconcile import PARSE_MISMATCH, PASS
from ckdn.testing import run_parser, verdict
from tests.project import clean_env
from tests.shared import shared_dir

BIN = Path(sys.executable).parent
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
          "-p", "no:xdist", "-p", "no:hypothesispytest", "-p", "no:ckdn"]


def tool(cwd: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = clean_env()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=120, check=False)


def log_of(proc: subprocess.CompletedProcess[bytes]) -> bytes:
    return proc.stdout + proc.stderr


def record_sessions(root: Path) -> None:
    """A clean JUnit report and its session's log, and the log of a session ending
    ``9 failed, 5 passed``, kept in ``root``."""
    (root / "test_green.py").write_text("def test_ok():\n    pass\n")
    red = "".join(f"def test_bad_{i}():\n    assert {i} < 0\n\n" for i in range(9))
    red += "".join(f"def test_good_{i}():\n    pass\n\n" for i in range(5))
    (root / "test_red.py").write_text(red)
    green = tool(root, *PYTEST, "test_green.py", "--junitxml", "junit.xml")
    assert green.returncode == 0, log_of(green)
    failing = tool(root, *PYTEST, "test_red.py")
    assert failing.returncode == 1
    assert log_of(failing).rstrip().splitlines()[-1].startswith(b"9 failed, 5 passed")
    (root / "green.log").write_bytes(log_of(green))
    (root / "red.log").write_bytes(log_of(failing))


@pytest.fixture
def pytest_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The two sessions' report and logs, recorded once a suite run."""
    root = shared_dir(tmp_path_factory, "log-contradicts-sessions", record_sessions)
    return {"junit.xml": (root / "junit.xml").read_bytes(),
            "red log": (root / "red.log").read_bytes(),
            "green log": (root / "green.log").read_bytes(), "cwd": str(root).encode()}


def test_a_clean_junit_report_beside_a_log_ending_9_failed_is_a_mismatch(
        pytest_logs: dict[str, bytes]) -> None:
    result = run_parser(get_parser("pytest"), 0, log=pytest_logs["red log"],
                        files={"junit.xml": pytest_logs["junit.xml"]},
                        cwd=pytest_logs["cwd"].decode())
    assert verdict(result, 0) == PARSE_MISMATCH
    assert any(note.startswith("the log contradicts the report: line ")
               for note in result.notes)


def test_the_same_report_beside_its_own_log_is_still_a_pass(
        pytest_logs: dict[str, bytes]) -> None:
    result = run_parser(get_parser("pytest"), 0, log=pytest_logs["green log"],
                        files={"junit.xml": pytest_logs["junit.xml"]},
                        cwd=pytest_logs["cwd"].decode())
    assert verdict(result, 0) == PASS


def test_a_clean_coverage_report_beside_1_failed_1_passed_is_a_mismatch(
        tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("def f():\n    return 1\n")
    (tmp_path / "test_mod.py").write_text("import mod\n\ndef test_f():\n    assert mod.f() == 1\n")
    ran = tool(tmp_path, str(BIN / "coverage"), "run", "-m", "pytest", *PYTEST[3:],
               "--junitxml", "junit.xml")
    assert ran.returncode == 0, log_of(ran)
    assert tool(tmp_path, str(BIN / "coverage"), "xml", "-o", "coverage.xml").returncode == 0
    (tmp_path / "test_two.py").write_text("def test_a():\n    assert 0\n\ndef test_b():\n"
                                          "    pass\n")
    red = tool(tmp_path, *PYTEST, "test_two.py")
    assert log_of(red).rstrip().splitlines()[-1].startswith(b"1 failed, 1 passed")
    files = {name: (tmp_path / name).read_bytes() for name in ("coverage.xml", "junit.xml")}
    parser = get_parser("coverage")
    clean = run_parser(parser, 0, log=log_of(ran), files=files, cwd=str(tmp_path))
    assert verdict(clean, 0) == PASS
    result = run_parser(parser, 0, log=log_of(red), files=files, cwd=str(tmp_path))
    assert verdict(result, 0) == PARSE_MISMATCH


def test_a_clean_ruff_report_beside_mypys_failing_output_is_a_mismatch(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bad.py").write_text("x: int = 'one'\n")
    ruff = tool(tmp_path, str(BIN / "ruff"), "check", "--no-cache", "--output-format", "json",
                "--output-file", "ruff.json", "ok.py")
    assert ruff.returncode == 0, log_of(ruff)
    assert (tmp_path / "ruff.json").read_bytes().strip() == b"[]"
    mypy = tool(tmp_path, str(BIN / "mypy"), "--no-incremental", "bad.py")
    assert mypy.returncode == 1
    files = {"ruff.json": (tmp_path / "ruff.json").read_bytes()}
    parser = get_parser("ruff")
    assert verdict(run_parser(parser, 0, log=log_of(ruff), files=files,
                              cwd=str(tmp_path)), 0) == PASS
    result = run_parser(parser, 0, log=log_of(ruff) + log_of(mypy), files=files,
                        cwd=str(tmp_path))
    assert verdict(result, 0) == PARSE_MISMATCH


def test_mypy_json_mode_with_only_mypys_usage_line_is_never_a_pass(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x = 1\n")
    mypy = tool(tmp_path, str(BIN / "mypy"), "--output", "json", "--no-such-flag", "ok.py")
    assert mypy.returncode == 2
    assert log_of(mypy).startswith(b"usage: mypy ")
    result = run_parser(get_parser("mypy"), 0, log=log_of(mypy), options={"format": "json"},
                        cwd=str(tmp_path))
    assert verdict(result, 0) != PASS


def test_a_formatters_log_with_two_contradicting_summaries_is_a_mismatch(
        tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("x=1\n")
    clean = tool(tmp_path, str(BIN / "ruff"), "format", "--no-cache", "--check", "a.py")
    dirty = tool(tmp_path, str(BIN / "ruff"), "format", "--no-cache", "--check", "b.py")
    assert (clean.returncode, dirty.returncode) == (0, 1)
    parser = get_parser("reformat")
    assert verdict(run_parser(parser, 0, log=log_of(clean), cwd=str(tmp_path)), 0) == PASS
    both = log_of(dirty) + log_of(clean)  # "1 file would be reformatted" and "1 file already
    result = run_parser(parser, 0, log=both, cwd=str(tmp_path))  # formatted"
    assert verdict(result, 0) != PASS


@pytest.mark.parametrize("line", [
    "9 failed, 5 passed in 0.12s", "==== 1 failed, 1 passed in 0.01s ====",
    "= 2 passed, 1 warning, 1 error in 0.1s =", "FAILED tests/test_a.py::test_b - assert 0",
    "Found 3 errors in 1 file (checked 2 source files)", "Found 1 error.",
    "src/a.py:3: error: Name \"x\" is not defined  [name-defined]",
    "src/a.py:3:5: error: bad", "would reformat src/a.py", "Would reformat: b.py",
    "1 file would be reformatted, 2 files already formatted",
    "usage: mypy [-h] [-v] [-V] [more options; see below]",
    "Usage: tool [OPTIONS] COMMAND [ARGS]...", "error: unexpected argument '--x' found",
    "\x1b[31m\x1b[1m9 failed\x1b[0m, \x1b[32m5 passed\x1b[0m in 0.1s",
])
def test_a_line_saying_something_failed_is_recognised(line: str) -> None:
    assert says_failed(line)


@pytest.mark.parametrize("line", [
    "14 passed in 0.50s", "0 errors, 0 warnings, 0 informations", "Found 0 errors.",
    "Success: no issues found in 3 source files", "All checks passed!",
    "3 files already formatted", "0 files would be reformatted",
    "test_a.py::test_error_path PASSED", "usage: see the README", "no tests ran in 0.01s",
    "All done! 2 files would be left unchanged.", "ERROR: logging says so",
    "1 xfailed, 2 passed in 0.1s",
])
def test_a_clean_runs_lines_are_not(line: str) -> None:
    assert not says_failed(line)
