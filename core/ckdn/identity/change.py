"""A change set read from a unified diff (git, jj, hg, ``diff -u``): which lines a change
added, which it kept around them, which it deleted. Read as a stream, and refused whole
(:class:`DiffError`) at the first line it does not understand: a gate never judges half a diff.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator

from ckdn.errors import CkdnError

__all__ = ["ADDED", "CONTEXT", "FILE", "OUTSIDE", "WHERE", "ChangeSet", "DiffError",
           "FileChange", "content_key", "read_diff", "read_hashed_diff"]

# What is read, per file block:
#
# * ``diff --git a/P b/P`` (git, jj), ``diff -r REV P`` (hg), ``diff -u OLD NEW`` or
#   nothing (plain ``diff -u``) open a block; the extended headers git writes (modes,
#   similarity, ``rename from``/``rename to``, ``copy``, ``index``) are read, ``Binary
#   files ... differ`` and ``GIT binary patch`` make a binary file (its path, no lines);
# * ``--- OLD`` then ``+++ NEW``, always as a pair; ``a/`` and ``b/`` are taken off when
#   both sides carry them (``/dev/null`` is either), a C-quoted path is unquoted, a tab
#   and what follows (``diff -u``'s timestamp) dropped;
# * ``@@ -A,B +C,D @@`` hunks, whose lines are counted against B and D: a content line
#   that reads ``+++ x`` is content while the counts say so, never a header.
#
# Refused: a combined diff (``diff --cc``), ``---`` without ``+++``, a hunk line that is
# not `` ``, ``-``, ``+`` or ``\``, a hunk shorter or longer than its header, an escape
# byte (a coloured diff), a quoted path with an unknown escape.

ADDED = "added"
CONTEXT = "context"
FILE = "file"
OUTSIDE = "outside"
#: The values of a finding's ``where``, from inside the change outwards.
WHERE = (ADDED, CONTEXT, FILE, OUTSIDE)

_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(?: .*)?")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_NULL = "/dev/null"
#: Bytes of a line's content hashed for move detection (as the fingerprint's line cap).
_CONTENT_BYTES = 4096
#: Bytes read at once from a stream holding a diff.
_BLOCK = 1 << 16


class DiffError(CkdnError):
    """The diff is not one ckdn can read; the message names the line and what to do."""


def content_key(line: bytes) -> int:
    """The key of a line's content for move detection: its bytes without indentation or
    repeated spaces (as :func:`~ckdn.identity.normalise_line`), hashed. A candidate only:
    the finding's fingerprint under the other path decides."""
    return hash(b" ".join(line[:_CONTENT_BYTES].split()))


class FileChange:
    """One file of the change: its paths, the new-side lines added (``added``), the
    new-side spans of its hunks (``spans``, deletion anchors included); ``whole`` marks
    a file whose every line is new (created, or untracked in the work tree)."""

    __slots__ = ("added", "anchors", "binary", "new_path", "old_path", "spans", "status",
                 "whole")

    def __init__(self, old_path: str | None, new_path: str | None) -> None:
        self.old_path = old_path
        self.new_path = new_path
        self.status = "modified"
        self.binary = False
        self.whole = False
        self.added: set[int] = set()
        self.anchors: set[int] = set()
        self.spans: list[tuple[int, int]] = []

    @property
    def path(self) -> str:
        """The path the file has after the change (its old one if the change deleted it)."""
        return self.new_path or self.old_path or ""

    def where(self, line: int) -> str:
        """``added``, ``context`` or ``file`` for a line (1-based) of this file."""
        if line >= 1:
            if self.whole or line in self.added:
                return ADDED
            if line in self.anchors or any(start <= line < end for start, end in self.spans):
                return CONTEXT
        return FILE


