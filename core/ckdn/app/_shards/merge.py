"""``ckdn merge``: shard runs of one check sealed as one run of it, failing closed (a missing,
unfinished or contradicting shard is never green); coverage is combined by coverage.py.
Imported shards (``ckdn import``) make an imported whole: rc null, an import's status.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ckdn.app._hosts.runs import HostLog, begin_host_run
from ckdn.app._running.imported import ImportedRun
from ckdn.app._running.parsing import options_for, parse_run
from ckdn.app._running.steps import Outcome, store_for
from ckdn.app._shards.selection import read_plan_file, read_shard_file
from ckdn.app._stored.outcomes import run_durations
from ckdn.config import HOST_SEPARATOR, Alias, Check
from ckdn.documents import SCHEMA_DIGEST
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError, quote
from ckdn.identity import (
    FINDINGS_FILE,
    FindingRow,
    SourceLines,
    fingerprints,
    read_findings,
)
from ckdn.identity.merge import (
    dedupe,
    merge_import_summaries,
    merge_origins,
    merge_summaries,
    outcome_conflicts,
)
from ckdn.identity.plan import Unrun, check_shards, superseded
from ckdn.parsers.base import Finding, ParseResult
from ckdn.parsers.gates import is_coverage_gate
from ckdn.parsers.outcomes import TEST_PARSERS, worse
from ckdn.store import FINISHED_MARKERS, Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ckdn.config import Config
    from ckdn.documents.types import ImportedFacts, ImportedOrigin
    from ckdn.identity import FindingRow
    from ckdn.identity.plan import Plan, ShardRecord
    from ckdn.store import Store

__all__ = ["Covered", "combine_coverage", "merge_runs"]

#: Severity of a shard's status: the worst one decides the merged rc.
_SEVERITY = {"pass": 0, "fail": 1, "parse_mismatch": 2, "error": 3}
#: Problems listed one by one in the digest's notes; the rest are counted.
PROBLEMS_SHOWN = 20
#: Characters of a shard reference a message shows.
_NAME_CHARS = 200
#: Hex digits of a sha256.
_SHA256_CHARS = 64
#: The digest keys the merge reads beyond the required ones, and the JSON type each has.
_SHAPES = (("summary", dict, "an object"), ("findings", list, "an array"),
           ("gate_failures", list, "an array"), ("findings_total", int, "an integer"),
           ("notes", list, "an array"))


class Shard:
    """One shard as read: its digest and rows, or the problem that makes it unusable."""

    __slots__ = ("coverage", "digest", "durations", "name", "outcomes", "path", "problem",
                 "record", "rows", "unlisted")

    def __init__(self, name: str) -> None:
        self.name = name
        self.path = ""
        self.digest: dict[str, Any] = {}
        self.problem: str | None = None
        self.rows: list[FindingRow] = []
        self.unlisted = 0  # findings counted by the digest and not in its rows
        self.outcomes: dict[str, str] | None = None
        self.durations: dict[str, float] = {}
        self.record: ShardRecord | None = None  # its shard.json, read for --plan
        self.coverage: list[str] = []  # coverage.py data files in the run dir


def merge_runs(config: Config, name: str, refs: Sequence[str], *,
               expect: int | None = None, plan: str | None = None) -> Outcome:
    """Read the shards ``refs`` of check ``name`` and seal their merge as a run of it;
    ``plan``: the plan file they ran (each planned test run by exactly one shard)."""
    known = name in config.checks or name in config.aliases
    # a name no check is configured under holds only imports (ckdn import --as NAME)
    check = config.get(name) if known or not refs else Check(name, "", (), "import")
    if isinstance(check, Alias):
        raise UsageError(f"{quote(name)} is an alias; ckdn merge merges shards of one "
                         f"check: merge each member ({', '.join(check.members)})")
    if expect is not None and expect < 1:
        raise UsageError(f"--expect {expect}: the number of shards must be at least 1")
    if not refs and expect is None:
        raise UsageError("name the shards to merge: run dirs (or their digest.json) "
                         "copied from the jobs that ran them, or run ids")
    planned = read_plan_file(os.path.join(config.cwd, plan)) if plan is not None else None
    if planned is not None and planned.check != name:
        raise UsageError(f"--plan {quote(plan or '')}: a plan of {quote(planned.check)}, not "
                         f"of {quote(name)}")
    if planned is not None and expect is None:
        expect = planned.total
    clock = time.perf_counter()
    store = store_for(config)
    shards = [_read_shard(config, store, check, ref) for ref in refs]
    if not known and not any(_is_import(s, name) for s in shards):
        config.get(name)  # refused as before: no import of that name to merge either
    replaced: list[str] = []
    if planned is not None:
        by_rerun = superseded([s.record if s.problem is None else None for s in shards])
        replaced = [f"shard {shards[p].name}: replaced by its rerun {shards[by].name}"
                    for p, by in sorted(by_rerun.items())]
        shards = [s for p, s in enumerate(shards) if p not in by_rerun]
    with begin_host_run(config, name) as host:
        log = host.open_log()
        for line in replaced:
            log.write(line + "\n")
        result, rows = _merged(config, check, shards, expect=expect,
                              run_dir=host.run_dir, log=log, plan=planned)
        result.notes.extend(replaced)
        marks = _imported_marks(shards, name, result)
        # an import's meta.json rc is 0 (the published meta schema needs an integer)
        rc = 0 if marks is not None else _worst_rc(shards, name)
        identities = rows if result.total == len(rows) else None
        outcomes, durations = _whole_outcomes(shards)
        settings = ["ckdn", "merge", "--check", name, *(["--plan", plan] if plan else [])]
        return host.seal(argv=[*settings, *refs], settings_argv=settings, rc=rc,
                         duration=time.perf_counter() - clock, result=result,
                         parser="merge", gated=True, identities=identities,
                         outcomes=outcomes, durations=durations, imported=marks)


def _whole_outcomes(shards: list[Shard]) -> tuple[dict[str, str] | None, dict[str, float]]:
    """Every test's outcome and seconds in the whole, when every shard kept them (the
    merged run's ``tests.jsonl``: what ``ckdn durations update`` folds)."""
    if not shards or any(s.problem is not None or s.outcomes is None for s in shards):
        return None, {}
    outcomes: dict[str, str] = {}
    durations: dict[str, float] = {}
    for shard in shards:
        assert shard.outcomes is not None
        for ident, outcome in shard.outcomes.items():
            known = outcomes.get(ident)
            outcomes[ident] = outcome if known is None else worse(known, outcome)
        for ident, seconds in shard.durations.items():
            durations[ident] = max(seconds, durations.get(ident, 0.0))
    return outcomes, durations


