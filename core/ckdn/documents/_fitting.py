"""Shrinking a digest until it fits its byte budget, in a fixed order, every cut counted."""

from __future__ import annotations

from ckdn._lite.canonical import canonical, encoded_size

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ckdn.documents.types import Digest, FindingDoc

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
