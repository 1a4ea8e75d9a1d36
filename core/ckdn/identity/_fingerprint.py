"""A finding's fingerprint: what stays the same between two runs of a real project."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import re
import stat
import struct
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Final, Protocol

__all__ = ["Fingerprinted", "Hasher", "IdentityTable", "SourceLines", "fingerprints",
           "normalise_message", "retried_head", "rule_of"]

# Between two runs lines are inserted above a finding, code is reindented, a file
# is moved, a message is reworded with other numbers or names. None of that makes
# a finding new; a second copy of the same error in the same file does. So, as
# CodeQL's ``primaryLocationLineHash`` does, identity is the *content* of the
# flagged line, never its number:
#
# * the rule: the finding's ``kind`` and its id with the location taken out
#   (``src/app.py:3:1:F401`` -> ``F401``; a pytest node id keeps its test name;
#   an id without location, a pip-audit pin, is kept whole);
# * the path, as the location gives it (relative to the check's cwd);
# * the flagged source line, read from the file and normalised (surrounding and
#   repeated whitespace dropped): reindentation and inserted lines change
#   nothing; without a readable line, the normalised message instead (numbers
#   and quoted names folded, PHPStan's and mypy-baseline's complaint: messages
#   that embed them);
# * an occurrence index among the findings that share all of the above, counted
#   in location order, so a second copy is ``:1``, never absorbed by ``:0``.
#
# The fingerprint is ``PRIMARY:OCCURRENCE:SECONDARY``: ``PRIMARY`` hashes rule,
# path and line content; ``SECONDARY`` hashes rule, path and normalised message,
# for the last matching pass (same file, same rule, same message: the flagged
# line itself was edited). Both are hex, so the string is inert anywhere (SARIF
# ``partialFingerprints``, MCP results, the baseline file).

#: Bytes of one source line hashed at most; the longest line a tool flags is far shorter.
LINE_BYTES: Final = 4096
#: Files larger than this are not read for their lines: the message stands in.
FILE_BYTES: Final = 16 << 20
#: Source files kept in memory at once (their lines), least recently used dropped: enough
#: for a report sorted by rule, not by file, to open each file once.
CACHED_FILES: Final = 1024
#: The most bytes of source kept at once (the files' sizes, and a line's own cost in a list).
CACHED_BYTES: Final = 12 << 20
_LINE_COST: Final = 41
#: Files without lines (missing, not regular, too big) remembered as such.
_NO_LINES_KEPT: Final = 1 << 16
#: Distinct messages whose normalised form is remembered (bounded: a report can vary them all).
_MESSAGES_KEPT: Final = 1 << 16
#: Only a message or path this short is remembered, and messages up to this many characters
#: in all: a lint message repeats and is short; a hostile report's distinct ones would
#: otherwise hold 65,536 times their size.
_KEPT_CHARS: Final = 256
_KEPT_BUDGET: Final = 4 << 20
PRIMARY_HEX: Final = 24
SECONDARY_HEX: Final = 12

_ID_POSITION = re.compile(r"^(?::(?:cell)?\d+)+")
_NUMBERED = re.compile(r"#\d+$")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def _builtin_sha256() -> Callable[[bytes], hashlib._Hash]:
    """The interpreter's own SHA-256 where it is built in (``_sha2``, ``_sha256`` before 3.12):
    the same digest as OpenSSL's, a short input in 0.6-1.1 us, not 1.7-1.9 (OpenSSL looks
    its digest up each call), two of them each new line's key; else hashlib's."""
    for name in ("_sha2", "_sha256"):
        try:
            return importlib.import_module(name).sha256  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    return hashlib.sha256


_sha256 = _builtin_sha256()


if TYPE_CHECKING:  # a type checker's alone: nothing tests a finding against it at run time
    class FindingLike(Protocol):
        """What identity needs of a finding (a parser's ``Finding`` or a stored one)."""

        @property
        def id(self) -> str: ...
        @property
        def kind(self) -> str: ...
        @property
        def message(self) -> str: ...
        @property
        def location(self) -> str | None: ...


class Fingerprinted:
    """One finding's identity: its fingerprint and what matching needs to retry it.

    Kept small (a baseline run holds one per finding, 100,000 of them in a big
    report): the rule and content are kept only as ``inner``, their 16-byte hash,
    which the primary hash extends with the path, so another path can be tried
    (:meth:`retried`) without them. ``inner`` and the primary and secondary hashes
    are one 34-byte string; their hex forms are made when asked for.
    """

    __slots__ = ("_key", "line", "occurrence", "path")

    def __init__(self, rule: str, path: str, line: int, text: str) -> None:
        self.path = path
        self.line = line
        # text: the normalised line content, or "msg:" + the normalised message
        data = f"{rule}\0{text}".encode("utf-8", "surrogatepass")
        inner = hashlib.sha256(data).digest()[:16]
        self._key = inner + _primary(inner, path) + bytes(_SECONDARY_BYTES)
        self.occurrence = 0

    @property
    def inner(self) -> bytes:
        return self._key[:16]

    @property
    def packed(self) -> bytes:
        """Inner, primary and secondary hashes as bytes (34), what placing reads."""
        return self._key

    @property
    def primary(self) -> str:
        """Rule, path and flagged content: :data:`PRIMARY_HEX` hex digits."""
        return self._key[16:_SECONDARY_AT].hex()

    @primary.setter
    def primary(self, value: str) -> None:
        self._key = self._key[:16] + bytes.fromhex(value) + self._key[_SECONDARY_AT:]

    @property
    def secondary(self) -> str:
        """Rule, path and normalised message: :data:`SECONDARY_HEX` hex digits."""
        return self._key[_SECONDARY_AT:].hex()

    @secondary.setter
    def secondary(self, value: str) -> None:
        self._key = self._key[:_SECONDARY_AT] + bytes.fromhex(value)

    @property
    def fingerprint(self) -> str:
        """``PRIMARY:OCCURRENCE:SECONDARY``, the string baselines, SARIF and MCP carry."""
        key = self._key
        return f"{key[16:_SECONDARY_AT].hex()}:{self.occurrence}:{key[_SECONDARY_AT:].hex()}"

    def retried(self, path: str) -> str:
        """The primary hash this finding would have had at ``path`` (a renamed file)."""
        return _primary(self._key[:16], path).hex()


_PRIMARY_BYTES: Final = PRIMARY_HEX // 2
_SECONDARY_BYTES: Final = SECONDARY_HEX // 2
_SECONDARY_AT: Final = 16 + _PRIMARY_BYTES


def _primary(inner: bytes, path: str) -> bytes:
    return hashlib.sha256(inner + path.encode("utf-8", "surrogatepass")).digest()[:_PRIMARY_BYTES]


def retried_head(line_hash: str, path: str, fingerprint: str) -> str:
    """``PRIMARY:OCCURRENCE`` of the finding whose fingerprint is ``fingerprint`` and whose
    line hash (``inner``, hex) is ``line_hash``, had it been at ``path``."""
    occurrence = fingerprint.split(":")[1]
    return f"{_primary(bytes.fromhex(line_hash), path).hex()}:{occurrence}"


def _digest(rule: str, path: str, text: str, size: int) -> bytes:
    data = "\0".join((rule, path, text)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).digest()[:size]


def split_location(location: str | None) -> tuple[str, int]:
    """``(path, line)`` of ``path[:line[:col]]``; line 0 when there is none. A line or column
    is ASCII digits, at most 18 (a longer run is part of a path)."""
    if not location:
        return "", 0
    path, sep, tail = location.rpartition(":")
    if not (sep and tail.isdigit() and tail.isascii() and len(tail) <= 18):
        return location, 0
    head, sep, middle = path.rpartition(":")
    if sep and middle.isdigit() and middle.isascii() and len(middle) <= 18:
        return head, int(middle)  # path:line:col
    return path, int(tail)


def rule_of(finding: FindingLike, path: str) -> str:
    """The finding's rule: its kind and its id without the location (see the module)."""
    ident = finding.id
    if path and ident.startswith(path):
        ident = _without_position(ident[len(path):])
    if "#" in ident:
        ident = _NUMBERED.sub("", ident)
    return f"{finding.kind}\0{ident}"


def _located_rule(finding: FindingLike, location: str | None, path: str) -> str:
    """:func:`rule_of` of a finding whose location has a line, for the usual id: the
    location then ``:RULE`` (ruff's, mypy's); what follows the path is then its line
    (and column) and the rule, all that :func:`_without_position` would keep."""
    ident = finding.id
    if path and location and ident.startswith(location) \
            and ident[len(location):len(location) + 1] == ":":
        tail = ident[len(location) + 1:]
        if ":" not in tail and "#" not in tail and not tail[:1].isdigit():
            return f"{finding.kind}\0{tail}"
    return rule_of(finding, path)


def _without_position(rest: str) -> str:
    """``:12:5:F401`` -> ``F401``: the leading ``:N`` / ``:cellN`` groups dropped (string
    methods for the usual ``:line:col:rule``; the pattern for anything else)."""
    head, sep, tail = rest.rpartition(":")
    if sep and head.startswith(":") and head[1:].replace(":", "").isdigit() \
            and head.isascii() and "::" not in head and not tail[:1].isdigit():
        return tail
    return _ID_POSITION.sub("", rest).lstrip(":")


def normalise_message(message: str) -> str:
    """A message with what rewording changes folded: quoted names, numbers, spacing."""
    text = _QUOTED.sub("'_'", message[:2000])
    text = _NUMBER.sub("0", text)
    return _SPACE.sub(" ", text).strip()


def normalise_line(line: str) -> str:
    """A source line as identity sees it: no indentation, no repeated spaces."""
    return " ".join(line.split())


class SourceLines:
    """The lines of the files findings point at, each file read once per run.

    Paths are taken relative to ``root`` (the check's cwd). A file that is missing,
    not a regular file, or over :data:`FILE_BYTES` has no lines: the finding's
    message then stands in for its line. The lines of the last :data:`CACHED_FILES`
    files (at most :data:`CACHED_BYTES` of them) are kept, and the files without
    lines are remembered apart (:data:`_NO_LINES_KEPT` of them): a report lists a
    file's findings together, so each file is opened once, not once per finding.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._files: OrderedDict[str, tuple[list[bytes], int]] = OrderedDict()
        self._bytes = 0
        self._without: set[str] = set()
        self._last_path: str | None = None
        self._last: list[bytes] | None = None

    def line(self, path: str, number: int) -> str | None:
        # raw()'s body, repeated: one call a finding on the red path, not two
        if not path or number < 1:
            return None
        if path == self._last_path:
            lines = self._last
        else:
            lines = self._last = self._lines(path)
            self._last_path = path
        if lines is None or number > len(lines):
            return None
        return lines[number - 1][:LINE_BYTES].decode("utf-8", "replace")

    def raw(self, path: str, number: int) -> bytes | None:
        """The line as bytes (cut at :data:`LINE_BYTES`), undecoded: what a diff holds."""
        if not path or number < 1:
            return None
        if path == self._last_path:
            lines = self._last
        else:
            lines = self._last = self._lines(path)
            self._last_path = path
        if lines is None or number > len(lines):
            return None
        return lines[number - 1][:LINE_BYTES]

    def _lines(self, path: str) -> list[bytes] | None:
        if path in self._without:
            return None
        files = self._files
        kept = files.get(path)
        if kept is not None:
            files.move_to_end(path)
            return kept[0]
        found, size = self._read(path)
        if found is None:
            if len(self._without) < _NO_LINES_KEPT:
                self._without.add(path)
            return None
        files[path] = (found, size)
        self._bytes += size
        while len(files) > CACHED_FILES or (self._bytes > CACHED_BYTES and len(files) > 1):
            self._bytes -= files.popitem(last=False)[1][1]
        return found

    def _read(self, path: str) -> tuple[list[bytes] | None, int]:
        full = os.path.join(self.root, path)
        try:
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):  # ValueError: a NUL or a lone surrogate a report named
            return None, 0
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_BYTES:
                return None, 0
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
            lines = data.splitlines()
            return lines, len(data) + _LINE_COST * len(lines)
        except OSError:
            return None, 0
        finally:
            os.close(fd)


class Hasher:
    """A finding's three hashes, path and line: the one computation behind every
    fingerprint (:func:`fingerprints` for a list, :class:`IdentityTable` for a
    stream). Paths are kept once each, and a repeated message is
    normalised once (a bounded number of them)."""

    __slots__ = ("_inners", "_kept", "_keys", "_lines", "_messages", "_path", "_path_bytes",
                 "_paths", "source")

    def __init__(self, source: SourceLines) -> None:
        self.source = source
        self._paths: dict[str, str] = {}  # one string per path, however many findings share it
        self._messages: dict[str, str] = {}
        self._kept = 0  # characters of the messages remembered
        self._path = ""  # the last finding's path, and its bytes (a file's findings come together)
        self._path_bytes = b""
        self._lines: list[bytes] | None = None  # the last path's lines
        #: rule, line and message -> key, for the last path: a file's findings often share
        #: them all (a rule's message on lines the tool could not show), hashed once then
        self._keys: dict[tuple[str, str, str], bytes] = {}
        #: the same -> inner hash, whatever the path (it holds none): short ones, bounded
        self._inners: dict[tuple[str, str, str], bytes] = {}

    def hashes(self, finding: FindingLike) -> tuple[bytes, str, int]:
        """``(key, path, line)``: ``key`` is inner (16 bytes), primary and secondary."""
        location = finding.location
        path, line = split_location(location)
        if path != self._path:
            self._enter(path)
        path = self._path
        rule = _located_rule(finding, location, path) if line else rule_of(finding, path)
        return self.located(path, line, rule, finding.message), path, line

    def located(self, path: str, line: int, rule: str, raw: str) -> bytes:
        """The key of a finding known by its parts (:meth:`hashes` once the location is
        split, or a parser's fields with no Finding built): ``path`` as the location gives
        it, ``rule`` as :func:`rule_of` makes it, ``raw`` the message."""
        if path != self._path:
            self._enter(path)
        lines = self._lines
        if lines is not None and 0 < line <= len(lines):  # SourceLines.line, inline
            content = lines[line - 1][:LINE_BYTES].decode("utf-8", "replace")
            text = normalise_line(content) if content and not content.isspace() else ""
        else:
            text = ""
        message = self._messages.get(raw)
        if message is None:
            message = self.normalised(raw)
        known = (rule, text, message)
        key = self._keys.get(known)
        if key is None:
            key = self.new_key(known, path)
        return key

    def normalised(self, raw: str) -> str:
        """A message not yet remembered, normalised (and remembered, a bounded number):
        :meth:`located`'s miss, also :class:`~ckdn.identity.FindingsWriter`'s."""
        message = normalise_message(raw)
        if len(raw) <= _KEPT_CHARS and self._kept < _KEPT_BUDGET \
                and len(self._messages) < _MESSAGES_KEPT:
            self._messages[raw] = message
            self._kept += len(raw) + len(message)
        return message

    def new_key(self, known: tuple[str, str, str], path: str) -> bytes:
        """The key of ``(rule, line text, normalised message)`` at the current ``path``,
        hashed and remembered for the path: :meth:`located`'s miss."""
        rule, text, message = known
        inners = self._inners
        inner = inners.get(known)
        if inner is None:
            inner = _sha256(f"{rule}\0{text or 'msg:' + message}".encode(
                "utf-8", "surrogatepass")).digest()[:16]
            if len(text) + len(message) <= _KEPT_CHARS:
                if len(inners) >= _KEYS_KEPT:
                    inners.clear()
                inners[known] = inner
        key = (inner + _sha256(inner + self._path_bytes).digest()[:_PRIMARY_BYTES]
               + _sha256(f"{rule}\0{path}\0{message}".encode("utf-8", "surrogatepass")
                         ).digest()[:_SECONDARY_BYTES])
        keys = self._keys
        if len(keys) >= _KEYS_KEPT:
            keys.clear()
        keys[known] = key
        return key

    def _enter(self, path: str) -> None:
        """The findings of another file start: its path kept once and encoded once, its
        lines looked up once (read once a run, :class:`SourceLines`)."""
        paths = self._paths
        path = paths.get(path, path)
        if len(paths) < _MESSAGES_KEPT and len(path) <= _KEPT_CHARS:
            paths[path] = path
        self._path, self._path_bytes = path, path.encode("utf-8", "surrogatepass")
        self._lines = self.source._lines(path) if path else None  # one module
        self._keys = {}


#: Keys remembered for one path (see :class:`Hasher`).
_KEYS_KEPT: Final = 4096


def fingerprints(findings: Sequence[FindingLike], source: SourceLines) -> list[Fingerprinted]:
    """Every finding's identity, in the order given (occurrences counted in location order)."""
    hasher = Hasher(source)
    out: list[Fingerprinted] = []
    for finding in findings:
        key, path, line = hasher.hashes(finding)
        item = Fingerprinted.__new__(Fingerprinted)
        item._key, item.path, item.line, item.occurrence = key, path, line, 0
        out.append(item)
    _number(out)
    return out


def _number(items: Iterable[Fingerprinted]) -> None:
    """Give each identity its occurrence index among those sharing its primary hash."""
    groups: dict[bytes, list[Fingerprinted]] = {}
    for item in items:
        groups.setdefault(item._key[16:_SECONDARY_AT], []).append(item)
    for group in groups.values():
        group.sort(key=lambda item: item.line)  # stable: equal lines keep the tool's order
        for index, item in enumerate(group):
            item.occurrence = index


# -- the identity table: every finding packed, 26 bytes a finding ----------------------------

# A report of 100,000 findings must not be held whole to be matched against a
# baseline or written to ``findings.jsonl``: a :class:`Finding` is about 200 bytes
# and its :class:`~ckdn.identity.Fingerprinted` 160 more. The table takes each
# finding as the parser reports it (:meth:`IdentityTable.add`, the parse's tap),
# keeps only its hashes, line and path number, 26 bytes a row (in a private file beside the
# spool when given one, a block held in memory: a million rows were 26 MB of a run's
# peak; its line hash, read only for a renamed file, apart, in a second file), numbers
# the occurrences once every finding is in (:meth:`IdentityTable.number`:
# occurrences are counted in location order, so the last finding of a file can
# change the first one's index). Rows are read back by position; the hex forms
# are made only when a fingerprint is written.

#: primary (12), secondary (6), line (4), path number (4); the line hash (16) kept apart
ROW = 26
_PRIMARY_END = _PRIMARY_BYTES
_SECONDARY_END = _PRIMARY_END + _SECONDARY_BYTES
_LINE_AT = _SECONDARY_END
_PATH_AT = _LINE_AT + 4
_INNER = 16
_MAX_LINE = (1 << 32) - 1
_PACK = struct.Struct(">II").pack
#: A row without its inner hash: primary, secondary, line, path number.
_COLUMNS = struct.Struct(">12s6sII")
#: A row's primary hash alone, its two hashes, and a key made of primary and occurrence.
_PRIMARY_OF = struct.Struct(">12s14x")
_FIRST = itemgetter(0)
_HASHES_OF = struct.Struct(">12s6s8x")
_KEY_PACK = struct.Struct(">12sI").pack


class IdentityTable:
    """The identities of a run's findings, in the order they were added."""

    __slots__ = ("_hasher", "_inners", "_occurrences", "_path_numbers", "_paths", "_rows")

    def __init__(self, source: SourceLines, spill: str | None = None) -> None:
        """``spill``: a path for the line hashes, and ``spill`` + ``.rows`` for the rows
        (created new, owner-only, removed at once where the system allows, else by
        :meth:`discard`); none, or one that cannot be written, keeps them in memory."""
        self._hasher = Hasher(source)
        self._rows = _Records(None if spill is None else spill + ROWS_SUFFIX, ROW, _ROWS_BLOCK)
        self._inners = _Records(spill, _INNER, _SPILL_BLOCK)
        self._paths: list[str] = []
        self._path_numbers: dict[str, int] = {}
        self._occurrences: array[int] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def source(self) -> SourceLines:
        """The lines the findings were fingerprinted with (each file read once a run)."""
        return self._hasher.source

    def columns(self) -> tuple[list[bytes], list[int], list[bytes], list[str], list[int]]:
        """Every row's primary hash, occurrence, secondary hash, path and line, as five
        lists unpacked at once (placing reads them all; a method call a field costs more)."""
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        primaries: list[bytes] = []
        secondaries: list[bytes] = []
        lines: list[int] = []
        paths: list[str] = []
        names = self._paths
        for block in self._rows.blocks():
            if not block:
                continue
            first, second, line, numbers = zip(*_COLUMNS.iter_unpack(block), strict=True)
            primaries += first
            secondaries += second
            lines += line
            paths += [names[number] for number in numbers]
        return primaries, list(self._occurrences), secondaries, paths, lines

    def add(self, finding: FindingLike) -> None:
        key, path, line = self._hasher.hashes(finding)
        self._row(key, path, line)

    def located(self, path: str, line: int, rule: str, message: str) -> bytes:
        """:meth:`add` of a finding known by its parts (a parser's fields, no Finding built:
        see :meth:`Hasher.located`); its key, whose first 16 bytes are the line hash."""
        key = self._hasher.located(path, line, rule, message)
        self._row(key, path, line)
        return key

    def _row(self, key: bytes, path: str, line: int) -> None:
        number = self._path_numbers.get(path)
        if number is None:
            number = self._path_numbers[path] = len(self._paths)
            self._paths.append(path)
        rows = self._rows  # _Records.add, inline: a call less a finding
        buffer = rows._buffer
        buffer += key[_INNER:] + _PACK(min(line, _MAX_LINE), number)
        if len(buffer) >= rows._spill_at and rows._fd >= 0:
            rows._spill()
        self._inners.add(key[:_INNER])
        self._occurrences = None

    def number(self) -> None:
        """Give each finding its occurrence among those sharing its primary hash, in line
        order (the tool's order for equal lines), as :func:`fingerprints` does."""
        # A primary hash includes the path, so only one file's rows can share one. A report
        # lists a file's findings together: each run of one file's rows is numbered as it
        # ends, remembering its primaries alone; a file met again in a later run is
        # numbered again at the end, file by file (a million findings sorted together were
        # 60 MB of keys). Occurrences are 4 bytes each (an array, not a list of ints); the
        # rows are read in blocks, in order (they may be on disk).
        occurrences = array("I", bytes(4 * len(self)))
        ended: set[int] = set()  # path numbers whose run of rows ended
        split: set[int] = set()  # those met again
        firsts: dict[bytes, tuple[int, int]] = {}
        shared: dict[bytes, list[tuple[int, int]]] = {}
        current = -1
        index = 0
        for block in self._rows.blocks():
            for primary, line, number in _PRIMARY_LINE_PATH.iter_unpack(block):
                if number != current:
                    if shared:
                        _numbered(shared, occurrences)
                        shared = {}
                    ended.add(current)
                    if number in ended:
                        split.add(number)
                    firsts = {}
                    current = number
                first = firsts.setdefault(primary, (line, index))
                if first[1] != index:
                    shared.setdefault(primary, [first]).append((line, index))
                index += 1
        if shared:
            _numbered(shared, occurrences)
        if split:
            self._number_again(split, occurrences)
        self._occurrences = occurrences

    def _number_again(self, split: set[int], occurrences: array[int]) -> None:
        """The rows of the files in ``split`` (path numbers) numbered over all their rows."""
        # primary, line, position of each of their rows: sorting these orders each group by
        # line, stably, a file at a time. Rows in memory are read where they are (4 bytes a
        # row held: its position); rows on disk are read once, in order, those of these
        # files packed as they come (20 bytes a row), never one at a time from the file.
        rows = self._rows
        in_memory = rows.in_memory()
        positions: dict[int, array[int]] = {}
        packed: dict[int, bytearray] = {}
        index = 0
        for block in rows.blocks():
            for primary, line, number in _PRIMARY_LINE_PATH.iter_unpack(block):
                if number in split:
                    if in_memory:
                        positions.setdefault(number, array("I")).append(index)
                    else:
                        packed.setdefault(number, bytearray()).extend(
                            _SORT_KEY(primary, line, index))
                index += 1
        while positions or packed:
            keys: list[bytes | bytearray]
            if positions:
                members = positions.popitem()[1]
                keys = sorted(_SORT_KEY(*_PRIMARY_LINE_PATH.unpack(rows.get(at))[:2], at)
                              for at in members)
            else:
                keyed = packed.popitem()[1]
                keys = sorted(keyed[at:at + _SORT_KEY_SIZE]
                              for at in range(0, len(keyed), _SORT_KEY_SIZE))
            previous: bytes | bytearray = b""
            run = 0
            for key in keys:
                primary = key[:_PRIMARY_BYTES]
                run = run + 1 if primary == previous else 0
                previous = primary
                occurrences[int.from_bytes(key[-4:], "big")] = run

    def _occurrence(self, index: int) -> int:
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        return self._occurrences[index]

    def key(self, index: int) -> bytes:
        """Primary hash and occurrence: what the exact matching pass looks up."""
        return self._rows.get(index)[:_PRIMARY_END] + self._occurrence(index).to_bytes(4, "big")

    def key_at_zero(self, index: int) -> bytes:
        """The key of the first occurrence of this finding's primary hash (known before
        the occurrences are numbered: whether a baseline has any entry like it)."""
        return self._rows.get(index)[:_PRIMARY_END] + bytes(4)

    def secondary(self, index: int) -> bytes:
        return self._rows.get(index)[_PRIMARY_END:_SECONDARY_END]

    def path(self, index: int) -> str:
        return self._paths[int.from_bytes(self._rows.get(index)[_PATH_AT:ROW], "big")]

    def line(self, index: int) -> int:
        return int.from_bytes(self._rows.get(index)[_LINE_AT:_PATH_AT], "big")

    def retried(self, index: int, path: str) -> bytes:
        """The key this finding would have had at ``path`` (a renamed file)."""
        return _primary(self._inners.get(index), path) + self._occurrence(index).to_bytes(
            4, "big")

    def line_hash(self, index: int) -> str:
        """The hash of rule and content without the path (:attr:`FindingRow.line_hash`)."""
        return self._inners.get(index).hex()

    def records(self) -> bytes:
        """Every row's fingerprint packed (primary, occurrence, secondary: 22 bytes), what a
        :class:`~ckdn.identity.BaselineIndex` is made of without the hex round trip."""
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        return b"".join(primary + occurrence.to_bytes(4, "big") + secondary
                        for (primary, secondary), occurrence
                        in zip(self._hashes(), self._occurrences, strict=True))

    def _hashes(self) -> Iterator[tuple[bytes, bytes]]:
        """Every row's primary and secondary hashes, in order (unpacked in C, a block at a
        time)."""
        return chain.from_iterable(map(_HASHES_OF.iter_unpack, self._rows.blocks()))

    def keys(self) -> Iterator[bytes]:
        """Every row's :meth:`key`, in order, unpacked in C (the exact pass reads them all)."""
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        primaries = map(_FIRST, chain.from_iterable(map(_PRIMARY_OF.iter_unpack,
                                                         self._rows.blocks())))
        return map(_KEY_PACK, primaries, self._occurrences)

    def fingerprints(self) -> Iterator[str]:
        """Every row's :meth:`fingerprint`, in order (``findings.jsonl`` writes them all)."""
        if self._occurrences is None:
            self.number()
        assert self._occurrences is not None
        return (f"{primary.hex()}:{occurrence}:{secondary.hex()}" for (primary, secondary),
                occurrence in zip(self._hashes(), self._occurrences, strict=True))

    def fingerprint(self, index: int) -> str:
        """``PRIMARY:OCCURRENCE:SECONDARY``, as :attr:`Fingerprinted.fingerprint`."""
        row = self._rows.get(index)
        return (f"{row[:_PRIMARY_END].hex()}:{self._occurrence(index)}:"
                f"{row[_PRIMARY_END:_SECONDARY_END].hex()}")

    def discard(self) -> None:
        """Close (and remove) the rows' and line hashes' files, if there are any."""
        self._rows.discard()
        self._inners.discard()


def _numbered(shared: dict[bytes, list[tuple[int, int]]], occurrences: array[int]) -> None:
    """Each group of rows sharing a primary hash (line, position) numbered in line order
    (stable: positions break ties)."""
    for members in shared.values():
        members.sort()
        for occurrence, (_, index) in enumerate(members):
            occurrences[index] = occurrence


#: The file of a table's rows beside its line hashes' (see :class:`IdentityTable`).
ROWS_SUFFIX: Final = ".rows"
#: Line hashes, and rows, held in memory before they are written to their spill file.
_SPILL_BLOCK = 1 << 16
_ROWS_BLOCK = (1 << 20) // ROW * ROW
#: What a row's fields are read back in: a block of records at a time (from disk or
#: memory), and the block cached for reads one at a time.
_READ_BLOCK = 1 << 20
_CACHED = 1 << 16
_PRIMARY_LINE_PATH = struct.Struct(">12s6xII")
_SORT_KEY = struct.Struct(">12sII").pack
_SORT_KEY_SIZE = 20


class _Records:
    """Fixed-width records (a table's rows, its line hashes) in a private file, a block at
    a time (a million rows were 26 MB, their line hashes 16 MB), or in memory without
    one; read back one at a time (a block cached: reads go mostly in order) or in blocks."""

    __slots__ = ("_buffer", "_cache", "_cache_at", "_fd", "_on_disk", "_spill_at", "path",
                 "width")

    def __init__(self, path: str | None, width: int, spill_at: int) -> None:
        self.path = path
        self.width = width
        self._spill_at = spill_at
        self._buffer = bytearray()
        self._on_disk = 0  # bytes written to the file
        self._fd = -1
        self._cache = b""  # a block read back from the file, and where it starts
        self._cache_at = -1
        if path is None:
            return
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_BINARY", 0)
        try:
            self._fd = os.open(path, flags, 0o600)
        except (OSError, ValueError):
            return
        try:
            os.unlink(path)  # gone with its descriptor (where a system cannot, discard does)
            self.path = None
        except OSError:
            return

    def __len__(self) -> int:
        return (self._on_disk + len(self._buffer)) // self.width

    def in_memory(self) -> bool:
        """Whether every record is in memory (none written to the file)."""
        return not self._on_disk

    def add(self, record: bytes) -> None:
        buffer = self._buffer
        buffer += record
        if len(buffer) >= self._spill_at and self._fd >= 0:
            self._spill()

    def _spill(self) -> None:
        before = self._on_disk
        try:
            with memoryview(self._buffer) as view:
                at = 0
                while at < len(view):
                    at += os.write(self._fd, view[at:])
        except OSError:  # a full disk: what the file holds comes back into memory
            held = self._read(before, 0)
            self._buffer[:0] = held
            self._close()
            return
        self._on_disk = before + len(self._buffer)
        self._buffer.clear()

    def _read(self, size: int, at: int) -> bytes:
        data = os.pread(self._fd, size, at)
        if len(data) != size:
            raise OSError(f"a spill file is short at byte {at}")
        return data

    def get(self, index: int) -> bytes:
        width = self.width
        at = index * width
        if at >= self._on_disk:
            at -= self._on_disk
            return bytes(self._buffer[at:at + width])
        start = at - at % (_CACHED // width * width)
        at -= start
        if start != self._cache_at or at + width > len(self._cache):  # a block written since
            self._cache = self._read(min(_CACHED // width * width, self._on_disk - start), start)
            self._cache_at = start
        return self._cache[at:at + width]

    def blocks(self) -> Iterator[bytes | bytearray]:
        """Every record, in order, a block of whole records at a time (the last one the
        buffer itself: no record may be added while they are read)."""
        size = _READ_BLOCK // self.width * self.width
        for at in range(0, self._on_disk, size):
            yield self._read(min(size, self._on_disk - at), at)
        yield self._buffer

    def _close(self) -> None:
        fd, self._fd = self._fd, -1
        self._on_disk = 0
        self._cache, self._cache_at = b"", -1
        if fd >= 0:
            os.close(fd)

    def discard(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.path is not None:
            with contextlib.suppress(OSError):  # the run dir went: nothing to remove
                os.unlink(self.path)
            self.path = None
