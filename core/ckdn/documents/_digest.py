"""The documents a run leaves to be read: the digest; the meta (``ckdn.meta/1``), the provenance
the digest leaves out on purpose; and the change a diff-scoped gate judged (``ckdn.change/1``)."""

from __future__ import annotations

import time
from itertools import islice

from ckdn import __version__
from ckdn._lite import Record, canonical, encoded_size, record
from ckdn.documents.textcap import (
    ARTIFACT_WIDTH,
    CHECK_WIDTH,
    ID_WIDTH,
    KIND_WIDTH,
    LINE_WIDTH,
    MESSAGE_WIDTH,
    RUN_DIR_WIDTH,
    Cut,
    clean_cap,
    clean_line,
    parts,
    unsurrogate,
)
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, STATUSES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Mapping, Sequence
    from typing import Any, Final

    from ckdn.documents.types import (
        BaselineCounts,
        ChangeDoc,
        Digest,
        FindingDoc,
        GateDoc,
        ImportedFacts,
        ImportedOrigin,
        Meta,
        ScopeDoc,
    )
    from ckdn.parsers.base import Finding, ParseResult
    from ckdn.process import Exit
    from ckdn.reconcile import Verdict
    from ckdn.redact import Redaction


# -- The digest, the one document a run leaves for a reader to read.

# The digest (``ckdn.digest/2``) is the only thing a reader is meant to read, so it
# is built to three promises:
#
# * **Sparse.** Absent keys mean empty / 0 / false; a green pass is five keys.
# * **Deterministic.** Identical inputs give byte-identical canonical bytes
#   (:func:`ckdn._lite.canonical`): no times, no hashes, no machine paths
#   beyond ``run_dir``. Provenance goes to the meta document (``ckdn.meta/1``) instead.
# * **Bounded in bytes.** Whatever the tool printed (a 2 GB log, a 100 MB line, a
#   million findings, control characters, invalid UTF-8) the encoded digest stays
#   under :data:`MAX_DIGEST_BYTES`. Every cut is counted where it happened, never
#   silent: ``... [+N chars]`` on a line, ``... [+N more lines]`` in a snippet,
#   ``findings_truncated``, ``... [+N more notes]``, a leading tail line
#   ``... [N earlier tail lines dropped to fit the digest]``. The counts come as
#   data from where the cut was made (a parser's :class:`~ckdn.documents.textcap.Cut`
#   string, a finding's ``detail_omitted``, the artifact listing's count), never
#   from reading a marker back.
#
# Text policy (applies to every string a digest carries, see
# :mod:`ckdn.documents.textcap`): every string is inert. ANSI escape sequences are
# stripped; every other character that acts (C0 but tab, DEL, C1, the bidi
# controls, U+2028/U+2029) is shown escaped as ``\\uXXXX`` text, never raw and never
# dropped; lone surrogates become U+FFFD. Width caps count shown characters (an
# escape counts six), and no shown character costs more than four encoded bytes.
# A finding ``message``, a note, a gate failure and every
# summary string are single lines: their line breaks are folded into single
# spaces (only whitespace is lost); a ``detail`` entry with line breaks is split
# into several snippet lines. The log tail is read backwards from the end of the log.
#
# When the encoded digest exceeds :data:`DIGEST_BUDGET`, the fitting shrinks it in
# a fixed order until it fits. What it cannot shrink is width-capped strings and at
# most :data:`MAX_GATE_FAILURES` gate failures: under 40 KiB even if every shown
# character took four bytes (``test_what_the_fitting_cannot_shrink_fits_the_budget``
# does the sum), so the shrinking always ends under the budget.

SCHEMA_DIGEST: Final = "ckdn.digest/2"

#: Hard ceiling: ``len(canonical(build_digest(...)))`` is always below this.
MAX_DIGEST_BYTES = 65536
#: What the shrinking aims for; the gap to the ceiling is headroom, not a target.
DIGEST_BUDGET = 60 * 1024

# Width caps (MESSAGE_WIDTH, LINE_WIDTH...) live with the cleaning in textcap;
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
_INF = float("inf")


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


