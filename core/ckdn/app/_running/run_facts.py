"""What a run leaves for ``ckdn status`` and ``ckdn diff`` to judge it by later: the tree it saw
(``source.json``, one ``git status`` beside the tool) and a green run's facts (``facts.json``),
compared with the last green run's so a run that checked less is named. No subprocess, no json.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from ckdn._lite import canonical
from ckdn.errors import CkdnError
from ckdn.evidence_files import read_regular
from ckdn.process import ended_beside, started_beside

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, Protocol

    from ckdn.config import Check
    from ckdn.store import RunDir, Store

    class _Hash(Protocol):
        def update(self, data: bytes, /) -> None: ...

        def hexdigest(self) -> str: ...

__all__ = ["FACTS_FILE", "MAX_NOTE", "MAX_PATHS", "SCHEMA_FACTS", "SCHEMA_SOURCE", "SOURCE_FILE",
           "SourceState", "SourceWatch", "blob_id", "facts_of", "in_repository", "newest_facts",
           "read_facts", "ready_reading", "reference", "settings_hash", "source_document",
           "weakened", "weakening_note"]

# -- the tree the run saw: source.json ------------------------------------------------
# The tree a run saw: one ``git status`` beside the tool, each path it names hashed as git hashes
# a blob, written as ``source.json`` for ``ckdn status`` (fresh or stale) and ``ckdn diff`` (flaky
# or changed). On every run's path: no ``subprocess``, no ``hashlib``, no ``json``.

# ``git status --porcelain=v2 --branch --untracked-files=all --no-renames -z`` names the
# commit (``HEAD``), the branch and every path that differs from it: modified, staged,
# deleted, or untracked and not ignored. Each such path is recorded with its content as
# git would store it (the blob id, ``sha1`` or ``sha256`` as the repository uses) and the
# blob ``HEAD`` has for it, so a later look can say which files changed, and that a file
# committed since with the content the run saw did not. The tree's hash covers the commit
# and every named path with its content: two runs with equal hashes ran on the same code.
# Ignored files (build output, caches) are not part of the tree. git runs in its own
# session while the tool runs (its output spooled to an unlinked file, so nothing blocks
# on a pipe) and is read when the tool has finished; no git, no repository, a git that
# fails or takes longer than :data:`_TIMEOUT`: no state, never an error.

SOURCE_FILE = "source.json"
SCHEMA_SOURCE = "ckdn.source/2"
#: Paths recorded one by one; beyond them only the tree's hash says whether it changed.
MAX_PATHS = 1000
_TIMEOUT = 10.0
_BLOCK = 1 << 20
_MAX_STATUS = 64 << 20  # a status longer than this is not read: no state
_ARGS = ("status", "--porcelain=v2", "--branch", "--untracked-files=all", "--no-renames",
         "-z")


def in_repository(cwd: str) -> bool:
    """Whether ``cwd`` is inside a git work tree as far as a few ``lstat`` calls can tell
    (a ``.git`` above it, or ``GIT_DIR`` set): outside one, no git is started at all."""
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return True
    return _top(os.path.abspath(cwd)) is not None


def _top(path: str) -> str | None:
    """The work tree's top (where ``.git`` is), which status paths are relative to."""
    here = path
    while not os.path.lexists(os.path.join(here, ".git")):
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    return here


class SourceState:
    """What ``git status`` said of the tree, with content hashes: ``head`` (None before the
    first commit), ``branch`` (None: detached), ``paths`` (path -> (the work tree's blob id
    or None for absent, ``HEAD``'s blob id or None)), ``omitted`` paths beyond them, ``tree``."""

    __slots__ = ("branch", "head", "omitted", "paths", "tree")

    def __init__(self, head: str | None, branch: str | None,
                 paths: Mapping[str, tuple[str | None, str | None]], omitted: int,
                 tree: str) -> None:
        self.head, self.branch, self.paths, self.omitted, self.tree = (
            head, branch, paths, omitted, tree)

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schema": SCHEMA_SOURCE, "tree": self.tree, "head": self.head,
                               "branch": self.branch,
                               "paths": {p: list(v) for p, v in self.paths.items()}}
        if self.omitted:
            doc["paths_omitted"] = self.omitted
        return doc