def _read_shard(config: Config, store: Store, check: Check, ref: str) -> Shard:
    shard = Shard(ref[:_NAME_CHARS])
    path = os.path.join(config.cwd, ref)
    if os.path.basename(path) in ("digest.json", "aggregate.json") and os.path.isfile(path):
        path = os.path.dirname(path)
    if not os.path.lexists(path):
        try:
            path = store.resolve(ref)
        except UsageError:
            shard.problem = "not found (a run dir, its digest.json, or a run id)"
            return shard
    shard.path = _newest_run(config, path, check.name)
    try:
        digest: dict[str, Any] = dict(read_stored(shard.path, lambda p: shard.name))
    except UsageError as exc:
        shard.problem = exc.message.removeprefix(shard.name + ": ")
        return shard
    shard.digest = digest
    shard.problem = _unusable(digest, check.name)
    if shard.problem is None:
        _read_facts(config, check, shard)
    return shard


def _newest_run(config: Config, path: str, name: str) -> str:
    """``path`` itself, or the newest run of ``name`` in it when it is a runs dir (a CI job's
    whole ``.agent-runs`` uploaded and downloaded as one artifact)."""
    markers = [name for name, _kind in FINISHED_MARKERS] + ["full.log"]
    if not os.path.isdir(path) or os.path.islink(path) \
            or any(os.path.lexists(os.path.join(path, marker)) for marker in markers):
        return path
    try:
        names = Store(path, config.cwd).run_names(name)
    except OSError:
        return path
    return os.path.join(path, names[0]) if names else path


