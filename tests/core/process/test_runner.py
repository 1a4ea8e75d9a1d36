"""The runner against real processes: codes, tree stops, signals, and the sealed log."""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.process import FinishedRun, _group, _runner, run_process
from ckdn.process.stop import StopRequest
from ckdn.reconcile import RC_NOT_EXECUTABLE, RC_NOT_FOUND, RC_TIMEOUT
from tests.project import running

Run = Callable[..., FinishedRun]

# A stand-in for ckdn: runs one command through run_process and prints the result
# as JSON, so a test can send it real signals.
CKDN_LIKE = r"""
import json, os, signal, sys
from pathlib import Path
from ckdn.process import run_process

signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
argv, log, grace = json.loads(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
ran = run_process(argv, cwd=log.parent, env={"PATH": os.environ["PATH"]}, log_path=log,
                  grace=grace, label="demo-check")
restored = (signal.getsignal(signal.SIGINT) is signal.default_int_handler
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
print(json.dumps({"rc": ran.exit.rc, "interrupted": ran.exit.interrupted,
                  "notes": ran.exit.notes, "restored": restored}))
"""


@pytest.fixture
def run(spawn_path: str, tmp_path: Path) -> Run:
    """run_process with a minimal environment and the log at tmp_path/full.log, through
    each spawn path in turn (every runner test runs through both)."""

    def run(argv: Sequence[str], **options: object) -> FinishedRun:
        options.setdefault("cwd", tmp_path)
        options.setdefault("env", {"PATH": os.environ["PATH"]})
        options.setdefault("grace", 0.2)
        return run_process(argv, log_path=tmp_path / "full.log", **options)  # type: ignore[arg-type]

    return run


#: A 30 s sleep that leaves the file ``slept`` when it ends: a run that waited for it
#: instead of stopping it leaves the file (a fact to assert, not a duration).
SLEEPER = "(sleep 30; touch slept)"


def sh(script: str) -> list[str]:
    return ["sh", "-c", script]


def first_pid(log: Path) -> int:
    return int(log.read_text().split()[-1])


def assert_sealed(ran: FinishedRun, log: Path) -> None:
    data = log.read_bytes()
    assert (ran.log_sha256, ran.log_bytes) == (hashlib.sha256(data).hexdigest(), len(data))


@pytest.mark.parametrize("code", [0, 3, 255])
def test_exit_codes_pass_through_unchanged(run: Run, code: int) -> None:
    ran = run(sh(f"exit {code}"))
    assert (ran.exit.rc, ran.exit.started, ran.exit.notes) == (code, True, ())


def test_a_signal_death_gives_the_negative_signal_number(run: Run) -> None:
    assert run(sh("kill -KILL $$")).exit.rc == -signal.SIGKILL