class ChangeSet:
    """The files of a change by their new path, renames (new -> old), and every deleted
    line with the old path it was deleted from (a moved line's origin), keyed by content
    only when first asked (:meth:`deleted_from`)."""

    __slots__ = ("_by_content", "deleted", "files", "renames")

    def __init__(self) -> None:
        self.files: dict[str, FileChange] = {}
        self.renames: dict[str, str] = {}
        self.deleted: list[tuple[bytes, str]] = []
        self._by_content: dict[int, set[str]] | None = None

    def __len__(self) -> int:
        return len(self.files)

    def where(self, path: str, line: int) -> str:
        """A finding's ``where`` (see :data:`WHERE`): ``outside`` in a file the change
        did not touch, or for a finding without a path."""
        change = self.files.get(path)
        return OUTSIDE if change is None else change.where(line)

    def deleted_from(self, line: str | bytes) -> set[str]:
        """The old paths a line with this content was deleted from."""
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogateescape")
        return self.by_content().get(content_key(line), set())

    def by_content(self) -> dict[int, set[str]]:
        """:func:`content_key` -> the old paths lines with that content were deleted from
        (made at the first ask)."""
        if self._by_content is None:
            found: dict[int, set[str]] = {}
            for content, path in self.deleted:
                key = hash(b" ".join(content.split()))  # content_key: already cut
                paths = found.get(key)
                if paths is None:
                    found[key] = {path}
                else:
                    paths.add(path)
            self._by_content = found
        return self._by_content

    def add_untracked(self, paths: Iterable[str]) -> None:
        """Files new in the work tree that no diff lists (git leaves them out): all added."""
        for path in paths:
            if path not in self.files:
                change = FileChange(None, path)
                change.status, change.whole = "added", True
                self.files[path] = change


def read_diff(lines: Iterable[bytes]) -> ChangeSet:
    """The change set of a unified diff given as lines of bytes; :class:`DiffError` if
    any line is not understood. An empty diff is an empty change set."""
    return _Reader().read(lines)


def read_hashed_diff(lines: Iterable[bytes]) -> tuple[ChangeSet, str, int]:
    """:func:`read_diff`, and the diff's SHA-256 and size in bytes taken in the same pass
    (what ``change.json`` records of it)."""
    digest = hashlib.sha256()
    size = 0
    read: Callable[[int], bytes] | None = getattr(lines, "read", None)

    def hashed() -> Iterator[bytes]:
        nonlocal size
        for line in lines:
            digest.update(line)
            size += len(line)
            yield line

    def blocks() -> Iterator[bytes]:
        """A stream read in blocks, each hashed once, cut into lines (their ``\n`` gone, as
        the reader drops it): no per-line call but the reader's own."""
        nonlocal size
        carry = b""
        assert read is not None
        while block := read(_BLOCK):
            digest.update(block)
            size += len(block)
            parts = (carry + block).split(b"\n")
            carry = parts.pop()
            yield from parts
        if carry:
            yield carry

    return read_diff(blocks() if callable(read) else hashed()), digest.hexdigest(), size


