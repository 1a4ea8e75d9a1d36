"""pytest as the command of a ``ckdn run`` check: evidence into the outer run dir.

The outer ``ckdn`` process is real (``python -m ckdn run``), and so is the pytest
it starts.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, PROGRESS_FILE, read_evidence
from tests.project import UNUSED_ADDOPTS, Project
from tests.pytest_ckdn.sessions import valid_digest

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
          "-p", "no:randomly"]

def configure(project: Project, *args: str) -> None:
    command = json.dumps([*PYTEST, *args])
    project.config(f'[check.pytest]\ncommand = {command}\nparser = "pytest"\n')


def outer_run(project: Project) -> tuple[dict[str, Any], Path, int]:
    proc = project.ckdn("run", "pytest")
    digest = valid_digest(project.digest(proc))
    return digest, project.root / digest["run_dir"], proc.returncode


def write_tests(project: Project, source: str) -> None:
    (project.root / "test_sample_outer.py").write_text(source)


def test_the_plugin_writes_evidence_into_the_outer_run_dir_and_no_run_dir_of_its_own(
        project: Project) -> None:
    configure(project, "--ckdn-digest")
    write_tests(project, "def test_bad():\n    assert 1 == 2\n\ndef test_ok():\n    pass\n")
    _, run_dir, code = outer_run(project)
    assert code == 1
    assert len(project.run_dirs()) == 1
    result, exitstatus = read_evidence(run_dir / EVIDENCE_FILE)
    assert exitstatus == 1
    assert [(f.id, f.kind, f.location) for f in result.findings] == [
        ("test_sample_outer.py::test_bad", "test_failure", "test_sample_outer.py:2")]
    assert result.summary["counts"]["passed"] == 1
    # the outer run prints the digest; the plugin prints none of its own
    assert not any(line.startswith("{") for line in (run_dir / "full.log").read_text().splitlines())


def test_under_ckdn_run_the_pytest_parser_reads_the_plugins_evidence(project: Project) -> None:
    configure(project, "--ckdn-digest")
    write_tests(project, "import no_such_module_ckdn\n")
    digest, _, code = outer_run(project)
    assert code == 2
    assert digest["status"] == "fail"
    assert digest["findings"][0]["kind"] == "collection_error"
    assert digest["findings"][0]["location"] == "test_sample_outer.py:1"


def test_under_ckdn_run_a_green_session_is_a_pass_without_junit(project: Project) -> None:
    configure(project, "--ckdn-digest")
    write_tests(project, "def test_ok():\n    pass\n")
    digest, _, code = outer_run(project)
    assert (digest["status"], code) == ("pass", 0)
    assert digest["summary"]["counts"] == {"tests": 1, "passed": 1}


def test_under_ckdn_run_a_gate_of_the_plugin_fails_the_outer_run(project: Project) -> None:
    configure(project, "--ckdn-digest")
    write_tests(project, "import pytest\n\n@pytest.mark.skip(reason='x')\ndef test_ok():\n"
                         "    pass\n")
    digest, _, code = outer_run(project)
    assert digest["status"] == "fail"
    assert digest["gate_failures"] == ["no tests ran: all 1 test(s) skipped"]
    assert code == 1


def test_under_ckdn_run_pytests_exit_5_is_an_error_that_says_nothing_was_collected(
        project: Project) -> None:
    configure(project, "--ckdn-digest", "-k", "nothing_matches")
    write_tests(project, "def test_ok():\n    pass\n")
    digest, _, code = outer_run(project)
    assert (digest["status"], code) == ("error", 5)
    assert "gate_failures" not in digest
    assert digest["notes"][0].startswith("pytest collected no tests (1 deselected) and exited "
                                         "with status 5")


@pytest.mark.parametrize(("conftest", "rc"), [
    ("import no_such_module_ckdn\n", 4),
    ("def pytest_configure(config):\n    raise RuntimeError('plugin broke')\n", 3),
], ids=["conftest-import-error", "configure-crash"])
def test_a_failure_before_any_hook_runs_is_an_error_with_the_log_tail(
        project: Project, conftest: str, rc: int) -> None:
    configure(project, "--ckdn-digest")
    (project.root / "conftest.py").write_text(conftest)
    write_tests(project, "def test_ok():\n    pass\n")
    digest, run_dir, code = outer_run(project)
    assert not (run_dir / EVIDENCE_FILE).exists()
    assert (digest["rc"], code) == (rc, rc)
    assert digest["status"] == "error"
    tail = "\n".join(digest["log_tail"])
    assert "no_such_module_ckdn" in tail or "plugin broke" in tail


LONG = ("def test_long():\n"
        "    raise ValueError('x' * 3000 + '\\n' + '\\n'.join(f'more {i}' for i in range(40)))\n")


def test_what_the_plugin_cut_is_counted_exactly_through_its_evidence(project: Project) -> None:
    """The plugin cuts the message and the E lines; the evidence file carries the counts as
    data, so the digest counts exactly what the reader does not see. (JUnit XML cannot: pytest
    cuts the message attribute itself, uncounted.)"""
    configure(project, "--ckdn-digest")
    write_tests(project, LONG)
    digest, _, code = outer_run(project)
    assert code == 1
    finding = digest["findings"][0]
    # "ValueError: " and 3000 x's are 3012 characters: the first 500 shown, the rest counted
    assert finding["message"] == "ValueError: " + "x" * 488 + f"... [+{3012 - 500} chars]"
    # 41 E lines and the crash line: 11 E lines and the crash line shown, 30 counted
    assert len(finding["detail"]) == 13
    assert finding["detail"][-1] == "... [+30 more lines]"
    # "E" and seven spaces lead the E line: 3020 characters, 300 shown
    assert finding["detail"][0].endswith(f"... [+{3020 - 300} chars]")


# -- issue 10 ---------------------------------------------------------------------------------

INNER_SESSION = '''
import os
import subprocess
import sys


def test_runs_an_inner_session(tmp_path):
    (tmp_path / "test_inner.py").write_text("def test_inner():\\n    pass\\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--ckdn-digest", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    INNER_CHECK
'''


def test_evidence_a_nested_session_left_never_wins_over_pytests_own_report(
        project: Project) -> None:
    """The outer pytest writes JUnit XML (9 failures, exit code forced to 0, as
    pytest-custom-exit-code does); a test starts an inner `pytest --ckdn-digest`, which
    inherits CKDN_RUN_DIR and leaves green evidence there. Two records that disagree are
    never settled in favour of the greener one."""
    configure(project, "--junitxml", "{run_dir}/junit.xml")
    (project.root / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n")
    failing = "".join(f"def test_fail_{i}():\n    assert {i} < 0\n\n\n" for i in range(9))
    write_tests(project, failing + INNER_SESSION.replace("INNER_CHECK", "pass"))
    digest, run_dir, code = outer_run(project)
    assert (run_dir / EVIDENCE_FILE).exists()  # the inner session's
    assert digest["status"] == "parse_mismatch"
    assert code == 1
    assert digest["findings_total"] == 9
    assert any(note.startswith(f"{EVIDENCE_FILE} and junit.xml disagree about this session "
                               "(failures 0 vs 9; findings 0 vs 9)")
               for note in digest["notes"])


def test_a_session_started_inside_a_recorded_session_records_its_own_run(
        project: Project) -> None:
    configure(project, "--ckdn-digest", "--junitxml", "{run_dir}/junit.xml")
    check = ("assert len(list((tmp_path / '.agent-runs').glob('*-pytest'))) == 1\n"
             "    assert '\"status\":\"pass\"' in proc.stdout.splitlines()[-1]")
    write_tests(project, INNER_SESSION.replace("INNER_CHECK", check))
    digest, run_dir, code = outer_run(project)
    assert (digest["status"], code) == ("pass", 0), digest
    result, _ = read_evidence(run_dir / EVIDENCE_FILE)
    assert result.summary["counts"]["tests"] == 1  # the outer session's own evidence


def timed_config(project: Project, *args: str, timeout: float) -> None:
    command = json.dumps([*PYTEST, *args])
    project.config(f'[check.pytest]\ncommand = {command}\nparser = "pytest"\n'
                   f"timeout = {timeout}\n")


def run_until_it_hangs(project: Project, how: str, *,
                       timeouts: tuple[float, ...]) -> tuple[dict[str, Any], Path, int]:
    """The outer run of HANGS whose timeout found pytest inside test_b_hangs.

    On a busy machine pytest may take longer than the first timeout to get there; then the
    run is made again with the next one (the first usually suffices, the test stays quick).
    """
    write_tests(project, HANGS.replace("HOW", how))
    reached = project.root / "reached_b"
    for timeout in timeouts:
        reached.unlink(missing_ok=True)
        timed_config(project, "--ckdn-digest", timeout=timeout)
        ran = outer_run(project)
        if reached.exists():
            break
    return ran


HANGS = """
import os
import pathlib
import signal
import time


