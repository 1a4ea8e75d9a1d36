"""The door for a host that produces a run itself: the pytest plugin, tox's observe mode.

pytest *is* the process of a ``pytest --ckdn-digest`` session, and tox runs an
env's commands itself; neither goes through ckdn's runner, and both must leave
exactly the evidence a ``ckdn run`` leaves. So a host takes the run's lock and
run dir with :func:`begin_host_run`, writes the log through :class:`HostLog`
while its process runs, and seals the run once, with its own facts or a
parser's (:meth:`HostRun.seal`). Under an outer ``ckdn run`` the pytest plugin
hands its facts over instead (:func:`write_evidence`), and keeps a progress line
there as tests start and end (:class:`ProgressLog`), so that a pytest killed
before it could hand anything over still names the test it was running. A host
that collects runs
of its own into one aggregate stores it with :func:`store_aggregate`.

The rules a host applies to facts it gathered itself are decided in the core,
once, and re-exported here: zero tests is not green (:func:`no_tests_gate`),
pytest's max-warnings (:func:`max_warnings_gate`), coverage thresholds
(:func:`coverage_gates`). So is what a host needs to build those facts.
"""

from __future__ import annotations

import os
import time

from ckdn.app._ci import GITHUB_ENV, github_reporting, report_to_github
from ckdn.app._gating import ALL_FINDINGS
from ckdn.app._pipeline import LOG, Outcome, parse_run, seal, store_aggregate, store_for
from ckdn.documents.aggregate import Member, build_aggregate
from ckdn.parsers.base import Finding, ParseResult, Snippet, cap_line
from ckdn.parsers.gates import (
    ALLOW_NO_TESTS_HINT,
    MAX_WARNINGS_STATUS,
    NO_TESTS_COLLECTED_STATUS,
    CoverageFacts,
    coverage_gates,
    max_warnings_gate,
    no_tests_collected,
    no_tests_gate,
    stopped_early,
)
from ckdn.parsers.pytest_order import (
    INTERNAL,
    OUTSIDE,
    PHASES,
    TEST,
    Smallest,
    numbered,
    order_key,
)
from ckdn.process import RC_INTERRUPTED, Exit
from ckdn.process.stop import StopRequest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import TracebackType

    from ckdn.config import Config
    from ckdn.identity import FindingRow
    from ckdn.identity.source_tree import SourceWatch
    from ckdn.parsers.gates import WorstFiles
    from ckdn.store import RunDir, Store

__all__ = [
    "ALLOW_NO_TESTS_HINT",
    "ALL_FINDINGS",
    "GITHUB_ENV",
    "INTERNAL",
    "MAX_WARNINGS_STATUS",
    "NO_TESTS_COLLECTED_STATUS",
    "OUTSIDE",
    "PHASES",
    "RC_INTERRUPTED",
    "RC_TERMINATED",
    "TEST",
    "CoverageFacts",
    "Finding",
    "HostLog",
    "HostRun",
    "Member",
    "ParseResult",
    "ProgressLog",
    "Smallest",
    "Snippet",
    "StopRequest",
    "begin_host_run",
    "build_aggregate",
    "cap_line",
    "coverage_gates",
    "coverage_worst_files",
    "github_reporting",
    "max_warnings_gate",
    "no_tests_collected",
    "no_tests_gate",
    "numbered",
    "order_key",
    "report_to_github",
    "stopped_early",
    "store_aggregate",
    "worse_outcome",
    "write_evidence",
]

_CHUNK = 1 << 20  # characters a host's log text is encoded and written in at a time
#: The exit code of a run stopped by SIGTERM (128 + 15), as ckdn's runner reports it.
RC_TERMINATED = 143


class HostLog:
    """``full.log`` of a host-made run: text written in bounded chunks, hashed as it goes."""

    def __init__(self, path: str, *, private: bool = True) -> None:
        import hashlib  # lazy: ckdn run hashes its log in the process room

        self.path = path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0),
                     0o600 if private else 0o666)
        self._file = open(fd, "wb")  # noqa: SIM115 - closed by close()
        self._sha = hashlib.sha256()
        self.size = 0
        self.closed = False

    def write(self, text: str) -> None:
        if self.closed:
            return
        for start in range(0, len(text), _CHUNK):
            data = text[start:start + _CHUNK].encode("utf-8", "backslashreplace")
            self._file.write(data)
            self._sha.update(data)
            self.size += len(data)

    def close(self) -> tuple[str, int]:
        """Close the file; its sha256 (hex) and size in bytes."""
        if not self.closed:
            self.closed = True
            self._file.close()
        return self._sha.hexdigest(), self.size


