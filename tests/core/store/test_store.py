"""Run directories on a real file system, with real processes holding real locks."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.errors import RefusedError, UsageError
from ckdn.store import RunDir, RunInfo, Store, _store, check_of

FIXED_NOW = 1_783_419_300.0  # 2026-07-07T10:15:00Z
FIXED_STAMP = "20260707T101500Z"

# A process that takes a check's lock when told to ("go"), reports what happened
# on one line, and holds the lock until its stdin says "release" or closes.
HOLDER = r"""
import json, subprocess, sys
from pathlib import Path
from typing import Any
from ckdn.errors import RefusedError
from ckdn.store import Store

runs_dir, cwd, check, spawn = sys.argv[1:5]
store = Store(Path(runs_dir), Path(cwd))
sys.stdin.readline()
try:
    run = store.begin(check)
except RefusedError as exc:
    print("refused " + json.dumps(exc.message), flush=True)
    sys.exit(3)
child = ""
if spawn == "spawn":
    # close_fds=False: the only thing keeping the lock from this child is close-on-exec.
    child = " %d" % subprocess.Popen(["sleep", "60"], close_fds=False).pid
elif spawn == "record":
    run.record_child({"pgid": 4242, "start": 7, "boot": "b00t", "cgroup": "/x/ckdn-1-00000000"})
print("locked " + run.name + child, flush=True)
sys.stdin.readline()
run.release()
print("released", flush=True)
"""


class Holder:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = 20.0) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"holder {self.pid} said nothing for {timeout}s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"holder {self.pid} exited: rc {self.proc.wait()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()


@pytest.fixture
def spawn_holder(tmp_path: Path) -> Iterator[Callable[..., Holder]]:
    started: list[Holder] = []

    def spawn(store: Store, check: str, *, child: bool = False, record: bool = False) -> Holder:
        argv = [sys.executable, "-c", HOLDER, str(store.runs_dir), str(store.cwd), check]
        argv.append("spawn" if child else "record" if record else "-")
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        holder = Holder(proc)
        started.append(holder)
        return holder

    yield spawn
    for holder in started:
        if holder.proc.poll() is None:
            holder.proc.kill()
        holder.proc.wait()
        for pipe in (holder.proc.stdin, holder.proc.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / ".agent-runs", tmp_path)


def fixed_store(root: Path, now: float = FIXED_NOW) -> Store:
    return Store(root / ".agent-runs", root, clock=lambda: now)


def finish(run_dir: str | os.PathLike[str], marker: str = "digest.json") -> str:
    Path(run_dir, marker).write_text("{}\n")
    return os.fspath(run_dir)


def finished_run(store: Store, check: str) -> str:
    with store.begin(check) as run:
        return finish(run.path)


def lock_file(store: Store, check: str) -> Path:
    return Path(store.runs_dir, ".locks", f"{check}.lock")


# -- locks -----------------------------------------------------------------------


def test_a_second_begin_while_another_process_holds_the_lock_is_refused_in_one_line(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff")
    holder.send("go")
    status, name = holder.read_line().split()
    assert status == "locked"

    with pytest.raises(RefusedError) as refused:
        store.begin("ruff")

    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("check 'ruff' is already running")
    assert f"pid {holder.pid}" in message
    assert f"run dir .agent-runs/{name}" in message
    assert "wait for it" in message


def test_a_cleanly_released_lock_is_taken_again_without_a_note(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff")
    holder.send("go")
    assert holder.read_line().startswith("locked ")
    holder.send("release")
    assert holder.read_line() == "released"

    with store.begin("ruff") as run:
        assert run.notes == []


def held_lock(store: Store, check: str) -> int:
    """Take ``check``'s lock as a holder that has not written its record yet."""
    fd = _store.open_lock(_store.lock_path(store.runs_dir, check))
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_run_refused_while_the_holder_writes_its_record_waits_to_name_it(
    store: Store,
) -> None:
    fd = held_lock(store, "ruff")
    name = "20260101T000000Z-ruff"
    writer = threading.Timer(0.05, lambda: _store.write_holder(fd, name))
    writer.start()
    try:
        with pytest.raises(RefusedError) as refused:
            store.begin("ruff")
    finally:
        writer.join()
        os.close(fd)
    assert f"(pid {os.getpid()}, run dir .agent-runs/{name})" in refused.value.message


class PausedClock:
    """A stand-in for the ``time`` module that counts pauses instead of taking them."""

    def __init__(self) -> None:
        self.now, self.pauses = 0.0, 0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.pauses += 1