class _Reader:
    __slots__ = ("change", "changes", "deleting", "git_paths", "new_at", "new_left", "number",
                 "old_left", "pending_old")

    def __init__(self) -> None:
        self.changes = ChangeSet()
        self.change: FileChange | None = None
        self.git_paths: tuple[str, str] | None = None
        self.pending_old: str | None = None  # a ``---`` line waiting for its ``+++``
        self.number = 0
        #: the hunk being read: lines left on each side, the next line numbers
        self.old_left = self.new_left = self.new_at = 0
        self.deleting = False

    def fail(self, what: str) -> DiffError:
        return DiffError(f"diff line {self.number}: {what}; not read (make the diff with "
                         "`git diff --no-color --no-ext-diff --no-textconv` or `diff -u`)")

    def read(self, lines: Iterable[bytes]) -> ChangeSet:
        feed = iter(lines)
        for raw in feed:
            self.number += 1
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if b"\x1b" in line:
                raise self.fail("an escape byte (a coloured diff? pass --no-color)")
            line = line[:-1] if line.endswith(b"\r") else line
            if line.startswith(b"\\"):  # "\ No newline at end of file" after a hunk's end
                continue
            match = _HUNK.fullmatch(line)
            if match is not None:
                self._hunk(match)
                self._hunk_body(feed)
            else:
                self._header(line)
        if self.old_left or self.new_left:
            raise self.fail("the diff ends inside a hunk")
        if self.pending_old is not None:
            raise self.fail("'---' without its '+++'")
        self._close()
        return self.changes

    def _hunk(self, match: re.Match[bytes]) -> None:
        change = self._current()
        if self.pending_old is not None:
            raise self.fail("a hunk after '---' without its '+++'")
        self.new_at = int(match[3])
        self.old_left = 1 if match[2] is None else int(match[2])
        self.new_left = 1 if match[4] is None else int(match[4])
        if self.new_left == 0:  # a pure deletion: it collapses onto the next line
            self.new_at += 1
        change.spans.append((self.new_at, self.new_at + self.new_left))
        self.deleting = False

    def _hunk_body(self, feed: Iterator[bytes]) -> None:
        """The lines of the hunk just opened, read in one loop with the counts in locals (the
        reader's hot path: a 10,000-line diff is mostly these)."""
        old_left, new_left, new_at = self.old_left, self.new_left, self.new_at
        if not (old_left or new_left):
            return
        change = self._current()
        added, anchors = change.added, change.anchors
        deleted, old = self.changes.deleted, change.old_path
        number, deleting, cap = self.number, False, _CONTENT_BYTES
        try:
            for raw in feed:
                number += 1
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if b"\x1b" in line:
                    raise self._fail_at(number, "an escape byte (a coloured diff? pass --no-color)")
                tag = line[:1]
                if tag == b" ":
                    old_left, new_left, new_at, deleting = old_left - 1, new_left - 1, \
                        new_at + 1, False
                elif tag == b"-":
                    if old is not None and len(line) > 1 and not line[1:].isspace():
                        deleted.append((line[1:cap + 1], old))
                    if not deleting:
                        anchors.add(new_at)
                    old_left, deleting = old_left - 1, True
                elif tag == b"+":
                    added.add(new_at)
                    new_left, new_at, deleting = new_left - 1, new_at + 1, False
                elif tag == b"\\":
                    continue
                else:
                    raise self._fail_at(number, f"{_shown(line)} is not a hunk line "
                                        "(' ', '-', '+' or '\\')")
                if old_left < 0 or new_left < 0:
                    raise self._fail_at(number, "a hunk longer than its header says")
                if not (old_left or new_left):
                    break
        finally:
            self.number, self.old_left, self.new_left, self.new_at = \
                number, old_left, new_left, new_at
            self.deleting = deleting

    def _fail_at(self, number: int, what: str) -> DiffError:
        self.number = number
        return self.fail(what)

    def _current(self) -> FileChange:
        if self.change is None:
            raise self.fail("a hunk before any file header")
        return self.change

    def _header(self, line: bytes) -> None:
        text = line.decode("utf-8", "surrogateescape")
        if self.pending_old is not None:
            if not text.startswith("+++ "):
                raise self.fail("'---' without its '+++'")
            self._paths(self.pending_old, _path(text[4:], self.fail))
            self.pending_old = None
            return
        if text.startswith(("diff --cc ", "diff --combined ")):
            raise self.fail("a combined diff (of a merge); diff against one parent")
        if text.startswith("diff --git "):
            self._open(None, None)
            self.git_paths = _git_paths(text[len("diff --git "):], self.fail)
            if self.git_paths is not None:
                old, new = _stripped(*self.git_paths)
                self._current().old_path, self._current().new_path = old, new
            return
        if text.startswith("diff "):  # hg's `diff -r REV P`, `diff -u OLD NEW`: a new block
            self._open(None, None)
            return
        if text.startswith("--- "):
            self.pending_old = _path(text[4:], self.fail)
            return
        if text.startswith("+++ "):
            raise self.fail("'+++' without its '---'")
        change = self.change
        if change is None:
            raise self.fail(f"{_shown(line)} before any file header")
        if text.startswith(("rename from ", "copy from ")):
            change.old_path = _path(text.split(" ", 2)[2], self.fail, timestamp=False)
            change.status = "renamed" if text.startswith("rename") else "copied"
        elif text.startswith(("rename to ", "copy to ")):
            change.new_path = _path(text.split(" ", 2)[2], self.fail, timestamp=False)
        elif text.startswith(("new file mode ", "new mode ")):
            change.status = "added" if text.startswith("new file") else change.status
        elif text.startswith("deleted file mode "):
            change.status = "deleted"
        elif text.startswith("Binary files ") or text == "GIT binary patch":
            change.binary = True
        elif text.startswith(("literal ", "delta ")) and change.binary:
            pass
        elif change.binary and (text == "" or text[:1].isalpha()):
            pass  # the base85 lines of a binary patch
        elif text.startswith(("old mode ", "index ", "similarity index ",
                              "dissimilarity index ")):
            pass
        else:
            raise self.fail(f"{_shown(line)} is not a diff header")

    def _paths(self, old: str, new: str) -> None:
        change = self.change
        if change is None or (change.spans and not change.binary):
            self._open(None, None)  # plain `diff -u`: a ---/+++ pair opens each block
            change = self._current()
        old_path, new_path = _stripped(old, new)
        change.old_path, change.new_path = old_path, new_path
        if old_path is None:
            change.status, change.whole = "added", True
        elif new_path is None:
            change.status = "deleted"
        elif old_path != new_path and change.status == "modified":
            change.status = "renamed"

    def _open(self, old: str | None, new: str | None) -> None:
        self._close()
        self.change = FileChange(old, new)
        self.git_paths = None

    def _close(self) -> None:
        change = self.change
        if change is None:
            return
        if change.old_path is None and change.new_path is None:
            raise self.fail("a file block without paths")
        if change.status == "added":
            change.whole = True
        if change.new_path is None:  # deleted: its lines went into ``deleted`` as read
            self.change = None
            return
        if change.old_path is not None and change.old_path != change.new_path:
            self.changes.renames[change.new_path] = change.old_path
        self.changes.files[change.new_path] = change
        self.change = None


