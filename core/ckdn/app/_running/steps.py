"""A run of a check is one value (:class:`Run`) handed through the named steps of
:data:`RUN_STEPS`; host-made runs and shard merges enter after the spawn (:data:`HOST_STEPS`).
Adding a step is one function and one entry in the tuple.
"""

from __future__ import annotations

import os
import time

from ckdn._lite import Record, canonical, record
from ckdn.app._running.parsing import FindingTap, options_for, parse_run, read_again, substitute
from ckdn.app._running.policy import blocked_run, child_env, locked, verdict
from ckdn.app._running.run_facts import (
    FACTS_FILE,
    SOURCE_FILE,
    SourceWatch,
    facts_of,
    newest_facts,
    ready_reading,
    reference,
    settings_hash,
    source_document,
    weakened,
    weakening_note,
)
from ckdn.config import Alias, Check, Config
from ckdn.documents import MAX_ARTIFACTS, Bounds, build_change, build_digest, build_meta
from ckdn.errors import CkdnError, UsageError
from ckdn.parsers.base import ParseResult
from ckdn.process import RC_NOT_FOUND, Exit, run_process, stop_left_running
from ckdn.reconcile import PASS, SKIPPED, exit_code, reconcile, reconcile_import
from ckdn.redact import Redaction
from ckdn.store import Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from ckdn.app._running.gate import Gated
    from ckdn.app._running.importing import ImportedRun
    from ckdn.app._running.run_facts import SourceState
    from ckdn.app._running.scope import LoadedChange
    from ckdn.documents.types import Aggregate, ChangeDoc, Digest, Document
    from ckdn.identity import FindingRow
    from ckdn.identity.git_base import BaseTree
    from ckdn.process.stop import StopRequest
    from ckdn.reconcile import Verdict
    from ckdn.store import RunDir

    #: One step of a run: it reads what the steps before it set and sets its own part.
    Step = Callable[["Run"], "Run"]
else:  # the C module that `signal` wraps in enums: no enum, functools, collections
    import _signal as signal

__all__ = ["ALL", "HOST_STEPS", "IMPORT_STEPS", "LOG", "RUN_STEPS", "ChangeRequest", "Outcome",
           "Run", "execute", "run", "run_alias", "run_all", "run_check", "store_aggregate",
           "store_for"]

#: The log file of every run dir.
LOG = "full.log"
#: The sidecar of a run a diff-scoped gate judged (``ckdn.change/1``): the change itself.
CHANGE_FILE = "change.json"
#: The aggregate name of ``ckdn run --all`` (the contract's: ``*``, never a check's name).
ALL = "*"


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


class ChangeRequest:
    """What a caller asks of a diff-scoped gate: the diff (a file, ``-`` for stdin) or the
    git ref whose merge base with ``HEAD`` is the base (or both), and the scope (None: the
    config's ``[run].diff_scope``). ``base_argv`` and ``base_parser`` are how a host's
    run (one ckdn did not spawn) is run again on the base tree. The change is read once,
    by the first run that asks (:meth:`loaded`): an alias's members share it."""

    __slots__ = ("_loaded", "base", "base_argv", "base_parser", "diff", "scope")

    def __init__(self, *, diff: str | None = None, base: str | None = None,
                 scope: str | None = None, base_argv: Sequence[str] = (),
                 base_parser: str | None = None) -> None:
        if diff is None and base is None:
            raise UsageError("a diff-scoped gate needs --diff FILE or --diff-base REF")
        self.diff = diff
        self.base = base
        self.scope = scope
        self.base_argv = tuple(base_argv)
        self.base_parser = base_parser
        self._loaded: LoadedChange | None = None

    def loaded(self, cwd: str, runs_dir: str) -> LoadedChange:
        if self._loaded is None:
            from ckdn.app._running.scope import load_change  # lazy: the step loaded it

            self._loaded = load_change(self, cwd, runs_dir)
        return self._loaded