def _is_run_of(digest: dict[str, Any], name: str) -> bool:
    """A digest of a run of check ``name``: its own, or one tox ran in an env (``NAME@ENV``)."""
    check = digest.get("check")
    return isinstance(check, str) and (check == name or check.startswith(name + HOST_SEPARATOR))


def _unusable(digest: dict[str, Any], name: str) -> str | None:
    if "check" in digest and digest.get("schema") != SCHEMA_DIGEST:
        schema = digest.get("schema")
        said = "no schema" if schema is None else f"schema {quote(str(schema)[:_NAME_CHARS])}"
        return f"its digest.json is not a {SCHEMA_DIGEST} document ({said})"
    if "check" not in digest:
        return f"an alias run ({quote(str(digest.get('alias')))}), not a run of {quote(name)}"
    if not _is_run_of(digest, name):
        return f"a run of {quote(str(digest['check']))}, not of {quote(name)}"
    if "origin" in digest:  # the packaged schema ties it to rc null
        problem = _import_problem(digest)
        if problem is not None:
            return problem
    for flag in ("interrupted", "timed_out"):
        if digest.get(flag) is True:
            return f"{flag.replace('_', ' ')}: {digest.get('status_reason', '')}".rstrip(": ")
    if digest["status"] in ("error", "parse_mismatch"):
        return f"{digest['status']}: {digest.get('status_reason', '')}".rstrip(": ")
    if digest["status"] not in _SEVERITY:
        return f"status {quote(str(digest['status']))} is not a run's status"
    for key, kind, what in _SHAPES:
        if key in digest and not isinstance(digest[key], kind):
            return f"its digest's {key} is not {what} (not a digest ckdn wrote)"
    if "origin" not in digest and type(digest.get("rc")) is not int:  # no bool: not in _SHAPES
        return "its digest's rc is not an integer (not a digest ckdn wrote)"
    return None


def _is_import(shard: Shard, name: str) -> bool:
    """A shard that is an imported run of check ``name`` (usable or not)."""
    return _is_run_of(shard.digest, name) and "origin" in shard.digest


def _import_problem(digest: dict[str, Any]) -> str | None:
    """What makes an imported digest's marks unusable for a sum: a shape ckdn never writes."""
    origin = digest.get("origin")
    said = origin.get("imported") if isinstance(origin, dict) else None
    if not isinstance(said, dict) \
            or not all(isinstance(said.get(key), str) and said[key]
                       for key in ("format", "variant", "producer")) \
            or not isinstance(said.get("sha256"), str) or len(said["sha256"]) != _SHA256_CHARS \
            or not all(_count(said.get(key, 1)) for key in ("bytes", "files")):
        return "its digest's origin is not an import's (not a digest ckdn wrote)"
    summary = digest.get("import_summary")
    reasons = summary.get("unattached_by_reason") if isinstance(summary, dict) else None
    if not isinstance(summary, dict) or not isinstance(reasons, dict) \
            or not _count(summary.get("read")) or not _count(summary.get("attached")) \
            or not all(isinstance(k, str) and _count(v) for k, v in reasons.items()) \
            or summary["read"] != summary["attached"] + sum(reasons.values()):
        return ("its digest's import_summary does not add up: read is not attached plus "
                "unattached (not a digest ckdn wrote)")
    if digest.get("rc") is not None:
        return "its digest has an origin and an rc (not a digest ckdn wrote)"
    return None


def _count(value: object) -> bool:
    """An integer a count can be (no bool, never negative)."""
    return type(value) is int and value >= 0