def build_digest(*, check: str, verdict: Verdict, exit: Exit,
                 result: ParseResult, run_dir: str, artifacts: Sequence[str],
                 log_path: str | None, bounds: Bounds, artifacts_omitted: int = 0,
                 notes: Sequence[str] = (), gate: GateDoc | None = None,
                 baseline: BaselineCounts | None = None,
                 baselined: Container[int] = (),
                 redaction: Redaction | None = None,
                 imported: ImportedFacts | None = None,
                 diff_scope: ScopeDoc | None = None) -> Digest:
    """The ``ckdn.digest/2`` document of one run: sparse, deterministic, bounded.

    ``run_dir`` is the display string (forward slashes). ``artifacts`` are names in
    the run dir, ``artifacts_omitted`` how many more the caller left unlisted.
    ``notes`` are run-level notes (a reclaimed lock, the runner's notes); they come
    before the parser's and are the last to be dropped for space. Exact duplicate
    notes are shown once. With a baseline configured, ``gate`` (and ``baseline`` when
    there were findings to classify) come from :mod:`ckdn.identity`; ``baselined`` holds
    the positions in ``result.findings`` the baseline knows (shown ``baselined: true``).
    ``redaction`` redacts every string that carries a tool's text (status reason, messages,
    details, summary strings, gate failures, notes, the log tail; never a check name, id,
    location, path or number), and its count per rule becomes the first note.
    ``imported``: the run is an import (no process ran): ``rc`` is null, and the digest
    says so in ``origin`` and counts what was read in ``import_summary``.
    ``diff_scope``: a diff-scoped gate's facts, shown as ``summary.diff_scope`` (the
    published ``gate`` is closed).
    """
    status = verdict.status
    if status not in STATUSES:
        raise ValueError(f"not a digest status: {status!r}")
    green = status == PASS
    base: Digest = {
        "schema": SCHEMA_DIGEST,
        "check": clean_line(check, CHECK_WIDTH),
        "status": status,
        "rc": int(exit.rc),
        "run_dir": clean_line(run_dir, RUN_DIR_WIDTH),
    }
    if not green:
        base["status_reason"] = clean_line(
            redacted(redaction, verdict.reason or status, MESSAGE_WIDTH), MESSAGE_WIDTH)
    if gate is not None:
        base["gate"] = _shown_gate(gate, redaction)
    if baseline is not None:
        base["baseline"] = {"known": int(baseline["known"]), "new": int(baseline["new"])}
    if imported is not None:
        _imported(base, imported)
    draft = Draft(base=base)
    if exit.timed_out:
        draft.flags["timed_out"] = True
    if exit.interrupted:
        draft.flags["interrupted"] = True

    total = max(0, result.total)
    if total:
        draft.findings_total = total
        _show_findings(draft, result.findings, min(max(0, bounds.top), total),
                       min(max(0, bounds.max_snippet_lines), _MAX_ITEMS), baselined,
                       redaction=redaction)
    walk = _SummaryWalk(redaction)
    draft.summary = walk.mapping(result.summary, 0) if _is_mapping(result.summary) else {}
    draft.summary_dropped = walk.dropped
    if diff_scope is not None:  # fixed keys, ints, commit ids: bounded, never redacted
        draft.summary["diff_scope"] = dict(diff_scope)
    draft.gate_failures, draft.gates_dropped = _bounded_lines(
        result.gate_failures, LINE_WIDTH, MAX_GATE_FAILURES, redaction=redaction)
    all_notes: list[object] = [*notes, *result.notes]
    if log_path is not None and _wants_tail(status, result):
        from ckdn.documents._logtail import read_log_tail  # here: a passing run shows no tail

        lines = min(max(0, bounds.log_tail_lines), _MAX_ITEMS)
        try:
            draft.tail = read_log_tail(log_path, lines, redaction=redaction)
        except OSError as exc:
            all_notes.append(f"log tail unavailable: {exc.strerror or type(exc).__name__}")
        omits = getattr(result, "tail_omits", ())
        if omits and total:  # what the findings already say is not repeated
            kept = [line for line in draft.tail if not line.lstrip().startswith(omits)]
            if len(kept) < len(draft.tail):
                all_notes.append(f"log tail: {len(draft.tail) - len(kept)} line(s) the findings"
                                 " already hold left out")
                draft.tail = kept
        draft.tail_dropped = _pre_cut_front(draft.tail)
    draft.notes, draft.notes_dropped = _bounded_lines(all_notes, MESSAGE_WIDTH, _MAX_ITEMS,
                                                      unique=True, redaction=redaction)
    if redaction is not None:
        draft.notes[:0] = [clean_line(note, MESSAGE_WIDTH) for note in redaction.notes()]
    if not green:
        draft.artifacts, draft.artifacts_dropped = _artifact_names(artifacts, artifacts_omitted)
    return fit(draft, DIGEST_BUDGET)


