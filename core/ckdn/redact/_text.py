"""The redactor: every rule's spans in a text, merged, replaced by ``[REDACTED:rule]``."""

from __future__ import annotations

import base64
import json
import math
import re
from urllib.parse import quote, quote_plus

from ckdn.redact._settings import ENTROPY_RULE, marker

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import IO, Any, AnyStr

__all__ = ["BUILTIN", "ENTROPY", "ENV", "LOOK_BACK", "PEM_ANCHOR", "PRIVATE_KEY", "PatternRule",
           "Redactor", "candidate_lines", "compile_user", "encoded_forms", "open_after",
           "open_before", "pem_spans"]

# All rules look at the same original text and report spans; overlapping spans
# are merged and the merged span is replaced once, named after the rule whose
# span starts first (the earlier rule in :data:`BUILTIN` on a
# tie). So a rule never reads another's marker, a secret two rules find is
# counted once, and the order of the rules decides nothing but a name.
#
# A span that covers line breaks keeps them (one marker per line), so a log
# redacted line by line or whole has the same lines, and a redacted full.log's
# line numbers are the raw log's.

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


# -- the built-in rules: each a literal anchor, a pattern, the group it replaces ----------

# Every pattern rule has *anchors*, literals one of which every match contains
# (``AKIA``, ``ghp_``, ``://``...). A text is searched for its anchors first
# (``str.find``, gigabytes a second) and a rule's regular expression runs only on
# a text that holds one of them, so a log without credentials costs a few string
# searches, not a regex scan per rule. Anchors of a case-insensitive rule are
# searched in the lowered text.
#
# A rule replaces one group of its match (the credential, not the key name or
# the ``Authorization:`` before it), and has an *edge* form: what is left of a
# match at the end of a text that was cut (a parser kept the first 500
# characters of a message; ``AKIA`` and 10 characters of the key are all that is
# left), matched only there, so a cut can never show most of a credential.
#
# The shapes are the providers' documented token formats; none is tied to a
# service's check digits, so a rule never needs the network and never misses a
# token for failing a checksum.

#: Characters of base64 (standard and URL-safe), the body of most tokens.
_B64 = "A-Za-z0-9+/=_-"