class Run:
    """One run of a check, as its steps hand it on: what it is, what happened, what it made.

    ``check`` is the configured check ckdn runs itself (None for a run a host made:
    its ``result``, ``exit`` and log are the host's). ``name`` is the name the run is
    stored under (a host's ``pytest@py312``); ``notes`` the host's facts about the run.
    """

    __slots__ = ("argv", "base_tree", "change", "change_doc", "check", "config", "document",
                 "earlier", "env",
                 "env_keys", "exit",
                 "extra_args", "finished_at", "gate", "gated", "host_bins", "host_env",
                 "identities", "imported", "log_bytes", "log_sha256", "name", "notes",
                 "owns_lock",
                 "parser", "publish", "redaction", "restore_interrupts", "result",
                 "run_dir", "settings_argv", "source", "started_at", "stop", "store", "tap",
                 "top", "tree", "verdict")

    def __init__(self, config: Config, name: str, *, check: Check | None = None,
                 parser: str = "generic", top: int | None = None, publish: bool = True,
                 store: Store | None = None) -> None:
        self.config = config
        self.store = store_for(config) if store is None else store
        self.name = name
        self.check = check
        self.parser = check.parser if check is not None else parser
        self.top = check.top if check is not None else top
        self.publish = publish
        #: what the caller asks of a run ckdn spawns
        self.extra_args: Sequence[str] = ()
        self.host_env: Mapping[str, str] | None = None
        self.stop: StopRequest | None = None
        self.host_bins: Sequence[str] | None = None
        self.change: ChangeRequest | None = None
        self.change_doc: ChangeDoc | None = None
        #: the base's worktree, added while the check runs on the head (``--diff-base``)
        self.base_tree: BaseTree | None = None
        #: what the steps set, in order
        self.run_dir: RunDir | None = None
        self.owns_lock = False
        self.argv: Sequence[str] = ()
        #: a host run's argv less what names only its evidence (a merge's shards): what
        #: its facts compare, so another set of shards is not "the command changed"
        self.settings_argv: Sequence[str] | None = None
        self.env: dict[str, str] | None = None
        self.env_keys: Iterable[str] = check.env if check is not None else ()
        self.notes: list[str] = []
        self.source: SourceWatch | None = None
        self.tree: SourceState | None = None  # what the watch saw, once read
        #: the newest earlier run with facts, read while the child ran (empty: not read)
        self.earlier: list[tuple[str, dict[str, Any]] | None] = []
        self.exit = Exit(0)
        self.started_at = self.finished_at = 0.0
        self.log_sha256, self.log_bytes = "", 0
        self.result: ParseResult | None = None
        self.tap: FindingTap | None = None
        self.identities: Sequence[FindingRow] | None = None  # a shard merge's rows
        #: an import's marks (no process ran): the status is the file's, the rc null
        self.imported: ImportedRun | None = None
        self.gated = check is not None  # a host's run is gated when the host asks
        self.restore_interrupts: Any = None
        self.verdict: Verdict | None = None
        self.redaction: Redaction | None = None
        self.gate: Gated | None = None
        self.document: Digest | None = None

    @property
    def path(self) -> str:
        assert self.run_dir is not None, "the run has not begun"
        return self.run_dir.path

    @property
    def facts(self) -> ParseResult:
        """The parse's facts as the digest shows them (reordered by the gate, if any)."""
        if self.gate is not None:
            return self.gate.result
        assert self.result is not None, "the run has not been parsed"
        return self.result

    @property
    def outcome(self) -> Outcome:
        assert self.document is not None, "the run is not sealed"
        assert self.verdict is not None
        return Outcome(self.document, exit_code(self.verdict.status, self.exit.rc), self.path)

    def close(self) -> None:
        """Remove the tap's spool, let Ctrl-C in again, drop the lock the run took."""
        if self.tap is not None:
            self.tap.discard()
        if self.source is not None:  # the run ended before its tree was recorded
            self.source.discard()
            self.source = None
        if self.restore_interrupts is not None:
            signal.signal(signal.SIGINT, self.restore_interrupts)
            self.restore_interrupts = None
        if self.base_tree is not None:  # added for a base run that never came
            self.base_tree.close()
            self.base_tree = None
        if self.owns_lock and self.run_dir is not None:
            self.run_dir.release()


