"""The text policy of every string a digest carries, and the one family of truncation helpers."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable

__all__ = [
    "ARTIFACT_WIDTH",
    "CHECK_WIDTH",
    "ID_WIDTH",
    "KIND_WIDTH",
    "LINE_WIDTH",
    "MESSAGE_WIDTH",
    "RUN_DIR_WIDTH",
    "Cut",
    "Snippet",
    "as_text",
    "clean_cap",
    "clean_line",
    "cut",
    "escapes_length",
    "hold_back_escape",
    "inert",
    "inert_prefix",
    "marked",
    "parts",
    "snippet",
    "strip_ansi",
    "unsurrogate",
]

# Every string ckdn hands a reader is **inert**: it can neither drive a terminal
# nor reorder what a person sees. ANSI escape sequences (colours, cursor moves,
# titles, hyperlinks) are stripped, as they always were: they are styling, not
# content. Every other character that acts rather than shows is escaped visibly
# as ``\\uXXXX`` text (six characters: a backslash, ``u``, four lowercase hex
# digits): the C0 controls but tab, DEL, the C1 controls (U+0080..U+009F: CSI
# U+009B, OSC U+009D, NEL U+0085 act on some terminals like ESC sequences and line
# breaks), the bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
# U+2066..U+2069: "Trojan Source"), and the line and paragraph separators
# U+2028, U+2029. Nothing is dropped silently: the escape shows which character
# it was. A lone surrogate (an undecodable byte of a path) becomes U+FFFD, as
# undecodable bytes of a log do. :func:`inert` is that rule alone; the CLI and
# the human form apply it to every line they print, where on a JSON line it is
# JSON's own escape, so the document reads back unchanged.
#
# The width caps below count **shown** characters: an escaped character counts
# six, so a cut string never shows more than its width. No shown character
# encodes to more than 4 bytes of canonical JSON (a shown backslash is 2 bytes, so
# an escape is 7 bytes for 6 characters; a character outside the BMP is 4), which
# is what makes the digest's byte bound provable from the numbers alone.
#
# Every cut is counted where it happened, never silent: a cut string ends in
# ``... [+N chars]``, N being the characters of the original text the reader does
# not see (escapes are shown, not counted), and a cut list of lines ends in
# ``... [+N more lines]``. The count travels as data, not as
# text to be read back: a cut string is a :class:`Cut` (a ``str`` that also knows
# its kept text and how much was cut), a cut list of lines is a :class:`Snippet`
# (a tuple that knows how many lines were dropped). Cutting again (a parser cut a
# line at 500 characters, the digest shows 300) adds to the count.
#
# Parsers cut with the same helpers (``ParseContext.snippet``,
# ``ckdn.parsers.base.cap_line``) so their memory stays bounded whatever a tool prints.

# Width caps, in shown characters (after cleaning; an escape shows as 6). No shown
# character encodes to more than 4 bytes, which makes the byte bound provable from these.
MESSAGE_WIDTH = 500  # finding message, note, status_reason
LINE_WIDTH = 300  # snippet line, log tail line, gate failure, summary string
ID_WIDTH = 300  # finding id and location, summary key
KIND_WIDTH = 100
CHECK_WIDTH = 200
RUN_DIR_WIDTH = 1024
ARTIFACT_WIDTH = 255

_REPLACEMENT = "\ufffd"
_ESC_WINDOW = 4096  # longer than any sequence the "ansi" pattern matches

# The patterns are compiled on first use, and ``re`` is imported then: a passing run
# cleans a few short ASCII strings and needs none of them, and compiling them costs
# more than that run's whole digest.
_patterns: dict[str, re.Pattern[str]] = {}


def _pattern(name: str) -> re.Pattern[str]:
    found = _patterns.get(name)
    if found is None:
        import re  # here: `re` costs every run, and only some texts need a pattern

        found = _patterns[name] = re.compile(_SOURCES[name])
    return found


_SOURCES = {
    # ANSI escapes: CSI (colours, cursor), OSC (titles, hyperlinks), two-character ESC
    # sequences. Lengths are bounded so a streamed line, which can only hold back a
    # window of text at a chunk boundary, strips exactly what a whole line would.
    "ansi": r"\x1b(?:\[[0-?]{0,256}[ -/]{0,16}[@-~]|\][^\x07\x1b]{0,2048}(?:\x07|\x1b\\)"
            r"|[@-Z\\^_])",
    # A suffix that may be the start of an escape sequence cut by a chunk boundary.
    "ansi_prefix": r"\x1b(?:\[[0-?]{0,256}[ -/]{0,16}|\][^\x07\x1b]{0,2048}\x1b?)?\Z",
    # What acts rather than shows (see the module docstring), and lone surrogates.
    "unsafe": "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
              "\ud800-\udfff]",
}


class Cut(str):
    """A string cut to its first characters: the text reads ``body... [+N chars]``.

    ``body`` is the kept text and ``omitted`` the count of characters cut off,
    so cutting it again counts from the data (:func:`cut`, :func:`clean_line`).
    """

    body: str
    omitted: int

    def __new__(cls, body: str, omitted: int) -> Cut:
        made = super().__new__(cls, marked(body, omitted))
        made.body = str(body)
        made.omitted = omitted
        return made

    def __reduce__(self) -> tuple[type[Cut], tuple[str, int]]:
        return (Cut, (self.body, self.omitted))


class Snippet(tuple[str, ...]):
    """Lines kept of a longer list; ``omitted`` counts the lines left out (shown as a marker)."""

    omitted: int

    def __new__(cls, lines: Iterable[str] = (), omitted: int = 0) -> Snippet:
        made = super().__new__(cls, lines)
        made.omitted = omitted
        return made

    def __reduce__(self) -> tuple[type[Snippet], tuple[tuple[str, ...], int]]:
        return (Snippet, (tuple(self), self.omitted))


def marked(body: str, omitted: int) -> str:
    """``body`` with its counted marker: how every cut string reads."""
    return f"{body}... [+{omitted} chars]" if omitted else body


def parts(value: object) -> tuple[str, int]:
    """``(text, characters already cut off)`` of any value a parser handed over."""
    if isinstance(value, Cut):
        return value.body, value.omitted
    return as_text(value), 0


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, as a counted :class:`Cut`; unchanged if it fits.

    Cutting a :class:`Cut` keeps counting: the characters the reader does not see.
    """
    body, omitted = parts(text)
    if len(body) <= width:
        return text
    return Cut(body[:width], len(body) - width + omitted)


