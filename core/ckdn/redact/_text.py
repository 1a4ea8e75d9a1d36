"""The redactor: every rule's spans in a text, merged, replaced by ``[REDACTED:rule]``.

All rules look at the same original text and report spans; overlapping spans
are merged and the merged span is replaced once, named after the rule whose
span starts first (the earlier rule in :data:`ckdn.redact._rules.BUILTIN` on a
tie). So a rule never reads another's marker, a secret two rules find is
counted once, and the order of the rules decides nothing but a name.

A span that covers line breaks keeps them (one marker per line), so a log
redacted line by line or whole has the same lines, and a redacted full.log's
line numbers are the raw log's.
"""

from __future__ import annotations

from ckdn.redact import ENTROPY_RULE, marker
from ckdn.redact._pem import ANCHOR as PEM_ANCHOR
from ckdn.redact._pem import pem_spans
from ckdn.redact._rules import BUILTIN, ENTROPY, PatternRule, compile_user, high_entropy

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import AnyStr

__all__ = ["ENV", "PRIVATE_KEY", "Redactor", "candidate_lines", "encoded_forms"]

PRIVATE_KEY = "private-key"
ENV = "env"
#: Characters of an env secret that may show at a cut edge (a shorter prefix is left:
#: every text ending in "a" would lose its "a" to a secret starting with one).
EDGE_LEAST = 4
#: How far back from a cut edge an edge pattern looks.
_EDGE_WINDOW = 4096
Span = tuple[int, int, str]


