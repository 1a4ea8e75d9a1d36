"""pytest-cov: the total in the summary, ckdn's fail_under gate, pytest-cov's own fail-under.

Coverage runs in a subprocess: measuring inside this (possibly measured) process
would nest tracers.
"""

from __future__ import annotations

import pytest

from tests.pytest_ckdn.sessions import QUIET, Runner

#: Six statements; the tests leave ``return 3`` unrun: a total of 5/6 = 83.33...%.
MODULE = """
def f():
    return 1

def g(flag):
    if flag:
        return 2
    return 3
"""
TESTS = """
import measured_mod

def test_f():
    assert measured_mod.f() == 1

def test_g():
    assert measured_mod.g(True) == 2
"""


@pytest.fixture
def measured(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(measured_mod=MODULE, test_sample_cov=TESTS)
    return pytester




def test_the_coverage_total_goes_into_the_summary(session: Runner,
                                                  measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", subprocess=True)
    assert rec.digest["status"] == "pass"
    # precision 0 is pruned from the sparse digest like every zero
    assert rec.digest["summary"]["coverage"] == {"percent": 100 * 5 / 6, "display": "83"}


def test_ckdn_fail_under_is_a_gate_and_a_miss_makes_pytest_exit_1(
        session: Runner, measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", "--ckdn-fail-under", "90", subprocess=True)
    assert rec.digest["rc"] == 0
    assert rec.digest["status"] == "fail"
    assert rec.digest["gate_failures"] == [
        "coverage total of 83 is less than fail_under=90; worst covered: measured_mod.py 83% "
        "(missing 7)"]
    assert rec.result.ret == 1


def test_fail_under_of_the_check_in_ckdn_toml_is_the_gate(session: Runner,
                                                          measured: pytest.Pytester) -> None:
    measured.path.joinpath("ckdn.toml").write_text(
        '[check.cov]\ncommand = "pytest --cov"\nparser = "coverage"\nfail_under = 95.5\n')
    rec = session("--cov=measured_mod", "--ckdn-check", "cov", subprocess=True, check="cov")
    assert rec.digest["gate_failures"] == [
        "coverage total of 83.3 is less than fail_under=95.5; worst covered: measured_mod.py "
        "83% (missing 7)"]


def test_pytest_covs_own_fail_under_is_reported_as_a_coverage_gate_not_an_unexplained_rc_1(
        session: Runner, measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", "--cov-fail-under=90", subprocess=True)
    assert rec.digest["rc"] == 1
    assert rec.digest["status"] == "fail"
    assert "findings" not in rec.digest
    assert rec.digest["gate_failures"] == [
        "coverage total of 83 is less than fail_under=90; worst covered: measured_mod.py 83% "
        "(missing 7) (pytest-cov --cov-fail-under)"]
    assert rec.counts == {"tests": 2, "passed": 2}


@pytest.mark.parametrize(("threshold", "fails"), [("83.33", False), ("83.34", True)])
def test_ckdn_and_pytest_cov_agree_at_the_rounding_boundary(
        session: Runner, measured: pytest.Pytester, threshold: str, fails: bool) -> None:
    rec = session("--cov=measured_mod", f"--cov-fail-under={threshold}",
                  f"--ckdn-fail-under={threshold}", subprocess=True)
    assert (rec.result.ret == 1) is fails
    assert bool(rec.digest.get("gate_failures")) is fails
    assert (rec.digest["status"] == "fail") is fails


def test_fail_under_without_coverage_measured_is_a_gate(session: Runner,
                                                        measured: pytest.Pytester) -> None:
    rec = session("--ckdn-fail-under", "80")
    assert rec.digest["status"] == "fail"
    assert rec.digest["gate_failures"] == [
        "fail_under=80 is set but coverage was not measured (run with pytest-cov: --cov=PACKAGE)"]


def test_coverage_under_xdist_is_taken_from_the_controller(session: Runner,
                                                           measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", "-n", "2", "--ckdn-fail-under", "90", subprocess=True)
    assert rec.digest["summary"]["coverage"]["display"] == "83"
    assert rec.counts == {"tests": 2, "passed": 2}
    # the combined data names the file, as a single process would
    assert rec.digest["gate_failures"] == [
        "coverage total of 83 is less than fail_under=90; worst covered: measured_mod.py 83% "
        "(missing 7)"]


def test_a_fail_under_outside_0_to_100_is_refused_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_badgate="def test_a():\n    pass\n")
    result = pytester.runpytest("--ckdn-digest", *QUIET, "--ckdn-fail-under", "150")
    assert result.ret == 4
    assert [line for line in result.errlines if line] == [
        "ERROR: ckdn: --ckdn-fail-under must be a number from 0 to 100, not 150.0"]
    assert not (pytester.path / ".agent-runs").exists()


def test_a_missed_gate_names_the_worst_files_in_the_summary_as_the_coverage_parser_does(
        session: Runner, measured: pytest.Pytester) -> None:
    measured.path.joinpath("ckdn.toml").write_text(
        '[check.cov]\ncommand = "pytest --cov"\nparser = "coverage"\nfail_under = 90\n'
        "missing_lines_preview = 0\n")
    rec = session("--cov=measured_mod", "--ckdn-check", "cov", subprocess=True, check="cov")
    summary = rec.digest["summary"]
    assert summary["uncovered_files_total"] == 1
    assert summary["top_uncovered_files"] == [{
        "file": "measured_mod.py", "line_rate": 0.8333, "missing": "7", "missing_count": 1,
        "missing_lines_truncated": 1, "percent": 100 * 5 / 6}]  # preview 0: the line counted
    # the report behind the names is kept as evidence
    assert "ckdn-coverage.json" in rec.digest["artifacts"]


def test_a_passing_gate_writes_no_per_file_report(session: Runner,
                                                  measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", "--ckdn-fail-under", "80", subprocess=True)
    assert rec.digest["status"] == "pass"
    assert "ckdn-coverage.json" not in rec.digest.get("artifacts", [])
    assert "top_uncovered_files" not in rec.digest["summary"]


def test_the_plugin_and_the_coverage_parser_word_a_missed_gate_alike(
        pytester: pytest.Pytester) -> None:
    """The same session, recorded by the plugin and read by ``ckdn run`` from pytest-cov's
    JSON report: one rule, one message."""
    import json
    import subprocess
    import sys

    from tests.project import UNUSED_PLUGINS, clean_env

    pytester.makepyfile(measured_mod=MODULE, test_sample_cov=TESTS)
    pytest_argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p",
                   "no:cacheprovider", *UNUSED_PLUGINS, "--cov=measured_mod"]
    pytester.path.joinpath("ckdn.toml").write_text(
        "[check.cov]\n"
        f"command = {json.dumps([*pytest_argv, '--cov-report=json:{run_dir}/coverage.json'])}\n"
        'parser = "coverage"\nfail_under = 90\n')
    outer = subprocess.run([sys.executable, "-m", "ckdn", "run", "cov"], cwd=pytester.path,
                           env=clean_env(), capture_output=True, text=True, check=False)
    parsed = json.loads(outer.stdout)
    plugin = subprocess.run([*pytest_argv, "--ckdn-digest", "--ckdn-check", "cov", "-q"],
                            cwd=pytester.path, env=clean_env(), capture_output=True, text=True,
                            check=False)
    recorded = json.loads(plugin.stdout.strip().splitlines()[-1])
    assert parsed["gate_failures"] == recorded["gate_failures"] == [
        "coverage total of 83 is less than fail_under=90; worst covered: measured_mod.py 83% "
        "(missing 7)"]
    assert parsed["summary"]["top_uncovered_files"] == recorded["summary"]["top_uncovered_files"]


def test_code_measured_in_site_packages_gets_a_note_naming_the_fix(
        pytester: pytest.Pytester) -> None:
    """tox installs a project non-editable: coverage then measures the copy in the env's
    site-packages, a path no one should edit. ``ckdn run`` and the plugin both say so."""
    import json
    import subprocess
    import sys

    from tests.project import UNUSED_PLUGINS, clean_env

    installed = pytester.path / ".tox" / "py" / "lib" / "python3.11" / "site-packages"
    installed.mkdir(parents=True)
    (installed / "measured_mod.py").write_text(MODULE)
    pytester.makepyfile(test_sample_cov=TESTS)
    env = {**clean_env(), "PYTHONPATH": str(installed)}
    pytest_argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p",
                   "no:cacheprovider", *UNUSED_PLUGINS, "--cov=measured_mod"]
    pytester.path.joinpath("ckdn.toml").write_text(
        "[check.cov]\n"
        f"command = {json.dumps([*pytest_argv, '--cov-report=json:{run_dir}/coverage.json'])}\n"
        'parser = "coverage"\nfail_under = 90\n[check.cov.env]\n'
        f"PYTHONPATH = {json.dumps(str(installed))}\n")
    outer = subprocess.run([sys.executable, "-m", "ckdn", "run", "cov"], cwd=pytester.path,
                           env=env, capture_output=True, text=True, check=False)
    parsed = json.loads(outer.stdout)
    plugin = subprocess.run([*pytest_argv, "--ckdn-digest", "--ckdn-check", "cov", "-q"],
                            cwd=pytester.path, env=env, capture_output=True, text=True,
                            check=False)
    recorded = json.loads(plugin.stdout.strip().splitlines()[-1])
    shown = ".tox/py/lib/python3.11/site-packages/measured_mod.py"
    for digest in (parsed, recorded):
        assert digest["status"] == "fail"
        assert digest["summary"]["top_uncovered_files"][0]["file"] == shown
        note, = (note for note in digest["notes"] if "installed copy" in note)
        assert note.startswith(f"coverage measured an installed copy of the code ({shown})")
        assert "package = editable" in note
        assert "[paths]" in note


def test_code_measured_in_the_project_gets_no_installed_copy_note(
        session: Runner, measured: pytest.Pytester) -> None:
    rec = session("--cov=measured_mod", "--ckdn-fail-under", "90", subprocess=True)
    assert rec.digest["summary"]["top_uncovered_files"][0]["file"] == "measured_mod.py"
    assert not any("installed copy" in note for note in rec.digest.get("notes", []))
