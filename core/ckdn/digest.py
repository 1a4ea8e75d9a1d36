"""The three documents a run leaves behind: digest, aggregate and meta.

The digest (``ckdn.digest/2``) is the only thing a reader is meant to read, so it
is built to three promises:

* **Sparse.** Absent keys mean empty / 0 / false; a green pass is five keys.
* **Deterministic.** Identical inputs give byte-identical :func:`encode` output:
  no times, no hashes, no machine paths beyond ``run_dir``. Provenance goes to
  the meta document (``ckdn.meta/1``) instead.
* **Bounded in bytes.** Whatever the tool printed (a 2 GB log, a 100 MB line, a
  million findings, control characters, invalid UTF-8) the encoded digest stays
  under :data:`MAX_DIGEST_BYTES`. Every cut is counted where it happened, never
  silent: ``... [+N chars]`` on a line, ``... [+N more lines]`` in a snippet,
  ``findings_truncated``, ``... [+N more notes]``, a leading tail line
  ``... [N earlier tail lines dropped to fit the digest]``.

Text policy (applies to every string a digest carries, see :mod:`ckdn.textcap`):
ANSI escape sequences are stripped; other control characters (all C0 but tab, and
DEL) and lone surrogates become U+FFFD, so no character costs more than four
encoded bytes and a reader never receives terminal control codes. A finding
``message``, a note, a gate failure and every summary string are single lines:
their line breaks are folded into single spaces (only whitespace is lost); a
``detail`` entry with line breaks is split into several snippet lines. The log
tail is read by :mod:`ckdn.logtail`.

When the encoded digest exceeds :data:`DIGEST_BUDGET`, it is shrunk in a fixed
order until it fits: shown findings from the end (never below one), the log tail
from its start (never below its last line), notes from the end, summary values
(largest first), and as a last resort the remaining snippet lines and artifact
names. What is left then is width-capped strings and at most
:data:`MAX_GATE_FAILURES` gate failures: under 40 KiB even if every character
took four bytes, so the loop always ends under the budget.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from pathlib import Path

from ckdn._record import Record, record
from ckdn.logtail import read_log_tail
from ckdn.parsers.base import Finding, ParseResult
from ckdn.reconcile import (
    ERROR,
    FAIL,
    PARSE_MISMATCH,
    PASS,
    SKIPPED,
    STATUSES,
    Exit,
    Verdict,
    exit_code,
)
from ckdn.textcap import (
    ARTIFACT_WIDTH,
    CHECK_WIDTH,
    ID_WIDTH,
    KIND_WIDTH,
    LINE_WIDTH,
    MESSAGE_WIDTH,
    RUN_DIR_WIDTH,
    as_text,
    cap,
    clean_cap,
    clean_line,
    unsurrogate,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DIGEST_BUDGET",
    "LINE_WIDTH",
    "MAX_DIGEST_BYTES",
    "MESSAGE_WIDTH",
    "SCHEMA_AGGREGATE",
    "SCHEMA_DIGEST",
    "SCHEMA_META",
    "Bounds",
    "Member",
    "aggregate_status",
    "build_aggregate",
    "build_digest",
    "build_meta",
    "cap",
    "encode",
    "read_log_tail",
    "render",
]

SCHEMA_DIGEST = "ckdn.digest/2"
SCHEMA_AGGREGATE = "ckdn.aggregate/1"
SCHEMA_META = "ckdn.meta/1"

#: Hard ceiling: ``len(encode(build_digest(...)))`` is always below this.
MAX_DIGEST_BYTES = 65536
#: What the shrinking aims for; the gap to the ceiling is headroom, not a target.
DIGEST_BUDGET = 60 * 1024

# Width caps (MESSAGE_WIDTH, LINE_WIDTH...) live with the cleaning in ckdn.textcap;
# these count items. Together they bound the digest in bytes.
MAX_ARTIFACTS = 100
MAX_GATE_FAILURES = 20

#: No JSON array item costs less than 3 bytes (``"",``), so no list in a digest can
#: ever show more items than this; larger configured limits are clamped to it.
_MAX_ITEMS = MAX_DIGEST_BYTES // 3
#: Summary nesting deeper than this is dropped (and counted).
_MAX_DEPTH = 16
#: Python refuses to print ints past ~4300 digits; JSON readers lose precision past 2**53.
_INT_LIMIT = 2**63


@functools.cache  # compiled on first use, like every pattern a passing run never needs
def _more_lines() -> re.Pattern[str]:
    return re.compile(r"\.\.\. \[\+(\d{1,18}) more lines\]")


@functools.cache
def _more_artifacts() -> re.Pattern[str]:
    return re.compile(r"\.\.\. \[\+(\d{1,18}) more(?: files)?\]")


@record
class Bounds(Record):
    """The ``[run]`` limits: findings shown, snippet lines per finding, log tail lines."""

    __slots__ = ("log_tail_lines", "max_snippet_lines", "top")
    top: int
    max_snippet_lines: int
    log_tail_lines: int

    def __init__(self, top: int = 20, max_snippet_lines: int = 12,
                 log_tail_lines: int = 40) -> None:
        self._assign(top, max_snippet_lines, log_tail_lines)


# ------------------------------------------------------------------------- digest


class _Draft:
    """A digest in parts, so each part can be shrunk and the whole re-assembled."""

    __slots__ = ("artifacts", "artifacts_dropped", "base", "findings", "findings_total", "flags",
                 "gate_failures", "gates_dropped", "notes", "notes_dropped", "summary",
                 "summary_dropped", "tail", "tail_dropped")

    def __init__(self, base: dict[str, Any]) -> None:
        self.base = base
        self.findings_total = 0
        self.findings: list[dict[str, Any]] = []
        self.summary: dict[str, Any] = {}
        self.summary_dropped = 0
        self.gate_failures: list[str] = []
        self.gates_dropped = 0
        self.notes: list[str] = []
        self.notes_dropped = 0
        self.tail: list[str] = []
        self.tail_dropped = 0
        self.artifacts: list[str] = []
        self.artifacts_dropped = 0
        self.flags: dict[str, bool] = {}

    def document(self) -> dict[str, Any]:
        """The digest, keys in the contract's reading order (``encode`` sorts anyway)."""
        base = self.base
        doc: dict[str, Any] = {k: base[k] for k in ("schema", "check", "status") if k in base}
        if "status_reason" in base:
            doc["status_reason"] = base["status_reason"]
        doc["rc"] = base["rc"]
        doc.update(self.flags)
        if self.summary:
            doc["summary"] = self.summary
        if self.findings_total > 0:
            doc["findings_total"] = self.findings_total
            if self.findings:
                doc["findings"] = self.findings
            hidden = self.findings_total - len(self.findings)
            if hidden > 0:
                doc["findings_truncated"] = hidden
        gates = _marked(self.gate_failures, self.gates_dropped, "... [+{} more gate failures]")
        if gates:
            doc["gate_failures"] = gates
        notes = _marked(self.notes, self.notes_dropped, "... [+{} more notes]")
        if self.summary_dropped:
            notes.append(f"... [summary: {self.summary_dropped} values dropped to fit the digest]")
        if notes:
            doc["notes"] = notes
        if self.tail:
            dropped = self.tail_dropped
            lead = f"... [{dropped} earlier tail lines dropped to fit the digest]"
            doc["log_tail"] = [lead, *self.tail] if dropped else list(self.tail)
        doc["run_dir"] = base["run_dir"]
        artifacts = _marked(self.artifacts, self.artifacts_dropped, "... [+{} more]")
        if artifacts:
            doc["artifacts"] = artifacts
        return doc