def _shown_gate(gate: GateDoc, redaction: Redaction | None) -> GateDoc:
    """The published, closed ``gate``: status, policy, a one-line reason."""
    shown: GateDoc = {"status": gate["status"], "policy": gate["policy"]}
    if gate.get("reason"):
        shown["reason"] = clean_line(redacted(redaction, gate["reason"], MESSAGE_WIDTH),
                                     MESSAGE_WIDTH)
    return shown


def _imported(base: Digest, imported: ImportedFacts) -> None:
    """An import's marks: no exit code was observed, and where the facts came from."""
    origin = imported["origin"]
    base["rc"] = None
    shown: ImportedOrigin = {
        "format": clean_line(origin["format"], KIND_WIDTH),
        "variant": clean_line(origin["variant"], KIND_WIDTH),
        "producer": clean_line(origin["producer"], KIND_WIDTH) or UNNAMED,
        "sha256": clean_line(origin["sha256"], KIND_WIDTH),
        "bytes": max(0, int(origin["bytes"])),
    }
    if "files" in origin:  # a merge of imported shards (ckdn merge)
        shown["files"] = max(0, int(origin["files"]))
    base["origin"] = {"imported": shown}
    summary = imported["import_summary"]
    reasons = dict(islice(((clean_line(str(key), KIND_WIDTH), max(0, int(count)))
                           for key, count in summary["unattached_by_reason"].items()), 20))
    base["import_summary"] = {"read": max(0, int(summary["read"])),
                              "attached": max(0, int(summary["attached"])),
                              "unattached_by_reason": reasons}


def redacted(redaction: Redaction | None, value: object, width: int) -> object:
    """``value`` redacted before it is cut to ``width`` (:mod:`ckdn.documents.redacting`,
    loaded by the first string to redact: a green run may have none)."""
    if redaction is None or not redaction.enabled:
        return value
    from ckdn.documents.redacting import redacted as shown  # here: a green run has none

    return shown(redaction, value, width)


def _wants_tail(status: str, result: ParseResult) -> bool:
    if status in (ERROR, PARSE_MISMATCH):
        return True
    return status == FAIL and (result.wants_log_tail or not result.evidence_expected)


def _show_findings(draft: Draft, findings: Iterable[Finding], limit: int,
                   snippet_lines: int, baselined: Container[int] = (), *,
                   redaction: Redaction | None = None) -> None:
    """The first ``limit`` findings, stopping once they alone exceed the budget.

    Findings are only ever dropped from the end, so a prefix that no longer fits
    means nothing after it could be shown; its count lands in ``findings_truncated``.
    """
    used = 0
    for index, finding in enumerate(islice(findings, limit)):
        item, dropped = _finding(finding, snippet_lines, redaction)
        if index in baselined:
            item["baselined"] = True
        draft.add_finding(item, dropped)
        used += encoded_size(item) + 1
        if used > DIGEST_BUDGET:
            break


UNNAMED = "?"


def _finding(finding: Finding, snippet_lines: int,
             redaction: Redaction | None = None) -> tuple[FindingDoc, int]:
    """A finding as the digest shows it, and how many of its snippet lines it leaves out."""
    # The contract promises a non-empty id and kind; a parser that names neither still
    # yields a finding a consumer can key on, marked as unnamed rather than dropped.
    item: FindingDoc = {
        "id": clean_line(finding.id, ID_WIDTH) or UNNAMED,
        "kind": clean_line(finding.kind, KIND_WIDTH) or UNNAMED,
        "message": clean_line(redacted(redaction, finding.message, MESSAGE_WIDTH),
                              MESSAGE_WIDTH),
    }
    location = clean_line(finding.location, ID_WIDTH)
    if location:
        item["location"] = location
    detail, dropped = _snippet(finding.detail, snippet_lines,
                               max(0, getattr(finding, "detail_omitted", 0)), redaction)
    if detail:
        item["detail"] = detail
    return item, dropped