def source_document(state: SourceState) -> bytes:
    """``source.json``'s bytes."""
    return canonical(state.document()) + b"\n"


class SourceWatch:
    """``git status`` of the tree, started beside the tool and read when it ends.

    ``spool_dir`` is a directory the watch may make its (at once unlinked) output file in:
    the run dir of a run. :meth:`result` hashes what git named (read then).
    """

    __slots__ = ("_cwd", "_fd", "_pid")

    def __init__(self, cwd: str, spool_dir: str) -> None:
        self._cwd = os.path.abspath(cwd)
        self._pid = 0
        self._fd = -1
        if not in_repository(self._cwd):
            return
        try:
            name = os.path.join(spool_dir, f".git-status.{os.getpid()}.{os.urandom(4).hex()}")
            self._fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            os.unlink(name)
            env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, self._fd, 1),
                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
            self._pid = os.posix_spawnp("git", ["git", "-C", self._cwd, *_ARGS], env,
                                        file_actions=actions, setsid=True)
            started_beside(self._pid)  # not the check's: the tree's stop passes it by
        except (OSError, AttributeError):  # no git, no posix_spawnp, an unwritable run dir
            self._close()

    def discard(self) -> None:
        """Stop git and drop its output: a run that ended before its state was read."""
        pid, self._pid = self._pid, 0
        if pid:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:  # gone already, or reaped elsewhere
                pass
            ended_beside(pid)
        self._close()

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def result(self) -> SourceState | None:
        """The tree's state, or ``None`` when git cannot say."""
        pid, self._pid = self._pid, 0
        try:
            if not pid:
                return None
            exited = _finished(pid)
            ended_beside(pid)
            if not exited:
                return None
            out = _read_all(self._fd)
        finally:
            self._close()
        if out is None:
            return None
        return state_of(out, self._cwd)


def _finished(pid: int) -> bool:
    """Wait for git (at most :data:`_TIMEOUT`); whether it exited 0."""
    deadline = time.monotonic() + _TIMEOUT
    pause = 0.0002
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status) == 0
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
    except ChildProcessError:  # reaped elsewhere (a host's SIGCHLD handler): not known
        return False


def _read_all(fd: int) -> bytes | None:
    size = os.fstat(fd).st_size
    if size > _MAX_STATUS:
        return None
    os.lseek(fd, 0, os.SEEK_SET)
    parts: list[bytes] = []
    while block := os.read(fd, _BLOCK):
        parts.append(block)
    return b"".join(parts)


def state_of(out: bytes, cwd: str) -> SourceState | None:
    """The state ``git status``'s output names, each path's content hashed now."""
    head, branch, entries = parse_status(out)
    if head is None and not entries and branch is None:
        return None
    top = _top(cwd) or cwd
    sha256 = head is not None and len(head) == 64
    tree = _hasher(sha256=True)
    tree.update(b"head\0" + (head or "").encode())
    paths: dict[str, tuple[str | None, str | None]] = {}
    for path in sorted(entries):
        work = blob_id(os.path.join(top, path), sha256=sha256)
        tree.update(f"\0path\0{path}\0{work}".encode("utf-8", "surrogateescape"))
        if len(paths) < MAX_PATHS:
            paths[path] = (work, entries[path])
    return SourceState(head, branch, paths, len(entries) - len(paths), tree.hexdigest())


_ZERO = frozenset("0")


