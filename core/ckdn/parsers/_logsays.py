"""What a log says failed, whatever report sits beside it: the base's contradiction rule.

A clean report at exit 0 is green only if the log does not say otherwise. These are
the lines by which the tools ckdn knows say that something failed, or that they
refused their command line (their usage line); a parser's report being clean beside
one means the report is not this run's whole story (another tool's, stale, partial).
"""

from __future__ import annotations

from ckdn.evidence_files import open_log

__all__ = ["failure_line", "says_failed"]

#: Bytes that every line :func:`says_failed` accepts contains: found at C speed, so a
#: clean log costs one pass of ``bytes.find`` per marker.
_MARKERS = (b" failed", b" error", b"error: ", b"FAILED ", b"ERROR ", b"sage: ", b"reformat")
#: The log is read in blocks of this size; a line longer than :data:`_LINE` is judged
#: by its first :data:`_LINE` bytes.
_BLOCK = 1 << 20
_LINE = 4096
#: The words of a summary count that mean failures (pytest, pyright, and their kin).
_FAILING = ("failed", "error", "errors")


def _count_parts(text: str) -> list[tuple[int, str]] | None:
    """``[(9, "failed"), (5, "passed")]`` for ``9 failed, 5 passed in 0.12s``; None if the
    line is not such a summary (``=`` rules around it allowed)."""
    body = text.strip().strip("=").strip()
    body = body.split(" in ", 1)[0].strip()
    parts = []
    for part in body.split(", "):
        number, _, word = part.strip().partition(" ")
        if not number.isdigit() or not word or " " in word:
            return None
        parts.append((int(number), word))
    return parts or None


def _located_error(text: str) -> bool:
    """``path:line[:col]: error: ...`` (mypy, compilers)."""
    head, found, _ = text.partition(": error: ")
    if not found:
        return False
    pieces = head.split(":")
    digits = [p for p in pieces[1:] if p.isdigit()]
    return len(pieces) in (2, 3) and len(digits) == len(pieces) - 1 and bool(pieces[0].strip())


def _plain(line: str) -> str:
    """``line`` without terminal colour (``ESC [ ... letter``), for a tool forced into it."""
    if "\x1b" not in line:
        return line
    out = []
    inside = False
    for char in line:
        if char == "\x1b":
            inside = True
        elif inside:
            inside = not (char.isalpha() and char != "[")
        else:
            out.append(char)
    return "".join(out)


def says_failed(line: str) -> bool:
    """Whether one log line says a run failed, or a tool refused its command line."""
    text = _plain(line).rstrip()
    if text.startswith(("usage: ", "Usage: ")):  # argparse's, click's: PROG [-h] ...
        words = text.split()
        return (len(words) >= 2 and words[1][:1] not in ("", "-")
                and (len(words) == 2 or words[2][:1] in "[-<{" or words[2].isupper()))
    if text.startswith(("error: ", "would reformat ", "Would reformat: ")):
        return True
    if text.startswith(("FAILED ", "ERROR ")) and "::" in text:
        return True  # pytest's short test summary
    if text.startswith("Found "):
        number = text[6:].split(" ", 2)
        return (len(number) >= 2 and number[0].isdigit() and int(number[0]) > 0
                and number[1].startswith("error"))
    if _located_error(text):
        return True
    if "would be reformatted" in text:
        files = text.strip().split(" ", 1)[0]
        return files.isdigit() and int(files) > 0
    parts = _count_parts(text)
    return parts is not None and any(n > 0 and word in _FAILING for n, word in parts)


def failure_line(path: str) -> tuple[int, str] | None:
    """``(line number, line)`` of the first line of the log that :func:`says_failed`, in
    one bounded pass; None for a log without one (or none at all)."""
    try:
        handle = open_log(path)
    except OSError:
        return None  # no log (or not a regular one): nothing it says
    with handle:
        carry = b""
        before = 0  # lines before ``block``
        while True:
            data = handle.read(_BLOCK)
            block = carry + data
            if not data:
                return _first_in(block, before) if block else None
            end = block.rfind(b"\n") + 1
            if end == 0 and len(block) > _LINE:  # one very long line: judged by its head
                end = len(block)
            found = _first_in(block[:end], before)
            if found is not None:
                return found
            before += block.count(b"\n", 0, end)
            carry = block[end:]


#: Markers that count only after a nonzero number (``9 failed``) or a colon (``: error``).
_COUNTED = (b" failed", b" error")
_DIGITS = b"0123456789"


def _counts(block: bytes, at: int) -> bool:
    """Whether the marker at ``at`` follows a nonzero count (``3 errors``) or a colon."""
    if at == 0:
        return False
    if block[at - 1:at] == b":":
        return True
    start = at
    while start > 0 and block[start - 1] in _DIGITS:
        start -= 1
    return start < at and block[start:at].strip(b"0") != b""


def _first_in(block: bytes, before: int) -> tuple[int, str] | None:
    """The first line of ``block`` that says it failed: each line with a marker is judged
    once (the search resumes after it), so a block costs linear time whatever it holds."""
    starts: set[int] = set()
    for marker in _MARKERS:
        counted = marker in _COUNTED
        at = block.find(marker)
        while at >= 0:
            if counted and not _counts(block, at):
                at = block.find(marker, at + 1)  # "0 errors", "test_x failed": not a count
                continue
            start = block.rfind(b"\n", 0, at) + 1
            stop = block.find(b"\n", at)
            stop = len(block) if stop < 0 else stop
            starts.add(start)
            at = block.find(marker, stop)
    for start in sorted(starts):
        stop = block.find(b"\n", start)
        raw = block[start:stop if stop >= 0 else len(block)][:_LINE]
        line = raw.decode("utf-8", "replace").replace("\r", "")
        if says_failed(line):
            return before + block.count(b"\n", 0, start) + 1, line
    return None
