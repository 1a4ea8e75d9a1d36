"""Processes that leave the check's process group (setsid, a double fork) are stopped too,
and nothing writes into the log once it is sealed.

Each test runs once per way ckdn can reach such a process (the ``reach`` fixture):
``subreaper``, ckdn adopting the orphans; ``cgroup``, a cgroup v2 of the check's own, as
where ckdn may not be a subreaper (only where this machine lets ckdn make one);
``group``, neither, where only the process group, the leader's descendants while it
lives, and the log's writers are found.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ckdn.reconcile import RC_TIMEOUT
from tests.core.process.conftest import cgroup_available
from tests.project import running

Drive = Callable[..., dict[str, Any]]


REACHES = ["cgroup", "subreaper", "group"]


@pytest.fixture(params=REACHES)
def reach(request: pytest.FixtureRequest) -> str:
    """How the driver may reach a process outside the group (it sets the runner up so)."""
    if request.param == "cgroup" and not cgroup_available():
        pytest.skip("this machine gives ckdn no cgroup of its own")
    return str(request.param)


#: Runs one command through run_process in a fresh interpreter (single-threaded, as the
#: ``ckdn`` process is) and prints what came of it as JSON.
DRIVER = r"""
import ctypes, json, os, sys, threading, time
from pathlib import Path
from ckdn.process import _cgroup, _group, run_process

opts = json.loads(sys.argv[1])
log = Path(opts["log"])
if opts["reach"] != "cgroup":
    _cgroup._cgroup_home = False
if opts["reach"] != "subreaper":
    _group._adopt_orphans = False
libc = ctypes.CDLL(None, use_errno=True)

def subreaper():
    flag = ctypes.c_int(-1)
    assert libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    return flag.value

def host_writer():
    while not log.exists():
        time.sleep(0.005)
    with open(log, "ab", buffering=0) as handle:
        opened.set()
        time.sleep(0.6)
        handle.write(b"late\n")

opened, done = threading.Event(), threading.Event()
threads = []
if opts.get("host_writer"):
    threads.append(threading.Thread(target=host_writer))
if opts.get("other_thread"):
    threads.append(threading.Thread(target=done.wait))
for thread in threads:
    thread.start()
before = subreaper()
ran = run_process(opts["argv"], cwd=log.parent, env={"PATH": os.environ["PATH"]}, log_path=log,
                  grace=0.2, timeout=opts.get("timeout"))
after = subreaper()
done.set()
for thread in threads:
    thread.join()
print(json.dumps({"rc": ran.exit.rc, "timed_out": ran.exit.timed_out, "notes": ran.exit.notes,
                  "sha256": ran.log_sha256, "bytes": ran.log_bytes, "pid": os.getpid(),
                  "subreaper": [before, after], "host_wrote": opened.is_set()}))
