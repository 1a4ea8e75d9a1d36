"""Sealing a run: the end of every pipeline, whoever ran the process.

``ckdn run`` spawns the process itself; the pytest plugin *is* the process, and
tox's observe mode watched tox run the commands. All three end the same way,
here: reconcile the exit with the facts, write ``meta.json`` then ``digest.json``
(last, atomically: it is the finished marker), publish ``latest``, prune. A
host that produced the log itself goes through :class:`HostRun`, so its run
leaves exactly the evidence a ``ckdn run`` would.
"""

from __future__ import annotations

import os
import time

from ckdn._lite.canonical import canonical
from ckdn._lite.record import Record, record
from ckdn.documents import MAX_ARTIFACTS, Bounds, build_digest, build_meta
from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.process import Exit
from ckdn.reconcile import exit_code, reconcile
from ckdn.store import Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from types import TracebackType
    from typing import Any

    from ckdn.config import Check, Config
    from ckdn.documents.types import Aggregate, Digest, Document
    from ckdn.store import RunDir

LOG = "full.log"
_CHUNK = 1 << 20  # characters a host's log text is encoded and written in at a time


@record
class Outcome(Record):
    """What a run produced: the document printed on stdout and the process exit code."""

    __slots__ = ("document", "exit_code", "run_dir")
    document: Document
    exit_code: int
    run_dir: str | None

    def __init__(self, document: Document, exit_code: int, run_dir: str | None = None) -> None:
        self._assign(document, exit_code, run_dir)

    @property
    def status(self) -> str:
        return str(self.document["status"])

    @property
    def digest(self) -> Digest:
        """The document of an atomic run; TypeError for an alias run's aggregate."""
        doc = self.document
        if "alias" in doc:
            raise TypeError(f"alias {doc['alias']!r} produced an aggregate, not a digest")
        return doc


def store_for(config: Config) -> Store:
    return Store(config.run.runs_dir, config.cwd)


def substitute(value: str, run_dir: str) -> str:
    return value.replace("{run_dir}", run_dir)