def _marked(items: list[str], dropped: int, marker: str) -> list[str]:
    return [*items, marker.format(dropped)] if dropped else list(items)


def build_digest(*, check: str, verdict: Verdict, exit: Exit,
                 result: ParseResult, run_dir: str, artifacts: Sequence[str],
                 log_path: Path | None, bounds: Bounds,
                 notes: Sequence[str] = ()) -> dict[str, Any]:
    """The ``ckdn.digest/2`` document of one run: sparse, deterministic, bounded.

    ``run_dir`` is the display string (forward slashes). ``notes`` are run-level
    notes (a reclaimed lock, the runner's notes); they come before the parser's and
    are the last to be dropped for space. Exact duplicate notes are shown once.
    """
    status = verdict.status
    if status not in STATUSES:
        raise ValueError(f"not a digest status: {status!r}")
    green = status == PASS
    base: dict[str, Any] = {
        "schema": SCHEMA_DIGEST,
        "check": clean_line(check, CHECK_WIDTH),
        "status": status,
        "rc": int(exit.rc),
        "run_dir": clean_line(run_dir, RUN_DIR_WIDTH),
    }
    if not green:
        base["status_reason"] = clean_line(verdict.reason or status, MESSAGE_WIDTH)
    draft = _Draft(base=base)
    if exit.timed_out:
        draft.flags["timed_out"] = True
    if exit.interrupted:
        draft.flags["interrupted"] = True

    total = max(0, result.total)
    if total:
        draft.findings_total = total
        draft.findings = _shown_findings(result.findings, min(max(0, bounds.top), total),
                                         min(max(0, bounds.max_snippet_lines), _MAX_ITEMS))
    walk = _SummaryWalk()
    draft.summary = walk.mapping(result.summary, 0) if isinstance(result.summary, Mapping) else {}
    draft.summary_dropped = walk.dropped
    draft.gate_failures, draft.gates_dropped = _bounded_lines(
        result.gate_failures, LINE_WIDTH, MAX_GATE_FAILURES)
    all_notes: list[object] = [*notes, *result.notes]
    if log_path is not None and _wants_tail(status, result):
        lines = min(max(0, bounds.log_tail_lines), _MAX_ITEMS)
        try:
            draft.tail = read_log_tail(log_path, lines)
        except OSError as exc:
            all_notes.append(f"log tail unavailable: {exc.strerror or type(exc).__name__}")
        draft.tail_dropped = _pre_cut_front(draft.tail)
    draft.notes, draft.notes_dropped = _bounded_lines(all_notes, MESSAGE_WIDTH, _MAX_ITEMS,
                                                      unique=True)
    if not green:
        draft.artifacts, draft.artifacts_dropped = _artifact_names(artifacts)
    return _fit(draft, DIGEST_BUDGET)