def _mark_imports(shards: list[Shard], name: str) -> None:
    """Among imported shards a native one is unusable (the whole has no exit code to keep,
    and would pass for an import less weak than it is); so is a second copy of a file."""
    first = next((s.name for s in shards if _is_import(s, name)), None)
    if first is None:
        return
    seen: dict[str, str] = {}
    for shard in shards:
        if shard.problem is not None:
            continue
        if not _is_import(shard, name):
            shard.problem = (f"a run ckdn ran, among imported shards ({first}): a merge of "
                             "imports observed no exit code; merge imports with imports")
            continue
        sha256 = shard.digest["origin"]["imported"]["sha256"]
        if sha256 in seen:
            shard.problem = f"the same imported file as {seen[sha256]} (sha256 {sha256[:12]})"
        else:
            seen[sha256] = shard.name


def _imported_marks(shards: list[Shard], name: str, result: ParseResult) -> ImportedRun | None:
    """The whole's marks when its shards are imports: their origins and import summaries
    summed, and each usable shard one case (its own status says it checked something)."""
    if not any(_is_import(s, name) for s in shards):
        return None
    usable = [s for s in shards if s.problem is None]
    joined = merge_origins([s.digest["origin"]["imported"] for s in usable])
    origin: ImportedOrigin = {"format": joined["format"], "variant": joined["variant"],
                              "producer": joined["producer"], "sha256": joined["sha256"],
                              "bytes": joined["bytes"], "files": joined["files"]}
    summary = merge_import_summaries(s.digest["import_summary"] for s in usable)
    facts: ImportedFacts = {"origin": origin, "import_summary": {
        "read": summary["read"], "attached": summary["attached"],
        "unattached_by_reason": summary["unattached_by_reason"]}}
    findings = list(result.findings)  # every one: the shards' rows, deduplicated
    return ImportedRun(facts, cases=len(usable), mismatch=None, every=lambda: findings)


def _shard_line(shard: Shard) -> str:
    """What ``full.log`` says of a usable shard (an import: which file it read)."""
    digest = shard.digest
    line = (f"status={digest['status']} rc={digest['rc']} "
            f"findings={len(shard.rows) + shard.unlisted}")
    origin = digest.get("origin")
    if isinstance(origin, dict):
        said = origin["imported"]
        line = (f"status={digest['status']} rc=null imported {said['format']} "
                f"({said['variant']}, from {said['producer']}) sha256 {said['sha256']} "
                f"{said['bytes']} bytes findings={len(shard.rows) + shard.unlisted}")
    return line


def _read_facts(config: Config, check: Check, shard: Shard) -> None:
    """The shard's every finding, every test outcome and coverage data, where it kept them."""
    total = shard.digest.get("findings_total", 0)
    total = total if type(total) is int and total > 0 else 0
    file = os.path.join(shard.path, FINDINGS_FILE)
    if total and os.path.lexists(file):
        try:
            shard.rows = read_findings(file, f"{shard.name}/{FINDINGS_FILE}",
                                       shard.digest["check"])
        except UsageError as exc:
            shard.problem = exc.message
            return
        if len(shard.rows) != total:
            shard.problem = (f"{FINDINGS_FILE} holds {len(shard.rows)} finding(s), its digest "
                             f"counts {total}")
            return
    elif total:
        shard.rows = _listed_rows(config, check.name, shard.digest)
        shard.unlisted = total - len(shard.rows)
    _read_outcomes(config, check, shard)
    shard.coverage = _coverage_files(shard.path)


def _listed_rows(config: Config, name: str, digest: dict[str, Any]) -> list[FindingRow]:
    """The findings the digest lists (a shard with no ``findings.jsonl``), fingerprinted
    here: they are deduplicated with the rest as well as they can be."""
    findings = [Finding(f["id"], f["kind"], f.get("message", ""), f.get("location"))
                for f in digest.get("findings", ()) if isinstance(f, dict)
                and isinstance(f.get("id"), str) and isinstance(f.get("kind"), str)]
    identities = fingerprints(findings, SourceLines(config.cwd))
    return [FindingRow(item.fingerprint, f.id, f.kind, f.location, f.message)
            for f, item in zip(findings, identities, strict=True)]


