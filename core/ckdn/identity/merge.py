"""Shard merge's rules on facts already read: one identity, one count, one outcome per test."""

from __future__ import annotations

import hashlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ckdn.identity._findings_file import FindingRow

__all__ = ["MIXED", "NOTHING", "Conflict", "dedupe", "merge_import_summaries", "merge_origins",
           "merge_summaries", "outcome_conflicts"]

# Pure functions over what :mod:`ckdn.app._shards.merge` read from the shards, so each
# rule is tested alone: findings are deduplicated by fingerprint (the same lint
# finding from three tox envs is one finding; a second copy of an error in a file
# is a different fingerprint, its occurrence index, so it stays), summaries are
# combined key by key (counts summed), and a test two shards report with
# different outcomes is a conflict the merge cannot settle.

#: Conflicts listed by name; the rest are counted.
CONFLICTS_SHOWN = 20
#: What a merged ``origin.imported`` says of a field its files disagree on.
MIXED = "mixed"
#: ... and of every field when no imported file was joined (the merge is never green then).
NOTHING = "none"
#: Unattached reasons a digest keeps; beyond them the rest are counted under OTHER_REASON.
REASONS_KEPT = 20
OTHER_REASON = "other"


def dedupe(groups: Iterable[Sequence[FindingRow]]) -> list[FindingRow]:
    """Every distinct finding, by fingerprint, in the order first seen."""
    seen: set[str] = set()
    out: list[FindingRow] = []
    add, keep = seen.add, out.append
    for rows in groups:
        for row in rows:
            if row.fingerprint not in seen:
                add(row.fingerprint)
                keep(row)
    return out


def merge_summaries(summaries: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """One summary for the whole, and the keys dropped because the shards disagree on them.

    A key every shard has: integers are summed (counts: tests, failures,
    violations), objects merged the same way key by key, any other value kept
    when every shard has the same one. A key some shards lack is summed over the
    ones that have it when it is an integer (a shard with no failures of a rule
    has no ``by_rule`` entry for it) and dropped otherwise; so is a value the
    shards disagree on (a percentage is not a sum: coverage is combined instead).
    """
    dropped: list[str] = []
    return _merge(summaries, "", dropped), dropped


def _merge(values: Sequence[Mapping[str, Any]], prefix: str, dropped: list[str]) -> dict[str, Any]:
    keys: dict[str, None] = {}
    for value in values:
        keys.update(dict.fromkeys(value))
    out: dict[str, Any] = {}
    for key in keys:
        present = [value[key] for value in values if key in value]
        if all(type(item) is int for item in present):
            out[key] = sum(present)
        elif all(isinstance(item, dict) for item in present):
            out[key] = _merge(present, f"{prefix}{key}.", dropped)
        elif len(present) == len(values) and all(item == present[0] for item in present):
            out[key] = present[0]
        else:
            dropped.append(prefix + key)
    return out


class Conflict:
    """A test id the shards report with more than one outcome."""

    __slots__ = ("id", "outcomes")

    def __init__(self, ident: str, outcomes: dict[str, list[int]]) -> None:
        self.id = ident
        self.outcomes = outcomes  # outcome -> the shards (0-based) that reported it

    def describe(self, names: Sequence[str]) -> str:
        said = "; ".join(f"{outcome} in {', '.join(names[i] for i in shards)}"
                         for outcome, shards in sorted(self.outcomes.items()))
        return f"{self.id}: {said}"


def outcome_conflicts(shards: Sequence[Mapping[str, str] | None]
                      ) -> tuple[list[Conflict], int, int]:
    """The first :data:`CONFLICTS_SHOWN` conflicts (by id), how many there are, and how
    many tests more than one shard ran (with the same outcome or not).

    ``None`` is a shard whose outcomes are not known (it is compared with
    nothing). One pass over every shard's tests; only ids seen in two shards
    cost more than a dict lookup.
    """
    first: dict[str, tuple[int, str]] = {}
    repeated: dict[str, dict[str, list[int]]] = {}
    for index, outcomes in enumerate(shards):
        if outcomes is None:
            continue
        for ident, outcome in outcomes.items():
            seen = first.get(ident)
            if seen is None:
                first[ident] = (index, outcome)
                continue
            by = repeated.get(ident)
            if by is None:
                by = repeated[ident] = {seen[1]: [seen[0]]}
            by.setdefault(outcome, []).append(index)
    real = sorted(ident for ident, by in repeated.items() if len(by) > 1)
    return ([Conflict(ident, repeated[ident]) for ident in real[:CONFLICTS_SHOWN]],
            len(real), len(repeated))


def merge_origins(origins: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One ``origin.imported`` for imported shards: each of format, variant and producer
    theirs when all agree, else :data:`MIXED`; ``sha256`` that of their sha256s sorted, one
    a line (the same files in any order are the same merge); ``bytes`` and ``files`` summed."""
    out: dict[str, Any] = {}
    for key in ("format", "variant", "producer"):
        values = {str(origin[key]) for origin in origins}
        out[key] = values.pop() if len(values) == 1 else MIXED if values else NOTHING
    hashes = sorted(str(origin["sha256"]) for origin in origins)
    out["sha256"] = hashlib.sha256("".join(f"{h}\n" for h in hashes).encode()).hexdigest()
    out["bytes"] = sum(int(origin["bytes"]) for origin in origins)
    out["files"] = sum(int(origin.get("files", 1)) for origin in origins)
    return out


def merge_import_summaries(summaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The shards' ``import_summary`` summed field by field and reason by reason, so
    ``read == attached + unattached`` holds for the whole when it holds for each."""
    read = attached = 0
    reasons: dict[str, int] = {}
    for summary in summaries:
        read += summary["read"]
        attached += summary["attached"]
        for reason, count in summary["unattached_by_reason"].items():
            reasons[reason] = reasons.get(reason, 0) + count
    named = sorted(reasons)
    if len(named) > REASONS_KEPT:  # the digest keeps 20: the rest, summed, still adds up
        rest = sum(reasons.pop(reason) for reason in named[REASONS_KEPT - 1:])
        reasons[OTHER_REASON] = reasons.get(OTHER_REASON, 0) + rest
    return {"read": read, "attached": attached,
            "unattached_by_reason": dict(sorted(reasons.items()))}