def snippet(lines: Iterable[object], limit: int, width: int) -> Snippet:
    """At most ``limit`` lines, each cut to ``width``; the rest counted, never kept."""
    kept: list[str] = []
    omitted = 0
    for line in lines:
        if len(kept) < limit:
            kept.append(cut(as_text(line), width))
        else:
            omitted += 1
    return Snippet(kept, omitted)


def clean_cap(text: str, width: int) -> str:
    """Strip ANSI sequences, make the rest inert, cut to ``width`` shown characters.

    Only the first ``width`` characters can be shown, so only they are escaped:
    a 100 MB message costs one scan for escape sequences, not one per character.
    """
    body, omitted = parts(text)
    body = strip_ansi(body)
    shown, taken = inert_prefix(body, width)
    return marked(shown, omitted + len(body) - taken)


def clean_line(value: object, width: int) -> str:
    """``value`` as one clean, cut line: the form of every single-line digest string."""
    body, omitted = parts(value)
    return clean_cap(Cut(_one_line(body), omitted) if omitted else _one_line(body), width)


def _one_line(text: str) -> str:
    parts = text.splitlines()
    if len(parts) <= 1:
        return parts[0] if parts else ""
    return " ".join(stripped for part in parts if (stripped := part.strip()))


def strip_ansi(text: str) -> str:
    """``text`` without its ANSI escape sequences."""
    return _pattern("ansi").sub("", text) if "\x1b" in text else text


def inert(text: str) -> str:
    """``text`` with every character that acts escaped as ``\\uXXXX`` (see above)."""
    if text.isascii() and text.isprintable():  # the usual case, without a regex
        return text
    return _pattern("unsafe").sub(_escape, text)


def inert_prefix(text: str, width: int) -> tuple[str, int]:
    """``(shown, taken)``: the inert form of the longest prefix of ``text`` that shows in
    ``width`` characters, and how many characters of ``text`` that prefix is.

    An escape is never split: one that does not fit ends the prefix. Taking a
    prefix of the rest with the room left gives what one call on the whole would,
    so a line read in pieces is cut exactly like the whole line.
    """
    head = text[:max(0, width)]
    if head.isascii() and head.isprintable():
        return head, len(head)
    pieces: list[str] = []
    used = position = 0
    for match in _pattern("unsafe").finditer(head):
        plain = head[position:match.start()]
        if used + len(plain) >= width:
            pieces.append(plain[:width - used])
            return "".join(pieces), position + width - used
        escaped = _escape(match)
        if used + len(plain) + len(escaped) > width:
            pieces.append(plain)
            return "".join(pieces), match.start()
        pieces += (plain, escaped)
        used += len(plain) + len(escaped)
        position = match.end()
    rest = head[position:width - used + position]
    pieces.append(rest)
    return "".join(pieces), position + len(rest)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return _REPLACEMENT if 0xD800 <= code <= 0xDFFF else f"\\u{code:04x}"


def escapes_length(text: str) -> int:
    """How many characters :func:`strip_ansi` would remove from ``text``."""
    if "\x1b" not in text:
        return 0
    return sum(match.end() - match.start() for match in _pattern("ansi").finditer(text))


def hold_back_escape(text: str) -> tuple[str, str]:
    """Split ``text`` into ``(complete, carry)``, ``carry`` a possibly cut escape at its end.

    Text decoded from one chunk of a stream may end inside an escape sequence; the
    caller prepends ``carry`` to the next chunk's text, so the sequence is stripped
    whole rather than shown in part.
    """
    if "\x1b" in text[-_ESC_WINDOW:]:
        partial = _pattern("ansi_prefix").search(text, max(0, len(text) - _ESC_WINDOW))
        if partial:
            return text[: partial.start()], text[partial.start():]
    return text, ""


def as_text(value: object) -> str:
    """Any value a parser handed over, as text (``None`` is empty, bytes decode leniently)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def unsurrogate(text: str) -> str:
    """Valid UTF-8 for text that may carry ``surrogateescape`` bytes (argv, paths)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escaped_only(text) else "replace"
                           ).decode("utf-8", "replace")
    return text


def _escaped_only(text: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)