"""


@pytest.fixture
def drive(spawn_path: str, reach: str, tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """DRIVER running ``script`` under ``sh -c`` with the log at tmp_path/full.log."""

    def drive(script: str, **opts: object) -> dict[str, Any]:
        opts.update(argv=sh(script), log=str(tmp_path / "full.log"), reach=reach)
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, json.dumps(opts)], capture_output=True, text=True,
            timeout=60, check=False,
            # posix_spawn only where the child runs (the log's directory), as CkdnLike does
            cwd=tmp_path if spawn_path == "posix_spawn" else tmp_path.parent)
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    return drive


@pytest.fixture
def strays(tmp_path: Path) -> Iterator[Callable[[], int]]:
    """The pid the command wrote to stray.pid; whatever the test finds, it is gone after it."""
    found: list[int] = []

    def stray() -> int:
        deadline = time.monotonic() + 10
        path = tmp_path / "stray.pid"
        while not (path.exists() and path.read_text().strip()):
            assert time.monotonic() < deadline, "the command never wrote stray.pid"
            time.sleep(0.01)
        found.append(int(path.read_text()))
        return found[-1]

    yield stray
    for pid in found:
        try:  # noqa: SIM105 - a test must not leave a stray behind, whatever it asserted
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def sh(script: str) -> list[str]:
    return ["sh", "-c", script]


def assert_sealed(result: dict[str, Any], log: Path) -> None:
    data = log.read_bytes()
    assert (result["sha256"], result["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data))


def gone_soon(pid: int) -> bool:
    """A SIGKILLed process may take a moment to disappear from /proc."""
    deadline = time.monotonic() + 20  # a cap for a busy machine, not a claim about speed
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not running(pid)


#: A grandchild in a session of its own (``setsid`` in place, from a subshell that exits at
#: once: a double fork), still holding the log; the command waits until it said its pid.
#: (The leader runs a moment first, so that a subreaper is in place before the double fork.)
SETSID_WRITER = (
    "sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; sleep 0.4; echo late' &);"
    " while [ ! -s stray.pid ]; do sleep 0.01; done; echo early"
)
#: How each reach finds it (the shell and its ``sleep``: two processes, or one).
FOUND_AS = {
    "cgroup": r"stopped (\d) leftover process\(es\) still running after the command exited,"
              r" \1 of them outside its process group \(SIGTERM\)",
    "subreaper": r"stopped (\d) leftover process\(es\) still running after the command"
                 r" exited, \1 of them outside its process group \(SIGTERM\)",
    "group": r"stopped \d process\(es\) still writing into the log after the check ended"
             r" \(SIGTERM\)",
}


def test_a_grandchild_that_calls_setsid_cannot_write_into_the_sealed_log(
    reach: str, drive: Drive, tmp_path: Path, strays: Callable[[], int]
) -> None:
    result = drive(SETSID_WRITER)
    assert result["rc"] == 0
    assert gone_soon(strays())
    time.sleep(0.6)  # past the moment it would have written "late"
    assert (tmp_path / "full.log").read_text() == "early\n"
    assert_sealed(result, tmp_path / "full.log")
    assert len(result["notes"]) == 1
    assert re.fullmatch(FOUND_AS[reach], result["notes"][0]), result["notes"]


def test_a_double_forked_daemon_that_let_go_of_the_log_is_stopped_after_the_command_exits(
    reach: str, drive: Drive, strays: Callable[[], int]
) -> None:
    if reach == "group":
        pytest.skip("out of reach without a cgroup or a subreaper (docs/design.md)")
    result = drive(
        "sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; exec sleep 30' </dev/null >/dev/null"
        " 2>&1 &); while [ ! -s stray.pid ]; do sleep 0.01; done")
    assert result["rc"] == 0
    assert gone_soon(strays())
    assert result["notes"] == [
        "stopped 1 leftover process(es) still running after the command exited, 1 of them"
        " outside its process group (SIGTERM)",
    ]


def test_a_timeout_stops_a_grandchild_in_a_session_of_its_own(
    drive: Drive, strays: Callable[[], int]
) -> None:
    result = drive(
        "setsid sh -c 'echo $$ > stray.pid; exec sleep 30' >/dev/null 2>&1 & sleep 30",
        timeout=0.5)
    assert (result["rc"], result["timed_out"]) == (RC_TIMEOUT, True)
    assert gone_soon(strays())
    assert result["notes"] == [
        "timed out after 0.5s; stopped the process group and 1 process(es) outside it"
        " (SIGTERM)",
    ]


def test_a_timeout_stops_a_daemon_whose_parent_already_exited(
    reach: str, drive: Drive, strays: Callable[[], int]
) -> None:
    if reach == "group":
        pytest.skip("out of reach without a cgroup or a subreaper (docs/design.md)")
    result = drive(
        "sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; trap \"\" TERM; exec sleep 30'"
        " >/dev/null 2>&1 &); sleep 30", timeout=0.6)
    assert result["rc"] == RC_TIMEOUT
    assert gone_soon(strays())
    assert result["notes"] == [
        "timed out after 0.6s; stopped the process group and 1 process(es) outside it"
        " (SIGTERM, then SIGKILL after 0.2s)",
    ]


def test_a_writer_ckdn_must_not_stop_leaves_a_sealed_copy_behind(
    drive: Drive, tmp_path: Path
) -> None:
    """Here the writer is the host itself (a thread of the driver): ckdn never stops its own
    process, so it seals a copy, and the writer goes on writing into a file with no name."""
    result = drive("echo early; sleep 0.3", host_writer=True)
    assert result["host_wrote"]
    log = tmp_path / "full.log"
    assert log.read_text() == "early\n"
    assert_sealed(result, log)
    assert result["notes"] == [
        f"1 process(es) ckdn could not stop (pid {result['pid']}) still had the log open for"
        " writing; the sealed log is a copy taken when the check ended",
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


#: The orphan reports its parent once ckdn (or whoever else) adopted it.
REPORTS_ITS_PARENT = (
    "sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; sleep 0.2;"
    " cut -d\" \" -f4 /proc/$$/stat > parent.pid; exec sleep 30' </dev/null >/dev/null 2>&1 &);"
    " while [ ! -s parent.pid ]; do sleep 0.01; done"
)


@pytest.mark.parametrize("reach", ["subreaper"], indirect=True)
def test_a_single_threaded_host_adopts_the_orphans_only_while_the_run_lasts(
    drive: Drive, tmp_path: Path, strays: Callable[[], int]
) -> None:
    result = drive(REPORTS_ITS_PARENT)
    assert gone_soon(strays())
    assert int((tmp_path / "parent.pid").read_text()) == result["pid"]
    assert result["notes"][0].endswith(", 1 of them outside its process group (SIGTERM)")
    assert result["subreaper"] == [0, 0]


@pytest.mark.parametrize("reach", ["subreaper"], indirect=True)
def test_a_host_with_threads_is_never_made_a_subreaper(
    drive: Drive, tmp_path: Path, strays: Callable[[], int]
) -> None:
    """Another thread of the host may start children of its own at any moment, which ckdn
    could not tell from the orphans it adopted: the orphan goes where it would without ckdn."""
    result = drive(REPORTS_ITS_PARENT, other_thread=True)
    pid = strays()
    assert int((tmp_path / "parent.pid").read_text()) != result["pid"]
    assert running(pid)  # out of reach, as docs/design.md says; the fixture stops it
    assert result["notes"] == []
