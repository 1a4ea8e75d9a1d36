"""The store of one project: its runs dir, run names, locks, atomic writes, reading, pruning."""

from __future__ import annotations

import _thread  # the C module under threading, loaded by every interpreter: no import cost
import fcntl
import os
import stat
import time

from ckdn._lite import Record, canonical, record, rmtree
from ckdn.errors import BusyError, RefusedError, UsageError, one_line, os_reason, quote
from ckdn.evidence_files import read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import TracebackType


# -- Run-dir names: what a run dir is called, and what its name says about it.

# A run dir is ``<runs_dir>/<UTC %Y%m%dT%H%M%SZ>-<check>``, e.g.
# ``20260707T101500Z-ruff``. A second run of the same check (or alias) in the
# same second is ``20260707T101500Z.001-ruff``, then ``.002`` ... The sequence
# number is one more than the highest already on disk for that second and label,
# not the first free one, so a name created after pruning removed earlier names of
# that second still sorts after the survivors. ``-`` sorts before ``.`` and the
# sequence is zero-padded to three digits, so plain string order is creation
# order for one label up to 999 runs in one second; ckdn itself orders by the
# parsed key (timestamp, sequence, name), which stays right beyond that.
#
# The one way a path is shown (relative to cwd when it lies under it) lives
# here too: a run dir is what digests, listings and refusals show most.

TIMESTAMP = "%Y%m%dT%H%M%SZ"
#: Leaves room for the timestamp, a sequence and ``.lock`` under NAME_MAX (255).
MAX_LABEL_BYTES = 200


def check_of(name: str) -> str:
    """The check (or alias) a run dir name belongs to: ``20260707T101500Z-ruff`` -> ``ruff``."""
    parsed = parse_name(name)
    if parsed is None:
        raise UsageError(
            f"{quote(name)} is not a run dir name; expected <YYYYmmddTHHMMSSZ>-<check>"
            " as listed by `ckdn list`"
        )
    return parsed[2]


def parse_name(name: str) -> tuple[str, int, str] | None:
    r"""``(stamp, seq, label)`` when ``name`` is ``<YYYYmmddTHHMMSSZ>[.<seq>]-<label>``, else None.

    What the pattern ``(\d{8}T\d{6}Z)(?:\.(\d{3,}))?-([^/\0]+)`` matches in full,
    read without compiling it (every run parses names; few need a regex).
    """
    stamp, rest = name[:16], name[16:]
    if not (stamp[8:9] == "T" and stamp[15:] == "Z" and stamp[:8].isdecimal()
            and stamp[9:15].isdecimal()):
        return None
    seq = 0
    if rest.startswith("."):
        digits, dash, label = rest[1:].partition("-")
        if not (dash and len(digits) >= 3 and digits.isdecimal()):
            return None
        seq = int(digits)
    elif rest.startswith("-"):
        label = rest[1:]
    else:
        return None
    if not label or "/" in label or "\0" in label:
        return None
    return stamp, seq, label


def run_name(stamp: str, seq: int, label: str) -> str:
    return f"{stamp}-{label}" if seq == 0 else f"{stamp}.{seq:03d}-{label}"


def validate_label(label: str) -> None:
    """A check or alias name becomes part of a file name; refuse any that cannot."""
    bad = (
        not label
        or label.startswith(".")
        or "/" in label
        or "\0" in label
        or (os.altsep is not None and os.altsep in label)
        or len(label.encode("utf-8", "surrogateescape")) > MAX_LABEL_BYTES
    )
    if bad:
        raise UsageError(
            f"check name {quote(label)} cannot name a run dir: it must be non-empty, not start"
            f" with '.', hold no '/' or NUL, and be at most {MAX_LABEL_BYTES} bytes;"
            " rename it in ckdn.toml"
        )


def shown_path(path: str, cwd: str) -> str:
    """``path`` (absolute, normalised) relative to ``cwd`` when it lies under it, else as is.

    How digests, listings and messages show a path: ``.agent-runs/...`` for the
    usual run dir, the full path for one elsewhere (never a ``../`` climb).
    """
    if path == cwd:
        return "."
    inside = cwd.rstrip(os.sep) + os.sep
    return path[len(inside):] if path.startswith(inside) else path


# -- Making a file or a run appear whole: the runs dir, the one atomic writer, and ``latest``.

# A reader (an agent polling ``latest``, ``ckdn show`` in another terminal, the
# next run's prune) must see either the old state or the new one, never half a
# document: every document is written to a dot-entry in its own directory,
# fsynced, then renamed into place, and ``latest`` is a symlink renamed over the
# old one (or, where symlinks are unavailable, a ``LATEST`` file written the same
# way). A runs dir ckdn creates gets a ``.gitignore`` of ``*`` at once, as
# pytest's, mypy's and ruff's caches do: evidence is never committed by accident.

LATEST_LINK = "latest"
LATEST_FILE = "LATEST"
#: LATEST holds one short line; never read more than this.
_SMALL_READ = 4096
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = b"# Created by ckdn automatically.\n*\n"


def make_runs_dir(runs_dir: str, mode: int = 0o777) -> None:
    """Make ``runs_dir`` (and its parents, with the default mode) unless it is there, with
    ``mode`` (less the umask); the one ckdn makes gets its ``.gitignore``. Raises
    ``OSError`` (``FileExistsError`` for a file in the way)."""
    try:
        os.mkdir(runs_dir, mode)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(runs_dir), exist_ok=True)
        make_runs_dir(runs_dir, mode)
        return
    except FileExistsError:
        if os.path.isdir(runs_dir):
            return
        raise
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(os.path.join(runs_dir, GITIGNORE), flags, 0o644)
    except FileExistsError:  # written already by whoever raced us to it
        return
    with open(fd, "wb") as handle:
        handle.write(GITIGNORE_TEXT)