def begin(run: Run) -> Run:
    """Take the check's lock and a fresh run dir; stop what a dead run of it left running."""
    run.run_dir = run.store.begin(run.name)
    run.owns_lock = True
    run.run_dir.notes.extend(stop_left_running(run.run_dir.left_running))
    return run


def spawn(run: Run) -> Run:
    """Start the check's command, its output streamed to ``full.log``, unless the command
    policy refuses it (an empty log, rc 126, a note naming the rule)."""
    config, check, path, rd = run.config, run.check, run.path, run.run_dir
    assert check is not None, "a host's run has no command of ckdn's to spawn"
    assert rd is not None
    argv = run.argv = [substitute(a, path) for a in (*check.argv, *run.extra_args)]
    env = run.env = child_env(config, check, run.name, path, run.host_env)
    if run.host_bins is not None:  # only a host's run asks where its program came from
        from ckdn.app._running.program_origin import host_notes  # lazy: ckdn run never asks

        run.notes.extend(host_notes(argv[0], env, str(config.cwd), run.host_bins))
    log = os.path.join(path, LOG)
    refused = verdict(config, check, argv, path, env)
    if refused is None and check.reads_files:  # the tree it ran on: a git status beside it
        run.source = SourceWatch(config.cwd, path)
    if refused is None and run.change is not None and run.change.base is not None:
        # lazy: only a --diff-base run loads git's side; its base is readied beside the check
        from ckdn.app._running.scope import prepare_base

        prepare_base(run)
    ran = (blocked_run(log, refused, private=config.run.private) if refused is not None
           else run_process(argv, cwd=config.cwd, env=env, log_path=log, timeout=check.timeout,
                            label=run.name, stop=run.stop,
                            on_spawn=_while_it_runs(run),
                            private=config.run.private))
    run.exit, run.log_sha256, run.log_bytes = ran.exit, ran.log_sha256, ran.log_bytes
    run.started_at, run.finished_at = ran.started_at, ran.finished_at
    return run


def _while_it_runs(run: Run) -> Callable[[dict[str, object]], None]:
    """The lock record of the child's tree, then what the steps after the exit read that the
    child cannot change (the newest earlier run's facts, under the check's lock) read while
    it runs, on a second core: a trivial check's exit would otherwise wait for them."""
    rd = run.run_dir
    assert rd is not None

    def started(record: dict[str, object]) -> None:
        rd.record_child(record)
        if not run.earlier:  # once: a tree that gains a cgroup is recorded again
            ready_reading()
            run.earlier.append(newest_facts(run.store, run.name, run.path, rd))

    return started


def read_import(run: Run) -> Run:
    """An imported check's spawn: its file copied into the run dir and read by its format's
    importer (no process runs; the status will be the file's, reconciled). A file that is
    not one is refused, and the run dir it would have filled taken back."""
    check = run.check
    assert check is not None
    assert check.imported is not None, "only an imported check reads a file instead"
    # lazy: only an import loads the importers (``ckdn run`` of a native check never does)
    from ckdn.app._running.importing import import_into

    config = run.config
    top = check.top or config.run.top
    run.tap = FindingTap(run.path, config.cwd, check=check.name, top=top,
                         baseline=config.run.baseline, redaction=Redaction(config.run.redact))
    try:
        (run.result, run.imported, run.argv, run.log_sha256, run.log_bytes,
         run.started_at) = import_into(config, run.name, check.imported, run.path, top=top,
                                       tap=run.tap)
    except CkdnError:
        run.store.abandon(run.path)
        raise
    run.finished_at = time.time()
    return run


def requires_hint(requires: tuple[str, ...]) -> str:
    """A check whose program is missing names what provides it: nox and tox install a
    check's ``requires``; ``ckdn run`` runs with the PATH it was given."""
    shown = [spec if all(ch.isalnum() or ch in "._-=~+" for ch in spec) else f'"{spec}"'
             for spec in (spec[:120] for spec in requires[:8])]
    more = f" (+{len(requires) - 8} more)" if len(requires) > 8 else ""
    return (f"pip install {' '.join(shown)}{more} (the check's requires), or run the check "
            "through tox or nox, which install them")


