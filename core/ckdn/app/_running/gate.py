"""The baseline gate of one run: classify its findings, decide the gate, list new ones first."""

from __future__ import annotations

import os
from itertools import islice

from ckdn.app._running.parsing import pick_again, read_again
from ckdn.errors import ConfigError
from ckdn.identity import SourceLines, decide, fingerprints, match, read_index
from ckdn.identity.renames import git_renames
from ckdn.parsers.base import ParseResult
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ckdn.app._running.parsing import FindingTap
    from ckdn.config import Check, Config
    from ckdn.documents.types import BaselineCounts, GateDoc, ScopeDoc
    from ckdn.identity import BaselineIndex, Fingerprinted
    from ckdn.parsers.base import Finding

__all__ = ["Gated", "gate_of_run", "gate_run", "native_only_gate"]

_UNTRUSTED = ("error", "parse_mismatch")


class Gated:
    """What the digest shows of the gate: the reordered facts, ``gate``, ``baseline``;
    ``identities``, every finding (in the parser's order) with its fingerprint, when
    the gate computed them (``findings.jsonl`` reuses them), and ``known``, which of them
    the baseline matched (1 or true each: the file marks those ``baselined``); ``scope``, a
    diff-scoped gate's facts (the digest's ``summary.diff_scope``, ``change.json``)."""

    __slots__ = ("baseline", "baselined", "gate", "identities", "known", "result", "scope")

    def __init__(self, result: ParseResult, gate: GateDoc,
                 baseline: BaselineCounts | None = None, baselined: range = range(0),
                 identities: tuple[list[Finding], list[Fingerprinted]] | None = None,
                 *, known: Sequence[int] | None = None) -> None:
        self.result = result
        self.gate = gate
        self.baseline = baseline
        self.baselined = baselined
        self.identities = identities
        self.known = known
        self.scope: ScopeDoc | None = None


def gate_run(*, baseline_path: str, shown_path: str, check: str, cwd: str, status: str,
             rc: int, result: ParseResult,
             every_finding: Callable[[], Sequence[Finding]], tap: FindingTap | None = None,
             pick: Callable[[set[int]], dict[int, Finding]] | None = None) -> Gated:
    """The gate of a run whose status is ``status`` and facts ``result`` (see the module);
    ``tap``: what the parse handed over, used when it saw every finding (``pick`` reads
    the findings at some positions again, for a new one the tap did not hold)."""
    total = max(0, result.total)
    failures = len(result.gate_failures)
    if status in _UNTRUSTED or total == 0:
        if total == 0 and status not in _UNTRUSTED and not os.path.isfile(baseline_path):
            return Gated(result, _missing(shown_path))
        return Gated(result, decide(status, rc, total=total, classified=total, new=0,
                                    gate_failures=failures))
    if tap is not None and tap.covers(result) and tap.index is not None:
        index = tap.index
        if isinstance(index, str):
            return Gated(result, {"status": "unavailable", "policy": "no_new_findings",
                                  "reason": index})
        return _tapped(result, tap, index, cwd=cwd, status=status, rc=rc, total=total,
                       failures=failures, pick=pick)
    try:
        entries = read_index(baseline_path, shown_path, check)
    except ConfigError as exc:
        return Gated(result, {"status": "unavailable", "policy": "no_new_findings",
                              "reason": str(exc)})
    findings = list(result.findings) if len(result.findings) >= total else list(every_finding())
    return _classified(result, findings, entries, check=check, cwd=cwd, status=status, rc=rc,
                       total=total, failures=failures)


def _missing(shown: str) -> GateDoc:
    return {"status": "unavailable", "policy": "no_new_findings",
            "reason": f"baseline {shown} not found; record it with `ckdn baseline CHECK`"}