def options_for(check: Check, run_dir: str) -> dict[str, Any]:
    """Parser options with ``{run_dir}`` substituted in every string."""
    out: dict[str, Any] = {}
    for key, value in check.options.items():
        if isinstance(value, str):
            value = substitute(value, run_dir)
        elif isinstance(value, list):
            value = [substitute(v, run_dir) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out


def parse_run(config: Config, name: str, parser_name: str, run_dir: str, rc: int, *,
              options: Mapping[str, Any], top: int | None) -> ParseResult:
    """What the check's parser makes of the finished run in ``run_dir``; never raises."""
    from ckdn.parsers import get_parser

    ctx = ParseContext(check=name, run_dir=run_dir, cwd=config.cwd, rc=rc, options=options,
                       top=top or config.run.top,
                       max_snippet_lines=config.run.max_snippet_lines)
    return parse_safely(get_parser(parser_name), ctx)


def parse_safely(parser: Any, ctx: ParseContext) -> ParseResult:
    """Run a parser; one that raises or returns nonsense is a confused parser, never a pass.

    A plugin parser may not guard itself, so the app applies the same guard as
    the built-ins (:mod:`ckdn.parsers.guard`) and checks what comes back.
    """
    from ckdn.parsers.guard import guarded

    name = str(getattr(parser, "name", "?"))
    # The lambda looks ``parser.parse`` up inside the guard: a plugin without it is contained.
    result: Any = guarded(name, lambda c: parser.parse(c), ctx)  # noqa: PLW0108
    if not isinstance(result, ParseResult):
        return ParseResult(parser_ok=False, notes=[
            f"parser '{name}' returned {type(result).__name__}, not a ParseResult"])
    return result


def list_artifacts(run_dir: str) -> tuple[list[str], int]:
    """Names in the run dir a reader may open (dirs with a trailing slash), and how many
    more there are beyond the first :data:`~ckdn.documents.MAX_ARTIFACTS`."""
    try:
        entries = sorted(os.scandir(run_dir), key=lambda e: e.name)
    except OSError:
        return [], 0
    names = [e.name + ("/" if e.is_dir() else "") for e in entries
             if e.name != "digest.json" and not e.name.startswith(".")]
    return names[:MAX_ARTIFACTS], max(0, len(names) - MAX_ARTIFACTS)


def seal(config: Config, store: Store, rd: RunDir, *, check: str, parser: str,
         argv: Sequence[str], exit: Exit, result: ParseResult,
         started_at: float, finished_at: float, log_sha256: str, log_bytes: int,
         top: int | None = None, notes: Iterable[str] = ()) -> Outcome:
    """Reconcile, write ``meta.json`` then ``digest.json`` (last, atomically), publish, prune."""
    verdict = reconcile(exit, result)
    shown = store.display(rd.path)
    meta = build_meta(check=check, run_dir=shown, argv=argv, cwd=str(config.cwd), exit=exit,
                      started_at=started_at, finished_at=finished_at, log_sha256=log_sha256,
                      log_bytes=log_bytes, parser=parser, status=verdict.status)
    store.write_atomic(os.path.join(rd.path, "meta.json"), canonical(meta) + b"\n")
    settings = config.run
    bounds = Bounds(top=top or settings.top, max_snippet_lines=settings.max_snippet_lines,
                    log_tail_lines=settings.log_tail_lines)
    artifacts, omitted = list_artifacts(rd.path)
    digest = build_digest(check=check, verdict=verdict, exit=exit, result=result, run_dir=shown,
                          artifacts=artifacts, artifacts_omitted=omitted,
                          log_path=os.path.join(rd.path, LOG),
                          bounds=bounds, notes=[*rd.notes, *exit.notes, *notes])
    store.write_atomic(os.path.join(rd.path, "digest.json"), canonical(digest) + b"\n")
    store.publish(rd.path)
    store.prune(check, settings.keep, holding=rd if rd.locked else None)
    return Outcome(digest, exit_code(verdict.status, exit.rc), rd.path)


def store_aggregate(config: Config, aggregate: Aggregate) -> str:
    """Store an aggregate in a run dir of its own (named after its alias); the dir's path.

    The one writer of aggregates: ``ckdn run ALIAS``, ``--all`` and a tox run's
    end-of-run aggregate all go through it.
    """
    store = store_for(config)
    alias = aggregate["alias"]
    where = store.new_dir(alias)
    store.write_atomic(os.path.join(where, "aggregate.json"), canonical(aggregate) + b"\n")
    store.prune(alias, config.run.keep)
    return where


# -- runs a host produced ------------------------------------------------------------


class HostLog:
    """``full.log`` of a host-made run: text written in bounded chunks, hashed as it goes."""

    def __init__(self, path: str) -> None:
        import hashlib  # lazy: ckdn run hashes its log in the process room

        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
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

    def __init__(self, config: Config, store: Store, rd: RunDir) -> None:
        self.config = config
        self._store = store
        self._rd = rd
        self.name = rd.check
        self.run_dir = rd.path
        self.log_path = os.path.join(rd.path, LOG)
        self.started_at = time.time()
        self._log: HostLog | None = None

    def open_log(self) -> HostLog:
        if self._log is None:
            self._log = HostLog(self.log_path)
        return self._log

    def seal(self, *, argv: Sequence[str], rc: int, duration: float, interrupted: bool = False,
             result: ParseResult | None = None, parser: str = "generic",
             top: int | None = None) -> Outcome:
        """Seal the run: ``rc`` is the host's exit status (130 after Ctrl-C, with
        ``interrupted``); ``result`` the host's facts, else ``parser`` reads the run dir
        (``parser`` is what ``meta.json`` names either way). Refusals are CkdnError."""
        log = self.open_log()  # a host that wrote nothing leaves an empty log
        log_sha256, log_bytes = log.close()
        exit = Exit(rc=rc, interrupted=interrupted, duration=duration)
        if result is None:
            result = parse_run(self.config, self.name, parser, self.run_dir, rc, options={},
                               top=top)
        return seal(self.config, self._store, self._rd, check=self.name, parser=parser,
                    argv=argv, exit=exit, result=result, started_at=self.started_at,
                    finished_at=time.time(), log_sha256=log_sha256, log_bytes=log_bytes,
                    top=top)

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


def begin_host_run(config: Config, name: str) -> HostRun:
    """Take ``name``'s lock and a fresh run dir for a run the host will produce.

    Refused (a one-line CkdnError) when the lock is held or the runs dir cannot
    be written, exactly as ``ckdn run`` would be.
    """
    store = store_for(config)
    return HostRun(config, store, store.begin(name))


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