def _wants_tail(status: str, result: ParseResult) -> bool:
    if status in (ERROR, PARSE_MISMATCH):
        return True
    return status == FAIL and (result.wants_log_tail or not result.evidence_expected)


def _shown_findings(findings: Iterable[Finding], limit: int,
                    snippet_lines: int) -> list[dict[str, Any]]:
    """The first ``limit`` findings, stopping once they alone exceed the budget.

    Findings are only ever dropped from the end, so a prefix that no longer fits
    means nothing after it could be shown; its count lands in ``findings_truncated``.
    """
    shown: list[dict[str, Any]] = []
    used = 0
    for finding in islice(findings, limit):
        item = _finding(finding, snippet_lines)
        shown.append(item)
        used += _size(item) + 1
        if used > DIGEST_BUDGET:
            break
    return shown


def _finding(finding: Finding, snippet_lines: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": clean_line(finding.id, ID_WIDTH),
        "kind": clean_line(finding.kind, KIND_WIDTH),
        "message": clean_line(finding.message, MESSAGE_WIDTH),
    }
    location = clean_line(finding.location, ID_WIDTH)
    if location:
        item["location"] = location
    detail = _snippet(finding.detail, snippet_lines)
    if detail:
        item["detail"] = detail
    return item


def _snippet(lines: Iterable[object] | str, limit: int) -> list[str]:
    """At most ``limit`` lines plus a counted ``... [+N more lines]`` marker.

    A marker the parser already appended is merged into ours rather than counted
    as a line, so the number stays the lines the reader does not see.
    """
    items: list[object] = [lines] if isinstance(lines, str) else list(lines)
    extra = 0
    if items and isinstance(items[-1], str):
        prior = _more_lines().fullmatch(items[-1])
        if prior:
            extra += int(prior.group(1))
            items.pop()
    kept: list[str] = []
    for item in items:
        for piece in as_text(item).splitlines() or [""]:
            if len(kept) < limit:
                kept.append(clean_cap(piece, LINE_WIDTH))
            else:
                extra += 1
    if extra:
        kept.append(f"... [+{extra} more lines]")
    return kept


def _bounded_lines(values: Iterable[object], width: int, limit: int,
                   unique: bool = False) -> tuple[list[str], int]:
    """Cleaned single lines, at most ``limit`` and about a budget's worth.

    Empty lines are skipped, and with ``unique`` so are exact repeats (they say
    nothing new). Returns the kept lines and how many were dropped: dropping from
    the end is the shrink order too, so a prefix past the budget can never be shown.
    """
    kept: list[str] = []
    seen: set[str] = set()
    dropped = used = 0
    for value in values:
        if len(kept) >= limit or used > DIGEST_BUDGET:
            dropped += 1
            continue
        text = clean_line(value, width)
        if not text or (unique and text in seen):
            continue
        seen.add(text)
        kept.append(text)
        used += _size(text) + 1
    return kept, dropped