def write_atomic(path: str, data: bytes | Iterable[bytes], *, durable: bool = True,
                 mode: int = 0o644, synced_with: Sequence[str] = ()) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one.

    ``data`` may be chunks (a file of a million findings is written as it is
    encoded, never held whole).

    The temp file is a dot-entry in the same directory (``os.replace`` must not
    cross file systems), so it is never read as evidence and never left behind
    on failure. ``durable`` fsyncs it first: after a power cut a new file renamed
    without fsync can survive empty on ext4 and XFS. ``synced_with``: files written
    before it whose fsync waited for this one (:func:`fsync_together`); ``path`` is
    renamed into place only once they are durable too. ``mode`` (less the umask) is the
    new file's (0600 for a private run's documents). Raises ``OSError``.
    """
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        if isinstance(data, bytes):  # written raw: no buffer, and no isatty ioctl to size one
            with open(fd, "wb", buffering=0) as raw:
                view = memoryview(data)
                while view:
                    view = view[raw.write(view):]
                if durable:
                    fsync_together(fd, synced_with)
        else:
            with open(fd, "wb") as handle:
                for chunk in data:
                    handle.write(chunk)
                if durable:
                    handle.flush()
                    fsync_together(handle.fileno(), synced_with)
        os.replace(tmp, path)
    except BaseException:
        _unlink_missing_ok(tmp)
        raise


# A run writes its documents one after the other, and one fsync after another costs one
# journal commit each (ext4, XFS: about a millisecond apiece on an idle disk, many more on
# a busy one). The documents before ``digest.json`` (``facts.json``, ``meta.json``) are
# renamed into place unsynced, and fsynced in threads beside the digest's own fsync, which
# the file system answers with the one commit they share (bench/bench_run.py); the digest,
# the finished marker, is renamed only once all of them are durable. After a power cut a
# run dir with a digest therefore has them whole, as before; one without a digest is
# unfinished whatever else it holds, as it was.


def fsync_together(fd: int, paths: Sequence[str]) -> None:
    """fsync ``fd`` and the files at ``paths`` at once; raises the first ``OSError``
    (named by its file). A file is reopened to be synced: fsync flushes the file, through
    any descriptor."""
    if not paths:
        os.fsync(fd)
        return
    failures: list[OSError] = []
    waits: list[_thread.LockType] = []
    for path in paths:
        done = _thread.allocate_lock()
        done.acquire()
        try:
            _thread.start_new_thread(_fsync_path, (path, failures, done))
        except RuntimeError:  # no thread to be had: synced here, one after the other
            _fsync_path(path, failures, done)
        waits.append(done)
    try:
        os.fsync(fd)
    finally:
        for done in waits:
            done.acquire()
    if failures:
        raise failures[0]


def _fsync_path(path: str, failures: list[OSError], done: _thread.LockType) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        exc.filename = path  # the file that failed, for the refusal's message
        failures.append(exc)
    finally:
        done.release()


def publish(runs_dir: str, run_dir: str, *, durable: bool = True) -> None:
    """Point ``latest`` at ``run_dir`` atomically, or write ``LATEST`` where symlinks fail.

    A ``LATEST`` left from a time symlinks failed is removed once one works; a
    ``latest`` left from a time they worked is removed when falling back, so the
    two never disagree about the newest run. Raises ``OSError``, and
    ``ValueError`` for a path that is not a run dir of ``runs_dir``.
    """
    parent, name = os.path.split(run_dir)
    if parent != runs_dir or parse_name(name) is None:
        raise ValueError(f"{run_dir} is not a run dir of {runs_dir}")
    link = os.path.join(runs_dir, LATEST_LINK)
    marker = os.path.join(runs_dir, LATEST_FILE)
    tmp = os.path.join(runs_dir, f".{LATEST_LINK}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    if _swap_symlink(name, tmp, link):
        _unlink_missing_ok(marker)
    else:
        write_atomic(marker, name.encode("utf-8", "surrogateescape") + b"\n", durable=durable)
        if os.path.islink(link):
            os.unlink(link)


def published(runs_dir: str) -> list[str]:
    """Names ``latest`` and ``LATEST`` point at, in that order of precedence."""
    names: list[str] = []
    try:  # noqa: SIM105 - `ckdn run` does not import contextlib
        names.append(os.readlink(os.path.join(runs_dir, LATEST_LINK)))
    except OSError:
        pass  # absent, or not a symlink: not published that way
    try:
        # Never through a symlink, never blocking on a FIFO planted under that name.
        data = read_regular(os.path.join(runs_dir, LATEST_FILE), _SMALL_READ)
    except OSError:  # absent, unreadable, a symlink: the symlink or a listing decides
        return names
    names.extend(data.decode("utf-8", "surrogateescape").splitlines()[:1])
    return names


def _swap_symlink(name: str, tmp: str, link: str) -> bool:
    """True when ``link`` now points at ``name``; False when symlinks are unavailable."""
    try:
        os.symlink(name, tmp)
    except (OSError, NotImplementedError):
        return False
    try:
        os.replace(tmp, link)
    except OSError:
        # e.g. a real directory named `latest` is in the way: fall back, leave it.
        os.unlink(tmp)
        return False
    return True


def _unlink_missing_ok(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return


# -- Reading the store: which runs there are, what a reference names, what a run left.

# Dot-prefixed entries (``.locks``, ``.gitignore``, temp files, runs being pruned)
# are bookkeeping, and ``latest``/``LATEST`` are pointers: none of them is ever a
# run. A run reference from a user is resolved through ``realpath`` and must land
# on a run dir directly inside the runs dir, so no reference can escape it.
#
# ``latest`` is the most recent top-level run, finished or not: the run the
# pointer names (an alias publishes its own run dir when it starts, its members
# never publish), unless a run newer than that one is still unfinished (running,
# or killed before it could publish), which is then the latest. A reader is never
# skipped back to an older green.

DIGEST = "digest.json"
AGGREGATE = "aggregate.json"
#: Marker file -> RunInfo.kind; the first present wins.
FINISHED_MARKERS = ((DIGEST, "digest"), (AGGREGATE, "aggregate"))

@record
class RunInfo(Record):
    __slots__ = ("check", "finished", "kind", "name", "path")
    name: str
    path: str
    check: str
    finished: bool
    kind: str  # "digest" | "aggregate" | "unfinished"

    def __init__(self, name: str, path: str, check: str, finished: bool, kind: str) -> None:
        self._assign(name, path, check, finished, kind)


def kind_of(path: str) -> str:
    """What the run dir holds, from its marker's own entry (never followed).

    A marker that is not a directory counts, even a planted symlink or FIFO: the
    run then reads as finished and the one reader refuses the file in one line,
    rather than calling the run unfinished.
    """
    for marker, kind in FINISHED_MARKERS:
        try:
            mode = os.lstat(os.path.join(path, marker)).st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode):
            return kind
    return "unfinished"


def _run_entries(runs_dir: str, check: str | None) -> Iterator[tuple[os.DirEntry[str],
                                                                    tuple[str, int, str]]]:
    """``(entry, (stamp, seq, label))`` of every run dir (of ``check``), by name first.

    Naming ``check`` filters by name before anything is looked up on disk: a
    prune after each run must not pay for every other check's runs.
    ``is_dir()`` treats an entry pruned meanwhile as absent rather than raising.
    """
    try:
        listing = os.scandir(runs_dir)
    except FileNotFoundError:
        return
    with listing as entries:
        for entry in entries:
            parsed = parse_name(entry.name)
            if parsed is not None and (check is None or parsed[2] == check) \
                    and entry.is_dir(follow_symlinks=False):
                yield entry, parsed


def names_of(runs_dir: str, check: str) -> list[str]:
    """The run dir names of ``check``, newest first, read from their names alone.

    One check's runs never overlap (its lock serializes them), so their names'
    (stamp, sequence) order is their order: nothing is stat'ed. What every run's
    prune reads; ``OSError`` when the runs dir cannot be listed.
    """
    found = sorted(((stamp, seq, entry.name) for entry, (stamp, seq, _label)
                    in _run_entries(runs_dir, check)), reverse=True)
    return [name for _stamp, _seq, name in found]


def list_runs(runs_dir: str, check: str | None) -> list[RunInfo]:
    """Every run dir (or every one of ``check``), newest first; ``OSError`` if unreadable."""
    found: list[RunInfo] = []
    order: dict[str, tuple[str, int, int, str]] = {}
    for entry, (stamp, seq, label) in _run_entries(runs_dir, check):
        path = os.path.join(runs_dir, entry.name)
        kind = kind_of(path)
        try:
            # Runs of different checks in the same second: the one sealed last
            # (its digest renamed in last) is the newest.
            mtime = entry.stat(follow_symlinks=False).st_mtime_ns
        except OSError:
            mtime = 0
        found.append(RunInfo(entry.name, path, label, kind != "unfinished", kind))
        order[entry.name] = (stamp, mtime, seq, entry.name)
    found.sort(key=lambda info: order[info.name], reverse=True)
    return found


class Resolver:
    """Turns a user's run reference into a run dir of ``runs_dir``, or a one-line refusal."""

    def __init__(self, runs_dir: str, cwd: str, shown: Callable[[str], str],
                 runs: Callable[[str | None], list[RunInfo]]) -> None:
        self.runs_dir = runs_dir
        self.cwd = cwd
        self.shown = shown
        self.runs = runs

    def resolve(self, ref: str | None, *, name_only: bool = False) -> str:
        """The run dir ``ref`` names, never anything outside the runs dir.

        ``None`` (or ``latest``) is :meth:`latest`. Otherwise ``ref`` is a run dir
        name, a check's name (its newest run), or (unless ``name_only``, as for MCP
        run ids) a path relative to cwd or absolute that must land, after following
        symlinks, on a run dir directly inside the runs dir.
        """
        if ref is None or ref in (LATEST_LINK, LATEST_FILE):
            return self.latest()
        try:
            return self._resolve_ref(ref, name_only=name_only)
        except (OSError, ValueError) as exc:  # e.g. a NUL byte or an over-long path
            raise UsageError(
                f"run reference {quote(ref)} cannot be read: {one_line(str(exc))};"
                " pass a run dir name from `ckdn list`"
            ) from exc

    def _resolve_ref(self, ref: str, *, name_only: bool) -> str:
        is_name = "/" not in ref and (os.altsep is None or os.altsep not in ref)
        if not ref or (is_name and ref.startswith(".")):
            raise UsageError(
                f"run reference {quote(ref)} is not a run; pass a run dir name from `ckdn list`"
            )
        if is_name and parse_name(ref) is None:
            return self._newest_of(ref)
        if is_name:
            candidate = os.path.join(self.runs_dir, ref)
        elif name_only:
            raise UsageError(
                f"run reference {quote(ref)} is a path; pass a run dir name from `ckdn list`"
            )
        else:
            candidate = os.path.join(self.cwd, ref)
        parent, name = os.path.split(os.path.realpath(candidate))
        if parent != os.path.realpath(self.runs_dir):
            raise UsageError(
                f"run reference {quote(ref)} is outside the runs dir"
                f" {self.shown(self.runs_dir)}; pass a run dir name from `ckdn list`"
            )
        if parse_name(name) is None or not os.path.isdir(os.path.join(parent, name)):
            raise UsageError(
                f"no run {quote(ref)} in {self.shown(self.runs_dir)};"
                " `ckdn list` shows the stored runs"
            )
        return os.path.join(self.runs_dir, name)

    def _newest_of(self, check: str) -> str:
        """The newest run of ``check``, finished or not (``ckdn show ruff``): like
        ``latest``, it never skips back past a run that died to an older green one."""
        runs = self.runs(check)
        if runs:
            return runs[0].path
        hosted = sorted({info.check for info in self.runs(None)
                         if info.check.startswith(check + "@")})
        if hosted:  # a tox env's or nox session's runs are CHECK@ENV (config's HOST_SEPARATOR)
            named = ", ".join(quote(name) for name in hosted[:5])
            more = f" and {len(hosted) - 5} more" if len(hosted) > 5 else ""
            raise UsageError(
                f"no run {quote(check)} in {self.shown(self.runs_dir)}, but runs of"
                f" {named}{more}: name one, as in `ckdn show {hosted[0]}`"
            )
        raise UsageError(
            f"no run {quote(check)} in {self.shown(self.runs_dir)}: neither a run dir"
            " nor a check with a stored run; `ckdn list` shows the stored runs"
        )

    def _contained(self, name: str) -> str | None:
        """``runs_dir/name`` when that is (or links to) a run dir inside the runs dir."""
        if "/" in name or "\0" in name or parse_name(name) is None:
            return None
        parent, real = os.path.split(os.path.realpath(os.path.join(self.runs_dir, name)))
        if parent != os.path.realpath(self.runs_dir) or parse_name(real) is None:
            return None
        if not os.path.isdir(os.path.join(parent, real)):
            return None
        return os.path.join(self.runs_dir, real)

    def latest(self) -> str:
        """The most recent top-level run: the published one, or an unfinished newer one.

        The pointer is ``latest``, else ``LATEST``. Runs newer than the one it
        names that are finished are an alias's members (they never publish) and
        are passed over; the newest unfinished one is a run still going or one
        that died before it could publish, and is the answer. With no usable
        pointer, the newest run of all.
        """
        pointer = next((found for name in published(self.runs_dir)
                        if (found := self._contained(name)) is not None), None)
        for info in self.runs(None):
            if pointer is None or info.path == pointer or not info.finished:
                return info.path
        if pointer is not None:
            return pointer
        raise UsageError(
            f"no run in {self.shown(self.runs_dir)} yet; start one with `ckdn run <check>`"
        )