def _read_outcomes(config: Config, check: Check, shard: Shard) -> None:
    try:
        found = run_durations(config, shard.digest["check"], shard.path, shard.digest["rc"])
    except UsageError as exc:
        shard.problem = exc.message
        return
    if found is not None:
        shard.outcomes, shard.durations = found
    shard.record = read_shard_file(shard.path)


def _coverage_files(path: str) -> list[str]:
    """coverage.py data files the shard's run dir holds (``COVERAGE_FILE={run_dir}/.coverage``)."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [os.path.join(path, n) for n in names
            if (n == ".coverage" or n.startswith(".coverage."))
            and os.path.isfile(os.path.join(path, n))
            and not os.path.islink(os.path.join(path, n))]


def _shard_count(given: int, expect: int) -> str:
    """The problem of ``given`` shards where ``expect`` were due: fewer is a part unrun."""
    said = f"{given} shard(s) given, {expect} expected"
    return Unrun(f"{said} (missing)") if given < expect else f"{said} (more than expected)"


def _merged(config: Config, check: Check, shards: list[Shard], *, expect: int | None,
            run_dir: str, log: HostLog, plan: Plan | None = None
            ) -> tuple[ParseResult, list[FindingRow]]:
    """The facts of the whole and its distinct findings' rows (in the digest's order);
    the merge's account of each shard written to ``log``."""
    _mark_unusable(shards, check.name)
    problems: list[str] = []
    usable = [s for s in shards if s.problem is None]
    log.write(f"ckdn merge --check {check.name}: {len(shards)} shard(s)"
              + (f", {expect} expected" if expect is not None else "") + "\n")
    for index, shard in enumerate(shards, 1):
        log.write(f"shard {index}: {shard.name}: " + (
            f"UNUSABLE: {shard.problem}" if shard.problem is not None else
            _shard_line(shard)) + "\n")
        if shard.problem is not None:
            problems.append(f"shard {shard.name}: {shard.problem}")
    if expect is not None and len(shards) != expect:
        problems.insert(0, _shard_count(len(shards), expect))
    conflicts, clashing, repeated = outcome_conflicts([s.outcomes for s in usable])
    names = [s.name for s in usable]
    problems += [f"shards disagree on {c.describe(names)}" for c in conflicts]
    if clashing > len(conflicts):
        problems.append(f"... and {clashing - len(conflicts)} more test(s) the shards "
                        "disagree on")
    notes = _outcome_notes(check, usable, repeated)
    if plan is not None:
        planned, plan_notes = check_shards(plan, [(s.name, s.record, s.outcomes)
                                                  for s in usable])
        problems += planned
        notes += [f"plan {plan.plan_id}: {len(plan.shard_of)} planned test(s) in {plan.total} "
                  "shards, checked", *plan_notes]
    rows = dedupe(s.rows for s in usable)
    findings = _findings(rows, usable)
    unlisted = sum(s.unlisted for s in usable)
    if unlisted:
        notes.append(f"{unlisted} finding(s) of shards without findings.jsonl are counted, "
                     "not listed or deduplicated; findings.jsonl not written")
    summary, dropped = merge_summaries([s.digest.get("summary") or {} for s in usable])
    if plan is not None:
        _undo_shard_deselection(summary, usable)
    gate_failures = list(dict.fromkeys(g for s in usable for g in s.digest.get("gate_failures", ())
                                       if isinstance(g, str)))
    covered = combine_coverage(config, check, usable, run_dir, log)
    if covered is not None:
        problems += covered.problems
        notes += covered.notes
        counts = covered.summary.pop("counts", None)
        summary.update(covered.summary)
        if isinstance(counts, dict):
            summary["counts"] = {**summary.get("counts", {}), **counts}
        dropped = [key for key in dropped if key.split(".")[0] not in covered.summary]
        if covered.decided:
            gate_failures = [g for g in gate_failures if not covered.is_own(g)]
            gate_failures += covered.gate_failures
    if dropped:
        notes.append("summary keys the shards disagree on, left out: " + ", ".join(dropped[:20]))
    for problem in problems:
        log.write(f"problem: {problem}\n")
    if problems:
        head = problems[0] + (f" (and {len(problems) - 1} more problem(s))"
                              if len(problems) > 1 else "")
        shown = problems[1:PROBLEMS_SHOWN]
        if len(problems) > PROBLEMS_SHOWN:
            shown.append(f"... and {len(problems) - PROBLEMS_SHOWN} more problem(s) in full.log")
        notes = [f"the shards do not make a whole: {head}", *shown, *notes]
    return ParseResult(findings=findings, findings_total=len(findings) + unlisted,
                       summary=summary, parser_ok=not problems, notes=notes,
                       unrun=any(isinstance(problem, Unrun) for problem in problems),
                       gate_failures=gate_failures, wants_log_tail=bool(problems)), rows