class PatternRule:
    """One rule: its name (shown in ``[REDACTED:name]``), anchors, pattern and edge pattern."""

    __slots__ = ("_edge", "_pattern", "anchors", "edge_source", "group", "lowered", "name",
                 "requires", "source")

    def __init__(self, name: str, anchors: Sequence[str], source: str, *, group: int = 0,
                 edge: str | None = None, lowered: bool = False, requires: str = "") -> None:
        self.name = name
        self.anchors = tuple(anchors)
        #: a literal every whole match also holds (``@`` of a URL's password): a line with
        #: the anchor but not this is not searched (a log has many URLs, few passwords)
        self.requires = requires
        self.source = source
        self.group = group
        self.edge_source = edge
        self.lowered = lowered
        self._pattern: re.Pattern[str] | None = None
        self._edge: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most runs hit no anchor of most rules."""
        if self._pattern is None:
            self._pattern = re.compile(self.source, re.IGNORECASE if self.lowered else 0)
        return self._pattern

    @property
    def edge(self) -> re.Pattern[str] | None:
        if self._edge is None and self.edge_source is not None:
            self._edge = re.compile(self.edge_source + r"\Z",
                                    re.IGNORECASE if self.lowered else 0)
        return self._edge

    def present(self, text: str, lowered: str) -> bool:
        """Whether ``text`` holds one of the anchors (searched in ``lowered`` if so)."""
        haystack = lowered if self.lowered else text
        return any(anchor in haystack for anchor in self.anchors)


#: A tool's own truncation mark inside a value (pytest's ``'ghp_A1b2...Q7r8'``, reprlib).
_ELLIPSIS = "(?:\\.\\.\\.|\u2026)"
_SHORTENED_MOST = 512


def _shortened(chars: str, most: int) -> str:
    """A value a tool cut short with an ellipsis: some of its characters on either side
    (at least one), so what is left of a secret is taken whole, never 24 of 40 characters.
    Each side is bounded (a tool's shortened repr is a few hundred characters)."""
    most = min(most, _SHORTENED_MOST)
    return (f"(?:[{chars}]{{1,{most}}}{_ELLIPSIS}[{chars}]{{0,{most}}}"
            f"|{_ELLIPSIS}[{chars}]{{1,{most}}})")


def _prefixed(name: str, prefixes: Sequence[str], body: str, least: int, most: int = 255
              ) -> PatternRule:
    """A token that starts with one of ``prefixes`` and goes on in ``body`` characters
    (or in some of them around an ellipsis: the tool shortened it)."""
    escaped = [re.escape(prefix) for prefix in prefixes]
    head = escaped[0] if len(escaped) == 1 else f"(?:{'|'.join(escaped)})"
    return PatternRule(name, prefixes,
                       f"{head}(?:{_shortened(body, most)}|[{body}]{{{least},{most}}})",
                       edge=f"{head}[{body}]*")


def _keyed(name: str, anchors: Sequence[str], key: str, value: str, *, least: int,
           most: int = 4096) -> PatternRule:
    """A value after its key (``key = value``, ``"key": "value"``): the value only; the
    key is matched case-insensitively (its anchors are searched lowered)."""
    head = rf"{key}[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?"
    return PatternRule(name, anchors,
                       rf"{head}({_shortened(value, most)}|[{value}]{{{least},{most}}})",
                       group=1, lowered=True, edge=rf"{head}([{value}]*)")


#: The scheme an ``Authorization`` header names before its credential.
_SCHEME = r"(?:bearer|basic|token|digest|negotiate)[ \t]{1,8}"

BUILTIN: tuple[PatternRule, ...] = (
    # AWS access key ids (long-term AKIA, temporary ASIA): 4 + 16 upper-case alphanumerics.
    _prefixed("aws-access-key", ("AKIA", "ASIA"), "A-Z0-9", 16, 16),
    # The secret access key has no prefix: 40 base64 characters named by its key.
    _keyed("aws-secret-key", ("secret_access_key", "secretaccesskey", "secret-access-key"),
           r"secret[_-]?access[_-]?key", "A-Za-z0-9/+=", least=40, most=40),
    _prefixed("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "A-Za-z0-9", 30),
    _prefixed("github-token", ("github_pat_",), "A-Za-z0-9_", 22),
    _prefixed("gitlab-token", ("glpat-",), "A-Za-z0-9_-", 20),
    PatternRule("slack-token", ("xox",),
                rf"xox[a-z]-(?:{_shortened('A-Za-z0-9-', 255)}|[A-Za-z0-9-]{{10,255}})",
                edge=r"xox[a-z]-[A-Za-z0-9-]*"),
    PatternRule("stripe-key", ("k_live_",),
                rf"[sr]k_live_(?:{_shortened('A-Za-z0-9', 255)}|[A-Za-z0-9]{{10,255}})",
                edge=r"[sr]k_live_[A-Za-z0-9]*"),
    _prefixed("google-api-key", ("AIza",), "A-Za-z0-9_-", 35, 35),
    _prefixed("npm-token", ("npm_",), "A-Za-z0-9", 36, 36),
    _keyed("npm-token", ("_authtoken",), "_authToken", "^\\s\"'", least=8),
    _prefixed("pypi-token", ("pypi-Ag",), "A-Za-z0-9_-", 50, 4096),
    # header.payload.signature, the first two base64url JSON objects ({"...)
    PatternRule("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,8192}"
                rf"(?:\.[A-Za-z0-9_-]{{0,4096}}(?:{_ELLIPSIS}[A-Za-z0-9_.-]{{0,8192}})?"
                rf"|{_ELLIPSIS}[A-Za-z0-9_.-]{{0,8192}})"
                rf"|eyJ{_shortened('A-Za-z0-9_.-', 8192)}",
                edge=r"eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}"),
    # The credential after an Authorization header's scheme; a bare Bearer token.
    PatternRule("authorization", ("authorization",),
                rf"authorization[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?{_SCHEME}"
                r"([^\s\"',;]{4,4096})", group=1, lowered=True,
                edge=rf"authorization[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?{_SCHEME}"
                     r"([^\s\"',;]*)"),
    PatternRule("authorization", ("bearer",), r"bearer[ \t]{1,8}("
                rf"{_shortened('A-Za-z0-9._~+/-', 4096)}|[A-Za-z0-9._~+/-]{{8,4096}}=*)",
                group=1, lowered=True, edge=r"bearer[ \t]{1,8}([A-Za-z0-9._~+/-]*=*)"),
    # scheme://user:password@host: the password only
    PatternRule("url-password", ("://",), r"://[^\s:/@\"'<>]{0,255}:([^\s/\"'<>]{1,1024})@",
                group=1, edge=r"://[^\s:/@\"'<>]{0,255}:([^\s/\"'<>@]*)", requires="@"),
)

#: The generic rule, off by default: a long token mixing cases and digits with
#: high Shannon entropy. It also takes base64 test data and random ids, hence off.
ENTROPY = PatternRule(ENTROPY_RULE, (), rf"[{_B64}]{{24,}}")
#: The bits per character an ENTROPY match needs.
ENTROPY_BITS = 4.0


def compile_user(name: str, source: str) -> PatternRule:
    """A ``[run.redact.patterns]`` entry: no anchors, so it runs on every text."""
    return PatternRule(name, (), source)


def high_entropy(token: str) -> bool:
    """Mixed case and digits, not hex, and at least :data:`ENTROPY_BITS` bits a character."""
    if not (any(c.isdigit() for c in token) and any(c.islower() for c in token)
            and any(c.isupper() for c in token)):
        return False

    counts: dict[str, int] = {}
    for char in token:
        counts[char] = counts.get(char, 0) + 1
    size = len(token)
    bits = -sum(n / size * math.log2(n / size) for n in counts.values())
    return bits >= ENTROPY_BITS


# -- PEM private key blocks, line by line (in str or in a log's bytes) ---------------------

# A block is ``-----BEGIN ... PRIVATE KEY-----``, its body lines (base64, the
# ``Proc-Type:``/``DEK-Info:`` headers, blank lines) and ``-----END ... PRIVATE
# KEY-----``. Tools print keys with a prefix on every line (pytest's ``E   ``, a
# logger's stamp), so a body line may carry the BEGIN line's prefix. What is
# redacted:
#
# * BEGIN to END on one line (a key printed as a ``repr``, ``\\n`` escaped);
# * else BEGIN to the end of its line, then the body lines after it, through the
#   END line's marker, or up to the last body line when the END never comes (the
#   log was cut, the key printed in part): a stray BEGIN takes no ordinary line;
# * an END with no BEGIN before it (a log tail that starts inside the key) takes
#   the body lines just above it;
# * a text that starts inside a block (its BEGIN above the text shown: an evidence
#   window, a log tail) takes its body lines from the start: the reader says so
#   with the block's prefix, from :func:`open_after` fed every line before the text
#   or :func:`open_before` looking back from where the text starts.
#
# Only lines are looked at, never a window of characters, so the same log gives
# the same spans whether it is read whole or a line range at a time: a stream
# carries the one fact a range can end inside (an open block and its prefix).

PEM_ANCHOR = "PRIVATE KEY"
_HEADERS = ("Proc-Type:", "DEK-Info:", "Comment:", "Version:")
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


class _Marks:
    """The markers as ``str`` or as ``bytes``: a log range is searched as it was read."""

    __slots__ = ("anchor", "base64", "begin", "dashes", "end", "headers", "newline")

    def __init__(self, kind: type[str] | type[bytes]) -> None:
        def cast(text: str) -> Any:
            return text if kind is str else text.encode()

        self.anchor, self.begin, self.end = cast(PEM_ANCHOR), cast("-----BEGIN"), cast("-----END")
        self.dashes, self.newline = cast("-----"), cast("\n")
        self.headers = tuple(cast(header) for header in _HEADERS)
        self.base64 = cast(_BASE64)


_STR, _BYTES = _Marks(str), _Marks(bytes)
#: Bytes above a text searched for the BEGIN of a block it starts inside: a key's body
#: (a 16384-bit RSA key is 12 KiB of base64) always fits.
LOOK_BACK = 1 << 16


def open_after(line: str, open_prefix: str | None) -> str | None:
    """The prefix of a block still open after ``line``, given the one open before it
    (None: none is): a forward reader feeds every line it passes."""
    if open_prefix is None and PEM_ANCHOR not in line:
        return None
    return pem_spans(line + "\n", open_prefix)[1]


def open_before(handle: IO[bytes], offset: int) -> str | None:
    """The prefix of a block open where the line at ``offset`` of a seekable binary file
    starts (None: none is), read from the nearest line above holding ``PRIVATE KEY``
    within :data:`LOOK_BACK` bytes: a backward reader's way to :func:`open_after`'s
    answer without reading the file from its start."""
    if offset <= 0:
        return None
    start = max(0, offset - LOOK_BACK)
    handle.seek(start)
    above = handle.read(offset - start)
    found = above.rfind(_BYTES.anchor)
    if found < 0:
        return None
    line_start = above.rfind(_BYTES.newline, 0, found) + 1
    if line_start == 0 and start > 0:
        return None  # the anchor's line starts beyond the look-back: no key is that long
    prefix = pem_spans(above[line_start:])[1]
    return None if prefix is None else prefix.decode("utf-8", "replace")


def pem_spans(text: AnyStr, open_prefix: AnyStr | None = None
              ) -> tuple[list[tuple[int, int]], AnyStr | None]:
    """The spans of ``text`` (``str``, or ``bytes`` as a log is read) to redact, and the
    prefix of a block still open at its end.

    ``open_prefix`` is that value from the text before (a stream's previous range):
    ``text`` then starts inside a block, on a line boundary.
    """
    marks = _STR if isinstance(text, str) else _BYTES
    spans: list[tuple[int, int]] = []
    pos = 0
    if open_prefix is not None:
        end, still_open = _walk(text, 0, open_prefix, marks)
        if end > 0:
            spans.append((0, end))
        if still_open:
            return spans, open_prefix
        pos = end
    size = len(text)
    while True:
        found = text.find(marks.anchor, pos)
        if found < 0:
            return spans, None
        line_start = text.rfind(marks.newline, 0, found) + 1
        line_end = text.find(marks.newline, found)
        if line_end < 0:
            line_end = size
        begin = text.rfind(marks.begin, max(pos, line_start), found)
        end_mark = text.rfind(marks.end, max(pos, line_start), found)
        if begin >= 0 and end_mark < begin:
            closing = _closing(text, found, line_end, marks)
            if closing >= 0:  # BEGIN and END on one line
                spans.append((begin, closing))
                pos = closing
                continue
            prefix = text[line_start:begin]
            end, still_open = _walk(text, line_end + 1, prefix, marks)
            spans.append((begin, max(end, line_end)))
            if still_open:
                return spans, prefix
            pos = max(end, line_end)
            continue
        if end_mark >= 0:  # an END whose BEGIN is not in this text
            stop = _marker_end(text, found, line_end, marks)
            prefix = text[line_start:end_mark]
            spans.append((_walk_back(text, line_start, prefix, marks), stop))
            pos = stop
            continue
        pos = found + len(marks.anchor)


def _closing(text: Any, after: int, line_end: int, marks: _Marks) -> int:
    """The end of a ``-----END ... PRIVATE KEY-----`` on the same line, or -1."""
    end_mark = text.find(marks.end, after, line_end)
    if end_mark < 0:
        return -1
    anchor = text.find(marks.anchor, end_mark, line_end)
    if anchor < 0:
        return -1
    return _marker_end(text, anchor, line_end, marks)


def _marker_end(text: Any, anchor: int, line_end: int, marks: _Marks) -> int:
    """Just past the dashes that close the marker whose ``PRIVATE KEY`` is at ``anchor``."""
    dashes = text.find(marks.dashes, anchor, line_end)
    return line_end if dashes < 0 else dashes + len(marks.dashes)


def _lines(text: Any, start: int, marks: _Marks) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line from ``start`` on (end excludes the newline)."""
    size = len(text)
    while start < size:
        end = text.find(marks.newline, start)
        if end < 0:
            end = size
        yield start, end
        start = end + 1


def _walk(text: Any, start: int, prefix: Any, marks: _Marks) -> tuple[int, bool]:
    """The end of the body lines from ``start`` (through an END line's marker), and
    whether the text ended with the block still open."""
    last = start - 1 if start > 0 else 0
    for line_start, line_end in _lines(text, start, marks):
        content = _content(text[line_start:line_end], prefix)
        if marks.end in content and marks.anchor in content:
            anchor = text.find(marks.anchor, line_start, line_end)
            return _marker_end(text, anchor, line_end, marks), False
        if not _is_body(content, marks):
            return last, False
        last = line_end
    return len(text), True


def _walk_back(text: Any, line_start: int, prefix: Any, marks: _Marks) -> int:
    """The start of the body lines just above the line at ``line_start`` (the END line)."""
    first = line_start
    while first > 0:
        previous = text.rfind(marks.newline, 0, first - 1) + 1
        if not _is_body(_content(text[previous:first - 1], prefix), marks):
            break
        first = previous
    return first


def _content(line: Any, prefix: Any) -> Any:
    if prefix and line.startswith(prefix):
        line = line[len(prefix):]
    return line.strip()


def _is_body(content: Any, marks: _Marks) -> bool:
    if not content:
        return True
    if isinstance(content, str):
        return _BODY.issuperset(content) or content.startswith(_HEADERS)
    return not content.translate(None, marks.base64) or content.startswith(marks.headers)


_BODY = frozenset(_BASE64)
