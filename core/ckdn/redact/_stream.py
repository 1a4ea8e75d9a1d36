"""Redacting a whole log as a stream, in bounded memory, whatever its size.

The log is read in blocks and redacted a range of whole lines at a time (a
secret never spans a line break, but a key block, whose open state is carried
from one range to the next), so a token a block edge splits is redacted as if
the log were read whole. A line longer than :data:`MAX_LINE` is cut into pieces
at a space, tab or comma at least :data:`OVERLAP` characters before the piece's
end, so only a run of more than that many characters with no such separator
(no credential is one) can be split. Bytes round-trip exactly: the text is
decoded with ``surrogateescape``, so invalid UTF-8 comes out as it went in.
"""

from __future__ import annotations

from ckdn.redact import marker
from ckdn.redact._pem import ANCHOR as PEM_ANCHOR
from ckdn.redact._pem import pem_spans
from ckdn.redact._text import PRIVATE_KEY, candidate_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ckdn.redact._text import Redactor

__all__ = ["BLOCK", "MAX_LINE", "OVERLAP", "redacted_chunks", "rewrite"]

BLOCK = 4 << 20
MAX_LINE = 1 << 20
OVERLAP = 8192
_SEPARATORS = (b" ", b"\t", b",")
PEM_BYTES = PEM_ANCHOR.encode()
#: Bytes of a range counted to find which bytes are rare in it.
_SAMPLE = 1 << 14
#: Occurrences in a range (estimated) past which a byte is not worth a memchr loop.
_RARE = 3000


def redacted_chunks(read: Callable[[int], bytes], redactor: Redactor, *, block: int = BLOCK,
                    max_line: int = MAX_LINE) -> Iterator[bytes]:
    """What ``read`` gives, redacted, in chunks of whole lines (a piece of a huge one)."""
    carry = b""
    state: bytes | None = None  # the prefix of a key block open at the end of the last range
    while True:
        data = read(block)
        final = not data
        data = carry + data
        if final:
            head, carry = data, b""
        else:
            cut = data.rfind(b"\n") + 1
            if cut == 0 and len(data) > max_line:
                cut = _piece_end(data, max_line)
            if cut == 0:
                carry = data
                continue
            head, carry = data[:cut], data[cut:]
        if head:
            out, state = _redact_range(head, redactor, state)
            yield out
        if final:
            return


def rewrite(path: str, write: Callable[[str, Iterator[bytes]], object], redactor: Redactor
            ) -> tuple[str, int]:
    """Replace the log at ``path`` by its redacted copy through ``write`` (an atomic
    writer of chunks); its sha256 (hex) and size. ``OSError`` if it cannot be read: it
    is opened never through a symlink, and only as a regular file."""
    import hashlib

    sha = hashlib.sha256()
    sizes = [0]

    def chunks(read: Callable[[int], bytes]) -> Iterator[bytes]:
        for chunk in redacted_chunks(read, redactor):
            sha.update(chunk)
            sizes[0] += len(chunk)
            yield chunk

    from ckdn.regular import open_regular

    with open(open_regular(path), "rb") as handle:
        write(path, chunks(handle.read))
    return sha.hexdigest(), sizes[0]


def _piece_end(data: bytes, max_line: int) -> int:
    """Where to cut a line with no newline in ``max_line`` bytes: after a separator at
    least :data:`OVERLAP` bytes before the end, else hard at that point."""
    limit = len(data) - OVERLAP
    best = max(data.rfind(separator, 0, limit) for separator in _SEPARATORS)
    return best + 1 if best > 0 else max(1, limit)


def _redact_range(raw: bytes, redactor: Redactor, state: bytes | None
                  ) -> tuple[bytes, bytes | None]:
    """A range of whole lines redacted, and the key block state at its end.

    Only the lines that hold an anchor or an env secret's form are decoded and
    redacted (a few in a range), key blocks are found in the bytes, and the rest is
    passed on as it is, untouched. A configured pattern or the entropy rule has no
    anchor: then the whole range is decoded and redacted.
    """
    blocks, state = pem_spans(raw, state)  # one pass: most ranges hold no key
    if redactor.unanchored:
        return _redact_whole(raw, redactor, blocks), state
    lines = lines_holding(raw, redactor.needles)
    if redactor.lowered_needles:
        lines.update(lines_holding(raw.lower(), redactor.lowered_needles))
    if not lines and not blocks:
        return raw, state
    edits: list[tuple[int, int, bytes]] = []
    for start, end in blocks:
        edits.append((start, end, _block(raw[start:end], redactor)))
    for start, end in sorted(lines.items()):
        if any(start < b_end and b_start < end for b_start, b_end in blocks):
            continue  # a key block's line: the block is redacted whole
        line = raw[start:end].decode("utf-8", "surrogateescape")
        shown = redactor.text(line)
        if shown is not line:
            edits.append((start, end, shown.encode("utf-8", "surrogateescape")))
    if not edits:
        return raw, state
    edits.sort()
    pieces: list[bytes] = []
    position = 0
    for start, end, replacement in edits:
        pieces += (raw[position:start], replacement)
        position = end
    pieces.append(raw[position:])
    return b"".join(pieces), state