def _classified(result: ParseResult, findings: list[Finding], entries: BaselineIndex, *,
                check: str, cwd: str, status: str, rc: int, total: int,
                failures: int) -> Gated:
    identities = fingerprints(findings, SourceLines(cwd))
    matched = match(entries, identities, lambda: git_renames(cwd))
    shown = {(f.id, f.location): f for f in result.findings}  # the ones with their detail
    pairs = list(zip(findings, matched.known, strict=True))
    new = [shown.get((f.id, f.location), f) for f, k in pairs if not k]
    old = [shown.get((f.id, f.location), f) for f, k in pairs if k]
    ordered = _reordered(result, new, old, len(matched.stale))
    gate = decide(status, rc, total=total, classified=len(findings), new=len(new),
                  gate_failures=failures, first_new=new[0].id if new else "")
    return Gated(ordered, gate, {"known": len(old), "new": len(new)},
                 range(len(new), len(new) + len(old)), (findings, identities),
                 known=[bool(k) for k in matched.known])


def _tapped(result: ParseResult, tap: FindingTap, index: BaselineIndex, *, cwd: str, status: str,
            rc: int, total: int, failures: int,
            pick: Callable[[set[int]], dict[int, Finding]] | None) -> Gated:
    """The gate from what the parse handed over: every identity in the tap's table, the
    digest's findings from those it (or the parser) kept, new ones first."""
    table = tap.table
    if table is None:  # a tap keeps its table whenever a baseline is set
        raise TypeError("the tap of a gated run holds no identity table")
    matched = match(index, table, lambda: git_renames(cwd))
    flags = matched.flags
    kept = result.findings
    top = tap.top
    count_new = flags.count(0)
    positions = list(islice((p for p, k in enumerate(flags) if not k), top))  # not every new one
    chosen = {p: kept[p] if p < len(kept) else tap.held.get(p) for p in positions}
    missing = {p for p, finding in chosen.items() if finding is None}
    if missing and pick is not None:
        chosen.update(pick(missing))
    new = [f for f in (chosen[p] for p in positions) if f is not None]
    old = [f for f, k in zip(kept, flags, strict=False) if k][:max(0, top - len(new))]
    ordered = _reordered(result, new, old, len(matched.stale))
    gate = decide(status, rc, total=total, classified=len(flags), new=count_new,
                  gate_failures=failures, first_new=new[0].id if new else "")
    return Gated(ordered, gate, {"known": len(flags) - count_new, "new": count_new},
                 range(len(new), len(new) + len(old)), None, known=flags)


def _reordered(result: ParseResult, new: list[Finding], old: list[Finding],
               stale: int) -> ParseResult:
    """``result`` with its findings listed new first, then the known ones, and the
    baseline's stale entries counted (``baseline_stale``) when there are any."""
    summary = dict(result.summary)
    if stale:
        summary["baseline_stale"] = stale
    return ParseResult(findings=[*new, *old], findings_total=result.total, summary=summary,
                       parser_ok=result.parser_ok, notes=list(result.notes),
                       gate_failures=list(result.gate_failures),
                       evidence_expected=result.evidence_expected,
                       wants_log_tail=result.wants_log_tail)


def native_only_gate(result: ParseResult | None) -> Gated:
    """An imported run under ``[run].gate_requires_native``: the gate fails, whatever the
    file says."""
    return Gated(result if result is not None else ParseResult(),
                 {"status": "fail", "policy": "no_new_findings",
                  "reason": "an imported run cannot satisfy the gate "
                            "([run].gate_requires_native)"})


def gate_of_run(config: Config, name: str, check: Check | None, run_dir: str, *, status: str,
                rc: int, result: ParseResult, tap: FindingTap | None = None) -> Gated:
    """The gate of a run whose status is ``status``: of the configured ``check`` ckdn ran
    (its evidence can be read again), or of a run a host made (``check`` None: its facts
    are all there is, so a host that kept fewer findings than it counted gets
    ``unavailable``). ``name`` keys the baseline."""
    baseline = config.run.baseline
    assert baseline is not None
    if check is None:
        return gate_run(baseline_path=baseline, shown_path=shown_path(baseline, config.cwd),
                        check=name, cwd=config.cwd, status=status, rc=rc, result=result,
                        every_finding=lambda: result.findings)
    return gate_run(baseline_path=baseline, shown_path=shown_path(baseline, config.cwd),
                    check=name, cwd=config.cwd, status=status, rc=rc, result=result,
                    every_finding=read_again(config, check, run_dir, rc), tap=tap,
                    pick=pick_again(config, check, run_dir, rc))