# -- The per-check kernel lock that keeps two runs of one check apart.

# One lock per check, ``<runs_dir>/.locks/<check>.lock``, taken with
# ``flock(LOCK_EX | LOCK_NB)`` on a close-on-exec descriptor: the kernel drops it
# when the holder dies, and the check's child process never inherits it. The
# holder writes its pid and run dir name into the file and a clean release
# truncates it, so a lock acquired with content still in it was left by a run that
# ended without releasing; :meth:`ckdn.store.Store.begin` says so in a note.

LOCKS = ".locks"
#: A holder record is one short line; never read more than this.
_HOLDER_BYTES = 4096
#: How long a refused run waits for the holder's record to be complete (seconds).
_SETTLE = 0.2


class Holder:
    """What a lock file says about the process that holds (or held) it, and its child."""

    __slots__ = ("child", "pid", "run_dir")

    def __init__(self, pid: int | None, run_dir: str | None,
                 child: dict[str, object] | None = None) -> None:
        self.pid = pid
        self.run_dir = run_dir
        self.child = child


def lock_path(runs_dir: str, check: str) -> str:
    return os.path.join(runs_dir, LOCKS, f"{check}.lock")


def open_lock(path: str) -> int:
    """The lock file's descriptor, made with its directory if need be; ``OSError`` if not."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # O_NOFOLLOW: a planted symlink must not make us truncate another file.
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    return os.open(path, flags, 0o644)


def acquire(fd: int, check: str, runs_dir: str, shown: Callable[[str], str]) -> None:
    """Take ``check``'s lock on ``fd`` without waiting.

    Refused (one line) when another live process holds it, or when the file
    system cannot lock. ``shown`` turns a path into its one-line display form.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _held(check, _settled_holder(fd), runs_dir, shown) from None
    except OSError as exc:
        raise RefusedError(
            f"cannot lock {shown(lock_path(runs_dir, check))}: {os_reason(exc)}; the runs dir"
            " must be on a file system with flock support (set [run].runs_dir in ckdn.toml)"
        ) from exc


