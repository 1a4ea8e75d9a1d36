"""After ckdn is SIGKILLed, its check's tree does not run on beside the next run of the check.

The lock record names the tree (``on_spawn``); the run that reclaims the lock stops what
is still alive of it, and says so, before it starts its own. On Linux the child dies with
ckdn at once, on both spawn paths.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ckdn.process import stop_left_running
from tests.core.process.conftest import cgroup_available
from tests.project import Project, clean_env, running

#: The check: the first run starts a grandchild in its group and waits forever; a rerun
#: (it finds leader.pid) says so and passes.
TOOL = """\
if [ -e leader.pid ]; then echo "second run"; exit 0; fi
sleep 60 &
echo $! > grandchild.pid
echo $$ > leader.pid
wait
"""


def wait_for(path: Path, timeout: float = 20) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)
    return int(path.read_text())


def lock_record(project: Project, timeout: float = 20) -> dict[str, Any]:
    """The lock record, once it names the check's tree."""
    deadline = time.monotonic() + timeout
    path = project.runs / ".locks" / "slow.lock"
    while True:
        text = path.read_text() if path.exists() else ""
        if '"child"' in text:
            record: dict[str, Any] = json.loads(text)
            return record
        assert time.monotonic() < deadline, f"the lock record never named the tree: {text!r}"
        time.sleep(0.005)