def parse(run: Run) -> Run:
    """What the parser makes of the finished run, every finding handed to the run's tap;
    a host that brought its own facts keeps those, a command that never started has none."""
    if run.result is not None:
        return run
    if not run.exit.started:
        run.result = ParseResult()
        if run.check is not None and run.check.requires and run.exit.rc == RC_NOT_FOUND \
                and any(note.startswith("command not found") for note in run.exit.notes):
            run.result.notes.append(requires_hint(run.check.requires))
        return run
    config, check, path = run.config, run.check, run.path
    options: Mapping[str, Any] = {}
    if check is not None:
        run.tap = FindingTap(path, config.cwd, check=check.name,
                             top=check.top or config.run.top, baseline=config.run.baseline,
                             redaction=Redaction(config.run.redact, run.env),
                             identities=run.change is not None)
        options = options_for(check, path)
    run.result = parse_run(config, run.name, run.parser, path, run.exit.rc, options=options,
                           top=run.top, tap=run.tap)
    return run


def shield_evidence(run: Run) -> Run:
    """Ignore Ctrl-C until the run is closed: a second press must not lose the digest.
    Only the main thread can touch signal handlers; elsewhere the host owns them."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        return run
    # None: a handler set outside Python, which cannot be put back; the default is closest
    run.restore_interrupts = signal.SIG_DFL if previous is None else previous
    return run


def decide_status(run: Run) -> Run:
    """The status, from the exit and the facts (:func:`ckdn.reconcile.reconcile`, the only
    place a status is decided)."""
    assert run.result is not None
    imported = run.imported
    run.verdict = (reconcile(run.exit, run.result) if imported is None
                   else reconcile_import(run.result, cases=imported.cases,
                                         mismatch=imported.mismatch))
    run.redaction = Redaction(run.config.run.redact, run.env)
    return run


def gate(run: Run) -> Run:
    """The baseline gate (``[run].baseline``): it never changes the status. A run given a
    diff is gated by :func:`scope_gate` instead."""
    native_only = run.imported is not None and run.config.run.gate_requires_native
    if not native_only and (run.config.run.baseline is None or not run.gated
                            or run.change is not None):
        return run
    # lazy: a run without a baseline (or an import's native-only gate) has no gate
    from ckdn.app._running.gate import gate_of_run, native_only_gate

    if native_only:
        run.gate = native_only_gate(run.result)
        return run
    assert run.verdict is not None
    assert run.result is not None
    run.gate = gate_of_run(run.config, run.check.name if run.check is not None else run.name,
                           run.check, run.path, status=run.verdict.status, rc=run.exit.rc,
                           result=run.result, tap=run.tap)
    return run


def scope_gate(run: Run) -> Run:
    """The diff-scoped gate (``--diff``/``--diff-base``): which findings the change owns.
    It never changes the status; a base it cannot trust makes the gate ``unavailable``
    (never green); its facts go to ``change.json`` and the digest's ``summary.diff_scope``."""
    if run.change is None:
        return run
    # lazy: a run without a diff never loads the diff reader, git or the base run
    from ckdn.app._running.scope import scope_of_run

    run.gate = scope_of_run(run)
    if run.base_tree is not None:  # readied, and not needed after all
        run.base_tree.close()
        run.base_tree = None
    config = run.config
    loaded = run.change.loaded(config.cwd, config.run.runs_dir)
    if run.gate.scope is not None:
        run.change_doc = build_change(check=run.name, gate=run.gate.gate, facts=run.gate.scope,
                                      sha256=loaded.sha256, size=loaded.size)
    return run