def parse_status(out: bytes) -> tuple[str | None, str | None, dict[str, str | None]]:
    """The commit, the branch and each named path with ``HEAD``'s blob for it (None: not in
    ``HEAD``; ``"?"``: unmerged, not known) from ``git status --porcelain=v2 -z``, bytecode
    caches left out. Paths are the repository's, relative to its top."""
    head: str | None = None
    branch: str | None = None
    entries: dict[str, str | None] = {}
    for raw in out.split(b"\0"):
        entry = raw.decode("utf-8", "surrogateescape")
        if entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid "):]
            head = None if oid == "(initial)" else oid
        elif entry.startswith("# branch.head "):
            name = entry[len("# branch.head "):]
            branch = None if name == "(detached)" else name
        elif entry[:2] == "1 ":
            fields = entry.split(" ", 8)
            if len(fields) == 9:
                entries[fields[8]] = None if set(fields[6]) <= _ZERO else fields[6]
        elif entry[:2] == "u ":
            fields = entry.split(" ", 10)
            if len(fields) == 11:
                entries[fields[10]] = "?"
        elif entry[:2] == "? " and not _bytecode(entry[2:]):
            entries[entry[2:]] = None
    return head, branch, entries


def _bytecode(path: str) -> bool:
    """Whether an untracked path is Python's own bytecode cache, which the interpreter writes
    on import, so a run would change the tree it ran on (a repo that does not ignore it)."""
    return (path.endswith((".pyc", ".pyo")) or path.startswith("__pycache__/")
            or "/__pycache__/" in path)


def _hasher(*, sha256: bool) -> _Hash:
    """The builtin SHA module: loading OpenSSL (``hashlib``) costs more than a few files."""
    if not sha256:
        names: tuple[tuple[str, str], ...] = (("_sha1", "sha1"),)
    elif sys.version_info >= (3, 12):
        names = (("_sha2", "sha256"), ("_sha256", "sha256"))
    else:
        names = (("_sha256", "sha256"), ("_sha2", "sha256"))
    for module, function in names:
        try:
            made: _Hash = getattr(__import__(module), function)()
        except ImportError:
            continue
        return made
    import hashlib  # here: a Python built without the builtin modules

    return hashlib.sha256() if sha256 else hashlib.sha1()  # noqa: S324 - git's blob id