def _snippet(lines: Iterable[object] | str, limit: int, omitted: int,
             redaction: Redaction | None = None) -> tuple[list[str], int]:
    """At most ``limit`` lines, and the count of lines left out: ``omitted`` (what the
    parser already left out) plus what did not fit here."""
    items: Iterable[object] = [lines] if isinstance(lines, str) else lines
    kept: list[tuple[str, int]] = []
    for item in items:
        text, cut_chars = parts(item)
        pieces = text.splitlines() or [""]
        for index, piece in enumerate(pieces):
            if len(kept) < limit:
                # the characters a parser cut off belong to the last piece of its line
                kept.append((piece, cut_chars if index == len(pieces) - 1 else 0))
            else:
                omitted += 1
    if redaction is not None and redaction.enabled:
        from ckdn.documents.redacting import redacted_pieces  # here, as redacted()

        kept = redacted_pieces(redaction, kept, LINE_WIDTH)
    return [clean_cap(Cut(piece, last) if last else piece, LINE_WIDTH)
            for piece, last in kept], omitted


def _bounded_lines(values: Iterable[object], width: int, limit: int,
                   unique: bool = False, redaction: Redaction | None = None
                   ) -> tuple[list[str], int]:
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
        text = clean_line(redacted(redaction, value, width), width)
        if not text or (unique and text in seen):
            continue
        seen.add(text)
        kept.append(text)
        used += encoded_size(text) + 1
    return kept, dropped


def _pre_cut_front(tail: list[str]) -> int:
    """Drop the oldest tail lines that could never fit; return how many."""
    used = 0
    for index in range(len(tail) - 1, -1, -1):
        used += encoded_size(tail[index]) + 1
        if used > DIGEST_BUDGET and index < len(tail) - 1:
            del tail[: index + 1]
            return index + 1
    return 0


def _artifact_names(artifacts: Sequence[str], omitted: int) -> tuple[list[str], int]:
    """Sorted run-dir names a reader may open, ``meta.json`` included, bounded."""
    cleaned = {clean_line(name, ARTIFACT_WIDTH) for name in artifacts}
    cleaned.discard("digest.json")
    cleaned.discard("")
    cleaned.add("meta.json")  # written with every digest, maybe just after it is built
    ordered = sorted(cleaned)
    dropped = omitted + max(0, len(ordered) - MAX_ARTIFACTS)
    return ordered[:MAX_ARTIFACTS], dropped


class _SummaryWalk:
    """Normalizes a parser's summary into JSON: empties pruned, strings cleaned, bounded.

    Dict entries whose value is empty (None, "", 0, False, {}, []) are pruned,
    recursively; list items keep their positions (a 0 in a list means something).
    Non-string keys become strings; sets become sorted lists; non-finite floats and
    huge ints become strings; anything else becomes its ``str``. Values past the
    depth limit or past a budget's worth of text are dropped and counted.
    """

    __slots__ = ("dropped", "redaction", "room")

    def __init__(self, redaction: Redaction | None = None) -> None:
        self.dropped = 0
        self.room = DIGEST_BUDGET
        self.redaction = redaction

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
            return raw if -_INF < raw < _INF else repr(raw)  # NaN compares false
        if isinstance(raw, list | tuple | set | frozenset):
            return self.sequence(raw, depth)
        if not isinstance(raw, str | bytes) and _is_mapping(raw):
            return self.mapping(raw, depth)
        text = clean_line(redacted(self.redaction, raw, LINE_WIDTH), LINE_WIDTH)
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
            out.sort(key=canonical)
        return out


def _is_mapping(value: object) -> bool:
    """A dict, or any other mapping (collections.abc is imported only for those)."""
    if isinstance(value, dict):
        return True
    from collections.abc import Mapping  # here: it costs every run; a dict is the usual case

    return isinstance(value, Mapping)


def _is_empty(value: Any) -> bool:
    if value is None or value is False or value in ("", {}, []):
        return True
    return type(value) in (int, float) and value == 0


# -- fitting the digest into its byte budget, every cut counted --------------------------------