def record_findings(run: Run) -> Run:
    """``findings.jsonl`` for a red run with findings (the one step that writes it)."""
    assert run.verdict is not None
    assert run.result is not None
    try:
        if run.verdict.status == PASS or run.result.total <= 0:
            return run
        from ckdn.app._running.findings import write_findings  # lazy: a green run has none

        check = run.check
        every = (run.imported.every if run.imported is not None
                 else read_again(run.config, check, run.path, run.exit.rc) if check is not None
                 else None)
        run.notes.extend(write_findings(run.store, run.path, check=run.name, cwd=run.config.cwd,
                                        result=run.result, gated=run.gate, every=every,
                                        identities=run.identities, redaction=run.redaction,
                                        tap=run.tap))
    finally:
        if run.tap is not None:
            run.tap.discard()
    return run


def record_source(run: Run) -> Run:
    """``source.json``: the state of the tree the run saw, when git could say it
    (``ckdn status`` tells fresh from stale, ``ckdn diff`` a flaky test from changed code)."""
    if run.source is None:
        return run
    run.tree = run.source.result()
    run.source = None
    if run.tree is not None:
        try:
            run.store.write_atomic(os.path.join(run.path, SOURCE_FILE),
                                   source_document(run.tree))
        except CkdnError as exc:  # evidence beside the digest: the digest is never lost for it
            del exc
    return run


def note_weakening(run: Run) -> Run:
    """A green run's ``facts.json``, and a note when it checked less than the last green run
    of its check on the same branch (fewer tests, more skipped, a lower threshold, ...)."""
    assert run.verdict is not None
    if run.verdict.status != PASS or run.redaction is None:
        return run
    check = run.check
    branch = run.tree.branch if run.tree is not None else None
    argv = run.argv if run.settings_argv is None else run.settings_argv
    shown = " ".join(run.redaction.argv([*(check.argv if check is not None else argv),
                                         *run.extra_args]))
    facts = facts_of(check=run.name, parser=run.parser, branch=branch,
                     settings=settings_hash(check, run.extra_args, argv), command=shown,
                     options=check.options if check is not None else {},
                     summary=run.facts.summary)
    earlier = reference(run.store, run.name, run.path, branch, run.earlier)
    if earlier is not None:
        phrases = weakened(earlier[1], facts)
        if phrases:
            facts["weakened"] = phrases
            facts["reference"] = earlier[0]
            run.notes.append(weakening_note(earlier[0], phrases))
    try:
        run.store.write_atomic(os.path.join(run.path, FACTS_FILE), canonical(facts) + b"\n",
                               beside=True)  # fsynced with the digest
    except CkdnError as exc:  # evidence beside the digest: the digest is never lost for it
        del exc
    return run


def build_documents(run: Run) -> Run:
    """``full.log`` sealed (redacted where ``[run.redact].full_log`` asks), ``meta.json``,
    then ``digest.json`` last, each written atomically."""
    config, store, path = run.config, run.store, run.path
    settings = config.run
    redaction, verdict_, rd = run.redaction, run.verdict, run.run_dir
    assert redaction is not None
    assert verdict_ is not None
    assert rd is not None
    log_path = os.path.join(path, LOG)
    run.log_sha256, run.log_bytes = redaction.sealed_log(log_path, store.write_atomic,
                                                         run.log_sha256, run.log_bytes)
    if run.change_doc is not None:  # the diff-scoped gate's sidecar: meta.json is closed
        store.write_atomic(os.path.join(path, CHANGE_FILE), canonical(run.change_doc) + b"\n",
                           beside=True)
    meta = build_meta(check=run.name, argv=redaction.argv(run.argv), exit=run.exit,
                      started_at=run.started_at, finished_at=run.finished_at,
                      log_sha256=run.log_sha256, log_bytes=run.log_bytes, parser=run.parser,
                      env_keys=run.env_keys)
    store.write_atomic(os.path.join(path, "meta.json"), canonical(meta) + b"\n", beside=True)
    bounds = Bounds(top=run.top or settings.top, max_snippet_lines=settings.max_snippet_lines,
                    log_tail_lines=settings.log_tail_lines)
    artifacts, omitted = list_artifacts(path)
    gated = run.gate
    digest = build_digest(check=run.name, verdict=verdict_, exit=run.exit, result=run.facts,
                          run_dir=store.display(path), artifacts=artifacts,
                          artifacts_omitted=omitted, log_path=log_path, bounds=bounds,
                          notes=[*rd.notes, *run.exit.notes, *run.notes],
                          gate=gated.gate if gated is not None else None,
                          baseline=gated.baseline if gated is not None else None,
                          baselined=gated.baselined if gated is not None else (),
                          redaction=redaction,
                          imported=run.imported.facts if run.imported is not None else None,
                          diff_scope=gated.scope if gated is not None else None)
    # the finished marker: renamed in once it and the documents beside it are durable
    store.write_atomic(os.path.join(path, "digest.json"), canonical(digest) + b"\n")
    run.document = digest
    return run


