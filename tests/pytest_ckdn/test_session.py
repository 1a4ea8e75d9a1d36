"""A whole session: the run dir it leaves, its exit status, and the facts of the host."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ckdn.store import Store
from tests.pytest_ckdn.sessions import QUIET, Runner, recorded, run_dirs

PASSING = "def test_one():\n    pass\n\ndef test_two():\n    pass\n"


def test_a_green_session_leaves_a_pass_digest_like_ckdn_run(session: Runner,
                                                            pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_green=PASSING)
    rec = session()
    assert rec.result.ret == 0
    assert rec.digest == {"schema": "ckdn.digest/2", "check": "pytest", "status": "pass",
                          "rc": 0, "run_dir": f".agent-runs/{rec.run_dir.name}",
                          "summary": {"counts": {"tests": 2, "passed": 2}}}
    # facts.json: a green run's facts, for the next one's weakening (docs/freshness.md)
    assert sorted(p.name for p in rec.run_dir.iterdir()) == ["digest.json", "facts.json",
                                                             "full.log", "meta.json",
                                                             "tests.jsonl"]
    assert (pytester.path / ".agent-runs" / "latest").resolve() == rec.run_dir
    assert rec.meta["rc"] == 0
    assert set(rec.meta) == {"schema", "ckdn_version", "check", "parser", "command", "rc",
                             "timed_out", "interrupted", "started_at", "duration_s",
                             "log_sha256", "log_bytes"}
    assert rec.meta["check"] == "pytest"


def test_the_digest_is_the_last_line_pytest_prints(session: Runner,
                                                   pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_last="def test_bad():\n    assert 0\n")
    rec = session()
    assert rec.printed == rec.digest


def test_full_log_is_the_terminal_output_of_the_session(session: Runner,
                                                        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_log="""
        def test_bad():
            print("captured output line")
            assert 0
        """)
    rec = session("-rA")
    data = (rec.run_dir / "full.log").read_bytes()
    assert data.decode().splitlines() == rec.result.outlines[:-1]
    assert "captured output line" in data.decode()
    assert rec.meta["log_sha256"] == hashlib.sha256(data).hexdigest()
    assert rec.meta["log_bytes"] == len(data)


def test_max_warnings_turns_exit_0_into_6_after_sessionfinish_and_the_digest_has_the_6(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_sessionfinish(session):
            with open("status-at-sessionfinish", "w") as f:
                f.write(str(int(session.exitstatus)))
        """)
    pytester.makepyfile(test_sample_warn="""
        import warnings

        def test_warns():
            warnings.warn("one", UserWarning)
            warnings.warn("two", UserWarning)
        """)
    rec = session("--max-warnings", "1", "-W", "always::UserWarning")
    assert (pytester.path / "status-at-sessionfinish").read_text() == "0"
    assert rec.result.ret == 6
    assert rec.digest["rc"] == 6
    assert rec.digest["status"] == "fail"
    assert rec.digest["gate_failures"] == ["2 warning(s) exceed pytest's --max-warnings"]
    assert rec.counts["warnings"] == 2