def encoded_forms(value: str) -> list[str]:
    """``value`` as it may appear encoded: URL (``%XX``, ``+`` for space), JSON string
    escapes, and base64 (standard and URL-safe) at each of the three byte alignments it
    can have inside a longer encoded blob (only the characters the value alone decides)."""
    import base64
    import json
    from urllib.parse import quote, quote_plus

    forms = {value, quote(value, safe=""), quote_plus(value, safe=""),
             json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             json.dumps(value)[1:-1].replace("/", "\\/")}
    raw = value.encode("utf-8", "surrogateescape")
    for offset in range(3):
        data = bytes(offset) + raw
        first = -(-offset * 8 // 6)  # characters that also encode the bytes before
        last = len(data) * 8 // 6  # characters wholly the value's
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms.add(encode(data).decode("ascii")[first:last])
    return sorted((form for form in forms if len(form) >= 8), key=lambda f: (-len(f), f))


class Redactor:
    """The rules for one run: its env secrets (with their encoded forms), the built-in
    patterns, the configured ones; counts per rule go into ``counts``."""

    def __init__(self, *, secrets: Iterable[str] = (), allow: Iterable[str] = (),
                 patterns: Sequence[tuple[str, str]] = (), high_entropy: bool = False,
                 counts: dict[str, int] | None = None) -> None:
        forms: set[str] = set()
        self.secrets = tuple(secrets)
        for value in self.secrets:
            forms.update(encoded_forms(value))
        self.allow = frozenset(allow)
        self.literals = tuple(sorted(forms - self.allow, key=lambda f: (-len(f), f)))
        rules: list[PatternRule] = list(BUILTIN)
        rules += [compile_user(name, source) for name, source in patterns]
        if high_entropy:
            rules.append(ENTROPY)
        self.rules = tuple(rules)
        self.lowered_rules = any(rule.lowered for rule in self.rules)
        self.anchored = [(rule, rule.anchors) for rule in self.rules if rule.anchors]
        self.unanchored_rules = [rule for rule in self.rules if not rule.anchors]
        #: what a stream searches its bytes for: a line without any is left as it is
        self.unanchored = bool(self.unanchored_rules)
        self._needles: tuple[list[bytes], list[tuple[bytes, bytes]], list[bytes]] | None = None
        #: rank of each rule name: a merged span is named after its best-ranked rule
        self.rank = {PRIVATE_KEY: 0, ENV: 1}
        for index, rule in enumerate(self.rules):
            self.rank.setdefault(rule.name, index + 2)
        self.counts: dict[str, int] = {} if counts is None else counts
        longest = max((len(form) for form in self.literals), default=0)
        #: characters past a cut worth reading to redact what straddles it
        self.margin = max(1024, longest + 16)

    def text(self, text: str, edge: bool = False) -> str:
        """``text`` redacted; ``edge``: the text was cut at its end."""
        spans = self.spans(text)
        if edge:
            spans += self.edge_spans(text)
        return self.apply(text, spans) if spans else text

    @property
    def needles(self) -> list[bytes]:
        """What a stream searches its bytes for: a line holding none is left as it is
        (computed for a stream alone: a digest's texts are screened as ``str``)."""
        return self._stream_needles()[0]

    @property
    def pairs(self) -> list[tuple[bytes, bytes]]:
        """``(anchor, literal)``: lines a stream decodes only if they hold both."""
        return self._stream_needles()[1]

    @property
    def lowered_needles(self) -> list[bytes]:
        """The case-insensitive rules' needles, searched in the lowered bytes."""
        return self._stream_needles()[2]

    def _stream_needles(self) -> tuple[list[bytes], list[tuple[bytes, bytes]], list[bytes]]:
        if self._needles is None:
            rules = self.rules
            needles = [anchor.encode() for rule in rules if not (rule.lowered or rule.requires)
                       for anchor in rule.anchors]
            needles += [form.encode("utf-8", "surrogateescape") for form in self.literals]
            pairs = [(anchor.encode(), rule.requires.encode()) for rule in rules
                     if rule.requires and not rule.lowered for anchor in rule.anchors]
            lowered = [_stand_in(anchor.encode()) for rule in rules if rule.lowered
                       for anchor in rule.anchors]
            self._needles = (_shortest(needles), pairs, _shortest(lowered))
        return self._needles

    def lines(self, items: Sequence[str], edges: Sequence[bool] = (),
              open_block: str | None = None) -> list[str]:
        """Items redacted as one text (a key block spanning them is found), each kept
        apart again: a span's line breaks stay, so the items split back exactly.
        ``open_block``: the items start inside a key block with that prefix."""
        joined = "\n".join(items)
        spans = self.spans(joined, open_block)
        if any(edges):
            offset = 0
            for index, item in enumerate(items):
                if index < len(edges) and edges[index]:
                    spans += [(start + offset, end + offset, rule)
                              for start, end, rule in self.edge_spans(item)]
                offset += len(item) + 1
        if not spans:
            return list(items)
        pieces = self.apply(joined, spans).split("\n")
        if len(pieces) == len(items):  # no item held a line break: one piece each
            return pieces
        out: list[str] = []
        position = 0
        for item in items:
            count = item.count("\n") + 1
            out.append("\n".join(pieces[position:position + count]))
            position += count
        return out

    def spans(self, text: str, open_block: str | None = None) -> list[Span]:
        """Every rule's spans in ``text``, unmerged, allowlisted values left out;
        ``open_block``: the text starts inside a key block with that prefix."""
        found: list[Span] = []
        if PEM_ANCHOR in text or open_block is not None:
            found += [(start, end, PRIVATE_KEY)
                      for start, end in pem_spans(text, open_block)[0]]
        for literal in self.literals:
            start = text.find(literal) if literal in text else -1
            while start >= 0:
                found.append((start, start + len(literal), ENV))
                start = text.find(literal, start + len(literal))
        lowered = text.lower() if self.lowered_rules else text
        # a character whose lower case is longer shifts positions: then the lowered text
        # only says whether an anchor is there, and the rule searches the whole text
        exact = len(lowered) == len(text)
        whole = [(0, len(text))]
        single = "\n" not in text
        for rule, anchors in self.anchored:
            haystack = lowered if rule.lowered else text
            for anchor in anchors:
                if anchor in haystack:
                    break
            else:
                continue  # the usual case, and cheap on a short text
            if rule.requires and rule.requires not in text:
                continue
            # A rule never matches across a line break, so only the lines that hold an
            # anchor are searched (in a 4 MiB range of a log, a handful of them).
            lines = whole if single or not exact else candidate_lines(haystack, anchors)
            found += self._matches(rule, text, lines)
        for rule in self.unanchored_rules:
            found += self._matches(rule, text, whole)
        if found and MARKER_HEAD in text:  # a marker is what is left of a secret: never one
            found = _outside_markers(text, found)
        if self.allow:
            found = [span for span in found if text[span[0]:span[1]] not in self.allow]
        return found

    @staticmethod
    def _matches(rule: PatternRule, text: str, lines: Iterable[tuple[int, int]]) -> list[Span]:
        found: list[Span] = []
        pattern, group = rule.pattern, rule.group
        for line_start, line_end in lines:
            for match in pattern.finditer(text, line_start, line_end):
                start, end = match.span(group)
                if end <= start or (rule is ENTROPY and not high_entropy(text[start:end])):
                    continue
                found.append((start, end, rule.name))
        return found

    def edge_spans(self, text: str) -> list[Span]:
        """What is left of a match at the end of a cut ``text``: a token's prefix and part
        of its body, an env secret's first characters."""
        found: list[Span] = []
        size = len(text)
        window = max(0, size - _EDGE_WINDOW)
        lowered = text.lower()
        for rule in self.rules:
            edge = rule.edge
            if edge is None or not rule.present(text, lowered):
                continue
            match = edge.search(text, window)
            if match is not None:
                start, end = match.span(rule.group)
                if end > start:
                    found.append((start, end, rule.name))
        for literal in self.literals:
            for length in range(min(len(literal) - 1, size), EDGE_LEAST - 1, -1):
                if text.endswith(literal[:length]):
                    found.append((size - length, size, ENV))
                    break
        if self.allow:
            found = [span for span in found if text[span[0]:span[1]] not in self.allow]
        return found

    def apply(self, text: str, spans: list[Span]) -> str:
        """``text`` with the merged ``spans`` replaced, each counted once."""
        spans.sort(key=lambda span: (span[0], -span[1]))
        rank = self.rank
        merged: list[Span] = []
        for start, end, rule in spans:
            if merged and start < merged[-1][1]:
                first, last, name = merged[-1]
                better = rule if rank.get(rule, 99) < rank.get(name, 99) else name
                merged[-1] = (first, max(last, end), better)
            else:
                merged.append((start, end, rule))
        pieces: list[str] = []
        position = 0
        counts = self.counts
        for start, end, rule in merged:
            pieces.append(text[position:start])
            shown = marker(rule)
            segment = text[start:end]
            if "\n" in segment:
                pieces.append("\n".join(shown if part.strip() else part
                                        for part in segment.split("\n")))
            else:
                pieces.append(shown)
            counts[rule] = counts.get(rule, 0) + 1
            position = end
        pieces.append(text[position:])
        return "".join(pieces)


MARKER_HEAD = "[REDACTED:"


def _outside_markers(text: str, spans: list[Span]) -> list[Span]:
    """``spans`` less those that lie within a ``[REDACTED:rule]`` marker."""
    markers: list[tuple[int, int]] = []
    start = text.find(MARKER_HEAD)
    while start >= 0:
        end = text.find("]", start)
        if end < 0:
            break
        markers.append((start, end + 1))
        start = text.find(MARKER_HEAD, end)
    return [span for span in spans
            if not any(first <= span[0] and span[1] <= last for first, last in markers)]


#: Shorter literals that stand in for the lowered anchors holding them in a stream's
#: search: one pass finds ``access`` for three spellings of ``secret_access_key``.
_STAND_INS = (b"access", b"auth")


def _stand_in(anchor: bytes) -> bytes:
    return next((short for short in _STAND_INS if short in anchor), anchor)


def _shortest(needles: list[bytes]) -> list[bytes]:
    """``needles`` less those holding another (that one finds every line they would)."""
    unique = list(dict.fromkeys(needles))
    return [n for n in unique if not any(other != n and other in n for other in unique)]


def candidate_lines(haystack: AnyStr, needles: Iterable[AnyStr]) -> list[tuple[int, int]]:
    """``(start, end)`` of each line of ``haystack`` holding one of ``needles``, in order."""
    newline = "\n" if isinstance(haystack, str) else b"\n"
    size = len(haystack)
    lines: dict[int, int] = {}
    for needle in needles:
        position = haystack.find(needle)
        while position >= 0:
            start = haystack.rfind(newline, 0, position) + 1
            end = haystack.find(newline, position)
            if end < 0:
                end = size
            lines[start] = end
            position = haystack.find(needle, end)
    return sorted(lines.items())


def rule_names() -> list[str]:
    """Every built-in rule's name, as markers and the digest's note show them."""
    names = [ENV, PRIVATE_KEY, *(rule.name for rule in BUILTIN), ENTROPY_RULE]
    return sorted(set(names))