# When the encoded digest exceeds its budget, it is shrunk in a fixed order until
# it fits: shown findings from the end (never below one), the log tail from its
# start (never below its last line), notes from the end, summary values (largest
# first), and as a last resort the remaining snippet lines and artifact names.
# What is left then is width-capped strings and a bounded number of gate failures
# (see ``_digest``), so the loop always ends under the budget.


class Draft:
    """A digest in parts, so each part can be shrunk and the whole re-assembled.

    Every cut is a count beside the part it was cut from (``*_dropped``, and per
    shown finding the snippet lines it lost, ``detail_dropped``); the markers a
    reader sees are written from those counts by :meth:`document` only.
    """

    __slots__ = ("artifacts", "artifacts_dropped", "base", "detail_dropped", "findings",
                 "findings_total", "flags", "gate_failures", "gates_dropped", "notes",
                 "notes_dropped", "summary", "summary_dropped", "tail", "tail_dropped")

    def __init__(self, base: Digest) -> None:
        self.base = base
        self.findings_total = 0
        #: Shown findings, their ``detail`` without the marker; ``detail_dropped`` beside.
        self.findings: list[FindingDoc] = []
        self.detail_dropped: list[int] = []
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

    def add_finding(self, item: FindingDoc, detail_dropped: int) -> None:
        self.findings.append(item)
        self.detail_dropped.append(detail_dropped)

    def document(self) -> Digest:
        """The digest, keys in the contract's reading order (``canonical`` sorts anyway)."""
        base = self.base
        doc: Digest = {"schema": base["schema"], "check": base["check"],
                       "status": base["status"], "rc": base["rc"], "run_dir": base["run_dir"]}
        if "status_reason" in base:
            doc["status_reason"] = base["status_reason"]
        if self.flags.get("timed_out"):
            doc["timed_out"] = True
        if self.flags.get("interrupted"):
            doc["interrupted"] = True
        if self.summary:
            doc["summary"] = self.summary
        if self.findings_total > 0:
            doc["findings_total"] = self.findings_total
            if self.findings:
                doc["findings"] = [_with_marker(item, dropped) for item, dropped
                                   in zip(self.findings, self.detail_dropped, strict=True)]
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
        artifacts = _marked(self.artifacts, self.artifacts_dropped, "... [+{} more]")
        if artifacts:
            doc["artifacts"] = artifacts
        if "baseline" in base:
            doc["baseline"] = base["baseline"]
        if "gate" in base:
            doc["gate"] = base["gate"]
        if "origin" in base:
            doc["origin"] = base["origin"]
            doc["import_summary"] = base["import_summary"]
        return doc


def _marked(items: list[str], dropped: int, marker: str) -> list[str]:
    return [*items, marker.format(dropped)] if dropped else list(items)


def _with_marker(item: FindingDoc, dropped: int) -> FindingDoc:
    if not dropped:
        return item
    shown = item.copy()
    shown["detail"] = [*item.get("detail", ()), f"... [+{dropped} more lines]"]
    return shown


def fit(draft: Draft, budget: int) -> Digest:
    """Shrink ``draft`` in the documented order until it encodes within ``budget``."""
    steps: tuple[Callable[[Draft, int], bool], ...] = (
        _drop_findings, _drop_tail, _drop_notes, _drop_summary,
        _drop_detail, _drop_artifacts,
    )
    doc = draft.document()
    size = len(canonical(doc))
    for step in steps:
        while size > budget and step(draft, size - budget):
            doc = draft.document()
            size = len(canonical(doc))
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
        saved += encoded_size(item) + 1
        count += 1
    return count


def _drop_findings(draft: Draft, over: int) -> bool:
    count = _count_to_drop(draft.findings, over, from_end=True, keep=1)
    if count:
        del draft.findings[-count:]
        del draft.detail_dropped[-count:]
    return count > 0


def _drop_tail(draft: Draft, over: int) -> bool:
    count = _count_to_drop(draft.tail, over, from_end=False, keep=1)
    if count:
        del draft.tail[:count]
        draft.tail_dropped += count
    return count > 0


def _drop_notes(draft: Draft, over: int) -> bool:
    count = _count_to_drop(draft.notes, over, from_end=True, keep=0)
    if count:
        del draft.notes[-count:]
        draft.notes_dropped += count
    return count > 0


