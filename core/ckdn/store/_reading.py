"""Reading the store: which runs there are, what a reference names, what a run left."""

from __future__ import annotations

import os
import stat

from ckdn._lite.record import Record, record
from ckdn.errors import UsageError, one_line, quote
from ckdn.store._names import parse_name
from ckdn.store._publish import LATEST_FILE, LATEST_LINK, published

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

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
