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

from ckdn.redact._pem import pem_spans
from ckdn.redact._text import PRIVATE_KEY

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ckdn.redact._text import Redactor

__all__ = ["BLOCK", "MAX_LINE", "OVERLAP", "redacted_chunks", "rewrite"]

BLOCK = 4 << 20
MAX_LINE = 1 << 20
OVERLAP = 8192
_SEPARATORS = (b" ", b"\t", b",")


def redacted_chunks(read: Callable[[int], bytes], redactor: Redactor, *, block: int = BLOCK,
                    max_line: int = MAX_LINE) -> Iterator[bytes]:
    """What ``read`` gives, redacted, in chunks of whole lines (a piece of a huge one)."""
    carry = b""
    state: str | None = None  # the prefix of a key block open at the end of the last range
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
    import os
    import stat

    sha = hashlib.sha256()
    sizes = [0]

    def chunks(read: Callable[[int], bytes]) -> Iterator[bytes]:
        for chunk in redacted_chunks(read, redactor):
            sha.update(chunk)
            sizes[0] += len(chunk)
            yield chunk

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        write(path, chunks(handle.read))
    return sha.hexdigest(), sizes[0]


def _piece_end(data: bytes, max_line: int) -> int:
    """Where to cut a line with no newline in ``max_line`` bytes: after a separator at
    least :data:`OVERLAP` bytes before the end, else hard at that point."""
    limit = len(data) - OVERLAP
    best = max(data.rfind(separator, 0, limit) for separator in _SEPARATORS)
    return best + 1 if best > 0 else max(1, limit)


def _redact_range(raw: bytes, redactor: Redactor, state: str | None
                  ) -> tuple[bytes, str | None]:
    text = raw.decode("utf-8", "surrogateescape")
    spans = redactor.spans(text) if state is None else _with_open_block(text, redactor, state)
    state = pem_spans(text, state)[1] if (state is not None or "PRIVATE KEY" in text) else None
    if not spans:
        return raw, state
    return redactor.apply(text, spans).encode("utf-8", "surrogateescape"), state


def _with_open_block(text: str, redactor: Redactor, state: str
                     ) -> list[tuple[int, int, str]]:
    """The spans of a range that starts inside a key block (``state``: its prefix)."""
    blocks, _ = pem_spans(text, state)
    spans = [span for span in redactor.spans(text) if span[2] != PRIVATE_KEY]
    return spans + [(start, end, PRIVATE_KEY) for start, end in blocks]