def test_a_fast_command_returns_without_a_polling_floor(
        run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted, not timed: the runner's looks at a quiet log an hour apart and a 60 s
    # timeout, so a runner that noticed the exit at its next look (a polling floor)
    # would sit out the minute; the exit fd wakes the one wait at once. The 30 s is a cap
    # a busy machine never reaches for `true`, not a speed claim (the figures: bench/).
    monkeypatch.setattr(_runner, "_IDLE_FIRST", 3600.0)
    monkeypatch.setattr(_runner, "_IDLE_MAX", 3600.0)
    waits: list[tuple[float | None, bool]] = []
    exited = _group.Child.exited

    def counted(child: _group.Child, timeout: float | None) -> bool:
        waits.append((timeout, exited(child, timeout)))
        return waits[-1][1]

    monkeypatch.setattr(_group.Child, "exited", counted)
    ran = run(["true"], timeout=60)
    assert (ran.exit.rc, ran.exit.notes) == (0, ())
    assert [got for _, got in waits].count(True) == 1  # woken once, by the exit
    timeout, got = waits[-1]
    assert got
    assert timeout is not None
    assert timeout > 30  # the wait that ended could have lasted most of the minute
    assert ran.exit.duration < 30  # and ended long before


def test_a_missing_executable_is_127_never_started_and_the_log_says_why(
    run: Run, tmp_path: Path
) -> None:
    ran = run(["ckdn-no-such-tool", "--flag"])
    assert (ran.exit.rc, ran.exit.started) == (RC_NOT_FOUND, False)
    assert ran.exit.notes == ("command not found: ckdn-no-such-tool",)
    assert (tmp_path / "full.log").read_text() == "ckdn: command not found: ckdn-no-such-tool\n"
    assert_sealed(ran, tmp_path / "full.log")


def test_a_file_without_execute_permission_is_126_never_started(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    ran = run([str(script)])
    assert (ran.exit.rc, ran.exit.started) == (RC_NOT_EXECUTABLE, False)
    assert "not executable" in ran.exit.notes[0]
    assert (tmp_path / "full.log").read_text().startswith("ckdn: command not executable: ")


def test_a_script_whose_interpreter_is_missing_never_starts_through_the_trampoline_either(
        run: Run, tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_text("#!/nonexistent/ckdn-shell\necho hi\n")
    script.chmod(0o755)
    ran = run([str(script)])
    assert ran.exit.started is False
    assert ran.exit.rc in (RC_NOT_FOUND, RC_NOT_EXECUTABLE)
    assert "setpriv" not in (tmp_path / "full.log").read_text()


def test_a_file_the_kernel_cannot_execute_is_126_never_started(run: Run, tmp_path: Path) -> None:
    program = tmp_path / "not-a-program"
    program.write_bytes(b"\x00\x01 no shebang, no ELF\n")
    program.chmod(0o755)
    ran = run([str(program)])
    assert (ran.exit.rc, ran.exit.started) == (RC_NOT_EXECUTABLE, False)
    assert ran.exit.notes == (f"cannot execute {program}: Exec format error",)


def test_a_missing_working_directory_never_starts_and_is_named(run: Run, tmp_path: Path) -> None:
    ran = run(["true"], cwd=tmp_path / "gone")
    assert (ran.exit.rc, ran.exit.started) == (RC_NOT_FOUND, False)
    assert ran.exit.notes == (
        f"cannot enter working directory {tmp_path / 'gone'}: No such file or directory",
    )


def test_a_timeout_kills_a_grandchild_that_ignores_sigterm(run: Run, tmp_path: Path) -> None:
    ran = run(sh(f"trap '' TERM; {SLEEPER} & echo $!; wait"), timeout=0.3)
    assert (ran.exit.rc, ran.exit.timed_out, ran.exit.timeout) == (RC_TIMEOUT, True, 0.3)
    assert ran.exit.notes == (
        "timed out after 0.3s; stopped the process group (SIGTERM, then SIGKILL after 0.2s)",
    )
    assert not running(first_pid(tmp_path / "full.log"))
    assert not (tmp_path / "slept").exists()


def test_a_hosts_stop_request_from_another_thread_stops_the_tree_as_ctrl_c_would(
    run: Run, tmp_path: Path
) -> None:
    with StopRequest() as stop:
        asker = threading.Timer(0.3, stop.request, args=("tox was interrupted",))
        asker.start()
        ran = run(sh(f"{SLEEPER} & echo $!; wait"), stop=stop)
        asker.join()
    assert (ran.exit.rc, ran.exit.interrupted, ran.exit.timed_out) == (130, True, False)
    assert ran.exit.notes == (
        "stopped at the host's request (tox was interrupted); stopped the process group"
        " (SIGTERM)",
    )
    assert not running(first_pid(tmp_path / "full.log"))
    assert not (tmp_path / "slept").exists()


def test_after_a_hosts_stop_request_the_tree_still_gets_its_grace_period(
    run: Run, tmp_path: Path
) -> None:
    log = tmp_path / "full.log"

    def ask_once_ready(stop: StopRequest) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (log.exists() and log.read_text().strip()):
            time.sleep(0.01)
        stop.request()

    with StopRequest() as stop:
        asker = threading.Thread(target=ask_once_ready, args=(stop,))
        asker.start()  # the shell ignores SIGTERM by the time it prints the pid
        ran = run(sh(f"trap '' TERM; {SLEEPER} & echo $!; wait"), stop=stop, grace=0.4)
        asker.join()
    assert ran.exit.rc == 130
    assert ran.exit.notes == (
        "stopped at the host's request (the host asked to stop); stopped the process group"
        " (SIGTERM, then SIGKILL after 0.4s)",
    )
    assert ran.exit.duration >= 0.4  # the grace period is a lower bound the runner keeps
    assert not running(first_pid(tmp_path / "full.log"))
    assert not (tmp_path / "slept").exists()


def test_a_stop_requested_before_the_run_stops_it_at_once(run: Run, tmp_path: Path) -> None:
    with StopRequest() as stop:
        stop.request()
        ran = run(sh(SLEEPER), stop=stop)
    assert (ran.exit.rc, ran.exit.interrupted) == (130, True)
    assert not (tmp_path / "slept").exists()


def test_an_unused_stop_request_changes_nothing(run: Run) -> None:
    with StopRequest() as stop:
        ran = run(sh("exit 3"), stop=stop)
    assert (ran.exit.rc, ran.exit.interrupted, ran.exit.notes) == (3, False, ())


def test_a_grandchild_holding_the_log_open_cannot_block_the_return(
    run: Run, tmp_path: Path
) -> None:
    ran = run(sh("sleep 30 & echo $!"))
    assert ran.exit.rc == 0  # and the sleep was stopped, not waited for:
    assert ran.exit.notes == (
        "stopped 1 leftover process(es) still running after the command exited (SIGTERM)",
    )
    assert not running(first_pid(tmp_path / "full.log"))


def test_a_leftover_process_cannot_write_into_the_sealed_log(run: Run, tmp_path: Path) -> None:
    ran = run(sh("(sleep 0.3; echo late) & echo early"))
    time.sleep(0.5)
    assert (tmp_path / "full.log").read_text() == "early\n"
    assert_sealed(ran, tmp_path / "full.log")


def test_a_failure_inside_ckdn_still_stops_the_tree(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: _runner.LogHash) -> bool:
        if self.size():
            raise RuntimeError("boom")
        return False

    monkeypatch.setattr(_runner.LogHash, "follow", broken)
    with pytest.raises(RuntimeError, match="boom"):
        run(sh("sleep 30 & echo $!; wait"))
    assert not running(first_pid(tmp_path / "full.log"))


def test_the_exit_is_seen_without_pidfd_through_a_waiter_thread(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_group, "_pidfd_open", None)
    assert run(sh("exit 5")).exit.rc == 5
    assert run(["sleep", "30"], timeout=0.2).exit.rc == RC_TIMEOUT


def test_stdout_and_stderr_share_the_log_in_order(run: Run, tmp_path: Path) -> None:
    run(sh("printf a; printf b >&2; printf c"))
    assert (tmp_path / "full.log").read_text() == "abc"


def test_invalid_utf8_is_kept_byte_exact(run: Run, tmp_path: Path) -> None:
    ran = run(sh(r"printf 'ok \377\376 \303(\n'"))
    assert (tmp_path / "full.log").read_bytes() == b"ok \xff\xfe \xc3(\n"
    assert_sealed(ran, tmp_path / "full.log")


@pytest.mark.parametrize(
    "script",
    [
        "true",
        "echo hello",
        "head -c 3000000 /dev/urandom; sleep 0.1; head -c 2000000 /dev/urandom >&2; sleep 0.05;"
        " head -c 700001 /dev/urandom",
    ],
    ids=["empty", "small", "megabytes-in-bursts"],
)
def test_the_log_digest_matches_the_bytes_on_disk(run: Run, tmp_path: Path, script: str) -> None:
    assert_sealed(run(sh(script)), tmp_path / "full.log")


@settings(max_examples=8)  # each example runs real processes writing up to 1.8 MB
@given(
    bursts=st.lists(
        st.tuples(st.integers(0, 600_000), st.sampled_from([0, 0.03])), min_size=1, max_size=3
    )
)
def test_the_log_digest_matches_for_any_burst_pattern(
    run: Run, tmp_path: Path, bursts: list[tuple[int, float]]
) -> None:
    script = "; ".join(f"head -c {size} /dev/urandom; sleep {pause}" for size, pause in bursts)
    assert_sealed(run(sh(script)), tmp_path / "full.log")


def test_a_log_the_child_truncates_is_hashed_as_it_ends_on_disk(run: Run, tmp_path: Path) -> None:
    ran = run(sh("head -c 2000000 /dev/zero; sleep 0.2; echo short >/dev/stdout"))
    assert (tmp_path / "full.log").read_bytes() == b"short\n"
    assert_sealed(ran, tmp_path / "full.log")


def test_the_child_sees_exactly_the_given_environment_and_working_directory(
    run: Run, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "CKDN_CHECK": "demo"}
    run(sh('pwd; echo "$CKDN_CHECK"; echo "${HOME-unset}"'), cwd=work, env=env)
    assert (tmp_path / "full.log").read_text().splitlines() == [str(work), "demo", "unset"]


def test_the_child_reads_an_empty_stdin(run: Run, tmp_path: Path) -> None:
    run(sh("cat; echo end"))
    assert (tmp_path / "full.log").read_text() == "end\n"


def test_nothing_is_printed_when_stderr_is_not_a_terminal(
    run: Run, capfd: pytest.CaptureFixture[str]
) -> None:
    run(["sleep", "0.3"])
    assert capfd.readouterr() == ("", "")


def test_signal_handlers_are_restored_after_the_run(run: Run) -> None:
    before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
    run(["true"])
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] == before


def test_a_run_off_the_main_thread_leaves_signals_to_the_host(run: Run) -> None:
    before = signal.getsignal(signal.SIGTERM)
    results: list[FinishedRun] = []
    worker = threading.Thread(target=lambda: results.append(run(sh("exit 4"))))
    worker.start()
    worker.join(timeout=20)
    assert results[0].exit.rc == 4
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_empty_argv_is_a_programming_error(run: Run) -> None:
    with pytest.raises(ValueError, match="argv is empty"):
        run([])


class CkdnLike:
    """CKDN_LIKE running a command that prints "ready <grandchild pid>" when it runs."""

    def __init__(self, tmp_path: Path, script: str, grace: float, how: str) -> None:
        self.log = tmp_path / "full.log"
        argv = json.dumps(sh(script))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CKDN_LIKE, argv, str(self.log), str(grace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # a process of its own, so it picks its spawn path by its own directory:
            # posix_spawn only where the child runs (the log's directory)
            cwd=tmp_path if how == "posix_spawn" else tmp_path.parent,
        )

    def grandchild(self) -> int:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.log.exists() and self.log.read_text().startswith("ready "):
                return first_pid(self.log)
            time.sleep(0.01)
        raise AssertionError("the command never became ready")

    def result(self) -> dict[str, object]:
        out, err = self.proc.communicate(timeout=20)
        assert err == b""
        result: dict[str, object] = json.loads(out)
        return result


@pytest.fixture
def ckdn_like(spawn_path: str, tmp_path: Path) -> Iterator[Callable[[str, float], CkdnLike]]:
    started: list[CkdnLike] = []

    def start(script: str, grace: float = 0.2) -> CkdnLike:
        started.append(CkdnLike(tmp_path, script, grace, spawn_path))
        return started[-1]

    yield start
    for each in started:
        if each.proc.poll() is None:
            each.proc.kill()
            each.proc.wait()


def test_ctrl_c_stops_the_tree_and_gives_130_interrupted(
    ckdn_like: Callable[[str, float], CkdnLike],
) -> None:
    ckdn = ckdn_like("sleep 30 & echo ready $!; wait", 0.2)
    grandchild = ckdn.grandchild()
    ckdn.proc.send_signal(signal.SIGINT)
    assert ckdn.result() == {
        "rc": 130,
        "interrupted": True,
        "notes": ["interrupted by Ctrl-C (SIGINT); stopped the process group (SIGTERM)"],
        "restored": True,
    }
    assert not running(grandchild)


def test_sigterm_to_ckdn_stops_the_tree_and_gives_143_interrupted(
    ckdn_like: Callable[[str, float], CkdnLike],
) -> None:
    ckdn = ckdn_like("sleep 30 & echo ready $!; wait", 0.2)
    grandchild = ckdn.grandchild()
    ckdn.proc.send_signal(signal.SIGTERM)
    result = ckdn.result()
    assert (result["rc"], result["interrupted"], result["restored"]) == (143, True, True)
    assert result["notes"] == ["ckdn received SIGTERM; stopped the process group (SIGTERM)"]
    assert not running(grandchild)


def test_a_second_ctrl_c_cannot_abort_the_tree_stop(
    ckdn_like: Callable[[str, float], CkdnLike],
) -> None:
    ckdn = ckdn_like("trap '' TERM; sleep 30 & echo ready $!; wait", 0.6)
    grandchild = ckdn.grandchild()
    ckdn.proc.send_signal(signal.SIGINT)
    time.sleep(0.2)  # inside the 0.6 s grace: the tree ignores SIGTERM
    ckdn.proc.send_signal(signal.SIGINT)
    result = ckdn.result()
    assert (result["rc"], result["interrupted"], result["restored"]) == (130, True, True)
    assert not running(grandchild)


def test_ctrl_c_while_leftovers_are_stopped_still_calls_the_run_off(
    ckdn_like: Callable[[str, float], CkdnLike],
) -> None:
    ckdn = ckdn_like("trap '' TERM; sleep 30 & echo ready $!", 1.0)
    grandchild = ckdn.grandchild()
    time.sleep(0.1)  # the command has exited; its leftover ignores SIGTERM for the 1 s grace
    ckdn.proc.send_signal(signal.SIGINT)
    result = ckdn.result()
    assert (result["rc"], result["interrupted"]) == (130, True)
    assert result["notes"] == [
        "stopped 1 leftover process(es) still running after the command exited"
        " (SIGTERM, then SIGKILL after 1s)",
        "interrupted by Ctrl-C (SIGINT) after the command exited with code 0",
    ]
    assert not running(grandchild)


def test_a_progress_line_is_drawn_and_erased_on_a_terminal(tmp_path: Path) -> None:
    main, terminal = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", CKDN_LIKE, '["sleep", "0.45"]', str(tmp_path / "full.log"), "0.2"],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    shown = b""
    try:
        while select.select([main], [], [], 20)[0]:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(main)
        proc.wait(timeout=20)
    assert b"\rckdn: demo-check  0." in shown
    assert shown.endswith(b"\r\x1b[K")