def test_a_first():
    pass


def test_b_hangs():
    pathlib.Path("reached_b").touch()
    HOW
    time.sleep(60)


def test_c_never_runs():
    pass
"""


def test_a_timed_out_session_names_the_test_that_was_running(project: Project) -> None:
    """ckdn's timeout sends SIGTERM; the plugin turns it into a clean stop and seals its
    evidence (exit status 143), so the digest knows the running test and the counts so far."""
    digest, run_dir, code = run_until_it_hangs(project, "pass", timeouts=(3, 15, 60))
    assert (digest["status"], digest["timed_out"], code) == ("error", True, 124)
    assert ("pytest received SIGTERM while running test_sample_outer.py::test_b_hangs "
            "(pytest exit status 2)") in digest["notes"]
    assert digest["summary"]["counts"]["passed"] == 1
    assert not (run_dir / PROGRESS_FILE).exists()  # the final evidence made it obsolete
    assert "--junitxml" not in json.dumps(digest)


@pytest.mark.parametrize(("how", "rc"), [
    ("signal.signal(signal.SIGTERM, signal.SIG_IGN)", 124),  # only SIGKILL stops it
    ("os.kill(os.getpid(), signal.SIGKILL)", -9),  # the OOM killer, say
], ids=["sigterm-ignored", "sigkill"])
def test_a_killed_session_names_the_test_that_was_running(project: Project, how: str,
                                                          rc: int) -> None:
    """No evidence can be written: the progress line the plugin kept names the test."""
    digest, run_dir, _ = run_until_it_hangs(project, how, timeouts=(2, 15, 60))
    assert digest["rc"] == rc
    assert digest["status"] == "error"
    assert not (run_dir / EVIDENCE_FILE).exists()
    assert ("pytest was running test_sample_outer.py::test_b_hangs when it stopped "
            "(2 test(s) started, 1 finished, 0 finding(s) so far); the plugin's "
            f"{EVIDENCE_FILE} was never written") in digest["notes"]
    assert "--junitxml" not in json.dumps(digest)


def test_ckdn_digest_where_the_plugin_is_missing_says_what_is_missing_and_how_to_add_it(
        project: Project) -> None:
    configure(project, "-p", "no:ckdn", "--ckdn-digest")  # an environment without the plugin
    write_tests(project, "def test_ok():\n    pass\n")
    digest, _, code = outer_run(project)
    assert (digest["status"], code) == ("error", 4)
    assert digest["notes"][0].startswith(
        "pytest does not know --ckdn-digest: the ckdn pytest plugin is not installed in the "
        "environment that ran pytest; install checkdown there")
    assert "--junitxml" not in json.dumps(digest)


# -- the starter's pytest check (ckdn init) ----------------------------------------------------

#: This venv's scripts first: its pytest loads the plugin (checkdown is installed in it).
VENV_PATH = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])


def init_and_run(project: Project, path: str) -> tuple[str, dict[str, Any], Path]:
    """``ckdn init`` then ``ckdn run pytest`` with ``path``: the starter's pytest command,
    the run's digest and run dir."""
    assert project.ckdn("init", env={"PATH": path}).returncode == 0
    command = tomllib.loads((project.root / "ckdn.toml").read_text())["check"]["pytest"]["command"]
    write_tests(project, "def test_bad():\n    assert 1 == 2\n\ndef test_ok():\n    pass\n")
    proc = project.ckdn("run", "pytest", env={"PATH": path,
                        "PYTEST_ADDOPTS": f"-p no:randomly {UNUSED_ADDOPTS}"})
    digest = valid_digest(project.digest(proc))
    return command, digest, project.root / digest["run_dir"]