def blob_id(path: str, *, sha256: bool = False) -> str | None:
    """The id git gives the file's content as a blob (a symlink: its target), None when
    there is no file; a directory or an unreadable file gets a mark that no blob has."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable"
    digest = _hasher(sha256=sha256)
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(path))
        digest.update(b"blob %d\0" % len(target) + target)
        return digest.hexdigest()
    if not stat.S_ISREG(info.st_mode):
        return "directory" if stat.S_ISDIR(info.st_mode) else "special"
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            digest.update(b"blob %d\0" % size)
            read = 0
            while block := handle.read(_BLOCK):
                digest.update(block)
                read += len(block)
    except OSError:
        return "unreadable"
    if read != size:  # written while it was read: not the content of any one moment
        return "changing"
    return digest.hexdigest()


# -- a green run's facts, and weakening: facts.json ----------------------------------------
# A green run with less to check than the last green run of its check on the same branch is named:
# fewer tests, more skipped, a lower threshold, fewer files, another command. Each green run
# leaves its few facts in ``facts.json``, so the next one compares without reading any log.

FACTS_FILE = "facts.json"
SCHEMA_FACTS = "ckdn.facts/1"
#: Counts in ``summary.counts`` that say how much a test run checked (more is stronger)...
_FEWER_IS_WEAKER = ("tests",)
#: ...and how much it left out (more is weaker).
_MORE_IS_WEAKER = ("skipped", "xfailed", "deselected")
#: Parsers whose ``summary.counts.files`` is the number of files checked (ruff's is not:
#: it counts files with findings).
_FILE_COUNTERS = ("mypy", "pyright")
#: A check's options that are thresholds: lower is weaker.
_THRESHOLDS = ("fail_under", "score_fail_under")
#: The note's length at most, and a command's within it.
MAX_NOTE = 600
_MAX_COMMAND = 120
_KEPT_COMMAND = 2000  # of the command in facts.json
#: Runs of the check looked at for its last green run on this branch, newest first.
_LOOKBACK = 50


def settings_hash(check: Check | None, extra_args: Sequence[str] = (),
                  argv: Sequence[str] = ()) -> str:
    """A hash of what decides what the check checks: its command as configured, parser,
    options, env (values hashed, never shown) and the extra arguments of this run."""
    value: Any = (["host", list(argv)] if check is None else
                  [list(check.argv), check.parser, dict(check.options), dict(check.env),
                   list(extra_args)])
    digest = _hasher(sha256=True)  # its module's name first: a failed import costs a path scan
    digest.update(canonical(value))
    return str(digest.hexdigest())


def facts_of(*, check: str, parser: str, branch: str | None, settings: str,
             command: str, options: Mapping[str, Any], summary: Mapping[str, Any]
             ) -> dict[str, Any]:
    """``facts.json`` of a green run: how much it checked, and with what."""
    counts = summary.get("counts")
    counts = counts if isinstance(counts, dict) else {}
    measures = {key: counts[key] for key in (*_FEWER_IS_WEAKER, *_MORE_IS_WEAKER)
                if _is_count(counts.get(key))}
    if parser in _FILE_COUNTERS and _is_count(counts.get("files")):
        measures["files"] = counts["files"]
    thresholds = {key: options[key] for key in _THRESHOLDS
                  if isinstance(options.get(key), int | float)
                  and not isinstance(options.get(key), bool)}
    return {"schema": SCHEMA_FACTS, "check": check, "branch": branch, "settings": settings,
            "command": _cut(command, _KEPT_COMMAND), "measures": measures,
            "thresholds": thresholds}


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [+{len(text) - limit} chars]"


def weakened(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What ``now`` checks less than ``before`` did, one phrase each (empty: not weaker)."""
    said: list[str] = []
    was, has = _mapping(before.get("measures")), _mapping(now.get("measures"))
    for key in (*_FEWER_IS_WEAKER, "files"):
        if key in was and key not in has:
            said.append(f"no {_unit(key)} counted (it was {was[key]})")
        elif key in was and has[key] < was[key]:
            said.append(f"{was[key] - has[key]} fewer {_unit(key)} ({was[key]} -> {has[key]})")
    for key in _MORE_IS_WEAKER:
        if has.get(key, 0) > was.get(key, 0):
            said.append(f"{has[key] - was.get(key, 0)} more {key} "
                        f"({was.get(key, 0)} -> {has[key]})")
    was_t, has_t = _mapping(before.get("thresholds")), _mapping(now.get("thresholds"))
    for key in _THRESHOLDS:
        if key in was_t and key not in has_t:
            said.append(f"{key} removed (it was {was_t[key]:g})")
        elif key in was_t and has_t[key] < was_t[key]:
            said.append(f"{key} lowered ({was_t[key]:g} -> {has_t[key]:g})")
    if before.get("settings") != now.get("settings"):
        if before.get("command") != now.get("command"):
            was_c, has_c = _where_they_differ(str(before.get("command")), str(now.get("command")))
            said.append(f"the command changed ({was_c} -> {has_c})")
        else:
            said.append("the check's options, env or extra arguments changed")
    return said


def _where_they_differ(before: str, now: str) -> tuple[str, str]:
    """The two commands from the word before their first difference on, each cut."""
    a, b = before.split(" "), now.split(" ")
    same = 0
    while same < min(len(a), len(b)) and a[same] == b[same]:
        same += 1
    start = max(0, same - 1)
    lead = "... " if start else ""
    return (_cut(lead + " ".join(a[start:]), _MAX_COMMAND),
            _cut(lead + " ".join(b[start:]), _MAX_COMMAND))


