"""pytest as the command of a ``ckdn run`` check: evidence into the outer run dir.

The outer ``ckdn`` process is real (``python -m ckdn run``), and so is the pytest
it starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, read_evidence
from tests.project import Project
from tests.pytest_ckdn.sessions import valid_digest

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]

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