def _pre_cut_front(tail: list[str]) -> int:
    """Drop the oldest tail lines that could never fit; return how many."""
    used = 0
    for index in range(len(tail) - 1, -1, -1):
        used += _size(tail[index]) + 1
        if used > DIGEST_BUDGET and index < len(tail) - 1:
            del tail[: index + 1]
            return index + 1
    return 0


def _artifact_names(artifacts: Sequence[str]) -> tuple[list[str], int]:
    """Sorted run-dir names a reader may open, ``meta.json`` included, bounded."""
    names = list(artifacts)
    dropped = 0
    if names and isinstance(names[-1], str):
        prior = _more_artifacts().fullmatch(names[-1])
        if prior:  # the caller already capped the listing
            dropped += int(prior.group(1))
            names.pop()
    cleaned = {clean_line(name, ARTIFACT_WIDTH) for name in names}
    cleaned.discard("digest.json")
    cleaned.discard("")
    cleaned.add("meta.json")  # written with every digest, maybe just after it is built
    ordered = sorted(cleaned)
    dropped += max(0, len(ordered) - MAX_ARTIFACTS)
    return ordered[:MAX_ARTIFACTS], dropped


class _SummaryWalk:
    """Normalizes a parser's summary into JSON: empties pruned, strings cleaned, bounded.

    Dict entries whose value is empty (None, "", 0, False, {}, []) are pruned,
    recursively; list items keep their positions (a 0 in a list means something).
    Non-string keys become strings; sets become sorted lists; non-finite floats and
    huge ints become strings; anything else becomes its ``str``. Values past the
    depth limit or past a budget's worth of text are dropped and counted.
    """

    __slots__ = ("dropped", "room")

    def __init__(self) -> None:
        self.dropped = 0
        self.room = DIGEST_BUDGET

    def mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for raw_key, raw in value.items():
            if self.room <= 0 or depth >= _MAX_DEPTH:
                self.dropped += 1
                continue
            key = clean_line(raw_key, ID_WIDTH)
            if key in out:
                self.dropped += 1  # two keys that only differed by type or by cut text
                continue
            item = self.value(raw, depth + 1)
            if _is_empty(item):
                continue
            self.room -= len(key) + 3
            out[key] = item
        return out

    def value(self, raw: Any, depth: int) -> Any:
        if raw is None or isinstance(raw, bool):
            return raw
        if isinstance(raw, int):
            return raw if -_INT_LIMIT < raw < _INT_LIMIT else f"<int of {raw.bit_length()} bits>"
        if isinstance(raw, float):
            import math  # lazy: a shared library that only a float in a summary needs

            return raw if math.isfinite(raw) else repr(raw)
        if isinstance(raw, Mapping):
            return self.mapping(raw, depth)
        if isinstance(raw, list | tuple | set | frozenset):
            return self.sequence(raw, depth)
        text = clean_line(raw, LINE_WIDTH)
        self.room -= len(text)
        return text

    def sequence(self, raw: Iterable[Any], depth: int) -> list[Any]:
        out: list[Any] = []
        for item in raw:
            if self.room <= 0 or depth >= _MAX_DEPTH:
                self.dropped += 1
                continue
            self.room -= 1
            out.append(self.value(item, depth + 1))
        if isinstance(raw, set | frozenset):
            out.sort(key=_json)
        return out


def _is_empty(value: Any) -> bool:
    if value is None or value is False or value in ("", {}, []):
        return True
    return type(value) in (int, float) and value == 0


# ------------------------------------------------------------------------ fitting


def _fit(draft: _Draft, budget: int) -> dict[str, Any]:
    """Shrink ``draft`` in the documented order until it encodes within ``budget``."""
    steps: tuple[Callable[[_Draft, int], bool], ...] = (
        _drop_findings, _drop_tail, _drop_notes, _drop_summary,
        _drop_detail, _drop_artifacts,
    )
    doc = draft.document()
    size = len(encode(doc))
    for step in steps:
        while size > budget and step(draft, size - budget):
            doc = draft.document()
            size = len(encode(doc))
        if size <= budget:
            return doc
    raise RuntimeError(  # pragma: no cover - the width caps make this unreachable
        f"digest of {size} bytes could not be bounded to {budget}")