def _undo_shard_deselection(summary: dict[str, Any], usable: list[Shard]) -> None:
    """The tests a shard left to the others are not deselected from the whole."""
    counts = summary.get("counts")
    if not isinstance(counts, dict) or type(counts.get("deselected")) is not int:
        return
    by_shards = sum(s.record.deselected for s in usable if s.record is not None)
    counts["deselected"] = max(counts["deselected"] - by_shards, 0)
    if not counts["deselected"]:
        del counts["deselected"]


def _mark_unusable(shards: list[Shard], name: str) -> None:
    """The shards read alone were usable; together some are not (a copy, a native among
    imports): each gets its problem."""
    _mark_duplicates(shards)
    _mark_imports(shards, name)


def _mark_duplicates(shards: list[Shard]) -> None:
    """A shard given twice would be counted twice: each later copy is unusable."""
    seen: dict[str, str] = {}
    for shard in shards:
        if shard.problem is not None or not shard.path:
            continue
        real = os.path.realpath(shard.path)
        if real in seen:
            shard.problem = f"the same run as {seen[real]}"
        else:
            seen[real] = shard.name


def _outcome_notes(check: Check, usable: list[Shard], repeated: int) -> list[str]:
    notes = []
    unknown = [s.name for s in usable if s.outcomes is None]
    if unknown and len(usable) > 1 and check.parser in TEST_PARSERS:
        notes.append("test outcomes not compared for " + ", ".join(unknown[:10])
                     + ": no record of every test's outcome (JUnit report or tests.jsonl)")
    if repeated:
        notes.append(f"{repeated} test(s) ran in more than one shard with the same outcome "
                     "(their counts are summed)")
    return notes


def _findings(rows: list[FindingRow], usable: list[Shard]) -> list[Finding]:
    """Findings for the digest, each with the snippet its shard's digest showed."""
    detail: dict[tuple[str, str | None], tuple[str, ...]] = {}
    for shard in usable:
        for f in shard.digest.get("findings", ()):
            if isinstance(f, dict) and isinstance(f.get("detail"), list):
                key = (f.get("id"), f.get("location"))
                detail.setdefault(key, tuple(str(d) for d in f["detail"]))  # type: ignore[arg-type]
    return [Finding(r.id, r.kind, r.message, r.location, detail.get((r.id, r.location), ()))
            for r in rows]


def _worst_rc(shards: list[Shard], name: str) -> int:
    """The rc of the first shard of the check with the worst status, a nonzero rc before a
    zero one (an unusable shard too: an interrupted shard's 130 is the merge's)."""
    worst, rc = (-1, False), 0
    for shard in shards:
        if not _is_run_of(shard.digest, name):
            continue
        code = shard.digest.get("rc")
        if type(code) is not int:  # an import's null, or not ckdn's: its problem says which
            continue
        severity = (_SEVERITY.get(shard.digest["status"], 3), code != 0)
        if severity > worst:
            worst, rc = severity, code
    return rc


#: How long one coverage.py command may take before the merge gives up on it.
TIMEOUT_S = 600
_HINT = 'keep each shard\'s data file in its run dir: env = {COVERAGE_FILE = "{run_dir}/.coverage"}'


