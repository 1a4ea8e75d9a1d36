"""A shard plan (``ckdn.plan/1``): which shard runs which test, decided once, checked at the merge.

Pure: durations in, a plan out; a plan and a collected test set in, one shard's selection out;
a plan and the shards' records in, every way they fail to make the whole out.
"""

from __future__ import annotations

import hashlib
import heapq

from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

__all__ = [
    "SCHEMA_PLAN",
    "SCHEMA_SHARD",
    "Plan",
    "Selection",
    "ShardRecord",
    "Unrun",
    "check_shards",
    "hashed_shard",
    "make_plan",
    "read_plan",
    "read_shard_record",
    "select",
    "superseded",
]

SCHEMA_PLAN = "ckdn.plan/1"
SCHEMA_SHARD = "ckdn.shard/1"
#: The duration of a test no run timed, when no test was timed either.
FALLBACK_SECONDS = 1.0
#: Tests a problem or a note names one by one; the rest are counted.
NAMED = 20


class Plan:
    """N shards, each a list of node ids; ``plan_id`` hashes the test set, durations and N."""

    __slots__ = ("check", "default_seconds", "plan_id", "seconds", "shard_of", "shards")

    def __init__(self, check: str, shards: list[list[str]], seconds: list[float],
                 plan_id: str, default_seconds: float) -> None:
        self.check = check
        self.shards = shards
        self.seconds = seconds
        self.plan_id = plan_id
        self.default_seconds = default_seconds
        self.shard_of = {ident: k for k, ids in enumerate(shards, 1) for ident in ids}

    @property
    def total(self) -> int:
        return len(self.shards)

    def document(self) -> dict[str, Any]:
        return {"schema": SCHEMA_PLAN, "check": self.check, "plan_id": self.plan_id,
                "total": self.total, "tests": len(self.shard_of),
                "default_seconds": round(self.default_seconds, 6),
                "shards": [{"index": k, "count": len(ids), "seconds": round(s, 6), "tests": ids}
                           for k, (ids, s) in enumerate(zip(self.shards, self.seconds,
                                                            strict=True), 1)]}


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _plan_id(total: int, timed: Iterable[tuple[str, float]]) -> str:
    digest = hashlib.sha256(f"{SCHEMA_PLAN}\n{total}\n".encode())
    for ident, seconds in timed:
        digest.update(f"{ident}\t{seconds:.6f}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def make_plan(check: str, durations: Mapping[str, float | None], total: int) -> Plan:
    """Longest first onto the least loaded shard (ties: the id, then the lower shard);
    a test without a duration weighs the median. Fewer tests than shards is refused."""
    if total < 1:
        raise UsageError(f"--shards {total}: the number of shards must be at least 1")
    if len(durations) < total:
        raise UsageError(f"{len(durations)} test(s) for {total} shards: a shard would run "
                         "nothing; plan fewer shards")
    known = [s for s in durations.values() if s is not None and s >= 0]
    default = _median(known) if known else FALLBACK_SECONDS
    timed = sorted(((ident, float(s) if s is not None and s >= 0 else default)
                    for ident, s in durations.items()), key=lambda item: (-item[1], item[0]))
    heap = [(0.0, k) for k in range(total)]
    shards: list[list[str]] = [[] for _ in range(total)]
    loads = [0.0] * total
    for ident, seconds in timed:
        load, k = heapq.heappop(heap)
        shards[k].append(ident)
        loads[k] = load + seconds
        heapq.heappush(heap, (loads[k], k))
    for ids in shards:
        ids.sort()
    return Plan(check, shards, loads, _plan_id(total, sorted(timed)), default)


def hashed_shard(ident: str, total: int) -> int:
    """The shard (1-based) of a test the plan does not know: the same on every machine."""
    digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def _fail(shown: str, why: str) -> UsageError:
    return UsageError(f"{shown}: not a {SCHEMA_PLAN} document ({why})")


def read_plan(value: Any, shown: str) -> Plan:
    """The plan of a parsed ``ckdn.plan/1`` document; UsageError naming ``shown`` if not one."""
    if not isinstance(value, dict) or value.get("schema") != SCHEMA_PLAN:
        raise _fail(shown, "no such schema")
    shards, check, plan_id = value.get("shards"), value.get("check"), value.get("plan_id")
    if not isinstance(shards, list) or not shards or not isinstance(check, str) \
            or not isinstance(plan_id, str) or value.get("total") != len(shards):
        raise _fail(shown, "check, plan_id, total and shards")
    lists: list[list[str]] = []
    seconds: list[float] = []
    seen: set[str] = set()
    for k, shard in enumerate(shards, 1):
        if not isinstance(shard, dict) or shard.get("index") != k \
                or not isinstance(shard.get("tests"), list) \
                or not all(isinstance(t, str) for t in shard["tests"]) \
                or shard.get("count") != len(shard["tests"]) \
                or not isinstance(shard.get("seconds"), (int, float)):
            raise _fail(shown, f"shard {k}")
        twice = seen.intersection(shard["tests"])
        if twice or len(set(shard["tests"])) != len(shard["tests"]):
            raise _fail(shown, f"a test planned twice: {sorted(twice)[:1]}")
        seen.update(shard["tests"])
        lists.append(list(shard["tests"]))
        seconds.append(float(shard["seconds"]))
    if value.get("tests") != len(seen):
        raise _fail(shown, "its test count")
    default = value.get("default_seconds")
    return Plan(check, lists, seconds, plan_id,
                float(default) if isinstance(default, (int, float)) else FALLBACK_SECONDS)


class Selection:
    """One shard's part of a collected test set, and what the plan did not foresee."""

    __slots__ = ("deselected", "gone", "index", "plan_id", "rerun", "selected", "total",
                 "unplanned")

    def __init__(self, index: int, total: int, plan_id: str | None) -> None:
        self.index, self.total, self.plan_id = index, total, plan_id
        self.rerun = False  # this session reruns its shard: it replaces the earlier run
        self.selected: list[str] = []
        self.deselected = 0
        self.unplanned: list[str] = []  # selected here by hash: the plan does not know them
        self.gone: list[str] = []  # planned for this shard, not collected

    def record(self) -> dict[str, Any]:
        """The ``ckdn.shard/1`` record a shard's run dir keeps, for ``ckdn merge --plan``."""
        return {"schema": SCHEMA_SHARD, "plan_id": self.plan_id, "index": self.index,
                "total": self.total, "selected": len(self.selected),
                "deselected": self.deselected, "unplanned": self.unplanned, "gone": self.gone,
                "rerun": self.rerun}

    def describe(self) -> str:
        """One line for the session's output and its digest's notes."""
        plan = f"plan {self.plan_id}" if self.plan_id else "no plan: every test by hash"
        line = (f"shard {self.index}/{self.total} ({plan}): {len(self.selected)} test(s) "
                f"selected, {self.deselected} deselected")
        if self.unplanned and self.plan_id:
            line += (f", {len(self.unplanned)} unplanned (placed by hash): "
                     + ", ".join(self.unplanned[:5]) + (" ..." if len(self.unplanned) > 5 else ""))
        if self.gone:
            line += f", {len(self.gone)} planned here and not collected"
        return line


def select(plan: Plan | None, collected: Sequence[str], index: int, total: int) -> Selection:
    """Shard ``index`` of ``total`` of ``collected`` (in its order); UsageError when the plan
    has another number of shards."""
    if plan is not None and plan.total != total:
        raise UsageError(f"shard {index}/{total}, but the plan has {plan.total} shards "
                         f"(plan {plan.plan_id})")
    chosen = Selection(index, total, plan.plan_id if plan is not None else None)
    shard_of = plan.shard_of if plan is not None else {}
    keep, unplanned = chosen.selected.append, chosen.unplanned.append
    seen = set()
    for ident in collected:
        seen.add(ident)
        k = shard_of.get(ident)
        if k is None:
            if hashed_shard(ident, total) == index:
                keep(ident)
                unplanned(ident)
        elif k == index:
            keep(ident)
    chosen.deselected = len(collected) - len(chosen.selected)
    if plan is not None:
        chosen.gone = [ident for ident in plan.shards[index - 1] if ident not in seen]
    return chosen


class ShardRecord:
    """A shard's ``ckdn.shard/1`` record, read back."""

    __slots__ = ("deselected", "gone", "index", "plan_id", "rerun", "total", "unplanned")

    def __init__(self, plan_id: str | None, index: int, total: int, *, unplanned: list[str],
                 gone: list[str], deselected: int = 0, rerun: bool = False) -> None:
        self.plan_id, self.index, self.total = plan_id, index, total
        self.unplanned, self.gone, self.deselected = unplanned, gone, deselected
        self.rerun = rerun


def read_shard_record(value: Any) -> ShardRecord | None:
    """The record of a parsed ``shard.json``; None for anything ckdn did not write."""
    if not isinstance(value, dict) or value.get("schema") != SCHEMA_SHARD:
        return None
    index, total, plan_id = value.get("index"), value.get("total"), value.get("plan_id")
    lists = [value.get("unplanned"), value.get("gone")]
    if type(index) is not int or type(total) is not int or not 1 <= index <= total \
            or not (plan_id is None or isinstance(plan_id, str)) \
            or not all(isinstance(v, list) and all(isinstance(t, str) for t in v) for v in lists):
        return None
    deselected = value.get("deselected")
    deselected = deselected if type(deselected) is int and deselected >= 0 else 0
    return ShardRecord(plan_id, index, total, unplanned=list(lists[0] or ()),
                       gone=list(lists[1] or ()), deselected=deselected,
                       rerun=value.get("rerun") is True)


def superseded(records: Sequence[ShardRecord | None]) -> dict[int, int]:
    """Runs of one shard that a run marked as its rerun replaces: position -> the position
    of the rerun kept (the last one given). Without a rerun mark, each run counts."""
    groups: dict[tuple[str | None, int, int], list[int]] = {}
    for position, record in enumerate(records):
        if record is not None:
            groups.setdefault((record.plan_id, record.index, record.total), []).append(position)
    out: dict[int, int] = {}
    for positions in groups.values():
        reruns = [p for p in positions if records[p].rerun]  # type: ignore[union-attr]
        if len(positions) > 1 and reruns:
            out.update({p: reruns[-1] for p in positions if p != reruns[-1]})
    return out


def _named(what: str, ids: Sequence[str]) -> str:
    more = f" ... and {len(ids) - NAMED} more" if len(ids) > NAMED else ""
    return f"{len(ids)} {what}: {', '.join(ids[:NAMED])}{more}"


class Unrun(str):
    """A merge problem meaning part of the plan never ran (a shard missing, a planned test
    no shard ran, a shard of another plan or without its record): ``error``, where a
    contradiction (a test run twice, or by the wrong shard) is ``parse_mismatch``."""

    __slots__ = ()


def check_shards(plan: Plan, shards: Sequence[tuple[str, ShardRecord | None,
                                                    Mapping[str, str] | None]]
                 ) -> tuple[list[str], list[str]]:
    """Problems (the shards do not run the plan exactly once) and notes, for the merge.

    Each shard: its name, its record (None: none kept) and its outcomes (None: unknown).
    """
    problems: list[str] = []
    notes: list[str] = []
    by_index: dict[int, str] = {}
    ran: dict[str, list[int]] = {}
    gone: set[str] = set()
    for position, (name, record, outcomes) in enumerate(shards):
        if record is None:
            problems.append(Unrun(f"shard {name}: no shard record (shard.json): not run "
                                  "with --shard/--ckdn-shard"))
            continue
        if record.plan_id != plan.plan_id or record.total != plan.total:
            said = f"plan {record.plan_id}" if record.plan_id else "no plan"
            problems.append(Unrun(f"shard {name}: shard {record.index}/{record.total} of "
                                  f"{said}, not of plan {plan.plan_id} ({plan.total} shards)"))
            continue
        if record.index in by_index:
            problems.append(f"shard {name}: shard {record.index}/{plan.total} again (also "
                            f"{by_index[record.index]})")
            continue
        by_index[record.index] = name
        if outcomes is None:
            problems.append(Unrun(f"shard {name}: no record of its tests' outcomes (a JUnit "
                                  "report or tests.jsonl)"))
            continue
        declared = set(record.unplanned)
        # a shard can only say it did not collect its own part of the plan
        gone.update(ident for ident in record.gone if plan.shard_of.get(ident) == record.index)
        stray = []
        for ident in outcomes:
            ran.setdefault(ident, []).append(position)
            k = plan.shard_of.get(ident)
            if (k is None and ident not in declared) or (k is not None and k != record.index):
                stray.append(ident)
        if stray:
            problems.append(f"shard {name} (shard {record.index}/{plan.total}) ran "
                            + _named("test(s) the plan gives another shard, or none, "
                                     "without saying so", sorted(stray)))
        if record.unplanned:
            notes.append(f"shard {name}: " + _named("unplanned test(s), placed by hash",
                                                    sorted(record.unplanned)))
    missing = [k for k in range(1, plan.total + 1) if k not in by_index]
    if missing:
        problems.insert(0, Unrun(f"plan {plan.plan_id}: no shard ran shard(s) "
                                 + ", ".join(f"{k}/{plan.total}" for k in missing)))
    covered = {k for k in by_index if k not in missing}
    dropped = sorted(ident for ident, k in plan.shard_of.items()
                     if k in covered and ident not in ran and ident not in gone)
    if dropped:
        problems.append(Unrun(_named("planned test(s) run by no shard", dropped)))
    twice = sorted(ident for ident, where in ran.items() if len(where) > 1)
    if twice:
        problems.append(_named("test(s) run by more than one shard", twice))
    vanished = sorted(gone)
    if vanished:
        notes.append(_named("planned test(s) no longer collected (re-plan to drop them)",
                            vanished))
    return problems, notes