def publish(run: Run) -> Run:
    """Make the run ``latest``; an alias's member is not (the alias published its own dir)."""
    if run.publish:
        run.store.publish(run.path)
    return run


def prune(run: Run) -> Run:
    """Keep ``[run].keep`` runs of the check, within ``max_age_days`` and ``max_bytes``."""
    settings, rd = run.config.run, run.run_dir
    assert rd is not None
    run.store.prune(run.name, settings.keep, holding=rd if rd.locked else None,
                    max_age_days=settings.max_age_days, max_bytes=settings.max_bytes)
    return run


#: The run of a check ckdn runs itself, step by step (docs/design.md lists them).
RUN_STEPS: tuple[Step, ...] = (begin, spawn, parse, shield_evidence, decide_status, gate,
                               scope_gate, record_findings, record_source, note_weakening,
                               build_documents,
                               publish, prune)
#: A run a host made (the pytest plugin, tox's observe mode, a shard merge): after the spawn.
HOST_STEPS: tuple[Step, ...] = RUN_STEPS[RUN_STEPS.index(parse):]
#: An imported check (``ckdn import``, ``import = {...}``): a file read where the spawn was.
IMPORT_STEPS: tuple[Step, ...] = (begin, read_import, *HOST_STEPS)


def execute(run: Run, steps: Sequence[Step]) -> Run:
    """Hand the run to each step in turn (nox's ``workflow.execute``); closed whatever happens."""
    try:
        for step in steps:
            run = step(run)
    finally:
        run.close()
    return run


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


def store_for(config: Config) -> Store:
    return Store(config.run.runs_dir, config.cwd, private=config.run.private)


def _same(name: str) -> str:
    return name


def run(config: Config, name: str, *, extra_args: Sequence[str] = (),
        fail_fast: bool | None = None, env: Mapping[str, str] | None = None,
        stop: StopRequest | None = None, run_name: Callable[[str], str] = _same,
        host_bins: Sequence[str] | None = None, change: ChangeRequest | None = None,
        by_gate: bool = False) -> Outcome:
    """Run a check or an alias by name.

    ``env`` replaces ``os.environ`` as the base environment; ``stop`` lets a host
    stop the run from another thread, as Ctrl-C would; ``run_name`` maps a check
    or alias name to the name its runs are stored under (its run dirs, its lock,
    its digest's ``check``); ``host_bins`` are the bin directories of the host's
    env (a tox env's, a nox session's virtualenv): a program found on ``PATH``
    outside them is named in a note (:mod:`ckdn.app._running.program_origin`); ``change``
    gates the run by what a diff changed (docs/diff-gate.md); ``by_gate``: the host judges
    by the gate, so an alias's ``fail_fast`` stops at a member whose gate fails, not at one
    whose findings are all known.
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
                         stop=stop, run_name=run_name, host_bins=host_bins, change=change,
                         by_gate=by_gate)
    return run_check(config, target, extra_args=extra_args, env=env, stop=stop,
                     as_name=run_name(target.name), host_bins=host_bins, change=change)


def run_all(config: Config, *, fail_fast: bool | None = None,
            env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
            change: ChangeRequest | None = None, by_gate: bool = False) -> Outcome:
    """``ckdn run --all``: every atomic check in config order (``env``, ``stop``,
    ``by_gate``: as `run`)."""
    if not config.checks:
        where = os.path.basename(config.path) if config.path else "the configuration"
        raise UsageError(f"{where} defines no checks; add a [check.NAME] table")
    locked(config, config.checks)
    return run_alias(config, ALL, list(config.checks.values()), bool(fail_fast), env=env,
                     stop=stop, change=change, by_gate=by_gate)


def run_check(config: Config, check: Check, *, extra_args: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              as_name: str | None = None, publish: bool = True,
              host_bins: Sequence[str] | None = None,
              change: ChangeRequest | None = None) -> Outcome:
    """One atomic check through :data:`RUN_STEPS`, stored under ``as_name`` (default: its
    own name); ``publish=False`` for an alias's member (see :func:`publish`)."""
    one = Run(config, check.name if as_name is None else as_name, check=check, publish=publish)
    one.extra_args, one.host_env, one.stop, one.host_bins = extra_args, env, stop, host_bins
    one.change = change
    if check.imported is not None:
        if extra_args:
            raise UsageError(f"extra arguments after -- are not accepted for '{check.name}': "
                             "an imported check runs no command")
        return execute(one, IMPORT_STEPS).outcome
    return execute(one, RUN_STEPS).outcome