def test_init_beside_a_pytest_with_the_plugin_writes_the_plugin_recipe_and_it_runs(
        project: Project) -> None:
    command, digest, run_dir = init_and_run(project, VENV_PATH)
    assert command == "pytest -q --ckdn-digest"
    assert (digest["status"], digest["summary"]["counts"]) == (
        "fail", {"tests": 2, "passed": 1, "failures": 1})
    assert [f["id"] for f in digest["findings"]] == ["test_sample_outer.py::test_bad"]
    assert (run_dir / EVIDENCE_FILE).is_file()
    assert not (run_dir / "junit.xml").exists()


def test_init_where_pytest_is_another_environments_writes_the_junit_recipe_and_it_runs(
        project: Project, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A ``pytest`` first on PATH that is not this environment's script (pipx's ckdn, the
    project's own venv): the plugin may not be there, so the report is pytest's JUnit XML."""
    other = tmp_path_factory.mktemp("other-env")
    script = other / "pytest"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m pytest -p no:ckdn \"$@\"\n")
    script.chmod(0o755)
    command, digest, run_dir = init_and_run(project, os.pathsep.join([str(other), VENV_PATH]))
    assert command == "pytest -q --junitxml {run_dir}/junit.xml"
    assert digest["status"] == "fail"
    assert [f["id"] for f in digest["findings"]] == ["test_sample_outer.py::test_bad"]
    assert (run_dir / "junit.xml").is_file()
    assert not (run_dir / EVIDENCE_FILE).exists()