def _shown(line: bytes) -> str:
    return repr(line[:40].decode("utf-8", "backslashreplace"))


def _path(field: str, fail: Callable[[str], DiffError], *, timestamp: bool = True) -> str:
    """One path of a header: unquoted, ``diff -u``'s tab and timestamp dropped."""
    if field.startswith('"'):
        return _unquote(field, fail)
    if timestamp and "\t" in field:
        field = field.split("\t", 1)[0]
    return field


def _unquote(field: str, fail: Callable[[str], DiffError]) -> str:
    """A C-quoted path (git's ``core.quotePath``): octal bytes and the usual escapes."""
    out = bytearray()
    raw = field.encode("utf-8", "surrogateescape")
    at = 1
    while at < len(raw):
        byte = raw[at]
        if byte == 0x22:  # the closing quote
            return out.decode("utf-8", "surrogateescape")
        if byte == 0x5C:
            nxt = raw[at + 1:at + 2].decode("latin-1")
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                at += 2
                continue
            digits = raw[at + 1:at + 4]
            if len(digits) == 3 and all(0x30 <= d <= 0x37 for d in digits):
                out.append(int(digits, 8) & 0xFF)
                at += 4
                continue
            raise fail(f"the quoted path {field[:60]!r} has an escape not understood")
        out.append(byte)
        at += 1
    raise fail(f"the quoted path {field[:60]!r} has no closing quote")


def _git_paths(rest: str, fail: Callable[[str], DiffError]) -> tuple[str, str] | None:
    """``a/P b/P`` of a ``diff --git`` line (quoted or not); None when it cannot be split
    (names with spaces differ): the ``---``/``+++`` or rename lines then say."""
    if rest.startswith('"'):
        end = _quote_end(rest)
        old = _unquote(rest[:end], fail)
        tail = rest[end:].lstrip(" ")
        new = _unquote(tail, fail) if tail.startswith('"') else tail
        return old, new
    if rest.endswith('"'):
        start = rest.rfind(' "')
        if start < 0:
            return None
        return rest[:start], _unquote(rest[start + 1:], fail)
    half, extra = divmod(len(rest) - 1, 2)
    if not extra and rest[half] == " ":
        old, new = rest[:half], rest[half + 1:]
        if _stripped(old, new)[0] == _stripped(old, new)[1]:
            return old, new
    return None


def _quote_end(field: str) -> int:
    at = 1
    while at < len(field):
        if field[at] == "\\":
            at += 2
            continue
        if field[at] == '"':
            return at + 1
        at += 1
    return len(field)


def _stripped(old: str, new: str) -> tuple[str | None, str | None]:
    """Both paths without ``a/`` and ``b/`` when both sides carry them (``/dev/null``
    matching either); ``None`` for ``/dev/null``."""
    strip = ((old == _NULL or old.startswith("a/")) and (new == _NULL or new.startswith("b/"))
             and not (old == _NULL and new == _NULL))
    def one(path: str) -> str | None:
        if path == _NULL:
            return None
        path = path[2:] if strip else path
        return os.path.normpath(path) if path else path
    return one(old), one(new)
