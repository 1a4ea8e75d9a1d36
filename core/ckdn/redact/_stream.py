"""Redacting a whole log as a stream, in bounded memory, whatever its size."""

from __future__ import annotations

import hashlib
import queue
import re
import threading

from ckdn.evidence_files import open_regular
from ckdn.redact._settings import marker
from ckdn.redact._text import PEM_ANCHOR, PRIVATE_KEY, candidate_lines, pem_spans

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Iterator, Sequence

    from ckdn.redact._text import Redactor

__all__ = ["BLOCK", "MAX_LINE", "OVERLAP", "redacted_chunks", "rewrite"]

# The log is read in blocks and redacted a range of whole lines at a time (a
# secret never spans a line break, but a key block, whose open state is carried
# from one range to the next), so a token a block edge splits is redacted as if
# the log were read whole. A line longer than :data:`MAX_LINE` is cut into pieces
# at a space, tab or comma at least :data:`OVERLAP` characters before the piece's
# end, so only a run of more than that many characters with no such separator
# (no credential is one) can be split. Bytes round-trip exactly: the text is
# decoded with ``surrogateescape``, so invalid UTF-8 comes out as it went in.

BLOCK = 4 << 20
MAX_LINE = 1 << 20
OVERLAP = 8192
_SEPARATORS = (b" ", b"\t", b",")
PEM_BYTES = PEM_ANCHOR.encode()
_PEM_NEEDLE = (PEM_BYTES,)
#: Bytes of a range counted to find which bytes are rare in it.
_SAMPLE = 1 << 14


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

    sha = hashlib.sha256()
    sizes = [0]

    def chunks(read: Callable[[int], bytes]) -> Iterator[bytes]:
        for chunk in _ahead(redacted_chunks(read, redactor)):
            sha.update(chunk)
            sizes[0] += len(chunk)
            yield chunk


    with open(open_regular(path), "rb") as handle:
        write(path, chunks(handle.read))
    return sha.hexdigest(), sizes[0]


def _ahead(chunks: Iterator[bytes], depth: int = 2) -> Generator[bytes, None, None]:
    """``chunks``, made in a thread up to ``depth`` ahead of the consumer.

    Hashing and writing a chunk release the GIL, so the next range is redacted
    meanwhile (a fifth of the time on two cores). Memory stays bounded by ``depth``
    chunks; an error in the thread is raised here; a consumer that stops early
    (the write failed) stops the thread.
    """

    channel: queue.Queue[tuple[bytes | None, BaseException | None]] = queue.Queue(depth)
    stop = threading.Event()

    def send(item: tuple[bytes | None, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                channel.put(item, timeout=0.1)
            except queue.Full:
                continue
            return True
        return False

    def produce() -> None:
        try:
            for chunk in chunks:
                if not send((chunk, None)):
                    return
            send((None, None))
        except BaseException as exc:  # handed to the consumer, raised there
            send((None, exc))

    worker = threading.Thread(target=produce, name="ckdn-redact", daemon=True)
    worker.start()
    try:
        while True:
            chunk, error = channel.get()
            if error is not None:
                raise error
            if chunk is None:
                return
            yield chunk
    finally:
        stop.set()
        worker.join()


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
    if state is None and not lines_holding(raw, _PEM_NEEDLE):
        blocks: list[tuple[int, int]] = []  # most ranges hold no key: found by a rare byte
    else:
        blocks, state = pem_spans(raw, state)
    if redactor.unanchored:
        return _redact_whole(raw, redactor, blocks), state
    lines = lines_holding(raw, redactor.needles, redactor.pairs)
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


def lines_holding(raw: bytes, needles: Sequence[bytes],
                  pairs: Sequence[tuple[bytes, bytes]] = ()) -> dict[int, int]:
    """``{start: end}`` of each line of ``raw`` that holds one of ``needles``, or both
    literals of one of ``pairs`` (more lines may come back, never fewer).

    A ``bytes.find`` of a short needle costs a pass over the range (about 2 ms for
    4 MiB, less for a long one), and a run with secrets in its environment has dozens
    of needles. So a needle whose rarest byte is rare in this range (counted in a
    sample) is found by that byte: one ``memchr`` pass per distinct byte, each hit
    checked against the needles that byte stands for; a needle whose every byte is
    common costs less found whole. A pair is searched by its rarer literal, the other
    checked on the line.
    """
    counts = _byte_counts(raw, [*needles, *(literal for pair in pairs for literal in pair)])
    size = len(raw)
    items: list[tuple[bytes, bytes]] = [(needle, b"") for needle in needles]
    for first, second in pairs:
        rarer = min(counts[byte] for byte in second) < min(counts[byte] for byte in first)
        items.append((second, first) if rarer else (first, second))
    groups: dict[int, list[tuple[bytes, int, bytes]]] = {}
    common: list[tuple[bytes, bytes]] = []
    for needle, also in items:
        rare = min(set(needle), key=counts.__getitem__)
        if counts[rare] * _HIT_NS < _find_ns(len(needle), size):
            groups.setdefault(rare, []).append((needle, needle.index(rare), also))
        else:
            common.append((needle, also))
    lines = _common_lines(raw, common) if common else {}
    for byte, group in groups.items():
        position = raw.find(byte)
        while position >= 0:
            for needle, offset, also in group:
                at = position - offset
                if at >= 0 and raw.startswith(needle, at):
                    start = raw.rfind(b"\n", 0, at) + 1
                    end = raw.find(b"\n", at)
                    end = size if end < 0 else end
                    if not also or raw.find(also, start, end) >= 0:
                        lines[start] = end
            position = raw.find(byte, position + 1)
    return lines


#: What one hit of a byte costs the loop that checks it (a find call, a startswith).
_HIT_NS = 200


def _find_ns(length: int, size: int) -> float:
    """What a ``bytes.find`` pass of a ``length``-byte needle over ``size`` bytes costs
    (measured: 0.45 ns a byte for 4 bytes, 0.1 for 40: the longer, the longer its skips)."""
    return size * (min(0.45, 2.9 / (length + 2)) + 0.02)


def _byte_counts(raw: bytes, needles: Iterable[bytes]) -> dict[int, int]:
    """Each needle byte's estimated count in ``raw``, from 16 pieces of 1 KiB across it
    (a log's kinds of line come in stretches: one piece would see one stretch)."""
    pieces = 16
    step = max(_SAMPLE // pieces, len(raw) // pieces)
    sample = b"".join(raw[at:at + _SAMPLE // pieces] for at in range(0, len(raw), step))
    scale = len(raw) / max(1, len(sample))
    counts: dict[int, int] = {}
    for needle in needles:
        for byte in needle:
            if byte not in counts:
                counts[byte] = int(sample.count(byte) * scale)
    return counts


def _common_lines(raw: bytes, needles: list[tuple[bytes, bytes]]) -> dict[int, int]:
    """Lines holding needles found whole (and their ``also`` literal): needles that share
    their first two bytes are found in one pass (a regex whose literal prefix those bytes
    are), others alone."""
    by_head: dict[bytes, list[bytes]] = {}
    lines: dict[int, int] = {}
    size = len(raw)
    for needle, also in needles:
        if also:
            for start, end in candidate_lines(raw, [needle]):
                if raw.find(also, start, end) >= 0:
                    lines[start] = end
        else:
            by_head.setdefault(needle[:2], []).append(needle)
    for head, group in by_head.items():
        if len(group) == 1:
            lines.update(candidate_lines(raw, group))
            continue

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


