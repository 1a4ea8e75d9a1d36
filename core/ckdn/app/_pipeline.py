"""One run end to end, as a pipeline of small steps; its tail is how every run is sealed.

One atomic run is::

    lock + run dir -> spawn -> parse -> reconcile -> meta -> digest -> publish -> prune

:func:`run_check` is the whole of it; :func:`seal` is the last five steps on
their own, which every run ends with, whoever ran the process: ``ckdn run``
spawns it itself, the pytest plugin *is* the process, tox's observe mode watched
tox run it, a shard merge read it (through :mod:`ckdn.app.host`). An alias runs its
members in order and stores one aggregate. A host may run everything under its
own names (``run_name``: tox runs ``pytest`` in env ``py312`` as ``pytest@py312``),
with its own base environment (``env``: a nox session's or a tox env's variables)
and its own way to stop a run from another thread (``stop``).
"""

from __future__ import annotations

import os

from ckdn._lite.canonical import canonical
from ckdn._lite.record import Record, record
from ckdn.app._findings import Tap, every_finding
from ckdn.app._policy import blocked_run, child_env, locked, verdict
from ckdn.app._sidecars import list_artifacts, record_source, source_watch
from ckdn.config import Alias, Check, Config
from ckdn.documents import Bounds, build_digest, build_meta
from ckdn.errors import UsageError
from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.reconcile import PASS, SKIPPED, exit_code, reconcile
from ckdn.redact import Redaction
from ckdn.store import Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from ckdn.app._gating import Gated
    from ckdn.documents.types import Aggregate, Digest, Document
    from ckdn.identity import FindingRow
    from ckdn.identity.source_tree import SourceWatch
    from ckdn.parsers.base import Finding
    from ckdn.process import Exit
    from ckdn.process.stop import StopRequest
    from ckdn.store import RunDir

    #: Decides the baseline gate from the run's status and facts.
    Gating = Callable[[str, ParseResult], Gated]

#: The log file of every run dir.
LOG = "full.log"


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
    return Store(config.run.runs_dir, config.cwd, private=config.run.private)


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
              options: Mapping[str, Any], top: int | None,
              max_snippet_lines: int | None = None,
              tap: Callable[[Finding], object] | None = None) -> ParseResult:
    """What the check's parser makes of the finished run in ``run_dir``; never raises.
    ``tap`` is handed every finding as the parser reports it."""
    from ckdn.parsers import get_parser

    ctx = ParseContext(check=name, run_dir=run_dir, cwd=config.cwd, rc=rc, options=options,
                       top=top or config.run.top,
                       max_snippet_lines=(config.run.max_snippet_lines
                                          if max_snippet_lines is None else max_snippet_lines),
                       tap=tap)
    return parse_safely(get_parser(parser_name), ctx)


#: The most findings one run has read again in full (the gate, ``findings.jsonl``).
ALL_FINDINGS = 1_000_000


def parse_safely(parser: Any, ctx: ParseContext) -> ParseResult:
    """Run a parser; one that raises or returns nonsense is a confused parser, never a pass.

    A plugin parser may not guard itself, so the app applies the same guard as
    the built-ins (:mod:`ckdn.parsers.guard`) and checks what comes back.
    """
    from ckdn.parsers.base import guarded

    name = str(getattr(parser, "name", "?"))
    # The lambda looks ``parser.parse`` up inside the guard: a plugin without it is contained.
    result: Any = guarded(name, lambda c: parser.parse(c), ctx)  # noqa: PLW0108
    if not isinstance(result, ParseResult):
        return ParseResult(parser_ok=False, notes=[
            f"parser '{name}' returned {type(result).__name__}, not a ParseResult"])
    return result