def test_a_collection_error_fires_keyboard_interrupt_but_is_not_an_interruption(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_keyboard_interrupt(excinfo):
            open("keyboard-interrupt-fired", "w").close()
        """)
    pytester.makepyfile(test_sample_broken="import no_such_module_ckdn\n")
    rec = session()
    assert (pytester.path / "keyboard-interrupt-fired").exists()
    assert "interrupted" not in rec.digest
    assert rec.digest["status"] == "fail"
    assert rec.digest["rc"] == rec.result.ret == 2


def test_ctrl_c_leaves_an_interrupted_digest_with_rc_130(session: Runner,
                                                         pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_sigint="""
        import os
        import signal

        def test_first():
            pass

        def test_presses_ctrl_c():
            os.kill(os.getpid(), signal.SIGINT)

        def test_never_runs():
            pass
        """)
    rec = session(subprocess=True)
    assert rec.digest["interrupted"] is True
    assert rec.digest["rc"] == 130
    assert rec.digest["status"] == "error"
    assert rec.result.ret == 130
    assert rec.meta["interrupted"] is True
    assert "KeyboardInterrupt" in (rec.run_dir / "full.log").read_text()


def test_pytest_exit_is_a_noted_stop_not_an_interruption(session: Runner,
                                                         pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_exit="""
        import pytest

        def test_stops():
            pytest.exit("enough for today")
        """)
    rec = session()
    assert "interrupted" not in rec.digest
    assert rec.digest["rc"] == 2
    assert rec.digest["status"] == "error"
    assert "pytest.exit() stopped the session: enough for today" in rec.digest["notes"]


def test_pytests_exit_5_for_a_session_that_collects_nothing_is_an_error_saying_so(
        session: Runner, pytester: pytest.Pytester) -> None:
    rec = session()
    assert rec.digest["rc"] == rec.result.ret == 5
    assert rec.digest["status"] == "error"
    assert "gate_failures" not in rec.digest
    assert rec.digest["notes"][0].startswith("pytest collected no tests and exited with "
                                             "status 5: nothing was verified")


def test_a_session_whose_tests_are_all_deselected_is_an_error_naming_the_deselection(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_desel=PASSING)
    rec = session("-k", "nothing_matches")
    assert rec.digest["rc"] == 5
    assert rec.digest["status"] == "error"
    assert rec.digest["notes"][0].startswith("pytest collected no tests (2 deselected) and "
                                             "exited with status 5")
    assert rec.counts == {"deselected": 2}


def test_allow_no_tests_cannot_turn_pytests_exit_5_green(session: Runner,
                                                         pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text(
        '[check.pytest]\ncommand = "pytest"\nparser = "pytest"\nallow_no_tests = true\n')
    rec = session()
    assert (rec.digest["status"], rec.result.ret) == ("error", 5)


def test_a_session_whose_tests_all_skip_fails_and_pytest_exits_1(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_skips="""
        import pytest

        @pytest.mark.skip(reason="later")
        def test_a():
            pass
        """)
    rec = session()
    assert rec.digest["rc"] == 0
    assert rec.digest["status"] == "fail"
    assert rec.digest["gate_failures"] == ["no tests ran: all 1 test(s) skipped"]
    assert rec.result.ret == 1


def test_allow_no_tests_in_ckdn_toml_accepts_an_all_skipped_session(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text(
        '[check.pytest]\ncommand = "pytest"\nparser = "pytest"\nallow_no_tests = true\n')
    pytester.makepyfile(test_sample_skips="import pytest\n\n"
                        "pytestmark = pytest.mark.skip(reason='x')\n\ndef test_a():\n    pass\n")
    rec = session()
    assert rec.digest["status"] == "pass"
    assert rec.result.ret == 0


def test_a_usage_error_inside_the_session_is_noted(session: Runner,
                                                   pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_usage=PASSING)
    rec = session("-k", "and")
    assert rec.digest["rc"] == 4
    assert rec.digest["status"] == "error"
    assert any(note.startswith("pytest usage error: Wrong expression passed to '-k'")
               for note in rec.digest["notes"])


def test_run_settings_come_from_ckdn_toml(session: Runner, pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text('[run]\nruns_dir = "evidence"\nkeep = 1\n')
    pytester.makepyfile(test_sample_cfg=PASSING)
    for _ in range(2):
        result = pytester.runpytest("--ckdn-digest", *QUIET)
        assert result.ret == 0
    runs = [p for p in (pytester.path / "evidence").iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")]
    assert len(runs) == 1
    assert (pytester.path / "evidence" / "latest").resolve() == runs[0]
    assert not (pytester.path / ".agent-runs").exists()


def test_ckdn_check_names_the_run(session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_named=PASSING)
    rec = session("--ckdn-check", "unit", check="unit")
    assert rec.digest["check"] == "unit"
    assert rec.run_dir.name.endswith("-unit")


def test_an_alias_is_refused_as_a_check_name_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text(
        '[check.a]\ncommand = "true"\nparser = "generic"\n[check.both]\nmembers = ["a"]\n')
    pytester.makepyfile(test_sample_alias=PASSING)
    result = pytester.runpytest_subprocess("--ckdn-digest", "--ckdn-check", "both", *QUIET)
    assert result.ret == 4
    assert [line for line in result.errlines if line] == [
        "ERROR: ckdn: --ckdn-check 'both' names an alias; name an atomic check (one of: a)"]
    assert run_dirs(pytester.path, "both") == []


def test_a_check_name_ckdn_toml_does_not_configure_is_refused_not_run_without_its_gates(
        pytester: pytest.Pytester) -> None:
    """``--ckdn-check pytset`` would have run with no ``fail_under`` and passed where the
    configured ``pytest`` check fails; the default name may still be unconfigured."""
    pytester.path.joinpath("ckdn.toml").write_text(
        '[check.pytest]\ncommand = "pytest"\nparser = "coverage"\nfail_under = 90\n')
    pytester.makepyfile(test_sample_typo=PASSING)
    result = pytester.runpytest_subprocess("--ckdn-digest", "--ckdn-check", "pytset", *QUIET)
    assert result.ret == 4
    assert [line for line in result.errlines if line] == [
        "ERROR: ckdn: --ckdn-check: unknown check 'pytset'; did you mean 'pytest'? "
        "(configured: pytest); the check's options (fail_under, top, ...) come from ckdn.toml"]
    assert run_dirs(pytester.path, "pytset") == []
    pytester.path.joinpath("ckdn.toml").write_text(
        '[check.other]\ncommand = "true"\nparser = "generic"\n')
    assert pytester.runpytest_subprocess("--ckdn-digest", *QUIET).ret == 0


def test_a_broken_ckdn_toml_is_one_line_and_exit_4(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text("[run]\nkeep = 'many'\n")
    pytester.makepyfile(test_sample_badcfg=PASSING)
    result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET)
    assert result.ret == 4
    errors = [line for line in result.errlines if line]
    assert len(errors) == 1
    assert errors[0].startswith("ERROR: ckdn: ckdn.toml: [run] keep")
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_held_lock_refuses_the_session_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_locked=PASSING)
    store = Store(pytester.path / ".agent-runs", pytester.path)
    with store.begin("pytest"):
        result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET)
    assert result.ret == 4
    errors = [line for line in result.errlines if line]
    assert len(errors) == 1
    assert errors[0].startswith("ERROR: ckdn: check 'pytest' is already running")


@pytest.mark.parametrize("args", [("--collect-only",), ("--fixtures",), ("--markers",),
                                  ("--help",), ("--setup-plan",)],
                         ids=["collect-only", "fixtures", "markers", "help", "setup-plan"])
def test_sessions_that_run_no_tests_by_design_record_nothing_and_read_no_config(
        pytester: pytest.Pytester, args: tuple[str, ...]) -> None:
    pytester.path.joinpath("ckdn.toml").write_text("this is not toml\n")
    pytester.makepyfile(test_sample_design=PASSING)
    result = pytester.runpytest("--ckdn-digest", *QUIET, *args)
    assert result.ret == 0
    assert not (pytester.path / ".agent-runs").exists()


def test_without_the_terminal_reporter_counts_still_match_and_the_digest_goes_to_stdout(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_noterm="""
        import pytest

        def test_ok():
            pass

        def test_bad():
            assert 0

        @pytest.mark.skip(reason="x")
        def test_skip():
            pass
        """)
    result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET, "-p", "no:terminal")
    rec = recorded(pytester, result)
    assert rec.counts == {"tests": 3, "passed": 1, "failures": 1, "skipped": 1}
    assert json.loads(result.outlines[-1]) == rec.digest
    assert (rec.run_dir / "full.log").read_bytes() == b""
    assert "pytest's terminal reporter is disabled: full.log is empty" in rec.digest["notes"]


def test_the_ini_key_enables_recording_and_no_ckdn_digest_overrides_it(
        pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nckdn_digest = true\n")
    pytester.makepyfile(test_sample_ini=PASSING)
    pytester.runpytest(*QUIET, "--no-ckdn-digest")
    assert run_dirs(pytester.path) == []
    result = pytester.runpytest(*QUIET)
    assert result.ret == 0
    assert len(run_dirs(pytester.path)) == 1


def test_a_session_without_the_option_is_inert_and_imports_nothing_from_ckdn(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_inert="""
        import sys

        def test_nothing_from_ckdn_is_imported():
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("ckdn", "pytest_ckdn"))
            assert loaded == ["pytest_ckdn", "pytest_ckdn.hooks", "pytest_ckdn.plugin"]
        """)
    result = pytester.runpytest_subprocess(*QUIET)
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".agent-runs").exists()


def test_other_plugins_can_add_facts_and_see_the_finished_digest(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import json

        def pytest_ckdn_collect(result, config):
            result.notes.append("seen by conftest")
            result.summary["flaky_reruns"] = 3

        def pytest_ckdn_digest(digest, config):
            with open("seen-digest.json", "w") as f:
                json.dump(digest, f)
        """)
    pytester.makepyfile(test_sample_hooks=PASSING)
    rec = session()
    assert rec.digest["notes"] == ["seen by conftest"]
    assert rec.digest["summary"]["flaky_reruns"] == 3
    assert json.loads((pytester.path / "seen-digest.json").read_text()) == rec.digest