def _settled_holder(fd: int) -> Holder | None:
    """The busy lock's record, once the holder has had a moment to complete it.

    A holder writes its pid right after taking the lock and its run dir name
    right after making the dir. A run refused in between would read an empty or
    partial record and say "pid unknown"; the refusal is worth up to ``_SETTLE``
    seconds of waiting to name both. A holder that never completes it (stopped
    in between) is reported as it stands.
    """
    deadline = time.monotonic() + _SETTLE
    holder = read_holder(fd)
    while (holder is None or holder.pid is None or holder.run_dir is None) \
            and time.monotonic() < deadline:
        time.sleep(0.005)
        holder = read_holder(fd)
    return holder


def read_holder(fd: int) -> Holder | None:
    """The record in an open lock file; ``None`` for an empty (cleanly released) one."""
    data = os.pread(fd, _HOLDER_BYTES, 0)
    if not data.strip():
        return None
    import json  # here: json costs every run, and only a held or reclaimed lock is read

    try:
        doc = json.loads(data)
    except ValueError:
        return Holder(None, None)
    if not isinstance(doc, dict):
        return Holder(None, None)
    pid = doc.get("pid")
    run_dir = doc.get("run_dir")
    return Holder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        run_dir if isinstance(run_dir, str) and parse_name(run_dir) is not None else None,
        _child(doc.get("child")),
    )


def _child(value: object) -> dict[str, object] | None:
    """A child record as written: an object of plain strings and integers, else nothing."""
    if not isinstance(value, dict) or not value:
        return None
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(item, bool) \
                or not isinstance(item, int | str):
            return None
    return value


def write_holder(fd: int, run_dir: str | None, child: dict[str, object] | None = None) -> None:
    """Write the record over the old one, then cut what is left of it: never empty meanwhile."""
    doc: dict[str, object] = {"pid": os.getpid()}
    if run_dir is not None:
        doc["run_dir"] = run_dir
    if child:
        doc["child"] = child
    data = canonical(doc) + b"\n"
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def clear_holder(fd: int) -> None:
    """Empty the record: the mark of a clean release."""
    os.ftruncate(fd, 0)