def seal(config: Config, store: Store, rd: RunDir, *, check: str, parser: str,
         argv: Sequence[str], exit: Exit, result: ParseResult,
         started_at: float, finished_at: float, log_sha256: str, log_bytes: int,
         top: int | None = None, publish: bool = True,
         notes: Sequence[str] = (), env_keys: Iterable[str] = (),
         gating: Gating | None = None,
         every: Callable[[], Sequence[Finding]] | None = None,
         identities: Sequence[FindingRow] | None = None,  # a shard merge's rows
         source: SourceWatch | None = None, env: Mapping[str, str] | None = None,
         tap: Tap | None = None) -> Outcome:
    """Reconcile, write ``meta.json`` then ``digest.json`` (last, atomically), publish, prune.

    A member of an alias is not published (``publish=False``): ``latest`` is the
    most recent top-level run, and the alias published its own run dir when it began.
    ``notes`` are the host's facts about the run, after the store's and the runner's;
    ``env_keys`` the names the check's ``env`` set (meta.json lists them, never values).
    ``gating`` decides the baseline gate from the verdict (``[run].baseline`` set); the
    gate never changes the status. A red run with findings gets ``findings.jsonl``
    (:mod:`ckdn.app._findings`: from ``tap``, what the parse handed over, when it saw
    them all; ``every`` reads all of them again when the parser kept fewer).
    """
    verdict = reconcile(exit, result)
    redaction = Redaction(config.run.redact, env)
    try:
        gated = gating(verdict.status, result) if gating is not None else None
        if verdict.status != PASS and result.total > 0:
            from ckdn.app._findings import record_findings

            notes = [*notes, *record_findings(store, rd.path, check=check, cwd=config.cwd,
                                              result=result, gated=gated, every=every,
                                              identities=identities, redaction=redaction,
                                              tap=tap)]
    finally:
        if tap is not None:
            tap.discard()
    log_sha256, log_bytes = redaction.sealed_log(os.path.join(rd.path, LOG), store.write_atomic,
                                                 log_sha256, log_bytes)  # [run.redact].full_log
    result = gated.result if gated is not None else result
    if source is not None:
        record_source(store, rd.path, source)
    shown = store.display(rd.path)
    meta = build_meta(check=check, argv=redaction.argv(argv), exit=exit, started_at=started_at,
                      finished_at=finished_at, log_sha256=log_sha256, log_bytes=log_bytes,
                      parser=parser, env_keys=env_keys)
    store.write_atomic(os.path.join(rd.path, "meta.json"), canonical(meta) + b"\n")
    settings = config.run
    bounds = Bounds(top=top or settings.top, max_snippet_lines=settings.max_snippet_lines,
                    log_tail_lines=settings.log_tail_lines)
    artifacts, omitted = list_artifacts(rd.path)
    digest = build_digest(check=check, verdict=verdict, exit=exit, result=result, run_dir=shown,
                          artifacts=artifacts, artifacts_omitted=omitted,
                          log_path=os.path.join(rd.path, LOG),
                          bounds=bounds, notes=[*rd.notes, *exit.notes, *notes],
                          gate=gated.gate if gated is not None else None,
                          baseline=gated.baseline if gated is not None else None,
                          baselined=gated.baselined if gated is not None else (),
                          redaction=redaction)
    store.write_atomic(os.path.join(rd.path, "digest.json"), canonical(digest) + b"\n")
    if publish:
        store.publish(rd.path)
    store.prune(check, settings.keep, holding=rd if rd.locked else None,
                max_age_days=settings.max_age_days, max_bytes=settings.max_bytes)
    return Outcome(digest, exit_code(verdict.status, exit.rc), rd.path)


def store_aggregate(config: Config, aggregate: Aggregate, where: str | None = None) -> str:
    """Store an aggregate in a run dir of its own (named after its alias) and publish it
    as ``latest``; the dir's path.

    The one writer of aggregates: ``ckdn run ALIAS``, ``--all`` and a tox run's
    end-of-run aggregate all go through it. ``where`` is the dir an alias run made
    (and published) when it began; a host's aggregate gets a new one.
    """
    store = store_for(config)
    alias = aggregate["alias"]
    if where is None:
        where = store.new_dir(alias)
    store.write_atomic(os.path.join(where, "aggregate.json"), canonical(aggregate) + b"\n")
    store.publish(where)
    store.prune(alias, config.run.keep, max_age_days=config.run.max_age_days,
                max_bytes=config.run.max_bytes)
    return where