def _drop_artifacts(draft: Draft, over: int) -> bool:
    count = _count_to_drop(draft.artifacts, over, from_end=True, keep=0)
    if count:
        del draft.artifacts[-count:]
        draft.artifacts_dropped += count
    return count > 0


def _drop_detail(draft: Draft, over: int) -> bool:
    """Cut snippet lines from the last finding that still has any, keeping the count."""
    for index in range(len(draft.findings) - 1, -1, -1):
        finding = draft.findings[index]
        detail = finding.get("detail", [])
        count = _count_to_drop(detail, over, from_end=True, keep=0)
        if count:
            if count < len(detail):
                finding["detail"] = detail[:-count]
            else:
                del finding["detail"]
            draft.detail_dropped[index] += count
            return True
    return False


def _drop_summary(draft: Draft, over: int) -> bool:
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
            out.append((encoded_size({key: value}) - 1, here))  # `"key":value,`


def _prune_empty(node: dict[str, Any]) -> None:
    for key in list(node):
        value = node[key]
        if isinstance(value, dict):
            _prune_empty(value)
            if not value:
                del node[key]


# -- The meta document (``ckdn.meta/1``): the provenance the digest leaves out on purpose; and

# The digest must be byte-identical for identical inputs, so times, the exact
# command, the log's hash and the version live here instead, in exactly the keys
# the published ``ckdn.meta/1`` schema allows (CONTRACT.md): a consumer's
# validator rejects any other.

SCHEMA_META: Final = "ckdn.meta/1"


def build_meta(*, check: str, argv: Sequence[str], exit: Exit, started_at: float,
               finished_at: float, log_sha256: str, log_bytes: int, parser: str,
               env_keys: Iterable[str] = ()) -> Meta:
    """The ``ckdn.meta/1`` provenance of one run: the published key set, nothing else (the
    change a diff-scoped gate judged is in ``change.json``: :func:`build_change`).

    ``command`` is the argv after ``{run_dir}`` substitution; ``started_at`` is
    ISO 8601 UTC in whole seconds with a ``+00:00`` offset; ``duration_s`` is the
    runner's measurement (wall clock between the two times when it has none),
    rounded to milliseconds; ``env_keys`` are the names (never the values) the
    check's ``env`` set, sorted, and absent when it set none.
    """

    duration = exit.duration if exit.duration > 0 else max(0.0, finished_at - started_at)
    meta: Meta = {
        "schema": SCHEMA_META,
        "ckdn_version": __version__,
        "check": check,
        "parser": parser,
        "command": [unsurrogate(arg) for arg in argv],
        "rc": int(exit.rc),
        "timed_out": bool(exit.timed_out),
        "interrupted": bool(exit.interrupted),
        "started_at": _iso_utc(started_at),
        "duration_s": round(duration, 3),
        "log_sha256": log_sha256,
        "log_bytes": int(log_bytes),
    }
    keys = sorted({unsurrogate(key) for key in env_keys})
    if keys:
        meta["env_keys"] = keys
    return meta


SCHEMA_CHANGE: Final = "ckdn.change/1"


def build_change(*, check: str, gate: GateDoc, facts: ScopeDoc, sha256: str,
                 size: int) -> ChangeDoc:
    """``change.json`` (``ckdn.change/1``), the sidecar of a run a diff-scoped gate judged:
    the change (base, head, the diff's SHA-256 and bytes), the policy, the counts. No
    times: equal changes and findings give equal bytes."""
    doc: ChangeDoc = {"schema": SCHEMA_CHANGE, "check": check, "policy": facts["policy"],
                      "gate": gate["status"], "gated": int(facts.get("gated", 0))}
    if gate.get("reason"):
        doc["reason"] = gate["reason"]
    for key in ("origin", "base", "head"):
        value = facts.get(key)
        if isinstance(value, str) and value:
            doc[key] = value
    if sha256:
        doc["diff"] = {"sha256": sha256, "bytes": max(0, int(size))}
    if "counts" in facts:
        doc["counts"] = facts["counts"]
    return doc


def _iso_utc(timestamp: float) -> str:
    """``datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")``
    (``2026-07-07T10:15:00+00:00``), without importing datetime."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(timestamp // 1))