def _count_to_drop(items: Sequence[Any], over: int, *, from_end: bool, keep: int) -> int:
    """How many items (from one end) to drop to save ``over`` bytes, leaving ``keep``."""
    saved = count = 0
    order = reversed(items) if from_end else iter(items)
    for item in order:
        if saved >= over or len(items) - count <= keep:
            break
        saved += _size(item) + 1
        count += 1
    return count


def _drop_findings(draft: _Draft, over: int) -> bool:
    count = _count_to_drop(draft.findings, over, from_end=True, keep=1)
    if count:
        del draft.findings[-count:]
    return count > 0


def _drop_tail(draft: _Draft, over: int) -> bool:
    count = _count_to_drop(draft.tail, over, from_end=False, keep=1)
    if count:
        del draft.tail[:count]
        draft.tail_dropped += count
    return count > 0


def _drop_notes(draft: _Draft, over: int) -> bool:
    count = _count_to_drop(draft.notes, over, from_end=True, keep=0)
    if count:
        del draft.notes[-count:]
        draft.notes_dropped += count
    return count > 0


def _drop_artifacts(draft: _Draft, over: int) -> bool:
    count = _count_to_drop(draft.artifacts, over, from_end=True, keep=0)
    if count:
        del draft.artifacts[-count:]
        draft.artifacts_dropped += count
    return count > 0


def _drop_detail(draft: _Draft, over: int) -> bool:
    """Cut snippet lines from the last finding that still has any, keeping the count."""
    for finding in reversed(draft.findings):
        detail: list[str] = finding.get("detail", [])
        extra = 0
        if detail and (prior := _more_lines().fullmatch(detail[-1])):
            extra = int(prior.group(1))
            detail = detail[:-1]
        count = _count_to_drop(detail, over, from_end=True, keep=0)
        if count:
            finding["detail"] = [*detail[:-count], f"... [+{extra + count} more lines]"]
            return True
    return False


def _drop_summary(draft: _Draft, over: int) -> bool:
    """Drop the largest summary values (deeper first on a tie) until ``over`` is saved."""
    leaves: list[tuple[int, tuple[str, ...]]] = []
    _summary_leaves(draft.summary, (), leaves)
    if not leaves:
        return False
    leaves.sort(key=lambda leaf: (-leaf[0], -len(leaf[1]), leaf[1]))
    saved = 0
    for size, path in leaves:
        if saved >= over:
            break
        parent = draft.summary
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        saved += size
        draft.summary_dropped += 1
    _prune_empty(draft.summary)
    return True


def _summary_leaves(node: dict[str, Any], path: tuple[str, ...],
                    out: list[tuple[int, tuple[str, ...]]]) -> None:
    for key, value in node.items():
        here = (*path, key)
        if isinstance(value, dict) and value:
            _summary_leaves(value, here, out)
        else:
            out.append((_size({key: value}) - 1, here))  # `"key":value,`


def _prune_empty(node: dict[str, Any]) -> None:
    for key in list(node):
        value = node[key]
        if isinstance(value, dict):
            _prune_empty(value)
            if not value:
                del node[key]


# -------------------------------------------------------------------- encode/show