class Covered:
    """What the combined coverage adds to the merge."""

    __slots__ = ("decided", "gate_failures", "notes", "problems", "summary")

    def __init__(self, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        self.notes: list[str] = []
        self.summary: dict[str, Any] = {}
        self.gate_failures: list[str] = []
        self.decided = False  # the combined total decided the coverage gate

    @staticmethod
    def is_own(gate_failure: str) -> bool:
        """A shard's coverage gate failure, which the combined total replaces."""
        return is_coverage_gate(gate_failure)


def combine_coverage(config: Config, check: Check, shards: Sequence[Shard], run_dir: str,
                     log: HostLog) -> Covered | None:
    """Combine the shards' coverage data into ``run_dir``; None when there is none to merge."""
    having = [s for s in shards if s.coverage]
    if not having:
        if check.parser == "coverage" and len(shards) > 1:
            return Covered([f"the coverage totals of {len(shards)} shards cannot be combined: "
                            f"no coverage.py data file in their run dirs; {_HINT}"])
        return None
    covered = Covered([f"shard {s.name}: no coverage.py data file in its run dir, while "
                       f"other shards have one; {_HINT}" for s in shards if not s.coverage])
    data = _shown_path(config, os.path.join(run_dir, ".coverage"))
    files = [_shown_path(config, f) for s in having for f in s.coverage]
    if not _coverage(config, log, ["combine", "--keep", "--data-file", data, *files], covered):
        return covered
    options = options_for(check, run_dir)
    reports = [("json", str(options.get("coverage_json", "coverage.json")))]
    if "coverage_xml" in options or check.parser != "coverage":
        reports.append(("xml", str(options.get("coverage_xml", "coverage.xml"))))
    for kind, name in reports:
        target = _shown_path(config, os.path.join(run_dir, name))
        if not _coverage(config, log, [kind, "--data-file", data, "-o", target], covered,
                         report=target):
            return covered
    if check.parser != "coverage":
        covered.notes.append(f"coverage of {len(files)} data file(s) combined into "
                             f"{reports[0][1]} in the run dir")
        return covered
    parsed = parse_run(config, check.name, "coverage", run_dir, 0, options=options, top=None)
    if not parsed.parser_ok:
        covered.problems.append("the combined coverage report cannot be read: "
                                + "; ".join(parsed.notes))
        return covered
    covered.summary = dict(parsed.summary)  # its counts are coverage's only (no JUnit read)
    covered.gate_failures = list(parsed.gate_failures)
    covered.notes = [f"coverage of {len(files)} data file(s) combined by coverage.py; its total "
                     "decides fail_under for the whole", *parsed.notes]
    covered.decided = True
    return covered


def _shown_path(config: Config, path: str) -> str:
    """``path`` relative to the check's directory when inside it (the log reads better)."""
    relative = os.path.relpath(path, config.cwd)
    return path if relative.startswith("..") else relative


def _coverage(config: Config, log: HostLog, args: list[str], covered: Covered,
              report: str | None = None) -> bool:
    """Run ``python -m coverage ARGS`` from the check's directory, its output into the log.

    A report command exits 2 when the project's own ``[report] fail_under`` is missed,
    having written the report: that is a total, not a failure (the gate is ckdn's).
    """
    command = [sys.executable, "-m", "coverage", *args]
    log.write("$ python -m coverage " + " ".join(args) + "\n")
    try:
        done = subprocess.run(command, cwd=config.cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        covered.problems.append(f"coverage {args[0]} did not finish: {exc}")
        return False
    output = done.stdout.decode("utf-8", "backslashreplace")
    log.write(output if output.endswith("\n") or not output else output + "\n")
    if done.returncode == 2 and report is not None \
            and os.path.isfile(os.path.join(config.cwd, report)):
        return True
    if done.returncode != 0:
        last = output.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        why = ("coverage.py is not installed where ckdn runs (pip install coverage)"
               if "No module named coverage" in output else last[0][:300])
        covered.problems.append(f"coverage {args[0]} failed: {why}")
        return False
    return True