class HostRun:
    """A run whose process and log a host produced, sealed as ``ckdn run`` seals its own.

    Made by :func:`begin_host_run`, which takes the check's lock and run dir;
    the host writes the log through :meth:`open_log` while its process runs,
    then calls :meth:`seal` once with the exit status and either its own facts
    (``result``) or the name of the parser that reads the run dir. The lock is
    held until :meth:`release` (or the end of a ``with`` block).
    """

    def __init__(self, config: Config, store: Store, rd: RunDir,
                 source: SourceWatch | None = None) -> None:
        self.config = config
        self._source = source
        self._store = store
        self._rd = rd
        self.name = rd.check
        self.run_dir = rd.path
        self.log_path = os.path.join(rd.path, LOG)
        self.started_at = time.time()
        self._log: HostLog | None = None

    def open_log(self) -> HostLog:
        if self._log is None:
            self._log = HostLog(self.log_path, private=self.config.run.private)
        return self._log

    def seal(self, *, argv: Sequence[str], rc: int, duration: float, interrupted: bool = False,
             result: ParseResult | None = None, parser: str = "generic",
             top: int | None = None, gated: bool = False,
             identities: Sequence[FindingRow] | None = None,
             outcomes: Mapping[str, str] | None = None) -> Outcome:
        """Seal the run: ``rc`` is the host's exit status (130 after Ctrl-C, with
        ``interrupted``); ``result`` the host's facts, else ``parser`` reads the run dir
        (``parser`` is what ``meta.json`` names either way). ``gated``: the run is one
        of the check the baseline keys by this run's name, so with ``[run].baseline`` set
        its digest carries the gate (the pytest plugin). ``identities``: the fingerprints
        of ``result``'s findings, one each, when the host has them (a shard merge keeps
        the shards'). ``outcomes``: every test's outcome by node id, when the host saw
        them all (the pytest plugin), recorded in ``tests.jsonl`` for ``ckdn diff`` and
        ``ckdn merge``. Refusals are CkdnError."""
        log = self.open_log()  # a host that wrote nothing leaves an empty log
        log_sha256, log_bytes = log.close()
        exit = Exit(rc=rc, interrupted=interrupted, duration=duration)
        if result is None:
            result = parse_run(self.config, self.name, parser, self.run_dir, rc, options={},
                               top=top)
        if outcomes is not None:
            from ckdn.app._outcomes import record_outcomes
            from ckdn.errors import CkdnError

            try:
                record_outcomes(self._store, self.run_dir, self.name, outcomes)
            except CkdnError as exc:  # a record beside the digest: never the digest's loss
                del exc
        gating = None
        if gated and self.config.run.baseline is not None:
            from ckdn.app._gating import host_gating

            gating = host_gating(self.config, self.name, rc)
        return seal(self.config, self._store, self._rd, check=self.name, parser=parser,
                    argv=argv, exit=exit, result=result, started_at=self.started_at,
                    finished_at=time.time(), log_sha256=log_sha256, log_bytes=log_bytes,
                    top=top, gating=gating, identities=identities, source=self._source)

    def release(self) -> None:
        """Drop the lock (idempotent); a run released unsealed stays unfinished."""
        if self._log is not None:
            self._log.close()
        self._rd.release()

    def __enter__(self) -> HostRun:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def begin_host_run(config: Config, name: str, *, tests: bool = False) -> HostRun:
    """Take ``name``'s lock and a fresh run dir for a run the host will produce.

    ``tests``: the host runs tests (the pytest plugin), so the run records the state
    of the source tree it ran on, as a test check's ``ckdn run`` does (``source.json``,
    from a ``git status`` started now). Refused (a one-line CkdnError) when the lock
    is held or the runs dir cannot be written, exactly as ``ckdn run`` would be.
    """
    store = store_for(config)
    rd = store.begin(name)
    source = None
    if tests:
        from ckdn.identity.source_tree import SourceWatch

        source = SourceWatch(config.cwd)
    return HostRun(config, store, rd, source)


def worse_outcome(a: str, b: str) -> str:
    """The worse of two test outcomes (``passed`` < ``skipped`` < ``xfailed`` < ``failed``
    < ``error``): a test's outcome over its phases, as a JUnit report's reader decides it."""
    from ckdn.parsers.outcomes import worse

    return worse(a, b)


def write_evidence(run_dir: str, result: ParseResult, exitstatus: int) -> str:
    """Write the pytest plugin's evidence into the outer ``ckdn run``'s run dir; its path.

    Atomic and fsynced like every document ckdn writes: the outer run's parser
    sees no file or the whole file. Raises ``OSError``.
    """
    from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, encode_evidence
    from ckdn.store import write_atomic

    path = os.path.join(run_dir, EVIDENCE_FILE)
    write_atomic(path, encode_evidence(result, exitstatus))
    return path


def coverage_worst_files(path: str, *, cwd: str, top: int,
                         preview: int | None = None) -> WorstFiles | str:
    """The worst-covered files of the coverage.py JSON report a host wrote (the pytest
    plugin, from pytest-cov's data), read as the ``coverage`` parser reads its report."""
    from ckdn.parsers.coverage_report import worst_files  # lazy: only a missed gate asks

    return worst_files(path, cwd=cwd, top=top, preview=preview)


class ProgressLog:
    """The pytest plugin's progress line in an outer run dir, rewritten in place as tests run.

    One ``pwrite`` at offset 0 per update, padded with spaces to the longest line
    written so far, so the file always holds one whole line (no truncate, no
    rename, no ``fsync``: what a killed process wrote is already the kernel's).
    Created without following a symlink and only as a regular file; ``OSError``
    otherwise. The ``pytest`` parser reads it when the session left no evidence
    (:mod:`ckdn.parsers.pytest_evidence`).
    """

    def __init__(self, run_dir: str) -> None:
        import stat

        from ckdn.parsers.pytest_evidence import PROGRESS_FILE, encode_progress

        self._encode = encode_progress
        self.path = os.path.join(run_dir, PROGRESS_FILE)
        flags = (os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        fd = os.open(self.path, flags, 0o600)  # in a run dir: the host's own, like the log
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{self.path} is not a regular file")
            os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self._size = 0

    def update(self, running: Sequence[str], started: int, finished: int, findings: int) -> None:
        if self._fd is None:
            return
        data = self._encode(running, started, finished, findings)
        size = len(data)
        if size < self._size:
            data += b" " * (self._size - size)
        os.pwrite(self._fd, data, 0)
        self._size = max(self._size, size)

    def close(self, *, remove: bool) -> None:
        """Stop writing; ``remove`` once the final evidence is safely written."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        if remove:
            try:
                os.unlink(self.path)
            except OSError as exc:  # already gone, or the dir went: nothing left to clean up
                del exc