def encode(doc: Mapping[str, Any]) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, UTF-8, no trailing newline.

    Lone surrogates (which builders already replace) become ``?`` rather than an
    exception: writing evidence must not fail on one odd character.
    """
    return _json(doc)


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "replace")


def _size(value: Any) -> int:
    return len(_json(value))


_ORDER = (
    "schema", "check", "alias", "status", "status_reason", "rc", "timed_out", "interrupted",
    "started", "gate", "baseline", "summary", "findings_total", "findings",
    "findings_truncated", "gate_failures", "notes", "log_tail", "members",
    "argv", "cwd", "started_at", "finished_at", "duration_s", "parser", "log_bytes",
    "log_sha256", "ckdn_version", "python", "run_dir", "artifacts",
)
_FINDING_ORDER = ("id", "kind", "message", "location", "detail", "baselined")
_MEMBER_ORDER = ("check", "status", "rc", "run_dir")


def render(doc: Mapping[str, Any]) -> str:
    """The human form ``ckdn show`` prints: indented, keys in reading order."""
    return json.dumps(_ordered(doc, _ORDER), indent=2, ensure_ascii=False)


def _ordered(node: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    rank = {key: index for index, key in enumerate(order)}
    unknown = len(order) - 2  # keys not in the order go just before run_dir and artifacts
    out: dict[str, Any] = {}
    for key in sorted(node, key=lambda k: (rank.get(k, unknown), k)):
        value = node[key]
        if key == "findings" and isinstance(value, list):
            value = [_ordered(f, _FINDING_ORDER) if isinstance(f, Mapping) else f for f in value]
        elif key == "members" and isinstance(value, list):
            value = [_ordered(m, _MEMBER_ORDER) if isinstance(m, Mapping) else m for m in value]
        elif isinstance(value, Mapping):
            value = _ordered(value, ())
        out[key] = value
    return out


# ---------------------------------------------------------------------- aggregate


@record
class Member(Record):
    """One alias member as the aggregate lists it; ``status="skipped"`` when not reached."""

    __slots__ = ("check", "rc", "run_dir", "status")
    check: str
    status: str
    rc: int | None
    run_dir: str | None

    def __init__(self, check: str, status: str, rc: int | None = None,
                 run_dir: str | None = None) -> None:
        self._assign(check, status, rc, run_dir)


def aggregate_status(members: Sequence[Member]) -> tuple[str, int]:
    """``(status, rc)`` of an alias: pass iff every member passed, else the first red one.

    ``rc`` is that member's exit code under the atomic pass-through rule
    (:func:`ckdn.reconcile.exit_code`). A list where nothing ran red but something
    was skipped is ``error`` / 1: a member that never ran is never green.
    """
    if not members:
        raise ValueError("an aggregate needs at least one member")
    skipped = False
    for member in members:
        if member.status == SKIPPED:
            skipped = True
        elif member.status != PASS:
            return member.status, exit_code(member.status, 1 if member.rc is None else member.rc)
    return (ERROR, 1) if skipped else (PASS, 0)


def build_aggregate(*, alias: str, members: Sequence[Member]) -> dict[str, Any]:
    """The ``ckdn.aggregate/1`` routing document of an alias run."""
    status, rc = aggregate_status(members)
    entries: list[dict[str, Any]] = []
    for member in members:
        if member.status == SKIPPED:
            entries.append({"check": member.check, "status": SKIPPED})
            continue
        if member.status not in STATUSES:
            raise ValueError(f"member {member.check!r} has no valid status: {member.status!r}")
        if member.rc is None or member.run_dir is None:
            raise ValueError(f"member {member.check!r} ran but has no rc or run_dir")
        entries.append({"check": member.check, "status": member.status, "rc": member.rc,
                        "run_dir": member.run_dir})
    return {"schema": SCHEMA_AGGREGATE, "alias": alias, "status": status, "rc": rc,
            "members": entries}


# --------------------------------------------------------------------------- meta


def build_meta(*, check: str, run_dir: str, argv: Sequence[str], cwd: str,
               exit: Exit, started_at: float, finished_at: float,
               log_sha256: str, log_bytes: int, parser: str, status: str) -> dict[str, Any]:
    """The ``ckdn.meta/1`` provenance of one run: what the digest leaves out on purpose.

    Times are ISO 8601 UTC with milliseconds and ``Z``; ``duration_s`` is the
    runner's measurement (wall clock between the two times when it has none).
    """
    from ckdn import __version__

    duration = exit.duration if exit.duration > 0 else max(0.0, finished_at - started_at)
    return {
        "schema": SCHEMA_META,
        "check": check,
        "status": status,
        "rc": int(exit.rc),
        "started": bool(exit.started),
        "timed_out": bool(exit.timed_out),
        "interrupted": bool(exit.interrupted),
        "argv": [unsurrogate(arg) for arg in argv],
        "cwd": unsurrogate(cwd),
        "started_at": _iso_utc(started_at),
        "finished_at": _iso_utc(finished_at),
        "duration_s": round(duration, 6),
        "parser": parser,
        "log_bytes": int(log_bytes),
        "log_sha256": log_sha256,
        "ckdn_version": __version__,
        "python": ".".join(str(part) for part in sys.version_info[:3]),
        "run_dir": unsurrogate(run_dir),
    }


def _iso_utc(timestamp: float) -> str:
    """``datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")`` with
    ``Z`` for ``+00:00``, computed as datetime does (microseconds rounded half to even,
    then cut to milliseconds) without importing datetime."""
    whole = timestamp // 1
    micros = round((timestamp - whole) * 1_000_000)
    if micros == 1_000_000:
        whole, micros = whole + 1, 0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return f"{stamp}.{micros // 1000:03d}Z"