def test_a_holder_that_never_writes_its_record_is_reported_as_it_stands(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = PausedClock()
    monkeypatch.setattr(_store, "time", clock)
    fd = held_lock(store, "ruff")
    try:
        with pytest.raises(RefusedError, match=r"\(pid unknown, run dir not created yet\)"):
            store.begin("ruff")
    finally:
        os.close(fd)
    # it waited a moment (a few looks at the record), not forever
    assert clock.pauses > 0
    assert clock.now <= _store._SETTLE + 0.01


def test_racing_processes_take_one_checks_lock_exactly_once(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holders = [spawn_holder(store, "pytest") for _ in range(4)]
    for holder in holders:
        holder.send("go")
    answers = [holder.read_line() for holder in holders]

    locked = [answer for answer in answers if answer.startswith("locked ")]
    refused = [answer for answer in answers if answer.startswith("refused ")]
    assert len(locked) == 1, answers
    assert len(refused) == 3, answers
    for answer in refused:
        message = json.loads(answer.removeprefix("refused "))
        assert "\n" not in message
        assert message.startswith("check 'pytest' is already running")
    assert [info.name for info in store.runs()] == [locked[0].split()[1]]


def test_different_checks_hold_their_locks_side_by_side(store: Store) -> None:
    with store.begin("ruff") as ruff, store.begin("mypy") as mypy:
        assert ruff.locked
        assert mypy.locked


def test_a_second_begin_in_the_same_process_is_refused_too(store: Store) -> None:
    with store.begin("ruff") as run:
        with pytest.raises(RefusedError, match=rf"pid {os.getpid()}, run dir .*{run.name}\)"):
            store.begin("ruff")
        assert run.locked


def test_the_lock_file_names_its_holder_and_a_clean_release_empties_it(store: Store) -> None:
    with store.begin("ruff") as run:
        held = json.loads(lock_file(store, "ruff").read_text())
        assert held == {"pid": os.getpid(), "run_dir": run.name}
    assert lock_file(store, "ruff").read_bytes() == b""
    assert not run.locked
    run.release()  # idempotent


def test_a_lock_left_by_a_killed_run_is_reclaimed_with_a_note(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff")
    holder.send("go")
    name = holder.read_line().split()[1]
    holder.proc.send_signal(signal.SIGKILL)
    assert holder.proc.wait() == -signal.SIGKILL

    with store.begin("ruff") as run:
        assert run.notes == [
            f"reclaimed the lock of check 'ruff': pid {holder.pid} ended without releasing it;"
            f" its run dir .agent-runs/{name} was left unfinished"
        ]
        assert run.name != name
    assert Path(store.runs_dir, name).is_dir()  # the dead run's evidence stays


def test_the_lock_record_names_the_checks_tree_once_it_runs(store: Store) -> None:
    tree = {"pgid": 4242, "start": 7, "boot": "b00t"}
    with store.begin("ruff") as run:
        run.record_child(tree)
        held = json.loads(lock_file(store, "ruff").read_text())
        assert held == {"pid": os.getpid(), "run_dir": run.name, "child": tree}
        run.record_child({**tree, "cgroup": "/sys/fs/cgroup/ckdn-1-0a0b0c0d"})  # grown since
        held = json.loads(lock_file(store, "ruff").read_text())
        assert held["child"]["cgroup"] == "/sys/fs/cgroup/ckdn-1-0a0b0c0d"
        assert (held["pid"], held["run_dir"]) == (os.getpid(), run.name)
    assert lock_file(store, "ruff").read_bytes() == b""
    run.record_child(tree)  # after the release: nothing to write to, and no error
    assert lock_file(store, "ruff").read_bytes() == b""


def test_a_lock_left_by_a_killed_run_hands_over_the_tree_it_named(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff", record=True)
    holder.send("go")
    holder.read_line()
    holder.proc.kill()
    holder.proc.wait()

    with store.begin("ruff") as run:
        assert run.left_running == {"pgid": 4242, "start": 7, "boot": "b00t",
                                    "cgroup": "/x/ckdn-1-00000000"}
        assert len(run.notes) == 1
    with store.begin("ruff") as run:  # released cleanly: nothing left to hand over
        assert (run.left_running, run.notes) == (None, [])


@pytest.mark.parametrize("child", [
    [4242], "4242", {}, {"pgid": True}, {"pgid": 1.5}, {"pgid": {"nested": 1}}, {"pgid": None},
    {"pgid": [1]},
])
def test_a_tree_record_that_is_not_plain_strings_and_integers_is_not_handed_over(
    store: Store, child: object
) -> None:
    Path(store.runs_dir, ".locks").mkdir(parents=True)
    lock_file(store, "ruff").write_text(json.dumps({"pid": 99999999, "child": child}))
    with store.begin("ruff") as run:
        assert run.left_running is None
        assert run.notes[0].startswith("reclaimed the lock of check 'ruff': pid 99999999")


def test_a_killed_holder_that_had_finished_its_run_is_noted_as_finished(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff")
    holder.send("go")
    name = holder.read_line().split()[1]
    finish(os.path.join(store.runs_dir, name))
    holder.proc.kill()
    holder.proc.wait()

    with store.begin("ruff") as run:
        assert len(run.notes) == 1
        assert run.notes[0].endswith(f"its run dir .agent-runs/{name} was finished")


def test_the_check_process_does_not_inherit_the_lock(
    store: Store, spawn_holder: Callable[..., Holder]
) -> None:
    holder = spawn_holder(store, "ruff", child=True)
    holder.send("go")
    _, _, child = holder.read_line().split()
    child_pid = int(child)
    try:
        holder.proc.kill()
        holder.proc.wait()
        os.kill(child_pid, 0)  # the child outlives its parent, still running

        with store.begin("ruff") as run:
            assert run.locked
    finally:
        os.kill(child_pid, signal.SIGKILL)


def test_a_lock_file_that_is_a_symlink_is_refused_rather_than_followed(
    store: Store, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    Path(store.runs_dir, ".locks").mkdir(parents=True)
    lock_file(store, "ruff").symlink_to(victim)

    with pytest.raises(RefusedError, match="not writable"):
        store.begin("ruff")
    assert victim.read_text() == "precious\n"


# -- naming ----------------------------------------------------------------------


def test_a_run_dir_is_named_by_its_utc_second_and_check(tmp_path: Path) -> None:
    with fixed_store(tmp_path).begin("ruff") as run:
        assert run.name == f"{FIXED_STAMP}-ruff"
        assert run.path == str(tmp_path / ".agent-runs" / run.name)
        assert os.path.isdir(run.path)


def test_many_runs_in_the_same_second_get_unique_names_in_creation_order(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    created = [os.path.basename(finished_run(store, "ruff")) for _ in range(25)]

    assert created[:3] == [
        f"{FIXED_STAMP}-ruff",
        f"{FIXED_STAMP}.001-ruff",
        f"{FIXED_STAMP}.002-ruff",
    ]
    assert len(set(created)) == 25
    assert sorted(created) == created  # plain string order is creation order
    assert [info.name for info in store.runs()] == created[::-1]


def test_runs_started_back_to_back_on_the_real_clock_are_unique_and_ordered(
    store: Store,
) -> None:
    created = [os.path.basename(finished_run(store, "ruff")) for _ in range(40)]

    assert len(set(created)) == 40
    assert [info.name for info in store.runs()] == created[::-1]


def test_a_run_after_older_names_of_its_second_were_pruned_still_sorts_newest(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    for _ in range(3):
        finished_run(store, "ruff")
    store.prune("ruff", keep=1)
    assert [info.name for info in store.runs()] == [f"{FIXED_STAMP}.002-ruff"]

    newest = finished_run(store, "ruff")

    assert os.path.basename(newest) == f"{FIXED_STAMP}.003-ruff"
    assert store.runs()[0].path == newest


@settings(max_examples=40)  # each example makes and prunes real run dirs
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["ruff", "pip-audit", "lint"]), st.integers(0, 2)),
        min_size=1,
        max_size=15,
    )
)
def test_runs_list_newest_first_per_check_whatever_the_interleaving(
    steps: list[tuple[str, int]],
) -> None:
    now = [FIXED_NOW]
    created: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as root:
        store = Store(Path(root) / "runs", Path(root), clock=lambda: now[0], durable=False)
        for check, advance in steps:
            now[0] += advance
            path = store.new_dir(check) if check == "lint" else finished_run(store, check)
            created.setdefault(check, []).append(os.path.basename(path))
        listed = store.runs()

    assert len({info.name for info in listed}) == len(steps)
    for check, names in created.items():
        assert [info.name for info in listed if info.check == check] == names[::-1]


label_chars = st.characters(exclude_categories=["Cs"], exclude_characters="/\0")


@settings(max_examples=60)  # each example makes real run dirs
@given(
    label=st.text(label_chars, min_size=1, max_size=40).filter(lambda s: not s.startswith(".")),
    repeats=st.integers(1, 3),
)
def test_check_of_reads_back_the_label_of_any_run_dir_name(label: str, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        store = fixed_store(Path(root))
        names = [os.path.basename(store.new_dir(label)) for _ in range(repeats)]
    assert [check_of(name) for name in names] == [label] * repeats


def test_check_of_reads_checks_with_dashes_and_dots() -> None:
    assert check_of("20260707T101500Z-pip-audit") == "pip-audit"
    assert check_of("20260707T101500Z.012-types.strict") == "types.strict"


@pytest.mark.parametrize(
    "name", ["latest", "LATEST", ".locks", "ruff", "20260707T101500Z", "x-ruff"]
)
def test_check_of_refuses_names_that_are_not_run_dirs(name: str) -> None:
    with pytest.raises(UsageError, match="not a run dir name"):
        check_of(name)


@pytest.mark.parametrize("label", ["", ".hidden", "a/b", "a\0b", "x" * 201])
def test_a_check_name_that_cannot_name_a_directory_is_refused(store: Store, label: str) -> None:
    with pytest.raises(UsageError, match="cannot name a run dir"):
        store.begin(label)
    with pytest.raises(UsageError, match="cannot name a run dir"):
        store.new_dir(label)


def test_new_dir_makes_unique_dirs_without_a_lock(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    first, second = store.new_dir("lint"), store.new_dir("lint")

    assert (os.path.basename(first), os.path.basename(second)) == (
        f"{FIXED_STAMP}-lint",
        f"{FIXED_STAMP}.001-lint",
    )
    assert not Path(store.runs_dir, ".locks").exists()


# -- an unwritable runs dir ------------------------------------------------------


def assert_refused_in_one_line(action: Callable[[], object], *fragments: str) -> None:
    with pytest.raises(RefusedError) as refused:
        action()
    message = str(refused.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_file_where_the_runs_dir_should_be_refuses_the_run(tmp_path: Path) -> None:
    (tmp_path / ".agent-runs").write_text("not a directory\n")
    store = Store(tmp_path / ".agent-runs", tmp_path)

    assert_refused_in_one_line(
        lambda: store.begin("ruff"), "runs dir .agent-runs is not writable", "File exists"
    )
    assert_refused_in_one_line(lambda: store.new_dir("lint"), ".agent-runs", "File exists")


def test_a_runs_dir_under_a_file_refuses_the_run(tmp_path: Path) -> None:
    (tmp_path / "build").write_text("a file\n")
    store = Store(tmp_path / "build" / "runs", tmp_path)

    assert_refused_in_one_line(
        lambda: store.begin("ruff"), "runs dir build/runs is not writable", "Not a directory"
    )


def test_a_file_where_the_locks_dir_should_be_refuses_the_run(store: Store) -> None:
    os.mkdir(store.runs_dir)
    Path(store.runs_dir, ".locks").write_text("oops\n")

    assert_refused_in_one_line(lambda: store.begin("ruff"), ".agent-runs/.locks", "Errno")


def test_the_runs_dir_and_its_parents_are_created_on_first_use(tmp_path: Path) -> None:
    store = Store(tmp_path / "a" / "b" / "runs", tmp_path)
    with store.begin("ruff") as run:
        assert os.path.dirname(run.path) == str(tmp_path / "a" / "b" / "runs")


@pytest.mark.parametrize("make", ["begin", "new_dir"])
def test_a_runs_dir_ckdn_creates_gets_a_gitignore_of_everything(
    tmp_path: Path, make: str
) -> None:
    store = Store(tmp_path / "a" / ".agent-runs", tmp_path)
    getattr(store, make)("ruff")

    lines = Path(store.runs_dir, ".gitignore").read_text().splitlines()
    assert [line for line in lines if not line.startswith("#")] == ["*"]
    assert [info.check for info in store.runs()] == ["ruff"]  # bookkeeping, never a run


def test_a_runs_dir_the_user_made_gets_no_gitignore(store: Store) -> None:
    os.mkdir(store.runs_dir)
    finished_run(store, "ruff")

    assert not os.path.lexists(Path(store.runs_dir, ".gitignore"))


def test_a_symlinked_locks_dir_is_refused_and_no_lock_file_is_made_through_it(
    store: Store, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.mkdir(store.runs_dir)
    Path(store.runs_dir, ".locks").symlink_to(elsewhere)

    assert_refused_in_one_line(lambda: store.begin("ruff"), ".agent-runs/.locks is a symlink")
    assert list(elsewhere.iterdir()) == []
    assert store.runs() == []


# -- writing and publishing ------------------------------------------------------


def test_write_atomic_replaces_the_file_and_leaves_no_temp_file(store: Store) -> None:
    target = os.path.join(store.new_dir("ruff"), "digest.json")
    store.write_atomic(target, b"old\n")
    store.write_atomic(target, b"new\n")

    assert Path(target).read_bytes() == b"new\n"
    assert os.listdir(os.path.dirname(target)) == ["digest.json"]


def test_a_reader_sees_the_whole_old_or_the_whole_new_document(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    target = os.path.join(store.new_dir("ruff"), "meta.json")
    versions = {b"a" * 200_000, b"b" * 200_000}
    store.write_atomic(target, b"a" * 200_000)
    seen: list[bytes] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.append(Path(target).read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(200):
            store.write_atomic(target, (b"b" if i % 2 == 0 else b"a") * 200_000)
    finally:
        stop.set()
        reader.join()

    assert seen
    assert set(seen) <= versions


def _recording_syncs(monkeypatch: pytest.MonkeyPatch, failing: str | None = None) -> list[str]:
    """Every fsync (the file it synced) and rename (``->`` its target), in order, from any
    thread; an fsync of a file named ``failing`` fails with EIO."""
    events: list[str] = []
    fsync, replace = os.fsync, os.replace

    def synced(fd: int) -> None:
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if name == failing:
            raise OSError(5, "Input/output error")
        fsync(fd)
        events.append(name)

    def renamed(src: str, dst: str) -> None:
        replace(src, dst)
        events.append("->" + os.path.basename(dst))

    monkeypatch.setattr(os, "fsync", synced)
    monkeypatch.setattr(os, "replace", renamed)
    return events


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an fd through /proc")
def test_documents_written_beside_are_durable_before_the_next_one_is_renamed_in(
    store: Store, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = store.new_dir("ruff")
    events = _recording_syncs(monkeypatch)
    store.write_atomic(os.path.join(run_dir, "facts.json"), b"{}\n", beside=True)
    store.write_atomic(os.path.join(run_dir, "meta.json"), b"{}\n", beside=True)
    assert events == ["->facts.json", "->meta.json"]  # readable at once, not yet synced
    store.write_atomic(os.path.join(run_dir, "digest.json"), b"{}\n")

    marker = events.index("->digest.json")
    assert sorted(events[2:marker]) == sorted(
        ["facts.json", "meta.json", next(e for e in events[2:marker] if ".digest.json." in e)])
    assert events[marker + 1:] == []
    assert sorted(os.listdir(run_dir)) == ["digest.json", "facts.json", "meta.json"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an fd through /proc")
def test_a_document_beside_that_cannot_be_synced_keeps_the_marker_out(
    store: Store, monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = store.new_dir("ruff")
    events = _recording_syncs(monkeypatch, failing="meta.json")
    store.write_atomic(os.path.join(run_dir, "meta.json"), b"{}\n", beside=True)

    assert_refused_in_one_line(
        lambda: store.write_atomic(os.path.join(run_dir, "digest.json"), b"{}\n"),
        "cannot write", "meta.json", "Errno 5",
    )
    assert "->digest.json" not in events
    assert os.listdir(run_dir) == ["meta.json"]  # an unfinished run: no marker, no temp file


def test_a_store_that_is_not_durable_syncs_nothing_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    run_dir = store.new_dir("ruff")
    events = _recording_syncs(monkeypatch)
    store.write_atomic(os.path.join(run_dir, "meta.json"), b"{}\n", beside=True)
    store.write_atomic(os.path.join(run_dir, "digest.json"), b"{}\n")

    assert events == ["->meta.json", "->digest.json"]


def test_write_atomic_over_a_directory_is_refused_and_leaves_no_temp_file(
    store: Store,
) -> None:
    run_dir = store.new_dir("ruff")
    os.mkdir(os.path.join(run_dir, "digest.json"))

    assert_refused_in_one_line(
        lambda: store.write_atomic(os.path.join(run_dir, "digest.json"), b"{}"),
        "digest.json",
        "Errno",
    )
    assert os.listdir(run_dir) == ["digest.json"]


def test_publish_points_latest_at_the_run_and_swaps_it_on_the_next(store: Store) -> None:
    first, second = finished_run(store, "ruff"), finished_run(store, "mypy")
    latest = Path(store.runs_dir, "latest")

    store.publish(first)
    assert os.readlink(latest) == os.path.basename(first)
    store.publish(second)

    assert os.readlink(latest) == os.path.basename(second)
    assert store.resolve(None) == second
    assert not [name for name in os.listdir(store.runs_dir) if name.endswith(".tmp")]


def test_latest_never_disappears_while_it_is_swapped(store: Store) -> None:
    runs = [finished_run(store, "ruff"), finished_run(store, "mypy")]
    store.publish(runs[0])
    latest = Path(store.runs_dir, "latest")
    names = {os.path.basename(run) for run in runs}
    seen: list[str] = []
    failures: list[OSError] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                seen.append(os.readlink(latest))
            except OSError as exc:
                failures.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(300):
            store.publish(runs[i % 2])
    finally:
        stop.set()
        reader.join()

    assert failures == []
    assert seen
    assert set(seen) <= names


def symlinks_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(1314, "A required privilege is not held by the client")

    monkeypatch.setattr(os, "symlink", refuse)


def test_without_symlinks_publish_writes_a_latest_marker_file(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = finished_run(store, "ruff")
    symlinks_unavailable(monkeypatch)

    store.publish(run)

    assert Path(store.runs_dir, "LATEST").read_text() == f"{os.path.basename(run)}\n"
    assert not os.path.lexists(Path(store.runs_dir, "latest"))
    assert store.resolve(None) == run
    assert store.resolve("latest") == run


def test_falling_back_to_the_marker_removes_a_stale_latest_symlink(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = finished_run(store, "ruff"), finished_run(store, "ruff")
    store.publish(old)
    symlinks_unavailable(monkeypatch)

    store.publish(new)

    assert not os.path.lexists(Path(store.runs_dir, "latest"))
    assert store.resolve(None) == new


def test_a_stale_latest_marker_is_removed_once_a_symlink_works(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = finished_run(store, "ruff"), finished_run(store, "ruff")
    with monkeypatch.context() as patch:
        symlinks_unavailable(patch)
        store.publish(old)
    assert Path(store.runs_dir, "LATEST").exists()

    store.publish(new)

    assert not Path(store.runs_dir, "LATEST").exists()
    assert os.readlink(Path(store.runs_dir, "latest")) == os.path.basename(new)


def test_publish_falls_back_to_the_marker_when_a_directory_named_latest_is_in_the_way(
    store: Store,
) -> None:
    run = finished_run(store, "ruff")
    Path(store.runs_dir, "latest").mkdir()

    store.publish(run)

    assert Path(store.runs_dir, "LATEST").read_text() == f"{os.path.basename(run)}\n"
    assert store.resolve(None) == run
    assert not [name for name in os.listdir(store.runs_dir) if name.endswith(".tmp")]


def test_a_latest_marker_that_is_a_symlink_or_a_fifo_is_never_read(
    store: Store, tmp_path: Path
) -> None:
    run = finished_run(store, "ruff")
    planted = tmp_path / "planted"
    planted.write_text("20260707T101500Z-evil\n")
    marker = Path(store.runs_dir, "LATEST")
    marker.symlink_to(planted)
    opened: list[str] = []
    real_open = os.open

    def spy(path: str, flags: int, *args: object, **kwargs: object) -> int:
        opened.append(str(path))
        assert flags & os.O_NOFOLLOW
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", spy)
        assert store.resolve(None) == run
    assert opened == [str(marker)]
    marker.unlink()
    os.mkfifo(marker)  # a reader opening it blocking would wait forever
    assert store.resolve(None) == run


# -- listing ---------------------------------------------------------------------


def test_runs_lists_run_dirs_with_their_kind_and_nothing_else(store: Store) -> None:
    digest = finished_run(store, "ruff")
    aggregate = finish(store.new_dir("lint"), "aggregate.json")
    with store.begin("mypy") as unfinished_run:
        unfinished = unfinished_run.path
    store.publish(digest)
    Path(store.runs_dir, "LATEST").write_text(os.path.basename(digest) + "\n")
    Path(store.runs_dir, ".20260707T101500Z-ruff.tmp").mkdir()
    Path(store.runs_dir, "notes").mkdir()
    Path(store.runs_dir, "20260101T000000Z-file").write_text("")
    Path(store.runs_dir, "20260101T000000Z-link").symlink_to(digest)

    infos = {info.name: info for info in store.runs()}

    assert infos == {
        os.path.basename(digest): RunInfo(os.path.basename(digest), digest, "ruff", True, "digest"),
        os.path.basename(aggregate): RunInfo(
            os.path.basename(aggregate), aggregate, "lint", True, "aggregate"
        ),
        os.path.basename(unfinished): RunInfo(
            os.path.basename(unfinished), unfinished, "mypy", False, "unfinished"
        ),
    }


def test_runs_of_one_check_are_its_runs_and_never_look_at_the_others(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ruff = [finished_run(store, "ruff") for _ in range(3)]
    for check in ("mypy", "ruff-format", "pytest"):
        finished_run(store, check)
    looked: list[str] = []
    kind = _store.kind_of

    def spy(path: str) -> str:
        looked.append(os.path.basename(path))
        return kind(path)

    monkeypatch.setattr(_store, "kind_of", spy)
    assert [info.path for info in store.runs("ruff")] == ruff[::-1]
    assert sorted(looked) == sorted(os.path.basename(p) for p in ruff)


def test_runs_of_a_runs_dir_not_created_yet_is_empty(store: Store) -> None:
    assert store.runs() == []


def test_display_is_cwd_relative_with_forward_slashes_or_else_absolute(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "proj" / ".agent-runs", tmp_path / "proj")

    assert store.display(tmp_path / "proj" / ".agent-runs" / "x") == ".agent-runs/x"
    assert store.display(tmp_path / "elsewhere" / "x") == (tmp_path / "elsewhere" / "x").as_posix()
    assert store.display(str(tmp_path / "proj" / ".agent-runs" / "x")) == ".agent-runs/x"
    assert store.display(".agent-runs/x") == ".agent-runs/x"


# -- resolving references --------------------------------------------------------


def test_resolve_finds_a_run_by_name_by_displayed_path_and_by_absolute_path(
    store: Store, tmp_path: Path
) -> None:
    run = finished_run(store, "ruff")

    assert store.resolve(os.path.basename(run)) == run
    assert store.resolve(f".agent-runs/{os.path.basename(run)}") == run
    assert store.resolve(f".agent-runs/{os.path.basename(run)}/") == run
    assert store.resolve(run) == run  # absolute


@pytest.mark.parametrize(
    "ref",
    [
        "..",
        ".",
        "../outside",
        ".agent-runs/..",
        ".agent-runs/../outside/20260707T101500Z-ruff",
        "20260707T101500Z-ruff/..",
    ],
)
def test_resolve_refuses_references_that_climb_out(store: Store, ref: str) -> None:
    finished_run(store, "ruff")
    with pytest.raises(UsageError):
        store.resolve(ref)


def test_resolve_refuses_an_absolute_path_outside_the_runs_dir(
    store: Store, tmp_path: Path
) -> None:
    finished_run(store, "ruff")
    outside = tmp_path / "outside" / "20260707T101500Z-ruff"
    outside.mkdir(parents=True)
    finish(outside)

    with pytest.raises(UsageError, match=r"is outside the runs dir \.agent-runs"):
        store.resolve(str(outside))


def test_resolve_refuses_a_symlinked_run_that_escapes(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "20260707T101500Z-ruff"
    outside.mkdir(parents=True)
    finish(outside)
    os.mkdir(store.runs_dir)
    Path(store.runs_dir, "20260707T101500Z-ruff").symlink_to(outside)

    with pytest.raises(UsageError, match="is outside the runs dir"):
        store.resolve("20260707T101500Z-ruff")
    with pytest.raises(UsageError, match="is outside the runs dir"):
        store.resolve(".agent-runs/20260707T101500Z-ruff")


def test_a_latest_symlink_that_escapes_is_never_followed(store: Store, tmp_path: Path) -> None:
    run = finished_run(store, "ruff")
    outside = tmp_path / "20260707T101500Z-evil"
    outside.mkdir()
    Path(store.runs_dir, "latest").symlink_to(outside)

    assert store.resolve(None) == run


def test_resolve_follows_a_symlink_between_runs_inside_the_runs_dir(store: Store) -> None:
    run = finished_run(store, "ruff")
    Path(store.runs_dir, "20200101T000000Z-alias").symlink_to(os.path.basename(run))

    assert store.resolve("20200101T000000Z-alias") == run


@pytest.mark.parametrize("ref", [".locks", ".agent-runs/.locks", "LATEST/..", "", "a\0b"])
def test_resolve_refuses_bookkeeping_and_unreadable_references(store: Store, ref: str) -> None:
    finished_run(store, "ruff")
    with pytest.raises(UsageError) as refused:
        store.resolve(ref)
    assert "\n" not in str(refused.value)


def test_resolve_refuses_a_run_that_does_not_exist(store: Store) -> None:
    with pytest.raises(UsageError, match=r"no run '20260707T101500Z-ruff' in \.agent-runs"):
        store.resolve("20260707T101500Z-ruff")


def test_a_check_name_resolves_to_its_newest_run(store: Store) -> None:
    older = finished_run(store, "ruff")
    newer = finished_run(store, "ruff")
    finished_run(store, "mypy")

    assert store.resolve("ruff") == newer != older
    assert store.resolve("ruff", name_only=True) == newer


def test_a_check_name_never_skips_back_past_a_run_that_died_to_an_older_green_one(
    store: Store,
) -> None:
    finished_run(store, "ruff")
    died = Path(store.runs_dir, "29990101T000000Z-ruff")
    died.mkdir()

    assert store.resolve("ruff") == str(died)


def test_a_name_that_is_neither_a_run_nor_a_check_with_runs_is_refused_in_one_line(
    store: Store,
) -> None:
    finished_run(store, "ruff")
    with pytest.raises(UsageError, match=r"no run 'mypy' in \.agent-runs: neither a run dir nor a"
                       r" check with a stored run; `ckdn list`"):
        store.resolve("mypy")


def test_a_check_name_with_only_host_runs_names_them_in_the_refusal(store: Store) -> None:
    # tox and nox record a check as CHECK@ENV: `ckdn show pytest` says which to name.
    finished_run(store, "pytest@py312")
    finished_run(store, "pytest@py311")
    finished_run(store, "pytest-extra")
    with pytest.raises(UsageError) as refused:
        store.resolve("pytest")
    assert str(refused.value) == (
        "no run 'pytest' in .agent-runs, but runs of 'pytest@py311', 'pytest@py312':"
        " name one, as in `ckdn show pytest@py311`")


def test_a_refusal_names_at_most_five_host_runs_and_counts_the_rest(store: Store) -> None:
    for env in range(7):
        finished_run(store, f"ruff@e{env}")
    with pytest.raises(UsageError, match=r"'ruff@e4' and 2 more: name one"):
        store.resolve("ruff")


def test_resolve_by_name_only_refuses_paths(store: Store) -> None:
    run = finished_run(store, "ruff")

    assert store.resolve(os.path.basename(run), name_only=True) == run
    with pytest.raises(UsageError, match="is a path"):
        store.resolve(f".agent-runs/{os.path.basename(run)}", name_only=True)


def test_latest_without_a_pointer_is_the_newest_run_even_an_unfinished_one(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    finished_run(store, "ruff")
    finished_run(store, "ruff")
    with store.begin("ruff") as newer:  # newer, but unfinished (killed, or still running)
        pass

    assert store.resolve(None) == newer.path


def test_latest_is_a_run_newer_than_the_published_one_that_never_finished(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    green = finished_run(store, "ruff")
    store.publish(green)
    with store.begin("mypy") as died:
        pass

    assert store.resolve(None) == died.path
    assert store.resolve("latest") == died.path


def test_latest_passes_over_finished_members_newer_than_the_published_alias_run(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    older = finished_run(store, "ruff")
    store.publish(older)
    alias = store.new_dir("lint")
    store.publish(alias)  # an alias publishes its own dir when it begins
    finished_run(store, "ruff")  # its members never publish
    finished_run(store, "mypy")

    assert store.resolve(None) == alias  # unfinished alias run: never the member's green
    finish(alias, "aggregate.json")
    assert store.resolve(None) == alias


def test_latest_ignores_unfinished_runs_older_than_the_published_one(tmp_path: Path) -> None:
    store = fixed_store(tmp_path)
    with store.begin("ruff"):
        pass
    green = finished_run(store, "mypy")
    store.publish(green)

    assert store.resolve(None) == green


def test_resolve_latest_with_no_run_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match=r"no run in \.agent-runs yet"):
        store.resolve(None)


REF_PARTS = [
    "..",
    ".",
    "",
    ".agent-runs",
    ".locks",
    "latest",
    "LATEST",
    "outside",
    "escape",
    "20260707T101500Z-ruff",
    "20260707T101500Z.001-ruff",
    "20260707T101501Z-evil",
    "digest.json",
]


@pytest.fixture(scope="module")
def escape_tree(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("escape")
    store = fixed_store(root)
    first = finished_run(store, "ruff")
    finished_run(store, "ruff")
    store.publish(first)
    outside = root / "outside" / "20260707T101501Z-evil"
    outside.mkdir(parents=True)
    finish(outside)
    Path(store.runs_dir, "20260707T101501Z-evil").symlink_to(outside)
    Path(store.runs_dir, "escape").symlink_to(root / "outside")
    return store


@given(
    ref=st.one_of(
        st.text(max_size=60),
        st.lists(st.sampled_from(REF_PARTS), min_size=1, max_size=6).map("/".join),
        st.lists(st.sampled_from(REF_PARTS), min_size=1, max_size=6).map(
            lambda parts: "/" + "/".join(parts)
        ),
    ),
    name_only=st.booleans(),
)
def test_resolve_never_returns_a_path_outside_the_runs_dir(
    escape_tree: Store, ref: str, name_only: bool
) -> None:
    store = escape_tree
    refusals: list[str] = []
    for candidate in (ref, str(store.cwd) + "/" + ref):
        try:
            found = store.resolve(candidate, name_only=name_only)
        except UsageError as exc:
            refusals.append(str(exc))
            continue
        assert os.path.dirname(found) == store.runs_dir
        assert Path(os.path.realpath(found)).parent == Path(os.path.realpath(store.runs_dir))
        assert os.path.isdir(found)
        assert check_of(os.path.basename(found)) == "ruff"
    assert all("\n" not in refusal for refusal in refusals)


# -- pruning ---------------------------------------------------------------------


def test_prune_keeps_the_newest_finished_runs_and_nothing_else_of_that_check(
    tmp_path: Path,
) -> None:
    now = [FIXED_NOW]
    store = Store(tmp_path / "runs", tmp_path, clock=lambda: now[0])

    def tick() -> None:
        now[0] += 1

    ruff: list[str] = []
    unfinished: list[str] = []
    for i in range(5):
        ruff.append(finished_run(store, "ruff"))
        tick()
        if i % 2 == 0:
            with store.begin("ruff") as run:
                unfinished.append(run.path)
            tick()
    mypy = [finished_run(store, "mypy") for _ in range(3)]
    lint = finish(store.new_dir("lint"), "aggregate.json")
    Path(store.runs_dir, ".keepme").mkdir()

    removed = store.prune("ruff", keep=2)

    assert removed == [ruff[2], ruff[1], ruff[0]]
    remaining = {info.path for info in store.runs()}
    assert remaining == {ruff[3], ruff[4], *unfinished, *mypy, lint}
    assert sorted(name for name in os.listdir(store.runs_dir) if name.startswith(".")) == [
        ".gitignore",
        ".keepme",
        ".locks",
    ]


def test_prune_never_removes_the_run_latest_points_at(store: Store) -> None:
    oldest = finished_run(store, "ruff")
    middle = finished_run(store, "ruff")
    finished_run(store, "ruff")
    store.publish(oldest)

    assert store.prune("ruff", keep=1) == [middle]
    assert os.path.isdir(oldest)


def test_prune_never_removes_the_run_a_live_lock_holder_is_finishing(store: Store) -> None:
    with store.begin("ruff") as run:
        finish(run.path)  # digest written, meta not yet, lock still held
        finish(store.new_dir("ruff"))  # a newer finished run: ``run`` is beyond keep=1
        assert store.prune("ruff", keep=1) == []
        assert store.gc(keep=1) == []
    assert store.prune("ruff", keep=1) == [run.path]


def test_the_lock_holder_pruning_protects_its_own_run_without_reading_the_lock(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = finished_run(store, "ruff")
    with store.begin("ruff") as run:
        finish(run.path)
        finish(store.new_dir("ruff"))
        monkeypatch.setattr(_store, "held_runs", lambda *a: pytest.fail("read the lock back"))
        assert store.prune("ruff", keep=1, holding=run) == [older]
    assert os.path.isdir(run.path)


def test_prune_refuses_a_negative_keep(store: Store) -> None:
    with pytest.raises(UsageError, match=r"keep must be 0 \(never prune\) or more"):
        store.prune("ruff", keep=-1)
    with pytest.raises(UsageError, match=r"keep must be 0 \(never prune\) or more"):
        store.gc(keep=-1)


def test_keep_zero_never_prunes(store: Store) -> None:
    runs = [finished_run(store, "ruff") for _ in range(3)]
    assert store.prune("ruff", keep=0) == []
    assert store.gc(keep=0) == []
    assert sorted(info.path for info in store.runs()) == sorted(runs)


def test_gc_prunes_every_check_and_alias_and_sweeps_interrupted_prunes(
    tmp_path: Path,
) -> None:
    store = fixed_store(tmp_path)
    ruff = [finished_run(store, "ruff") for _ in range(3)]
    mypy = [finished_run(store, "mypy") for _ in range(2)]
    lint = [finish(store.new_dir("lint"), "aggregate.json") for _ in range(3)]
    open_alias = store.new_dir("lint")
    leftover = Path(store.runs_dir, ".pruning.20200101T000000Z-ruff.abcd")
    (leftover / "sub").mkdir(parents=True)

    removed = store.gc(keep=1)

    assert sorted(removed) == sorted([*ruff[:2], mypy[0], *lint[:2]])
    assert {info.path for info in store.runs()} == {ruff[2], mypy[1], lint[2], open_alias}
    assert not leftover.exists()


def test_gc_on_a_runs_dir_not_created_yet_removes_nothing(store: Store) -> None:
    assert store.gc(keep=1) == []
    assert not os.path.exists(store.runs_dir)


def test_a_run_dir_is_a_context_manager_that_releases(store: Store) -> None:
    run = store.begin("ruff")
    assert isinstance(run, RunDir)
    with run as entered:
        assert entered is run
    assert not run.locked
    with store.begin("ruff") as again:
        assert again.notes == []


def test_a_document_of_bytes_is_written_raw(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A document given whole is written through no buffer: a buffered file costs an isatty
    ioctl per open (three documents on every run); chunks keep their buffer."""
    opened: list[int] = []
    real_open = open

    def counted(file: Any, mode: str = "r", buffering: int = -1, **kwargs: Any) -> Any:
        opened.append(buffering)
        return real_open(file, mode, buffering, **kwargs)

    monkeypatch.setattr(_store, "open", counted, raising=False)
    target = tmp_path / "doc.json"
    _store.write_atomic(str(target), b"{}\n" * 10_000)
    _store.write_atomic(str(tmp_path / "chunks.jsonl"), iter([b"a\n", b"b\n"]))
    assert opened == [0, -1]
    assert target.read_bytes() == b"{}\n" * 10_000
    assert (tmp_path / "chunks.jsonl").read_bytes() == b"a\nb\n"