def test_a_gate_added_by_a_plugin_turns_exit_0_into_a_fail_and_exit_1(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_ckdn_collect(result, config):
            result.gate_failures.append("policy says no")
        """)
    pytester.makepyfile(test_sample_gate=PASSING)
    rec = session()
    assert rec.digest["status"] == "fail"
    assert rec.digest["rc"] == 0
    assert rec.result.ret == 1


# -- issue 10 ---------------------------------------------------------------------------------


def test_sigterm_seals_an_interrupted_digest_with_rc_143(pytester: pytest.Pytester) -> None:
    """SIGTERM from outside (a CI cancel, a process manager) used to kill the session and
    leave a run dir without a digest."""
    started = pytester.path / "started"
    pytester.makepyfile(test_sample_term=f"""
        import pathlib
        import time

        def test_first():
            pass

        def test_waits():
            pathlib.Path({str(started)!r}).touch()
            time.sleep(60)

        def test_never_runs():
            pass
        """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CKDN_")}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--ckdn-digest", *QUIET],
                            cwd=pytester.path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, out + err
    result = pytest.RunResult(proc.returncode, out.splitlines(), err.splitlines(), 0.0)
    rec = recorded(pytester, result)
    assert (rec.digest["status"], rec.digest["rc"], rec.digest["interrupted"]) == (
        "error", 143, True)
    assert rec.meta["interrupted"] is True
    assert ("pytest received SIGTERM while running test_sample_term.py::test_waits "
            "(pytest exit status 2)") in rec.digest["notes"]
    assert rec.counts == {"tests": 2, "passed": 1}
    assert json.loads(out.splitlines()[-1]) == rec.digest


def test_ckdn_digest_1_in_the_environment_records_the_session(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKDN_DIGEST", "1")
    pytester.makepyfile(test_sample_env=PASSING)
    result = pytester.runpytest(*QUIET)
    assert result.ret == 0
    assert recorded(pytester, result).digest["status"] == "pass"


def test_the_environment_switch_is_this_sessions_not_its_child_sessions(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKDN_DIGEST", "yes")
    pytester.makepyfile(test_sample_child="""
        import os

        def test_a_child_session_would_not_record():
            assert "CKDN_DIGEST" not in os.environ
        """)
    result = pytester.runpytest_subprocess(*QUIET)
    assert recorded(pytester, result).digest["status"] == "pass"


@pytest.mark.parametrize(("value", "option", "records"), [
    ("0", None, False), ("off", None, False), ("1", "--no-ckdn-digest", False),
    ("0", "--ckdn-digest", True),
])
def test_the_command_line_beats_the_environment_and_the_environment_the_ini_key(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str,
        option: str | None, records: bool) -> None:
    monkeypatch.setenv("CKDN_DIGEST", value)
    pytester.makeini("[pytest]\nckdn_digest = true\n")
    pytester.makepyfile(test_sample_prec=PASSING)
    pytester.runpytest(*QUIET, *([option] if option else []))
    assert len(run_dirs(pytester.path)) == (1 if records else 0)


def test_a_ckdn_digest_value_that_is_not_a_switch_is_one_line_and_exit_4(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKDN_DIGEST", "maybe")
    pytester.makepyfile(test_sample_bad=PASSING)
    result = pytester.runpytest_subprocess(*QUIET)
    assert result.ret == 4
    assert [line for line in result.errlines if line] == [
        "ERROR: ckdn: CKDN_DIGEST must be 1 or 0 (or true/false, yes/no, on/off), not 'maybe'"]


@pytest.mark.parametrize("strict", [("--strict-config",), ("-W", "error")],
                         ids=["strict-config", "filterwarnings-error"])
def test_where_the_plugin_is_absent_the_environment_switch_is_harmless_and_the_ini_key_is_not(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        strict: tuple[str, ...]) -> None:
    pytester.makepyfile(test_sample_absent=PASSING)
    absent = ("-p", "no:ckdn", *QUIET, *strict)
    monkeypatch.setenv("CKDN_DIGEST", "1")
    assert pytester.runpytest_subprocess(*absent).ret == 0
    monkeypatch.delenv("CKDN_DIGEST")
    pytester.makeini("[pytest]\nckdn_digest = true\n")
    assert pytester.runpytest_subprocess(*absent).ret != 0  # the trade-off docs/pytest.md names


def project_with_subdirectory(pytester: pytest.Pytester, runs_dir: str) -> Path:
    pytester.makeini("[pytest]\n")
    pytester.path.joinpath("ckdn.toml").write_text(f'[run]\nruns_dir = "{runs_dir}"\n')
    testing = pytester.mkdir("testing")
    testing.joinpath("test_sample_deep.py").write_text(PASSING)
    return testing


def test_ckdn_toml_is_found_from_the_rootdir_not_the_invocation_directory(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    testing = project_with_subdirectory(pytester, "project-runs")
    monkeypatch.chdir(testing)
    result = pytester.runpytest("--ckdn-digest", *QUIET)
    assert result.ret == 0
    assert len(list((pytester.path / "project-runs").glob("*-pytest"))) == 1
    # nothing of ckdn's here (Python's own __pycache__ may be, where bytecode is written)
    assert sorted(p.name for p in testing.iterdir() if p.name != "__pycache__") == [
        "test_sample_deep.py"]


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_named_config_is_still_read_from_the_invocation_directory(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    testing = project_with_subdirectory(pytester, "project-runs")
    pytester.path.joinpath("other.toml").write_text('[run]\nruns_dir = "other-runs"\n')
    monkeypatch.chdir(testing)
    if how == "option":
        result = pytester.runpytest("--ckdn-digest", "--ckdn-config", "../other.toml", *QUIET)
    else:
        monkeypatch.setenv("CKDN_CONFIG", "../other.toml")
        result = pytester.runpytest("--ckdn-digest", *QUIET)
    assert result.ret == 0
    assert len(list((pytester.path / "other-runs").glob("*-pytest"))) == 1
    assert not (pytester.path / "project-runs").exists()


@pytest.mark.parametrize(("args", "reason"), [
    (("-x",), "stopping after 1 failures"),
    (("--maxfail=2",), "stopping after 2 failures"),
    (("-x", "-n", "2"), "stopping after"),
], ids=["x", "maxfail", "xdist-x"])
def test_a_session_stopped_early_says_so(session: Runner, pytester: pytest.Pytester,
                                         args: tuple[str, ...], reason: str) -> None:
    pytester.makepyfile(test_sample_stop="""
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_n(n):
            assert n % 2
        """)
    rec = session(*args)
    assert rec.digest["status"] == "fail"
    assert any(note.startswith(f"pytest stopped the session early ({reason}")
               and note.endswith("): not every collected test ran")
               for note in rec.digest["notes"]), rec.digest


def test_a_session_stopped_early_without_a_failure_is_never_a_pass(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_runtest_teardown(item):
            item.session.shouldstop = "a plugin stopped the session"
        """)
    pytester.makepyfile(test_sample_plugin_stop=PASSING)
    rec = session()
    assert rec.digest["status"] != "pass"
    assert rec.digest.get("gate_failures") == [
        "pytest stopped the session early (a plugin stopped the session): not every collected "
        "test ran"]