#: ``ckdn.identity.scope.POLICY_PREFIX`` (equal by a test), not imported from there: a run
#: without a diff never loads the diff-scoped gate's modules.
DIFF_POLICY_PREFIX = "diff:"


def diff_scoped(gate: object) -> bool:
    """Whether ``gate`` is a diff-scoped gate's, whose ``unavailable`` is red."""
    policy = gate.get("policy") if isinstance(gate, dict) else None
    return isinstance(policy, str) and policy.startswith(DIFF_POLICY_PREFIX)


def green(document: Document, *, gate: bool = False) -> bool:
    """Whether a host counts this digest or aggregate as green: its status is ``pass``,
    or, judging by the gate, the gate passed (an ``unavailable`` baseline gate: the status;
    an ``unavailable`` diff-scoped gate never)."""
    if gate:
        shown = document.get("gate")
        status = shown.get("status") if isinstance(shown, dict) else None
        if status in ("pass", "fail"):
            return status == "pass"
        if status == "unavailable" and diff_scoped(shown):
            return False
    return document.get("status") == PASS


def run_alias(config: Config, alias: str, members: Sequence[Check], fail_fast: bool, *,
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              run_name: Callable[[str], str] = _same,
              host_bins: Sequence[str] | None = None,
              change: ChangeRequest | None = None, by_gate: bool = False) -> Outcome:
    """Run members in order; the aggregate is printed and stored in its own run dir.

    That dir is made and published first, so while the members run (or after the
    series was killed) ``latest`` is this unfinished alias run or an unfinished
    member, never a member's green digest standing in for the whole.
    """
    # lazy: a single check builds no aggregate (and `ckdn run NAME` loads no such module)
    from ckdn.documents.aggregate import Member, build_aggregate

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
                                host_bins=host_bins, change=change)
            doc = outcome.digest
            rc = doc["rc"] if doc["rc"] is not None else outcome.exit_code  # an import's null
            results.append(Member(check=name, status=doc["status"], rc=rc,
                                  run_dir=doc["run_dir"]))
            gates.append((name, doc.get("gate")))
            # Ctrl-C (or the host's stop) ends the whole alias whatever fail_fast says.
            interrupted = interrupted or bool(doc.get("interrupted"))
            halt = (fail_fast and not green(doc, gate=by_gate)) or interrupted
    except BaseException:
        if not results:  # refused before any member ran: nothing happened, nothing to keep
            store.abandon(where)
        raise  # else the run stays, unfinished: `ckdn show` says so
    gate_doc = None
    if config.run.baseline is not None or change is not None:
        from ckdn.identity import worst_gate  # lazy: as the gate step (only with a baseline)

        gate_doc = worst_gate(gates)
    aggregate = build_aggregate(alias=run_name(alias), members=results, interrupted=interrupted,
                                gate=gate_doc)
    return Outcome(aggregate, int(aggregate["rc"]), store_aggregate(config, aggregate, where))


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