def _block(region: bytes, redactor: Redactor) -> bytes:
    """A key block's bytes as redacted: one marker per line, counted once."""
    shown = marker(PRIVATE_KEY).encode()
    redactor.counts[PRIVATE_KEY] = redactor.counts.get(PRIVATE_KEY, 0) + 1
    return b"\n".join(shown if part.strip() else part for part in region.split(b"\n"))


def lines_holding(raw: bytes, needles: Sequence[bytes]) -> dict[int, int]:
    """``{start: end}`` of each line of ``raw`` that holds one of ``needles``.

    Each ``bytes.find`` of a short needle costs a pass over the range (about 2 ms for
    4 MiB), and a run with secrets in its environment has dozens of needles. So each
    needle is found by its rarest byte in this range (counted in a sample): one
    ``memchr`` pass per distinct rare byte, each hit checked against the needles that
    byte stands for. A byte that is not rare here (a needle made of common letters)
    falls back to finding its needles one by one.
    """
    step = max(_SAMPLE // 4, len(raw) // 4)  # four pieces across the range, not its head
    sample = b"".join(raw[at:at + _SAMPLE // 4] for at in range(0, len(raw), step))
    scale = max(1, len(raw) // max(1, len(sample)))
    counts: dict[int, int] = {}
    groups: dict[int, list[tuple[bytes, int]]] = {}
    common: list[bytes] = []
    for needle in needles:
        for byte in set(needle):
            if byte not in counts:
                counts[byte] = sample.count(byte)
        rare = min(set(needle), key=counts.__getitem__)
        if counts[rare] * scale > _RARE:
            common.append(needle)
        else:
            groups.setdefault(rare, []).append((needle, needle.index(rare)))
    lines = _common_lines(raw, common) if common else {}
    size = len(raw)
    for byte, group in groups.items():
        position = raw.find(byte)
        while position >= 0:
            for needle, offset in group:
                at = position - offset
                if at >= 0 and raw.startswith(needle, at):
                    start = raw.rfind(b"\n", 0, at) + 1
                    end = raw.find(b"\n", at)
                    lines[start] = size if end < 0 else end
            position = raw.find(byte, position + 1)
    return lines


def _common_lines(raw: bytes, needles: list[bytes]) -> dict[int, int]:
    """Lines holding needles with no rare byte: needles that share their first two bytes
    are found in one pass (a regex whose literal prefix those bytes are), others alone."""
    by_head: dict[bytes, list[bytes]] = {}
    for needle in needles:
        by_head.setdefault(needle[:2], []).append(needle)
    lines: dict[int, int] = {}
    size = len(raw)
    for head, group in by_head.items():
        if len(group) == 1:
            lines.update(candidate_lines(raw, group))
            continue
        import re

        tails = b"|".join(re.escape(needle[2:]) for needle in group)
        for match in re.finditer(re.escape(head) + b"(?:" + tails + b")", raw):
            at = match.start()
            start = raw.rfind(b"\n", 0, at) + 1
            end = raw.find(b"\n", at)
            lines[start] = size if end < 0 else end
    return lines


def _redact_whole(raw: bytes, redactor: Redactor, blocks: list[tuple[int, int]]) -> bytes:
    """The range decoded and redacted whole (a rule without anchors runs on all of it);
    ``blocks``: its key blocks, already found in its bytes."""
    edits = [(start, end, _block(raw[start:end], redactor)) for start, end in blocks]
    pieces: list[bytes] = []
    position = 0
    for start, end, replacement in [*edits, (len(raw), len(raw), b"")]:
        text = raw[position:start].decode("utf-8", "surrogateescape")
        spans = [span for span in redactor.spans(text) if span[2] != PRIVATE_KEY]
        shown = redactor.apply(text, spans) if spans else text
        pieces += (shown.encode("utf-8", "surrogateescape"), replacement)
        position = end
    return b"".join(pieces)


