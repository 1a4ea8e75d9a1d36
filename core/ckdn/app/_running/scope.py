"""The diff-scoped gate of one run: read the change, find each finding's origin against the
base (a run of the check on the base tree, or the baseline), let the scope decide the gate.

Loaded only by a run given ``--diff`` or ``--diff-base`` (the step imports it lazily).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile

from ckdn import __version__
from ckdn.app._running.gate import Gated, _reordered
from ckdn.app._running.parsing import (
    ALL_FINDINGS,
    options_for,
    parse_safely,
    pick_again,
    read_again,
    substitute,
)
from ckdn.app._running.policy import child_env
from ckdn.errors import CkdnError, ConfigError
from ckdn.identity import (
    BaselineIndex,
    IdentityTable,
    SourceLines,
    fingerprints,
    read_baseline,
)
from ckdn.identity.change import ChangeSet, DiffError, read_hashed_diff
from ckdn.identity.git_base import BaseError, BaseTree, PendingChange, start_change
from ckdn.identity.scope import NEW, decide_scope, gated, place, scope_policy
from ckdn.parsers import get_parser
from ckdn.parsers.base import Finding, ParseContext, ParseResult
from ckdn.process import run_process
from ckdn.reconcile import ERROR, PARSE_MISMATCH, reconcile
from ckdn.store import shown_path, write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Protocol

    from ckdn.app._running.parsing import FindingTap
    from ckdn.config import Check, Config
    from ckdn.documents.types import GateDoc, ScopeDoc
    from ckdn.process import Exit
    from ckdn.process.stop import StopRequest
    from ckdn.reconcile import Verdict

    class ChangeRequest(Protocol):
        """What this module reads of :class:`ckdn.app._running.steps.ChangeRequest` (named
        by shape: the steps module loads this one, never the other way)."""

        @property
        def diff(self) -> str | None: ...
        @property
        def base(self) -> str | None: ...
        @property
        def scope(self) -> str | None: ...
        @property
        def base_argv(self) -> tuple[str, ...]: ...
        @property
        def base_parser(self) -> str | None: ...

        def loaded(self, cwd: str, runs_dir: str) -> LoadedChange: ...

    class Run(Protocol):
        """What this module reads of :class:`ckdn.app._running.steps.Run`."""

        @property
        def change(self) -> ChangeRequest | None: ...
        @property
        def config(self) -> Config: ...
        @property
        def check(self) -> Check | None: ...
        @property
        def name(self) -> str: ...
        @property
        def parser(self) -> str: ...
        @property
        def path(self) -> str: ...
        @property
        def verdict(self) -> Verdict | None: ...
        @property
        def result(self) -> ParseResult | None: ...
        @property
        def exit(self) -> Exit: ...
        @property
        def extra_args(self) -> Sequence[str]: ...
        @property
        def host_env(self) -> Mapping[str, str] | None: ...
        @property
        def stop(self) -> StopRequest | None: ...
        @property
        def tap(self) -> FindingTap | None: ...
        base_tree: BaseTree | None

__all__ = ["LoadedChange", "load_change", "prepare_base", "scope_of_run"]

#: What the summary's ``diff_scope.origin`` says the findings were compared with: a run of
#: the check on the base made now, one made before for the same base and check (stored),
#: the baseline.
BASE_RUN = "base_run"
STORED_BASE_RUN = "stored_base_run"
BASELINE = "baseline"
#: Where the base runs' fingerprints are kept, inside the runs dir (not a run dir's name).
BASE_RUNS = ".base-runs"
#: Base runs kept (the oldest removed first).
KEEP_BASE_RUNS = 16
#: A stored base run: this line, then its fingerprints packed (``BaselineIndex.from_records``);
#: the older ``.txt`` form (fingerprints as text) is pruned as a base run, never read.
_RECORDS_MAGIC = b"ckdn.base-run/1\n"
_RECORDS_SUFFIX = ".bin"


class LoadedChange:
    """A change read once for every run that asks (an alias's members share it): its
    change set, the commits and the directory in the repository when git made it, the
    diff's SHA-256 and size in bytes, or why it cannot be used. With ``pending`` (git's
    diff still being read) the commits are known and the rest waits for the read."""

    __slots__ = ("_changes", "_error", "_sha256", "_size", "base", "diff_file", "head",
                 "pending", "prefix")

    def __init__(self, changes: ChangeSet | None = None, *, base: str = "", head: str = "",
                 prefix: str = "", sha256: str = "", size: int = 0, error: str = "",
                 pending: PendingChange | None = None) -> None:
        self._changes = changes
        self.base = base
        self.head = head
        self.prefix = prefix
        self._sha256 = sha256
        self._size = size
        self._error = error
        self.pending = pending
        #: the change is a file's (``--diff``): git's read only to check the base
        self.diff_file = changes is not None

    def _settle(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        try:
            git = pending.result()
        except (BaseError, DiffError) as exc:
            self._changes, self._error = None, str(exc)
            return
        if not self.diff_file:
            self._changes, self._sha256, self._size = git.changes, git.sha256, git.size

    @property
    def changes(self) -> ChangeSet | None:
        self._settle()
        return self._changes

    @property
    def error(self) -> str:
        self._settle()
        return self._error

    @property
    def sha256(self) -> str:
        self._settle()
        return self._sha256

    @property
    def size(self) -> int:
        self._settle()
        return self._size


def load_change(request: ChangeRequest, cwd: str, runs_dir: str) -> LoadedChange:
    """Read the diff (a file, ``-`` for stdin) or ask git for it (ckdn's own ``runs_dir``
    left out of the untracked files); never raises."""
    try:
        git: PendingChange | None = None
        if request.base is not None:
            git = start_change(cwd, request.base, ignore=(runs_dir,))
        if request.diff is None:
            assert git is not None
            return LoadedChange(base=git.base, head=git.head, prefix=git.prefix, pending=git)
        try:
            changes, sha256, size = _read_file(request.diff)
        except DiffError:
            if git is not None:
                git.result()  # the base's error first, as when git was asked first
            raise
        if git is None:
            return LoadedChange(changes, sha256=sha256, size=size)
        return LoadedChange(changes, base=git.base, head=git.head, prefix=git.prefix,
                            sha256=sha256, size=size, pending=git)
    except (BaseError, DiffError) as exc:
        return LoadedChange(error=str(exc))


def prepare_base(run: Run) -> None:
    """Before the check runs on the head (``--diff-base``, no baseline, no stored base
    run): the base resolved and its worktree added while the check runs, for
    :func:`base_records` to take (the diff is read after the check, of the tree it
    left). A failure here is left for the gate to meet and word."""
    request, config = run.change, run.config
    if (request is None or request.base is None or request.diff is not None
            or config.run.baseline is not None):
        return  # (a --diff file is read after the check, as without a base)
    loaded = request.loaded(config.cwd, config.run.runs_dir)
    stored = _stored_path(run, loaded) if loaded.base else None
    if stored is None or os.path.exists(stored):
        return
    with contextlib.suppress(BaseError):  # the base run adds it again, and says why not
        run.base_tree = BaseTree(config.cwd, loaded.base, loaded.prefix, wait=False)


def _read_file(name: str) -> tuple[ChangeSet, str, int]:
    """The change set, SHA-256 and size in bytes of the diff in the file ``name`` (``-``:
    stdin); an empty one is refused: a producer that failed writes nothing too."""
    try:
        if name == "-":
            changes, sha256, size = read_hashed_diff(sys.stdin.buffer)
        else:
            with open(name, "rb") as handle:
                changes, sha256, size = read_hashed_diff(handle)
    except OSError as exc:
        raise DiffError(f"--diff {name}: cannot read it ({exc.strerror or exc}); name a "
                        "file holding the diff, or - for stdin") from None
    if size == 0:
        raise DiffError(f"--diff {name} is empty, as the diff of a producer that failed is; "
                        "let ckdn make it (--diff-base REF), or fail the pipe "
                        "(`set -o pipefail`)")
    return changes, sha256, size


def _error(result: ParseResult, scope: str, loaded: LoadedChange, reason: str) -> Gated:
    """Gate ``unavailable`` (the published word for a gate that could not be decided): the
    change or its base cannot be trusted; ``reason`` names the fix. Never green."""
    gate: GateDoc = {"status": "unavailable", "policy": scope_policy(scope), "reason": reason}
    return _with_scope(Gated(result, gate), scope, loaded, origin=None, counts=None, owned=0)


class _Relocated:
    """A finding as identity reads it, its paths made relative to the tree it was found in
    (a tool that prints absolute paths prints the worktree's for the base run)."""

    __slots__ = ("id", "kind", "location", "message")

    def __init__(self, finding: Finding, root: str) -> None:
        self.kind = finding.kind
        self.message = finding.message
        location, ident = finding.location, finding.id
        prefix = root.rstrip(os.sep) + os.sep
        if location and location.startswith(prefix):
            location = location[len(prefix):]
        if ident.startswith(prefix):
            ident = ident[len(prefix):]
        self.id, self.location = ident, location


def scope_of_run(run: Run) -> Gated:
    """The diff-scoped gate of a run whose status is decided (see the module)."""
    request, config = run.change, run.config
    assert request is not None
    assert run.verdict is not None
    assert run.result is not None
    scope = request.scope or config.run.diff_scope
    loaded = request.loaded(config.cwd, config.run.runs_dir)
    result, status, rc = run.result, run.verdict.status, run.exit.rc
    total = max(0, result.total)
    early: tuple[BaselineIndex, str] | BaseError | None = None
    if loaded.pending is not None:
        loaded.pending.start()  # git's diff of the tree the check left, read in a thread
    if loaded.pending is not None and status not in (ERROR, PARSE_MISMATCH) and total:
        # the base (run in a worktree, or stored) meanwhile
        try:
            early = _base_index(run, loaded)
        except BaseError as exc:
            early = exc
    if loaded.error:
        return _error(run.result, scope, loaded, loaded.error)
    changes = loaded.changes
    assert changes is not None
    failures = len(result.gate_failures)
    if status in (ERROR, PARSE_MISMATCH) or total == 0 or not changes:
        gate = decide_scope(scope, status, rc, total=total, classified=total, owned=0,
                            gate_failures=failures)
        if not changes and gate["status"] == "pass":
            gate["reason"] = "the change touches no file"
        return _with_scope(Gated(result, gate), scope, loaded, origin=None, counts=None,
                           owned=0)
    try:
        if isinstance(early, BaseError):
            raise early
        base, origin = early if early is not None else _base_index(run, loaded)
    except BaseError as exc:
        return _error(result, scope, loaded, str(exc))
    tap, check = run.tap, run.check
    if tap is not None and tap.covers(result) and tap.table is not None:
        return _tapped(run, tap, changes, base, scope=scope, loaded=loaded, origin=origin)
    findings: Sequence[Finding] = result.findings
    if len(findings) < total and check is not None:
        findings = read_again(config, check, run.path, rc)()
    if len(findings) < total:
        gate = decide_scope(scope, status, rc, total=total, classified=len(findings),
                            owned=0, gate_failures=failures)
        return _with_scope(Gated(result, gate), scope, loaded, origin=None, counts=None,
                           owned=0)
    source = SourceLines(config.cwd)
    identities = fingerprints([_Relocated(f, config.cwd) for f in findings], source)
    placed = place(changes, identities, source, base)
    owned = [gated(scope, w, o) for w, o in zip(placed.wheres, placed.origins, strict=True)]
    shown = {(f.id, f.location): f for f in result.findings}
    first = [shown.get((f.id, f.location), f) for f, own in zip(findings, owned, strict=True)
             if own]
    rest = [shown.get((f.id, f.location), f) for f, own in zip(findings, owned, strict=True)
            if not own]
    count = len(first)
    gate = decide_scope(scope, status, rc, total=total, classified=len(findings), owned=count,
                        gate_failures=failures, first=first[0].id if first else "")
    ordered = _reordered(result, first, rest, 0)
    known = [o != NEW for o in placed.origins] if origin == BASELINE else None
    done = Gated(ordered, gate, identities=(list(findings), identities), known=known)
    return _with_scope(done, scope, loaded, origin=origin, counts=placed.counts(), owned=count)


def _tapped(run: Run, tap: FindingTap, changes: ChangeSet, base: BaselineIndex, *, scope: str,
            loaded: LoadedChange, origin: str) -> Gated:
    """The gate from what the parse handed over (every identity in the tap's table): the
    digest's owned findings from those the parser or the tap kept, else picked again."""
    config, result = run.config, run.result
    assert result is not None
    assert run.verdict is not None
    table = tap.table
    assert table is not None
    placed = place(changes, table, table.source, base)  # its files read already
    owned = [gated(scope, w, o) for w, o in zip(placed.wheres, placed.origins, strict=True)]
    kept, top = result.findings, tap.top
    positions = [position for position, own in enumerate(owned) if own]
    count = len(positions)
    chosen = {p: kept[p] if p < len(kept) else tap.held.get(p) for p in positions[:top]}
    missing = {p for p, finding in chosen.items() if finding is None}
    if missing and run.check is not None:
        chosen.update(pick_again(config, run.check, run.path, run.exit.rc)(missing))
    first = [f for f in (chosen[p] for p in positions[:top]) if f is not None]
    rest = [f for f, own in zip(kept, owned, strict=False) if not own][:max(0, top - len(first))]
    gate = decide_scope(scope, run.verdict.status, run.exit.rc, total=max(0, result.total),
                        classified=len(table), owned=count,
                        gate_failures=len(result.gate_failures),
                        first=first[0].id if first else "")
    known = [o != NEW for o in placed.origins] if origin == BASELINE else None
    done = Gated(_reordered(result, first, rest, 0), gate, known=known)
    return _with_scope(done, scope, loaded, origin=origin, counts=placed.counts(), owned=count)


def _with_scope(done: Gated, scope: str, loaded: LoadedChange, *, origin: str | None,
                counts: dict[str, dict[str, int]] | None, owned: int) -> Gated:
    """The gate's facts beside it (the digest's ``summary.diff_scope``, ``change.json``):
    the published ``gate`` is closed, so they never go into it."""
    facts: ScopeDoc = {"policy": scope, "gated": owned}
    if origin is not None:
        facts["origin"] = origin
    if loaded.base:
        facts["base"] = loaded.base
    if loaded.head:
        facts["head"] = loaded.head
    if counts is not None:
        facts["counts"] = counts
    done.scope = facts
    return done


def _base_index(run: Run, loaded: LoadedChange) -> tuple[BaselineIndex, str]:
    """The fingerprints findings are compared with: the baseline's when one is configured,
    else those of a run of the check on the base tree; :class:`BaseError` when neither."""
    config = run.config
    baseline = config.run.baseline
    tap = run.tap
    if baseline is not None and tap is not None and tap.index is not None:
        if isinstance(tap.index, str):  # the tap read the baseline already, and could not
            raise BaseError(tap.index)
        return tap.index, BASELINE
    if baseline is not None:
        try:
            entries = read_baseline(baseline, shown_path(baseline, config.cwd)).checks
        except ConfigError as exc:
            raise BaseError(str(exc)) from None
        return BaselineIndex(entries.get(run.name, [])), BASELINE
    if not loaded.base:
        raise BaseError("--diff says where findings are, not which are new: add "
                        "--diff-base REF (the base is run in a worktree) or set [run].baseline")
    stored = _stored_path(run, loaded)
    if stored is not None:
        try:
            with open(stored, "rb") as handle:
                data = handle.read()
            if data.startswith(_RECORDS_MAGIC):
                return BaselineIndex.from_records(data[len(_RECORDS_MAGIC):]), STORED_BASE_RUN
        except (OSError, ValueError):
            pass  # none stored (or unreadable): run it
    records = base_records(run, loaded.base, loaded.prefix)
    if stored is not None:
        _store_base_run(stored, records, private=config.run.private)
    return BaselineIndex.from_records(records), BASE_RUN


def _stored_path(run: Run, loaded: LoadedChange) -> str | None:
    """Where the base run of this check at ``base`` is kept: named by everything it depends
    on that ckdn knows (the base commit, the command, parser and options, the directory in
    the repository, ckdn's version). None for a host's run (its command is the host's)."""
    check = run.check
    if check is None:
        return None
    key = json.dumps([__version__, run.name, loaded.base, list(check.argv),
                      list(run.extra_args), check.parser,
                      sorted((k, repr(v)) for k, v in check.options.items()), loaded.prefix])
    name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(run.config.run.runs_dir, BASE_RUNS, f"{name}{_RECORDS_SUFFIX}")


def _store_base_run(path: str, records: bytes, *, private: bool) -> None:
    """Keep a base run's fingerprints (atomically, not fsynced: a cache a torn write only
    costs a base run), and only the last :data:`KEEP_BASE_RUNS`; a store that fails costs
    the next run a base run, never this run its gate."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        write_atomic(path, _RECORDS_MAGIC + records, durable=False,
                     mode=0o600 if private else 0o644)
        kept = sorted((entry.stat().st_mtime, entry.path) for entry in os.scandir(folder)
                      if entry.name.endswith((_RECORDS_SUFFIX, ".txt")))
        for _, old in kept[:-KEEP_BASE_RUNS]:
            os.unlink(old)
    except OSError:
        pass


def _tree_for(run: Run, base: str, prefix: str) -> BaseTree:
    """The base's worktree: the one readied while the check ran (:func:`prepare_base`),
    else one added now."""
    prepared, run.base_tree = run.base_tree, None
    if prepared is not None and prepared.base == base:
        try:
            prepared.ready()
        except BaseError:
            prepared.close()
            raise
        return prepared
    if prepared is not None:
        prepared.close()
    return BaseTree(run.config.cwd, base, prefix)


def base_records(run: Run, base: str, prefix: str) -> bytes:
    """Run the check on the base commit, in a temporary worktree (``prefix``: the check's
    directory in the repository): its findings' fingerprints, packed."""
    config, check = run.config, run.check
    request = run.change
    assert request is not None
    if check is not None:
        argv_template: Sequence[str] = (*check.argv, *run.extra_args)
        parser, timeout, env_check = check.parser, check.timeout, check
    elif request.base_argv:
        argv_template, timeout, env_check = request.base_argv, None, None
        parser = request.base_parser or run.parser
    else:
        raise BaseError("this host cannot run its check again on the base; set [run].baseline "
                        "or run the check with `ckdn run CHECK --diff-base REF`")
    run_dir = tempfile.mkdtemp(prefix="ckdn-base-run-")
    try:
        with _tree_for(run, base, prefix) as tree:
            argv = [substitute(a, run_dir) for a in argv_template]
            if env_check is not None:
                env = child_env(config, env_check, run.name, run_dir, run.host_env)
                options = options_for(env_check, run_dir)
            else:
                # the host's own markers left out: the base run hands evidence to run_dir
                env = {key: value for key, value in (run.host_env or os.environ).items()
                       if not key.startswith("CKDN_")}
                env.update(CKDN_RUN_DIR=run_dir, CKDN_CHECK=run.name)
                options = {}
            ran = run_process(argv, cwd=tree.cwd, env=env,
                              log_path=os.path.join(run_dir, "full.log"), timeout=timeout,
                              label=f"{run.name}@base", stop=run.stop,
                              private=config.run.private)
            # every finding handed over straight into a table, as a run's tap does; a
            # parser that hands none over is read again whole
            table = IdentityTable(SourceLines(tree.cwd))
            root = tree.cwd.rstrip(os.sep) + os.sep

            def into_table(finding: Finding) -> None:
                absolute = (finding.location or "").startswith(root) \
                    or finding.id.startswith(root)
                table.add(_Relocated(finding, tree.cwd) if absolute else finding)

            ctx = ParseContext(check=run.name, run_dir=run_dir, cwd=tree.cwd, rc=ran.exit.rc,
                               options=options, top=1, max_snippet_lines=0, tap=into_table)
            result = parse_safely(get_parser(parser), ctx)
            status = reconcile(ran.exit, result).status
            if len(table) != result.total and status not in (ERROR, PARSE_MISMATCH):
                table = IdentityTable(SourceLines(tree.cwd))
                ctx = ParseContext(check=run.name, run_dir=run_dir, cwd=tree.cwd,
                                   rc=ran.exit.rc, options=options, top=ALL_FINDINGS,
                                   max_snippet_lines=0)
                for finding in parse_safely(get_parser(parser), ctx).findings:
                    into_table(finding)
            if status in (ERROR, PARSE_MISMATCH) or len(table) < result.total:
                raise BaseError(f"the check could not be judged on the base {base[:12]} "
                                f"(status {status}); fix it there, or set [run].baseline")
            return table.records()
    except CkdnError as exc:
        if isinstance(exc, BaseError):
            raise
        raise BaseError(f"the check could not be run on the base {base[:12]}: {exc}") from None
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