def release(fd: int) -> None:
    """Clean release: clear the record, then drop the lock."""
    try:
        clear_holder(fd)
    finally:
        # Closing the only descriptor of this open file drops the flock.
        os.close(fd)


def take_if_free(runs_dir: str, check: str) -> int | None:
    """``check``'s lock taken, if it exists and nobody holds it (the descriptor: closing it
    drops the lock); None when it is held, missing or cannot be locked."""
    if check.startswith(".") or "/" in check:
        return None
    try:
        fd = os.open(lock_path(runs_dir, check), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def held_runs(runs_dir: str, check: str) -> list[str]:
    """The run dir a holder of ``check``'s lock is writing, if its record names one."""
    if check.startswith(".") or "/" in check:
        return []
    try:
        fd = os.open(lock_path(runs_dir, check), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:  # no lock file: an alias, or a check that never ran here
        return []
    try:
        holder = read_holder(fd)
    finally:
        os.close(fd)
    return [] if holder is None or holder.run_dir is None else [holder.run_dir]


def reclaimed_note(check: str, holder: Holder, runs_dir: str, shown: Callable[[str], str],
                   finished: Callable[[str], bool]) -> str:
    """The note a run carries when it took over a lock its holder never released."""
    who = "a previous run" if holder.pid is None else f"pid {holder.pid}"
    head = f"reclaimed the lock of check {quote(check)}: {who} ended without releasing it"
    if holder.run_dir is None:
        return f"{head} before creating its run dir"
    run_dir = os.path.join(runs_dir, holder.run_dir)
    state = "finished" if finished(run_dir) else "left unfinished"
    return f"{head}; its run dir {shown(run_dir)} was {state}"


def _held(check: str, holder: Holder | None, runs_dir: str,
          shown: Callable[[str], str]) -> BusyError:
    pid = "pid unknown" if holder is None or holder.pid is None else f"pid {holder.pid}"
    if holder is None or holder.run_dir is None:
        where = "run dir not created yet"
    else:
        where = f"run dir {shown(os.path.join(runs_dir, holder.run_dir))}"
    return BusyError(
        f"check {quote(check)} is already running ({pid}, {where});"
        " wait for it to finish or stop that process"
    )


#: In an unfinished run dir: its ckdn died holding the lock (``ckdn gc`` collects it).
ABANDONED = ".abandoned"


def mark_abandoned(run_dir: str, kind_of: Callable[[str], str]) -> None:
    """Mark the unfinished run dir of a holder that died, for ``ckdn gc``."""
    if kind_of(run_dir) != "unfinished":
        return
    try:  # noqa: SIM105 - contextlib is not imported on the run path
        os.close(os.open(os.path.join(run_dir, ABANDONED),
                         os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except OSError:
        pass  # gone, or not ours: gc then leaves it, as before


# -- The store of one project: its runs dir, and every way a run enters and leaves it.

# A run dir is ``<runs_dir>/<UTC stamp>[.<seq>]-<check>`` (run-dir names, above), made with
# ``os.mkdir``, which fails rather than reuse a name, so two processes can never
# share one. Each check's runs are serialized by its kernel lock (above); a
# lock reclaimed from a run that died holding it is reported in
# :attr:`RunDir.notes`. Documents are written atomically and ``latest`` swapped
# atomically, and listing and references are read, as the sections above do. Pruning,
# at the end of this module, keeps ``keep`` finished runs per check and never anything
# else: unfinished runs are never touched (a run without ``digest.json`` may still be
# running), nor the run ``latest``/``LATEST`` points at, nor the run a live holder of
# the check's lock is writing. A run is renamed to a dot-entry before it is deleted,
# so a half-deleted run (its digest gone first) is never listed as an unfinished one;
# ``gc`` sweeps what an interrupted prune left behind. :class:`Store` is the one entry point, and
# turns every OS failure into a one-line :class:`~ckdn.errors.RefusedError` that
# says which path and how to fix it.

class RunDir:
    """One run being written; holds its check's lock until released.

    Use it as a context manager: leaving the block truncates the lock file (the
    clean-release mark) and closes the descriptor, which drops the lock.
    """

    def __init__(self, path: str, check: str, fd: int, notes: list[str],
                 left_running: dict[str, object] | None = None, *,
                 names: list[str] | None = None) -> None:
        self.path = path
        self.name = os.path.basename(path)
        self.check = check
        self.notes = notes
        #: The process tree a run that died holding the lock named (its child record).
        self.left_running = left_running
        #: The check's run dir names, newest first (this one included), as listed when the
        #: dir was made: while the lock is held no other run of the check can appear, so the
        #: run's later readers (earlier facts, prune) take them instead of listing again.
        self.names = names
        self._fd: int | None = fd

    def __enter__(self) -> RunDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    @property
    def locked(self) -> bool:
        return self._fd is not None

    def record_child(self, child: dict[str, object]) -> None:
        """Name the check's running process tree in the lock record (``child``), so a run
        that reclaims the lock after this one died can stop it. Best effort: a record that
        cannot be written costs only that clean-up."""
        if self._fd is not None:
            try:  # noqa: SIM105 - contextlib is not imported on the run path
                write_holder(self._fd, self.name, child)
            except OSError:
                pass

    def release(self) -> None:
        """Clean release; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        release(fd)

    def __repr__(self) -> str:
        state = "locked" if self.locked else "released"
        return f"RunDir({self.path!r}, {state})"


class Store:
    """Every run of one project: the runs dir and what lives in it.

    ``clock`` returns seconds since the epoch; tests pass a fixed one to make
    several runs fall in one second. ``durable`` fsyncs each document before it
    is renamed into place: ``digest.json`` is the finished marker, and after a
    power cut a new file renamed without fsync can survive empty on ext4 and
    XFS, which would read as a finished run with no digest. A flush per
    document, a few per run, is small beside running any tool. ``private`` makes
    the runs dir, the run dirs and the documents owner-only (0700, 0600).
    """

    def __init__(
        self,
        runs_dir: str | os.PathLike[str],
        cwd: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        durable: bool = True,
        private: bool = True,
    ) -> None:
        self.cwd = os.path.abspath(cwd)  # normalised too
        self.runs_dir = os.path.normpath(os.path.join(self.cwd, runs_dir))
        self.durable = durable
        #: Owner-only: the runs dir and every run dir 0700, documents 0600.
        self.private = private
        self._clock = clock
        #: Written beside the next durable document, not yet fsynced (:meth:`write_atomic`).
        self._unsynced: list[str] = []

    # -- paths -----------------------------------------------------------------

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` as a digest shows it: cwd-relative when under cwd, else absolute."""
        return shown_path(os.path.normpath(os.path.join(self.cwd, path)), self.cwd)

    def _shown(self, path: str) -> str:
        """:meth:`display` on one line, for notes (a refusal's message is made one line anyway)."""
        return one_line(self.display(path))

    # -- creating runs ---------------------------------------------------------

    def begin(self, check: str) -> RunDir:
        """Take ``check``'s lock and create its run dir.

        Refused (one line) when another live process holds the lock or the runs
        dir cannot be written.
        """
        validate_label(check)
        self._ensure_runs_dir()
        try:
            fd = open_lock(lock_path(self.runs_dir, check))
        except OSError as exc:
            raise self._unwritable(exc) from exc
        try:
            return self._begin_locked(check, fd)
        except BaseException:
            os.close(fd)
            raise

    def _begin_locked(self, check: str, fd: int) -> RunDir:
        acquire(fd, check, self.runs_dir, self._shown)
        try:
            previous = read_holder(fd)
            notes = [] if previous is None else [reclaimed_note(
                check, previous, self.runs_dir, self._shown,
                lambda run_dir: kind_of(run_dir) != "unfinished")]
            if previous is not None and previous.run_dir is not None:
                mark_abandoned(os.path.join(self.runs_dir, previous.run_dir),
                                        kind_of)
            write_holder(fd, None)
            path, names = self._make_unique_dir(check)
            write_holder(fd, os.path.basename(path))
        except OSError as exc:
            clear_holder(fd)
            raise self._unwritable(exc) from exc
        except BaseException:
            clear_holder(fd)
            raise
        return RunDir(path, check, fd, notes, None if previous is None else previous.child,
                      names=names)

    def abandon(self, run_dir: str) -> None:
        """Remove ``run_dir`` if it is still empty (an alias run refused before it ran)."""
        try:  # noqa: SIM105 - contextlib is not imported on the run path
            os.rmdir(run_dir)
        except OSError:
            pass  # not empty, or gone: left as it is (unfinished), never half removed

    def new_dir(self, name: str) -> str:
        """A fresh uniquely named run dir, without a lock (alias aggregates)."""
        validate_label(name)
        self._ensure_runs_dir()
        try:
            return self._make_unique_dir(name)[0]
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _ensure_runs_dir(self) -> None:
        """The runs dir, made on first use (with its ``.gitignore``); refused when its
        ``.locks`` is a symlink: lock files are never made through one."""
        try:
            make_runs_dir(self.runs_dir, 0o700 if self.private else 0o777)
        except OSError as exc:
            raise self._unwritable(exc) from exc
        locks = os.path.join(self.runs_dir, LOCKS)
        if os.path.islink(locks):
            raise RefusedError(
                f"runs dir {self.display(self.runs_dir)} is not usable: {self.display(locks)}"
                " is a symlink, and ckdn makes lock files only in a real directory there;"
                " remove the symlink"
            )

    def _make_unique_dir(self, label: str) -> tuple[str, list[str]]:
        """The new dir, and the names of ``label``'s run dirs newest first (the new one
        included) from the one listing that chose its sequence number."""
        stamp = time.strftime(TIMESTAMP, time.gmtime(self._clock()))
        runs = [(entry_stamp, seq, entry.name)
                for entry, (entry_stamp, seq, _label) in _run_entries(self.runs_dir, label)]
        seq = 1 + max((seq for entry_stamp, seq, _name in runs if entry_stamp == stamp),
                      default=-1)
        while True:
            name = run_name(stamp, seq, label)
            path = os.path.join(self.runs_dir, name)
            try:
                os.mkdir(path, 0o700 if self.private else 0o777)
            except FileExistsError:
                seq += 1
                continue
            runs.append((stamp, seq, name))
            return path, [name for _stamp, _seq, name in sorted(runs, reverse=True)]

    def _unwritable(self, exc: OSError) -> RefusedError:
        named = exc.filename is not None and os.path.normpath(exc.filename) != self.runs_dir
        where = f"{self.display(exc.filename)}: " if named else ""
        return RefusedError(
            f"runs dir {self.display(self.runs_dir)} is not writable: {where}{os_reason(exc)};"
            " make it a writable directory or set [run].runs_dir in ckdn.toml"
        )

    # -- writing ---------------------------------------------------------------

    def write_atomic(self, path: str, data: bytes | Iterable[bytes], *,
                     beside: bool = False) -> None:
        """Replace ``path`` with ``data`` atomically (fsynced when ``durable``); refused
        in one line when it cannot be written. ``beside``: renamed at once, and fsynced
        beside the next durable write, which is renamed only after it (the digest after
        the documents before it: :func:`fsync_together`)."""
        mode = 0o600 if self.private else 0o644
        unsynced: list[str] = []
        try:
            if beside and self.durable:
                write_atomic(path, data, durable=False, mode=mode)
                self._unsynced.append(path)
                return
            unsynced, self._unsynced = self._unsynced, []
            write_atomic(path, data, durable=self.durable, mode=mode, synced_with=unsynced)
        except OSError as exc:
            where = exc.filename if exc.filename in unsynced else path
            raise RefusedError(
                f"cannot write {self.display(where)}: {os_reason(exc)}; free space or fix"
                " permissions in the runs dir"
            ) from exc

    def publish(self, run_dir: str) -> None:
        """Point ``latest`` (or ``LATEST`` where symlinks fail) at ``run_dir`` atomically."""
        try:
            publish(self.runs_dir, run_dir, durable=self.durable)
        except OSError as exc:
            raise RefusedError(
                f"cannot publish {self.display(run_dir)} as latest: {os_reason(exc)};"
                f" fix permissions in {self.display(self.runs_dir)}"
            ) from exc

    # -- reading ---------------------------------------------------------------

    def runs(self, check: str | None = None) -> list[RunInfo]:
        """Every run dir (or every one of ``check``), newest first."""
        try:
            return list_runs(self.runs_dir, check)
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def run_names(self, check: str, holding: RunDir | None = None) -> list[str]:
        """The run dir names of ``check``, newest first, by name alone (its lock serializes
        its runs): what a dir's mtime says, which any write into it changes, is not asked.
        A caller ``holding`` the check's lock gets the names listed when its dir was made."""
        if holding is not None and holding.locked and holding.check == check \
                and holding.names is not None:
            return list(holding.names)
        try:
            return names_of(self.runs_dir, check)
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def finished(self, run_dir: str) -> bool:
        """Whether ``run_dir`` holds its finished marker (its entry looked at, never followed)."""
        return kind_of(run_dir) != "unfinished"

    def _unreadable(self, exc: OSError) -> RefusedError:
        return RefusedError(
            f"cannot read runs dir {self.display(self.runs_dir)}: {os_reason(exc)};"
            " make it a readable directory or set [run].runs_dir in ckdn.toml"
        )

    def resolve(self, ref: str | None, *, name_only: bool = False) -> str:
        """The run dir ``ref`` names (None: the latest), never anything outside the runs dir."""
        return Resolver(self.runs_dir, self.cwd, self.display, self.runs).resolve(
            ref, name_only=name_only)

    # -- pruning ---------------------------------------------------------------

    def prune(self, check: str, keep: int, *, holding: RunDir | None = None,
              max_age_days: float | None = None, max_bytes: int | None = None) -> list[str]:
        """Delete all but the ``keep`` newest finished runs of ``check``, then apply the
        runs dir's retention limits (``max_age_days``, ``max_bytes``; :func:`collect`).

        Every run does this, so it reads as little as it can: the check's run dir
        names only (nothing when there are no more than ``keep``), and whether
        each is finished. A caller ``holding`` the check's lock says so, and its
        record is not read back.
        """
        validate_keep(keep)
        removed = [] if keep == NEVER_PRUNE else self._prune_check(check, keep, holding)
        if max_age_days is not None or max_bytes is not None:
            removed.extend(collect(self.runs(), self._pruner(), NEVER_PRUNE, self._protect,
                                   max_age_days=max_age_days, max_bytes=max_bytes,
                                   holding=holding.name if holding is not None else None))
        return removed

    def _prune_check(self, check: str, keep: int, holding: RunDir | None) -> list[str]:
        names = self.run_names(check, holding)
        if len(names) <= keep:
            return []
        writing = ([holding.name] if holding is not None and holding.check == check
                   else held_runs(self.runs_dir, check))
        protected = {*published(self.runs_dir), *writing}
        runs = (RunInfo(name, path, check, kind != "unfinished", kind)
                for name in names
                for path in (os.path.join(self.runs_dir, name),)
                for kind in (kind_of(path),))
        removed = self._pruner().prune_group(runs, keep, protected)
        if holding is not None and holding.names is not None and removed:
            gone = {os.path.basename(path) for path in removed}
            holding.names = [name for name in holding.names if name not in gone]
        return removed

    def gc(self, keep: int, *, max_age_days: float | None = None,
           max_bytes: int | None = None, dry_run: bool = False,
           stop_tree: Callable[[dict[str, object]], object] | None = None) -> list[str]:
        """Collect the dead runs (:func:`collect_dead`), :meth:`prune` every check and alias
        found on disk (``keep``, then the limits), then sweep what an interrupted prune left
        behind; ``dry_run`` removes nothing and returns what would go."""
        validate_keep(keep)
        pruner = self._pruner()
        runs = self.runs()
        dead = collect_dead(runs, pruner, stop_tree, dry_run=dry_run,
                            latest=self._latest_of(runs))
        removed = dead + collect([info for info in runs if info.path not in dead], pruner,
                                 keep, self._protect, max_age_days=max_age_days,
                                 max_bytes=max_bytes, dry_run=dry_run)
        if not dry_run:
            sweep_trash(pruner)
        return removed

    def _latest_of(self, runs: list[RunInfo]) -> str | None:
        """The run ``latest`` answers (None: no run), from a listing already made."""
        try:
            return Resolver(self.runs_dir, self.cwd, self.display, lambda _check: runs).latest()
        except UsageError:
            return None

    def _protect(self, check: str) -> set[str]:
        """The runs of ``check`` no prune may remove: the published one, the one being written."""
        return {*published(self.runs_dir), *held_runs(self.runs_dir, check)}

    def _pruner(self) -> Pruner:
        return Pruner(self.runs_dir, self._unremovable)

    def _unremovable(self, path: str, exc: OSError) -> RefusedError:
        return RefusedError(
            f"cannot remove {self.display(path)}: {os_reason(exc)};"
            f" fix permissions in {self.display(self.runs_dir)}"
        )


# -- pruning ----------------------------------------------------------------------------

TRASH_PREFIX = ".pruning."
#: ``[run].keep = 0``: the published meaning is "never prune", not "keep none".
NEVER_PRUNE = 0


def validate_keep(keep: int) -> None:
    if keep < 0:
        raise UsageError(f"keep must be 0 (never prune) or more, got {keep}")


class Pruner:
    """Deletes runs of one runs dir; ``unremovable`` turns an OS failure into a refusal."""

    def __init__(self, runs_dir: str, unremovable: Callable[[str, OSError], Exception]) -> None:
        self.runs_dir = runs_dir
        self.unremovable = unremovable

    def prune_group(self, group: Iterable[RunInfo], keep: int, protected: set[str], *,
                    dry_run: bool = False) -> list[str]:
        """Remove all but the ``keep`` newest finished runs of ``group`` (newest first)."""
        removed: list[str] = []
        kept = 0
        for info in group:
            if not info.finished:
                continue
            if kept < keep:
                kept += 1
            elif info.name not in protected and (dry_run or self.remove_run(info)):
                removed.append(info.path)
        return removed

    def remove_run(self, info: RunInfo) -> bool:
        """False if someone else removed it first."""
        trash = os.path.join(self.runs_dir, f"{TRASH_PREFIX}{info.name}.{os.urandom(4).hex()}")
        try:
            os.rename(info.path, trash)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        try:
            rmtree(trash)
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        return True


# -- retention beyond keep: by age (the name's UTC stamp) and by bytes (lstat), across the
# runs dir; never an unfinished, published or held run -------------------------------------

_DAY = 86400.0


def run_bytes(path: str) -> int:
    """The bytes the files under ``path`` take (links counted as links)."""
    total = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def expired(runs: Sequence[RunInfo], protected: set[str], *, max_age_days: float | None,
            max_bytes: int | None, now: float | None = None,
            size: Callable[[str], int] = run_bytes) -> list[RunInfo]:
    """The finished, unprotected runs retention removes (``runs`` newest first), oldest first."""
    finished = [info for info in runs if info.finished]
    going: list[RunInfo] = []
    if max_age_days is not None:
        clock = time.time() if now is None else now
        cutoff = time.strftime(TIMESTAMP, time.gmtime(clock - max_age_days * _DAY))
        for info in finished:
            parsed = parse_name(info.name)
            if parsed is not None and parsed[0] < cutoff and info.name not in protected:
                going.append(info)
    if max_bytes is not None:
        left = [info for info in finished if info not in going]
        sizes = {info.name: size(info.path) for info in left}
        total = sum(sizes.values())
        for info in reversed(left):  # oldest first
            if total <= max_bytes:
                break
            if info.name in protected:
                continue
            going.append(info)
            total -= sizes[info.name]
    going.sort(key=lambda info: info.name)
    return going


def collect(runs: Sequence[RunInfo], pruner: Pruner, keep: int,
            protect: Callable[[str], set[str]], *, max_age_days: float | None,
            max_bytes: int | None, holding: str | None = None,
            dry_run: bool = False) -> list[str]:
    """Prune every group of ``runs`` (newest first) to ``keep`` (0: no count limit), then
    remove what the limits say; the removed paths (``dry_run``: what would go)."""
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        groups.setdefault(info.check, []).append(info)
    protected: set[str] = set() if holding is None else {holding}
    for check in sorted(groups):
        protected |= protect(check)
    removed: list[str] = []
    if keep:
        for check in sorted(groups):
            removed.extend(pruner.prune_group(groups[check], keep, protected, dry_run=dry_run))
    if max_age_days is None and max_bytes is None:
        return removed
    gone = set(removed)
    left = [info for info in runs if info.path not in gone]
    for info in expired(left, protected, max_age_days=max_age_days, max_bytes=max_bytes):
        if dry_run or pruner.remove_run(info):
            removed.append(info.path)
    return removed


def collect_dead(runs: Iterable[RunInfo], pruner: Pruner,
                 stop_tree: Callable[[dict[str, object]], object] | None = None, *,
                 dry_run: bool = False, latest: str | None = None) -> list[str]:
    """Remove the dead runs: of a check whose lock nobody holds (no run of it is going),
    the unfinished run the lock's record names (its ckdn was killed holding the lock;
    ``stop_tree`` first stops what the record names of its tree, and the record is
    cleared) and the unfinished runs marked :data:`ABANDONED` (the run that reclaimed
    the lock found them so). An unfinished run released cleanly (a host's) and an alias
    run (no lock of its own) are left as they are. The dead run that is the ``latest``
    is stopped and marked but kept: removing it would make an older (green) run the
    latest; a later gc collects it once a newer run exists. The removed paths
    (``dry_run``: what would go)."""
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        if not info.finished:
            groups.setdefault(info.check, []).append(info)
    removed: list[str] = []
    for check in sorted(groups):
        fd = take_if_free(pruner.runs_dir, check)
        if fd is None:
            continue  # running (or no lock: an alias, a check that never ran here)
        try:
            holder = read_holder(fd)
            named = None if holder is None else holder.run_dir
            dead = [info for info in groups[check] if info.name == named
                    or os.path.lexists(os.path.join(info.path, ABANDONED))]
            going = [info for info in dead if info.path != latest]
            if dry_run or not dead:
                removed.extend(info.path for info in going)
                continue
            if holder is not None and holder.child and stop_tree is not None:
                stop_tree(holder.child)
            for info in dead:
                if info.path == latest:
                    mark_abandoned(info.path, kind_of)
            removed.extend(info.path for info in going if pruner.remove_run(info))
            if holder is not None:
                clear_holder(fd)
        finally:
            os.close(fd)
    return removed


def sweep_trash(pruner: Pruner) -> None:
    """Remove what an interrupted prune left behind (its ``.pruning.*`` entries)."""

    try:
        names = os.listdir(pruner.runs_dir)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise pruner.unremovable(pruner.runs_dir, exc) from exc

    for name in names:
        if name.startswith(TRASH_PREFIX):
            try:
                rmtree(os.path.join(pruner.runs_dir, name))
            except OSError as exc:
                raise pruner.unremovable(os.path.join(pruner.runs_dir, name), exc) from exc
