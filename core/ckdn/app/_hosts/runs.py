"""Runs a host produced itself (pytest is the process, tox ran the commands): their log,
lock and seal, through the same steps as ``ckdn run`` after the spawn
(:data:`~ckdn.app._running.steps.HOST_STEPS`), so they leave exactly its evidence.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time

from ckdn.app._running.run_facts import SourceWatch
from ckdn.app._running.steps import (
    HOST_STEPS,
    LOG,
    ChangeRequest,
    Outcome,
    Run,
    execute,
    store_for,
)
from ckdn.errors import CkdnError
from ckdn.parsers.pytest_evidence import (
    EVIDENCE_FILE,
    PROGRESS_FILE,
    encode_evidence,
    encode_progress,
)
from ckdn.process import Exit
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import TracebackType

    from ckdn.app._running.imported import ImportedRun
    from ckdn.config import Config
    from ckdn.identity import FindingRow
    from ckdn.parsers.base import ParseResult
    from ckdn.store import RunDir, Store

__all__ = ["RC_TERMINATED", "HostLog", "HostRun", "ProgressLog", "begin_host_run",
           "write_evidence"]

_CHUNK = 1 << 20  # characters a host's log text is encoded and written in at a time
#: The exit code of a run stopped by SIGTERM (128 + 15), as ckdn's runner reports it.
RC_TERMINATED = 143


class HostLog:
    """``full.log`` of a host-made run: text written in bounded chunks, hashed as it goes."""

    def __init__(self, path: str, *, private: bool = True) -> None:
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
             outcomes: Mapping[str, str] | None = None,
             durations: Mapping[str, float] | None = None,
             change: ChangeRequest | None = None,
             imported: ImportedRun | None = None,
             settings_argv: Sequence[str] | None = None) -> Outcome:
        """Seal the run: ``rc`` is the host's exit status (130 after Ctrl-C, with
        ``interrupted``); ``result`` the host's facts, else ``parser`` reads the run dir
        (``parser`` is what ``meta.json`` names either way). ``gated``: the run is one
        of the check the baseline keys by this run's name, so with ``[run].baseline`` set
        its digest carries the gate (the pytest plugin). ``identities``: the fingerprints
        of ``result``'s findings, one each, when the host has them (a shard merge keeps
        the shards'). ``outcomes``: every test's outcome by node id, when the host saw
        them all (the pytest plugin), recorded in ``tests.jsonl`` for ``ckdn diff`` and
        ``ckdn merge``, with each test's seconds from ``durations`` (for ``ckdn plan``).
        ``change``: gate the run by a diff (the pytest plugin's ``--ckdn-diff-base``), as
        ``ckdn run --diff-base`` does. ``imported``: the run joins imported runs (a merge of
        imports): its status is an import's and its rc null. ``settings_argv``: ``argv``
        less what names only the evidence (a merge's shards), for ``facts.json``.
        Refusals are CkdnError."""
        log = self.open_log()  # a host that wrote nothing leaves an empty log
        log_sha256, log_bytes = log.close()
        if outcomes is not None:
            # lazy: tests.jsonl's room reads JUnit reports too; a host loads it at its seal
            from ckdn.app._stored.outcomes import record_outcomes

            try:
                record_outcomes(self._store, self.run_dir, self.name, outcomes, durations)
            except CkdnError as exc:  # a record beside the digest: never the digest's loss
                del exc
        run = Run(self.config, self.name, parser=parser, top=top, store=self._store)
        run.run_dir, run.argv, run.source = self._rd, list(argv), self._source
        run.exit = Exit(rc=rc, interrupted=interrupted, duration=duration)
        run.started_at, run.finished_at = self.started_at, time.time()
        run.log_sha256, run.log_bytes = log_sha256, log_bytes
        run.result, run.gated, run.identities = result, gated, identities
        run.change, run.imported = change, imported
        run.settings_argv = settings_argv
        return execute(run, HOST_STEPS).outcome

    def release(self) -> None:
        """Drop the lock (idempotent); a run released unsealed stays unfinished."""
        if self._log is not None:
            self._log.close()
        if self._source is not None:  # unsealed: its git status is not waited for
            self._source.discard()
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
    if not tests:
        return HostRun(config, store, rd)
    return HostRun(config, store, rd, SourceWatch(config.cwd, rd.path))


def write_evidence(run_dir: str, result: ParseResult, exitstatus: int) -> str:
    """Write the pytest plugin's evidence into the outer ``ckdn run``'s run dir; its path.

    Atomic and fsynced like every document ckdn writes: the outer run's parser
    sees no file or the whole file. Raises ``OSError``.
    """
    path = os.path.join(run_dir, EVIDENCE_FILE)
    write_atomic(path, encode_evidence(result, exitstatus))
    return path


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
