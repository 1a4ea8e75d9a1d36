"""ckdn.spawn: posix_spawn starts a child exactly as the Popen it stands in for would.

tests/core/test_runner.py runs every runner behaviour through both paths; these
tests pin what the posix_spawn path must copy from ``Popen(close_fds=True,
restore_signals=True, start_new_session=True)`` and when each path is taken.
"""

from __future__ import annotations

import ast
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ckdn import _lite
from tests.project import running

#: Prints, from inside the child: its open descriptors, whether it leads its session,
#: and stdin's first bytes.
PROBE = r"""
import os, sys
fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
print(repr((fds, os.getsid(0) == os.getpid(), sys.stdin.read(5))))
"""


@pytest.fixture
def log(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    path = tmp_path / "full.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    yield fd, path
    os.close(fd)


def finish(proc: _lite.Process, path: Path) -> str:
    assert proc.wait() == 0
    return path.read_text()


def test_the_path_taken_is_posix_spawn_only_in_the_current_directory(
    spawn_path: str, tmp_path: Path, log: tuple[int, Path]
) -> None:
    here = _lite.spawn(["true"], tmp_path, {"PATH": os.environ["PATH"]}, log[0])
    elsewhere = _lite.spawn(["true"], "/", {"PATH": os.environ["PATH"]}, log[0])
    assert isinstance(here, _lite.Spawned) == (spawn_path == "posix_spawn")
    assert isinstance(elsewhere, subprocess.Popen)
    assert (here.wait(), elsewhere.wait()) == (0, 0)


def test_a_symlink_to_the_current_directory_counts_as_current(
    tmp_path: Path, log: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").symlink_to(tmp_path)
    child = _lite.spawn(["true"], tmp_path / "here", {"PATH": os.environ["PATH"]}, log[0])
    assert isinstance(child, _lite.Spawned)
    assert child.wait() == 0


def test_the_child_inherits_no_other_descriptor_leads_its_session_and_reads_devnull(
    spawn_path: str, log: tuple[int, Path]
) -> None:
    inherited = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(inherited, True)
    try:
        child = _lite.spawn([sys.executable, "-c", PROBE], ".", dict(os.environ), log[0])
    finally:
        os.close(inherited)
    fds, leader, stdin = ast.literal_eval(finish(child, log[1]))
    assert fds == [0, 1, 2, 3]  # 3: the descriptor listdir used inside the child
    assert (leader, stdin) == (True, "")


def test_the_signals_python_ignores_are_not_ignored_in_the_child(
    spawn_path: str, log: tuple[int, Path]
) -> None:
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # what the child must not inherit
    child = _lite.spawn(["grep", "SigIgn", "/proc/self/status"], ".",
                        {"PATH": os.environ["PATH"]}, log[0])
    ignored = int(finish(child, log[1]).split()[1], 16)  # bit n-1: signal n ignored
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored >> (signum - 1) & 1, signum


def test_a_signal_death_is_the_negative_signal_number(
    spawn_path: str, log: tuple[int, Path]
) -> None:
    child = _lite.spawn(["sh", "-c", "kill -TERM $$"], ".", {"PATH": os.environ["PATH"]}, log[0])
    assert child.wait() == -15
    assert child.returncode == -15


def tool(folder: Path, mode: int) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "ckdn-probe-tool"
    path.write_text("#!/bin/sh\necho from " + folder.name + "\n")
    path.chmod(mode)
    return path


def test_the_program_is_looked_up_on_the_childs_path_past_unrunnable_entries(
    spawn_path: str, tmp_path: Path, log: tuple[int, Path]
) -> None:
    tool(tmp_path / "a", 0o644)  # not executable: Popen goes on, and so must we
    tool(tmp_path / "b", 0o755)
    env = {"PATH": f"{tmp_path / 'missing'}:{tmp_path / 'a'}:{tmp_path / 'b'}"}
    child = _lite.spawn(["ckdn-probe-tool"], ".", env, log[0])
    assert finish(child, log[1]) == "from b\n"


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("nothing", FileNotFoundError),
        ("not-executable", PermissionError),
        ("directory", PermissionError),
        ("missing-then-not-executable", PermissionError),
    ],
)
def test_a_command_that_cannot_start_raises_what_popen_raises(
    spawn_path: str, tmp_path: Path, log: tuple[int, Path], layout: str, expected: type[OSError]
) -> None:
    folders = [tmp_path / "x", tmp_path / "y"]
    for folder in folders:
        folder.mkdir()
    if layout == "directory":
        (folders[0] / "ckdn-probe-tool").mkdir()
    elif layout != "nothing":
        tool(folders[-1], 0o644)
    env = {"PATH": os.pathsep.join(map(str, folders))}
    with pytest.raises(expected) as raised:
        _lite.spawn(["ckdn-probe-tool"], ".", env, log[0])
    assert raised.value.filename == "ckdn-probe-tool"


@pytest.mark.parametrize("name", ["./no-such", "sub/no-such", "./plain-file"])
def test_a_path_with_a_slash_is_not_searched(
    spawn_path: str, tmp_path: Path, log: tuple[int, Path], name: str
) -> None:
    (tmp_path / "plain-file").write_text("data\n")
    (tmp_path / "plain-file").chmod(stat.S_IRUSR)
    expected = PermissionError if name == "./plain-file" else FileNotFoundError
    with pytest.raises(expected) as raised:
        _lite.spawn([name], ".", {"PATH": os.environ["PATH"]}, log[0])
    assert raised.value.filename == name


#: Starts ``sleep 60`` through _lite.spawn (by the path named, with or without another
#: thread running), prints its pid, and waits to be killed.
PARENT = r"""
import os, sys, threading
from ckdn import _lite
how, threads = sys.argv[1:3]
if threads == "threads":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
_lite._use_posix_spawn = how == "posix_spawn"
log = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
child = _lite.spawn(["sleep", "60"], ".", {"PATH": os.environ["PATH"]}, log)
print(child.pid, flush=True)
sys.stdin.read()
"""


def _runs_sleep(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return os.path.basename(handle.read().split(b"\0")[0]) == b"sleep"
    except OSError:
        return False


@pytest.mark.parametrize(("how", "threads"), [
    ("popen", "alone"),  # prctl between fork and exec
    ("popen", "threads"),  # no Python code between fork and exec: the trampoline
    ("posix_spawn", "alone"),  # no code of ours runs in the child at all: the trampoline
    ("posix_spawn", "threads"),
])
def test_a_child_dies_with_its_parent_on_every_spawn_path_on_linux(
    tmp_path: Path, how: str, threads: str
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("a parent-death signal is Linux's")
    dies = True
    parent = subprocess.Popen([sys.executable, "-c", PARENT, how, threads], cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    try:
        # the signal is set before the exec (prctl, or setpriv's): kill only once sleep runs,
        # else a kill inside the trampoline's first millisecond is raced (flaky at load)
        started = time.monotonic() + 5
        while not _runs_sleep(pid) and time.monotonic() < started:
            time.sleep(0.005)
        assert _runs_sleep(pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + (30 if dies else 0.3)  # a cap, not a speed claim
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert running(pid) != dies
    finally:
        for pipe in (parent.stdin, parent.stdout):
            if pipe is not None:
                pipe.close()
        try:  # noqa: SIM105
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