#: The aggregate name of ``ckdn run --all`` (the contract's: ``*``, never a check's name).
ALL = "*"


def _same(name: str) -> str:
    return name


def run(config: Config, name: str, *, extra_args: Sequence[str] = (),
        fail_fast: bool | None = None, env: Mapping[str, str] | None = None,
        stop: StopRequest | None = None, run_name: Callable[[str], str] = _same,
        host_bins: Sequence[str] | None = None) -> Outcome:
    """Run a check or an alias by name.

    ``env`` replaces ``os.environ`` as the base environment; ``stop`` lets a host
    stop the run from another thread, as Ctrl-C would; ``run_name`` maps a check
    or alias name to the name its runs are stored under (its run dirs, its lock,
    its digest's ``check``); ``host_bins`` are the bin directories of the host's
    env (a tox env's, a nox session's virtualenv): a program found on ``PATH``
    outside them is named in a note (:mod:`ckdn.app._whence`).
    """
    target = config.get(name)
    locked(config, (name,))
    if isinstance(target, Alias):
        if extra_args:
            raise UsageError(
                f"extra arguments after -- are not accepted for alias '{name}'; "
                f"pass them to one of its checks ({', '.join(target.members)})"
            )
        members = [config.checks[m] for m in target.members]
        return run_alias(config, name, members,
                         target.fail_fast if fail_fast is None else fail_fast, env=env,
                         stop=stop, run_name=run_name, host_bins=host_bins)
    return run_check(config, target, extra_args=extra_args, env=env, stop=stop,
                     as_name=run_name(target.name), host_bins=host_bins)


def run_all(config: Config, *, fail_fast: bool | None = None,
            env: Mapping[str, str] | None = None, stop: StopRequest | None = None) -> Outcome:
    """``ckdn run --all``: every atomic check in config order (``env``, ``stop``: as `run`)."""
    if not config.checks:
        raise UsageError(f"{_config_name(config)} defines no checks; add a [check.NAME] table")
    locked(config, config.checks)
    return run_alias(config, ALL, list(config.checks.values()), bool(fail_fast), env=env,
                     stop=stop)


def _config_name(config: Config) -> str:
    return os.path.basename(config.path) if config.path else "the configuration"


def run_check(config: Config, check: Check, *, extra_args: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              as_name: str | None = None, publish: bool = True,
              host_bins: Sequence[str] | None = None) -> Outcome:
    """One atomic check, end to end, stored under ``as_name`` (default: its own name);
    ``publish=False`` for an alias's member (see :func:`seal`)."""
    from ckdn.process import run_process, stop_left_running

    name = check.name if as_name is None else as_name
    store = store_for(config)
    with store.begin(name) as rd:
        run_dir = rd.path
        rd.notes.extend(stop_left_running(rd.left_running))  # a dead run's tree, first
        argv = [substitute(a, run_dir) for a in (*check.argv, *extra_args)]
        child = child_env(config, check, name, run_dir, env)
        notes: Sequence[str] = ()
        if host_bins is not None:  # only a host's run asks
            from ckdn.app._whence import host_notes

            notes = host_notes(argv[0], child, str(config.cwd), host_bins)
        log = os.path.join(run_dir, LOG)
        refused = verdict(config, check, argv, run_dir, child)
        source = None if refused is not None else source_watch(config, check)  # beside it
        ran = (blocked_run(log, refused, private=config.run.private) if refused is not None
               else run_process(argv, cwd=config.cwd, env=child, log_path=log,
                                timeout=check.timeout, label=name, stop=stop,
                                on_spawn=rd.record_child, private=config.run.private))
        tap = Tap(run_dir, config.cwd, check=check.name, top=check.top or config.run.top,
                  baseline=config.run.baseline, redaction=Redaction(config.run.redact, child))
        result = (parse_run(config, name, check.parser, run_dir, ran.exit.rc,
                            options=options_for(check, run_dir), top=check.top, tap=tap)
                  if ran.exit.started else ParseResult())
        gating = None
        if config.run.baseline is not None:
            from ckdn.app._gating import gating_for

            gating = gating_for(config, check, run_dir, ran.exit.rc, tap)
        with _EvidenceFirst():
            return seal(config, store, rd, check=name, parser=check.parser, argv=argv,
                        exit=ran.exit, result=result, started_at=ran.started_at,
                        finished_at=ran.finished_at, log_sha256=ran.log_sha256,
                        log_bytes=ran.log_bytes, top=check.top, publish=publish,
                        notes=notes, env_keys=check.env, gating=gating,
                        every=every_finding(config, check, run_dir, ran.exit.rc),
                        source=source, env=child, tap=tap)