def gone_soon(pid: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not running(pid)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    (root / "tool.sh").write_text(TOOL)
    project = Project(root)
    project.config('[check.slow]\ncommand = "sh tool.sh"\nparser = "generic"\n')
    yield project
    for name in ("leader.pid", "grandchild.pid"):
        if (root / name).exists():
            try:  # noqa: SIM105 - whatever the test asserted, nothing may outlive it
                os.kill(int((root / name).read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_rerun_after_ckdn_was_killed_stops_the_dead_runs_tree_first(
    spawn_path: str, project: Project
) -> None:
    root = project.root
    # posix_spawn where the check runs in ckdn's own directory, Popen from elsewhere
    where = ["--cwd", str(root)] if spawn_path == "popen" else []
    ckdn = subprocess.Popen([sys.executable, "-m", "ckdn", *where, "run", "slow"],
                            cwd=root / "sub" if where else root, env=clean_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        leader, grandchild = wait_for(root / "leader.pid"), wait_for(root / "grandchild.pid")
        lock_record(project)  # ckdn is killed while the check runs
    finally:
        ckdn.kill()
        ckdn.wait()
    assert gone_soon(leader)  # the parent-death signal, on either path (docs/design.md)
    time.sleep(0.2)
    assert running(grandchild)  # no parent-death signal reaches a grandchild

    rerun = project.ckdn("run", "slow")
    digest = project.digest(rerun)
    assert (rerun.returncode, digest["status"]) == (0, "pass"), rerun.stderr
    assert not running(leader)
    assert not running(grandchild)
    left = 1
    assert digest["notes"][0].startswith(
        f"reclaimed the lock of check 'slow': pid {ckdn.pid} ended without releasing it;")
    assert digest["notes"][1] == (
        f"stopped {left} process(es) the dead run left running (its process group {leader};"
        " SIGTERM)")
    assert len(digest["notes"]) == 2


def test_the_lock_record_names_the_tree_while_the_check_runs(
    spawn_path: str, project: Project
) -> None:
    ckdn = subprocess.Popen([sys.executable, "-m", "ckdn", "run", "slow"], cwd=project.root,
                            env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        leader = wait_for(project.root / "leader.pid")
        record = lock_record(project)
    finally:
        ckdn.kill()
        ckdn.wait()
    assert record["pid"] == ckdn.pid
    [run_dir] = project.run_dirs()
    assert record["child"] == {**record_of(leader), "marker": str(run_dir)}


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def record_of(pid: int, *, start_shift: int = 0, boot: str | None = None) -> dict[str, object]:
    start = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")")[1].split()[19])
    real_boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    return {"pgid": pid, "start": start + start_shift, "boot": boot or real_boot}


@pytest.mark.parametrize(("shift", "boot"), [(-1, None), (1, None), (0, "another-boot")],
                         ids=["leader-is-another-process", "started-later", "other-boot"])
def test_a_group_the_record_does_not_recognise_is_left_alone(
    sleeper: subprocess.Popen[bytes], shift: int, boot: str | None
) -> None:
    """A pid is reused: the group the record names may be someone else's by now."""
    assert stop_left_running(record_of(sleeper.pid, start_shift=shift, boot=boot),
                             grace=0.2) == []
    time.sleep(0.1)
    assert sleeper.poll() is None


def test_the_group_the_record_recognises_is_stopped(sleeper: subprocess.Popen[bytes]) -> None:
    notes = stop_left_running(record_of(sleeper.pid), grace=0.2)
    assert notes == [
        f"stopped 1 process(es) the dead run left running (its process group {sleeper.pid};"
        " SIGTERM)"]
    assert sleeper.wait(timeout=5) == -signal.SIGTERM


@pytest.mark.parametrize("record", [None, {}, {"pgid": 1, "start": 0, "boot": "x"},
                                    {"pgid": "12", "start": 0}, {"start": 3}])
def test_a_record_that_names_no_tree_stops_nothing(record: dict[str, object] | None) -> None:
    assert stop_left_running(record) == []


#: Runs a command through run_process in a fresh interpreter that may not be a subreaper
#: (as a host with threads), printing each record ``on_spawn`` gives, one a line.
RECORDING = r"""
import json, os, sys
from ckdn.process import _group, run_process

_group._adopt_orphans = False
def record(child):
    print(json.dumps(child), flush=True)
run_process(["sh", "-c", sys.argv[1]], cwd=sys.argv[2], env={"PATH": os.environ["PATH"]},
            log_path=os.path.join(sys.argv[2], "full.log"), on_spawn=record)
"""


def test_a_dead_runs_cgroup_hands_over_even_what_left_its_group(
    spawn_path: str, tmp_path: Path
) -> None:
    if not cgroup_available():
        pytest.skip("this machine gives ckdn no cgroup of its own")
    script = ("sleep 0.1; (setsid sh -c 'echo $$ > stray.pid; exec sleep 60' </dev/null"
              " >/dev/null 2>&1 &); sleep 60")
    # posix_spawn where the check runs in the driver's own directory, Popen from elsewhere
    ckdn = subprocess.Popen([sys.executable, "-c", RECORDING, script, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True,
                            cwd=tmp_path if spawn_path == "posix_spawn" else tmp_path.parent)
    assert ckdn.stdout is not None
    try:
        first = json.loads(ckdn.stdout.readline())
        second = json.loads(ckdn.stdout.readline())  # once the leader started a child
        stray = wait_for(tmp_path / "stray.pid")
    finally:
        ckdn.kill()
        ckdn.wait()
        ckdn.stdout.close()
    try:
        assert "cgroup" not in first
        assert second == {**first, "cgroup": second["cgroup"]}
        assert running(stray)
        assert gone_soon(first["pgid"])  # the leader died with ckdn; its group did not
        notes = stop_left_running(second, grace=0.2)
        left = 2  # its sleep, the stray
        assert notes == [f"stopped {left} process(es) the dead run left running (its process"
                         f" group {first['pgid']}; SIGTERM)"]
        assert gone_soon(stray)
        assert not Path(str(second["cgroup"])).exists()
    finally:
        try:  # noqa: SIM105
            os.kill(stray, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_empty_cgroups_of_dead_ckdns_are_swept_by_the_next_one(tmp_path: Path) -> None:
    """A check that never runs again never reclaims its dead run's cgroup: the next cgroup
    ckdn makes sweeps the empty ones whose ckdn is gone, and only those."""
    if not cgroup_available():
        pytest.skip("this machine gives ckdn no cgroup of its own")
    from ckdn.process import _cgroup

    probe = _cgroup.Cgroup.make()
    assert probe is not None
    home = os.path.dirname(probe.path)
    probe.remove()
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = Path(home, f"ckdn-{gone.pid}-0badcafe")
    alive = Path(home, f"ckdn-{os.getpid()}-0badcafe")
    dead.mkdir()
    alive.mkdir()
    try:
        saved, _cgroup._cgroup_home = _cgroup._cgroup_home, None  # a new process: probes
        try:
            made = _cgroup.Cgroup.make()
        finally:
            _cgroup._cgroup_home = saved
        assert made is not None
        made.remove()
        assert not dead.exists()
        assert alive.exists()
    finally:
        for path in (dead, alive):
            if path.exists():
                path.rmdir()


#: A check that leaves a grandchild in a session of its own, then sleeps.
ESCAPING = """\
if [ -e leader.pid ]; then echo "second run"; exit 0; fi
setsid sh -c 'echo $$ > stray.pid; exec sleep 60' </dev/null >/dev/null 2>&1 &
echo $$ > leader.pid
sleep 60
"""


def _killed_while_escaping(project: Project) -> tuple[int, int]:
    """A real ``ckdn run`` SIGKILLed while its check runs, its stray in a session of its own:
    (leader, stray)."""
    root = project.root
    (root / "tool.sh").write_text(ESCAPING)
    ckdn = subprocess.Popen([sys.executable, "-m", "ckdn", "run", "slow"], cwd=root,
                            env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        leader, stray = wait_for(root / "leader.pid"), wait_for(root / "stray.pid")
        lock_record(project)
    finally:
        ckdn.kill()
        ckdn.wait()
    return leader, stray


def _live(pids: list[int]) -> list[int]:
    """The pids /proc still shows running (not a zombie)."""
    return [pid for pid in pids if running(pid)]


def test_after_a_sigkilled_ckdn_gc_stops_its_setsid_stray_and_marks_the_run_dir(
    project: Project
) -> None:
    leader, stray = _killed_while_escaping(project)
    try:
        assert gone_soon(leader)  # the parent-death signal
        [run_dir] = project.run_dirs()
        assert not (run_dir / "digest.json").exists()  # unfinished
        assert _live([stray]) == [stray]  # in a session of its own: out of the signal's reach
        proc = project.ckdn("gc")
        assert proc.returncode == 0, proc.stderr
        assert gone_soon(stray)
        assert _live([leader, stray]) == []
        # the latest run: kept, marked, so `latest` never skips back past it (issue 24)
        assert project.run_dirs() == [run_dir]
        assert (run_dir / ".abandoned").exists()
        assert (project.runs / ".locks" / "slow.lock").read_text() == ""
    finally:
        for pid in (leader, stray):
            try:  # noqa: SIM105
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_after_a_sigkilled_ckdn_the_next_run_stops_its_setsid_stray_first(
    project: Project
) -> None:
    leader, stray = _killed_while_escaping(project)
    try:
        rerun = project.ckdn("run", "slow")
        assert rerun.returncode == 0, rerun.stderr
        assert _live([leader, stray]) == []
        # the leader's sleep (its group) and the stray (found by its CKDN_RUN_DIR)
        assert project.digest(rerun)["notes"][1].startswith(
            "stopped 2 process(es) the dead run left running")
    finally:
        for pid in (leader, stray):
            try:  # noqa: SIM105
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_gc_leaves_the_unfinished_run_of_a_live_ckdn_alone(project: Project) -> None:
    root = project.root
    ckdn = subprocess.Popen([sys.executable, "-m", "ckdn", "run", "slow"], cwd=root,
                            env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        leader = wait_for(root / "leader.pid")
        lock_record(project)
        assert project.ckdn("gc").returncode == 0
        assert running(leader)
        assert len(project.run_dirs()) == 1
    finally:
        ckdn.kill()
        ckdn.wait()


def test_gc_collects_the_dead_run_a_later_run_reclaimed_the_lock_from(project: Project) -> None:
    leader, stray = _killed_while_escaping(project)
    try:
        assert project.ckdn("run", "slow").returncode == 0
        dead = [d for d in project.run_dirs() if not (d / "digest.json").exists()]
        assert len(dead) == 1
        assert project.ckdn("gc").returncode == 0
        assert [d for d in project.run_dirs() if not (d / "digest.json").exists()] == []
        assert len(project.run_dirs()) == 1
    finally:
        for pid in (leader, stray):
            try:  # noqa: SIM105
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