def _unit(key: str) -> str:
    return "files checked" if key == "files" else key


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def weakening_note(reference_run: str, phrases: Sequence[str]) -> str:
    """The digest's note: what changed since which run, within :data:`MAX_NOTE`."""
    return _cut(f"weakened since the last green run {reference_run}: " + "; ".join(phrases),
                MAX_NOTE)


def read_facts(run_dir: str) -> dict[str, Any] | None:
    """A run's ``facts.json`` (a green run's), None when absent or not one."""
    try:
        data = read_regular(os.path.join(run_dir, FACTS_FILE), 1 << 16)
    except OSError:
        return None
    doc = _loads(data)
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA_FACTS else None


class _Decoding:
    """What json's C scanner reads off its decoder (``json.decoder.JSONDecoder``'s defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, Any] = {}  # noqa: RUF012 - the scanner's own attribute name

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.lower())  # NaN, Infinity: never written by ckdn; read as json would


#: json's own C scanner once loaded (None where it is missing): importing json costs a
#: tenth of a trivial run (its decoder), and ``_json`` is a shared library to load.
_scanner: list[Any] = []


def ready_reading() -> None:
    """Load what reading ``facts.json`` takes (``_json``): a run asks while its check's
    command runs, so the load uses a second core instead of following the exit."""
    if not _scanner:
        try:
            from _json import make_scanner  # here: the load is what ready_reading times

            _scanner.append(make_scanner)
        except ImportError:  # pragma: no cover - CPython always has _json
            _scanner.append(None)


def _loads(data: bytes) -> Any:
    """``json.loads`` of a small document ckdn wrote, by json's scanner (None: not JSON)."""
    ready_reading()
    try:
        text = data.decode("utf-8")
        if _scanner[0] is None:  # pragma: no cover - CPython always has _json
            import json  # here: only where the C scanner is missing

            return json.loads(text)
        value, end = _scanner[0](_Decoding())(text, 0)
    except (ValueError, StopIteration, RecursionError):  # not UTF-8, not JSON, nested too deep
        return None
    return value if not text[end:].strip() else None


def reference(store: Store, name: str, this_run: str, branch: str | None,
              newest: Sequence[tuple[str, dict[str, Any]] | None] = ()
              ) -> tuple[str, dict[str, Any]] | None:
    """The newest earlier green run of ``name`` on ``branch`` and its facts: the runs'
    order from their names alone (the check's lock serializes them), each looked at only
    until one answers (not a stat of every run dir, every run). ``newest``, when given,
    holds what :func:`newest_facts` answered for this run: no run with facts (None), or
    the first one, which is the answer when its branch is this one."""
    if newest:
        first = newest[0]
        if first is None or first[1].get("branch") == branch:
            return first
    return _first_facts(store, name, this_run, lambda facts: facts.get("branch") == branch)


def newest_facts(store: Store, name: str, this_run: str, holding: RunDir | None = None
                 ) -> tuple[str, dict[str, Any]] | None:
    """The newest earlier run of ``name`` with facts, whatever its branch: read while the
    check's command runs (it may not change them: the check's lock is held), so that
    :func:`reference` need not read the runs dir again after it."""
    return _first_facts(store, name, this_run, lambda facts: True, holding)


def _first_facts(store: Store, name: str, this_run: str,
                 wanted: Callable[[dict[str, Any]], bool], holding: RunDir | None = None
                 ) -> tuple[str, dict[str, Any]] | None:
    try:
        names = store.run_names(name, holding)
    except CkdnError:  # an unreadable runs dir: nothing to compare with
        return None
    for run_name in names[:_LOOKBACK]:
        path = os.path.join(store.runs_dir, run_name)
        if path == this_run or not store.finished(path):
            continue  # an unfinished run's facts.json may not be durable: never read
        facts = read_facts(path)
        if facts is not None and wanted(facts):
            return run_name, facts
    return None
