"""Redaction where a digest's strings are made: before each is cut, after ANSI is gone;
and a stored document redacted again when it is shown (:func:`redact_document`)."""

from __future__ import annotations

from ckdn.documents.textcap import Cut, parts, strip_ansi
from ckdn.redact import Redaction as Fresh

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ckdn.redact import Redaction

__all__ = ["redact_document", "redacted", "redacted_pieces"]

# A secret that straddles a cut must not show its first half, so a string is
# redacted before the digest cuts it to its width, with a margin past the width
# (:attr:`ckdn.redact.Redaction.margin`) so what straddles the cut is whole; a
# string a parser already cut (a :class:`~ckdn.documents.textcap.Cut`) is redacted
# with its edge rules, which take what is left of a token at its end. ANSI
# sequences are stripped first: ``\\x1b[31mghp_...`` must read as the token it is.
#
# The cut counts stay exact: what a reader does not see is counted in characters
# of the redacted text within the window, plus every character past it.


def redacted(redaction: Redaction | None, value: object, width: int) -> object:
    """``value`` with its secrets redacted, ready for ``clean_line``/``clean_cap`` at
    ``width``: the value itself when nothing in it can be a secret."""
    if redaction is None or not redaction.enabled:
        return value
    body, omitted = parts(value)
    if len(body) < 4:
        return value
    body = strip_ansi(body)
    limit = width + redaction.margin
    window = body[:limit]
    rest = len(body) - len(window)
    if not redaction.may_hold(window, edge=bool(rest or omitted)):
        return value
    shown = redaction.text(window, edge=bool(rest or omitted))
    return Cut(shown, omitted + rest) if omitted + rest else shown


def redacted_pieces(redaction: Redaction | None, pieces: Sequence[tuple[str, int]],
                    width: int, open_block: str | None = None) -> list[tuple[str, int]]:
    """Lines ``(text, characters already cut off)`` redacted together (a key block
    spans them), each cut to ``width`` plus the margin first; the same pairs back.
    ``open_block``: the lines start inside a key block whose BEGIN is above them."""
    if redaction is None or not redaction.enabled or not pieces:
        return list(pieces)
    limit = width + redaction.margin
    windows: list[str] = []
    counts: list[int] = []
    for text, omitted in pieces:
        body = strip_ansi(text)
        window = body[:limit]
        windows.append(window)
        counts.append(omitted + len(body) - len(window))
    shown = redaction.lines(windows, [count > 0 for count in counts], open_block)
    return list(zip(shown, counts, strict=True))


#: The digest keys whose strings carry a tool's text (every other key is ckdn's own:
#: names, ids, locations, paths, numbers, statuses).
_TEXT_KEYS = ("status_reason", "notes", "gate_failures")


def redact_document(doc: Mapping[str, Any], redaction: Redaction) -> dict[str, Any]:
    """A stored digest or aggregate with the strings that carry a tool's text redacted
    again, with today's rules: a run stored before a rule existed (or before redaction
    did) is shown without its secrets. Redacting twice is redacting once, so a
    document already redacted comes back the same; what this pass redacted is noted."""
    out = dict(doc)
    for key in _TEXT_KEYS:
        value = out.get(key)
        if isinstance(value, str):
            out[key] = redaction.text(value)
        elif isinstance(value, list):
            out[key] = [redaction.text(v) if isinstance(v, str) else v for v in value]
    gate = out.get("gate")
    if isinstance(gate, dict) and isinstance(gate.get("reason"), str):
        out["gate"] = {**gate, "reason": redaction.text(gate["reason"])}
    tail = out.get("log_tail")
    if isinstance(tail, list) and all(isinstance(line, str) for line in tail):
        out["log_tail"] = redaction.lines(tail)
    findings = out.get("findings")
    if isinstance(findings, list):
        out["findings"] = [_finding(item, redaction) if isinstance(item, dict) else item
                           for item in findings]
    if isinstance(out.get("summary"), dict):
        out["summary"] = _values(out["summary"], redaction, 0)
    if redaction.counts:

        counted = Fresh()
        counted.counts = dict(redaction.counts)
        note = counted.notes()[0].replace("redacted ", "redacted when shown: ", 1)
        out["notes"] = [note, *out.get("notes", [])]
    return out


def _finding(item: Mapping[str, Any], redaction: Redaction) -> dict[str, Any]:
    shown = dict(item)
    if isinstance(shown.get("message"), str):
        shown["message"] = redaction.text(shown["message"])
    detail = shown.get("detail")
    if isinstance(detail, list) and all(isinstance(line, str) for line in detail):
        shown["detail"] = redaction.lines(detail)
    return shown


def _values(value: Any, redaction: Redaction, depth: int) -> Any:
    """Summary values (never keys) redacted, as deep as a digest nests them."""
    if depth > 32:
        return value
    if isinstance(value, str):
        return redaction.text(value)
    if isinstance(value, list):
        return [_values(item, redaction, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: _values(item, redaction, depth + 1) for key, item in value.items()}
    return value