def run_alias(config: Config, alias: str, members: Sequence[Check], fail_fast: bool, *,
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              run_name: Callable[[str], str] = _same,
              host_bins: Sequence[str] | None = None) -> Outcome:
    """Run members in order; the aggregate is printed and stored in its own run dir.

    That dir is made and published first, so while the members run (or after the
    series was killed) ``latest`` is this unfinished alias run or an unfinished
    member, never a member's green digest standing in for the whole.
    """
    from ckdn.documents.aggregate import Member, build_aggregate  # lazy: one check needs none

    store = store_for(config)
    where = store.new_dir(run_name(alias))
    results: list[Member] = []
    gates: list[tuple[str, Any]] = []  # (member, its gate or None), with a baseline
    interrupted = False
    try:
        store.publish(where)
        halt = False
        for check in members:
            name = run_name(check.name)
            if halt:
                results.append(Member(check=name, status=SKIPPED))
                gates.append((name, None))
                continue
            outcome = run_check(config, check, env=env, stop=stop, as_name=name, publish=False,
                                host_bins=host_bins)
            doc = outcome.digest
            results.append(Member(check=name, status=doc["status"], rc=doc["rc"],
                                  run_dir=doc["run_dir"]))
            gates.append((name, doc.get("gate")))
            # Ctrl-C (or the host's stop) ends the whole alias whatever fail_fast says.
            interrupted = interrupted or bool(doc.get("interrupted"))
            halt = (fail_fast and doc["status"] != PASS) or interrupted
    except BaseException:
        if not results:  # refused before any member ran: nothing happened, nothing to keep
            store.abandon(where)
        raise  # else the run stays, unfinished: `ckdn show` says so
    gate = None
    if config.run.baseline is not None:
        from ckdn.identity import worst_gate

        gate = worst_gate(gates)
    aggregate = build_aggregate(alias=run_name(alias), members=results, interrupted=interrupted,
                                gate=gate)
    return Outcome(aggregate, int(aggregate["rc"]), store_aggregate(config, aggregate, where))


class _EvidenceFirst:
    """Ignore Ctrl-C while the evidence is written: a second press must not lose the digest.

    Only the main thread can touch signal handlers; elsewhere the host owns them.
    (A class, not ``contextlib.contextmanager``: ``ckdn run`` does not import contextlib.)
    """

    def __enter__(self) -> None:
        import signal

        self._restore: Any = None
        try:
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            return
        # None: a handler set outside Python, which cannot be put back; the default is closest
        self._restore = signal.SIG_DFL if previous is None else previous

    def __exit__(self, *exc_info: object) -> None:
        if self._restore is not None:
            import signal

            signal.signal(signal.SIGINT, self._restore)
