"""``findings.jsonl``: every finding of a red run with its fingerprint, as the run saw it."""

from __future__ import annotations

import json
import json.encoder
import os
import re
from itertools import islice

from ckdn.errors import UsageError
from ckdn.evidence_files import open_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import BinaryIO

    from ckdn.identity._fingerprint import FindingLike, Fingerprinted

__all__ = ["FINDINGS_FILE", "SCHEMA_FINDINGS", "FindingRow", "FindingsSpool", "encode_findings",
           "iter_findings", "read_findings"]

# A fingerprint hashes the flagged source line, so it must be computed when the
# run ends: an hour later the line may be edited, and the run's identities with
# it. The file is written at seal time, for a run with findings only (a green
# run writes nothing and pays nothing), and is what ``ckdn diff`` compares::
#
#     {"schema":"ckdn.findings/1","check":"ruff","total":2}
#     {"fingerprint":"...","id":"src/a.py:1:8:F401","kind":"lint_violation",
#      "location":"src/a.py:1:8","message":"..."}   (one line in the file)
#
# one line per finding, in the parser's order, every one of them (not the
# digest's ``top``). Each string is cut to :data:`MAX_TEXT` characters, so a line
# is bounded; the reader refuses, in one line naming the file and the line, any
# line that is not one of these (a torn, hand-edited or planted file), and reads
# no line longer than :data:`MAX_LINE` bytes and no more than :data:`MAX_ROWS`.

FINDINGS_FILE = "findings.jsonl"
SCHEMA_FINDINGS = "ckdn.findings/1"
#: Characters kept of a finding's id, kind, location and message.
MAX_TEXT = 1000
#: The longest line read: four cut strings, each character at worst a 12-byte escape.
MAX_LINE = 64 << 10
#: The most findings one file holds (as many as one run classifies).
MAX_ROWS = 1_000_000
_FINGERPRINT = re.compile(r"[0-9a-f]{24}:\d{1,9}:[0-9a-f]{12}")
#: A line hash's digits (checked with ``str.strip``: a pattern per row cost a tenth of a
#: 100,000-row read).
_HEX = "0123456789abcdef"


class FindingRow:
    """One line of the file: a finding as ``ckdn diff`` shows it; ``baselined`` when the
    run's baseline gate matched it (a run without a baseline records no such mark);
    ``line_hash``: the hash of its rule and flagged content without the path (32 hex
    digits; "" in a file written before it was kept), which a renamed file's old path
    is retried with."""

    __slots__ = ("baselined", "fingerprint", "id", "kind", "line_hash", "location", "message")

    def __init__(self, fingerprint: str, id: str, kind: str, location: str | None,
                 message: str, *, baselined: bool = False, line_hash: str = "") -> None:
        self.fingerprint = fingerprint
        self.id = id
        self.kind = kind
        self.location = location
        self.message = message
        self.baselined = baselined
        self.line_hash = line_hash

    def as_json(self) -> dict[str, str]:
        out = {"fingerprint": self.fingerprint, "id": self.id, "kind": self.kind}
        if self.location is not None:
            out["location"] = self.location
        out["message"] = self.message
        return out


def encode_findings(check: str, findings: Sequence[FindingLike],
                    identities: Sequence[Fingerprinted] | Sequence[FindingRow],
                    known: Sequence[int] | None = None,
                    shown: Callable[[str], str] | None = None) -> Iterator[bytes]:
    """The file's bytes, in chunks of a few thousand lines (for a streaming writer);
    ``known``: which findings the baseline gate matched (each marked ``baselined``);
    ``shown`` makes a message what the file keeps (the app's redaction), before the cut."""
    yield _header_line(check, len(findings))
    tail = _tailer(shown)
    lines: list[str] = []
    marks = known if known is not None else (False,) * len(findings)
    items: Iterable[Fingerprinted | FindingRow] = identities
    for finding, item, mark in zip(findings, items, marks, strict=True):
        lines.append(f"{_HEADS[bool(mark)]}{item.fingerprint}{tail(finding, _line_hash(item))}")
        if len(lines) >= 4096:
            yield _chunk(lines)
            lines = []
    if lines:
        yield _chunk(lines)


#: A line's start, before its fingerprint: with the baseline's mark, or without.
_HEADS = ('{"fingerprint":"', '{"baselined":true,"fingerprint":"')


def _line_hash(item: Fingerprinted | FindingRow) -> str:
    inner = getattr(item, "inner", None)
    return inner.hex() if isinstance(inner, bytes) else getattr(item, "line_hash", "")


def _header_line(check: str, total: int) -> bytes:

    header = {"schema": SCHEMA_FINDINGS, "check": check, "total": total}
    return (json.dumps(header, separators=(",", ":")) + "\n").encode("ascii")


def _tailer(shown: Callable[[str], str] | None) -> Callable[[FindingLike, str], str]:
    """What follows a line's fingerprint: the finding's strings, each cut to MAX_TEXT, and
    its line hash (keys in order: the line is the compact JSON of the sorted row).
    Each string goes through JSON's own C escaper (ASCII: a lone surrogate a parser kept
    is escaped, so the file always reads back): the bytes of ``dumps``, 3x faster."""

    quoted = json.encoder.encode_basestring_ascii
    kinds: dict[str, str] = {}  # a parser's few kinds, each quoted once

    def tail(finding: FindingLike, line_hash: str) -> str:
        location = finding.location
        where = "" if location is None else f',"location":{quoted(location[:MAX_TEXT])}'
        if line_hash:
            where = f',"line_hash":"{line_hash}"{where}'
        message = finding.message if shown is None else shown(finding.message)
        kind = kinds.get(finding.kind)
        if kind is None:
            kind = quoted(finding.kind[:MAX_TEXT])
            if len(kinds) < 64:
                kinds[finding.kind] = kind
        return (f'","id":{quoted(finding.id[:MAX_TEXT])},'
                f'"kind":{kind}{where},'
                f'"message":{quoted(message[:MAX_TEXT])}}}')

    return tail


class SpoolFile:
    """Lines buffered to a private file, created new and owner-only (never through a link);
    a file that cannot be written says why (``problem``), so a run notes it, never half."""

    __slots__ = ("_buffer", "_handle", "path", "problem")

    def __init__(self, path: str) -> None:
        self.path = path
        self.problem = ""
        self._buffer: list[str] = []
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            self._handle: BinaryIO | None = open(os.open(path, flags, 0o600), "wb")  # noqa: SIM115
        except OSError as exc:
            self._handle = None
            self.problem = f"cannot write {os.path.basename(path)}: {exc.strerror or exc}"

    def _spool(self, line: str) -> None:
        self._buffer.append(line)
        if len(self._buffer) >= 4096:
            self._flush()

    def _flush(self) -> None:
        if self._handle is None or not self._buffer:
            self._buffer = []
            return
        try:
            self._handle.write(_chunk(self._buffer))
        except OSError as exc:
            self.problem = f"cannot write {self.path}: {exc.strerror or exc}"
            self.close()
        self._buffer = []

    def discard(self) -> None:
        """Remove the spool (after the file is written, or when it is not)."""
        self.close()
        if os.path.lexists(self.path):
            try:
                os.unlink(self.path)
            except OSError:  # the run dir went: nothing to remove
                return

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError as exc:
                self.problem = self.problem or f"cannot write {self.path}: {exc.strerror or exc}"


class FindingsSpool(SpoolFile):
    """The file's lines before their fingerprints are known, on disk beside it.

    A finding's fingerprint needs its occurrence, known only once the whole report
    is in, so a parse that hands each finding over as it goes writes what follows
    the fingerprint to a private file (``path``, created new, owner-only) and
    :meth:`encode` joins the two in order: memory stays a buffer however many
    findings there are. A spool that cannot be written says why (``problem``); the
    run then gets a note instead of the file, never a partial one.
    """

    __slots__ = ("_tail", "count")

    def __init__(self, path: str, shown: Callable[[str], str] | None = None) -> None:
        super().__init__(path)
        self.count = 0
        self._tail = _tailer(shown)

    def add(self, finding: FindingLike, line_hash: str = "") -> None:
        self.count += 1
        if self._handle is None:
            return
        self._spool(self._tail(finding, line_hash))

    def encode(self, check: str, fingerprints: Iterable[str],
               known: Sequence[int] | None = None) -> Iterator[bytes]:
        """The whole file, in order: each spooled line with its fingerprint (one of
        ``fingerprints`` each, in order) and its mark (``known``: true or 1 for baselined)."""
        self._flush()
        self.close()
        if self.problem:
            raise OSError(self.problem)

        yield _header_line(check, self.count)
        marks = known if known is not None else bytes(self.count)
        head = _HEADS.__getitem__
        prints = iter(fingerprints)
        with open(open_regular(self.path), "rb") as handle:
            index = 0
            # 4096 lines at a time, each joined to its mark and fingerprint in C
            while raws := list(islice(handle, 4096)):
                tails = b"".join(raws).decode("ascii").split("\n")[:-1]
                yield _chunk(map("".join, zip(
                    map(head, map(bool, marks[index:index + len(raws)])),
                    islice(prints, len(raws)), tails, strict=True)))
                index += len(raws)
        if index != self.count:
            raise OSError(f"{self.path} holds {index} findings of {self.count}")



def _chunk(lines: Iterable[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("ascii")


def read_findings(path: str, shown: str, check: str) -> list[FindingRow]:
    """Every row of the file at ``path`` (a file of ``check``); UsageError naming ``shown``."""
    return list(iter_findings(path, shown, check))


def iter_findings(path: str, shown: str, check: str) -> Iterator[FindingRow]:
    """The rows of the file at ``path`` one by one, in bounded memory (a report of 100,000
    findings never holds them all); the same refusals as :func:`read_findings`, a torn
    file's only when its end is reached."""

    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise UsageError(f"{shown} is missing") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    with open(fd, "rb") as handle:
        of, total = _header(_line(handle, shown, 1), shown)
        if of != check:
            raise UsageError(f"{shown} is the findings of {of!r}, not of {check!r}")
        yield from _rows(handle, shown, total)


def _rows(handle: BinaryIO, shown: str, total: int) -> Iterator[FindingRow]:
    """The finding lines after the header, parsed one by one (each line is its own JSON)."""

    # raw_decode on each line: json.loads's per-call overhead was half the time
    scan = json.JSONDecoder().raw_decode
    count = 0
    number = 1
    for raw in _lines(handle, shown):
        number += 1
        if count >= total:
            raise UsageError(f"{shown}:{number}: more findings than its header's "
                             f"total {total}")
        text = ""
        try:
            text = raw.decode("ascii")
            value, end = scan(text)
        except ValueError:
            value, end = None, -1
        if end != len(text) or type(value) is not dict:
            raise UsageError(f"{shown}:{number}: not a finding line of {SCHEMA_FINDINGS}")
        count += 1
        yield _row(value, shown, number)
    if count != total:
        raise UsageError(f"{shown}: {count} findings, its header says {total} "
                         "(a torn file)")


def _lines(handle: BinaryIO, shown: str) -> Iterator[bytes]:
    """The lines left in ``handle``, without their newline, read in blocks; none longer
    than :data:`MAX_LINE`, and the last one ended (a torn file is refused)."""
    carry = b""
    number = 1
    while True:
        block = handle.read(1 << 20)
        if not block:
            break
        parts = (carry + block).split(b"\n")
        carry = parts.pop()
        for part in parts:
            number += 1
            if len(part) > MAX_LINE:
                raise _too_long(shown, number)
            yield part
        if len(carry) > MAX_LINE:
            raise _too_long(shown, number + 1)
    if carry:
        raise UsageError(f"{shown}:{number + 1}: the last line is cut short (a torn file)")


def _too_long(shown: str, number: int) -> UsageError:
    return UsageError(f"{shown}:{number}: a line longer than {MAX_LINE >> 10} KiB; "
                      "not a findings file ckdn wrote")


def _line(handle: BinaryIO, shown: str, number: int) -> bytes:
    raw = handle.readline(MAX_LINE + 1)
    if len(raw) > MAX_LINE:
        raise _too_long(shown, number)
    if raw and not raw.endswith(b"\n"):
        raise UsageError(f"{shown}:{number}: the last line is cut short (a torn file)")
    return raw


def _header(raw: bytes, shown: str) -> tuple[str, int]:
    """``(check, total)`` of the header line."""

    try:
        head = json.loads(raw) if raw else None
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("schema") != SCHEMA_FINDINGS \
            or set(head) != {"schema", "check", "total"} \
            or not isinstance(head["check"], str) or type(head["total"]) is not int \
            or not 0 <= head["total"] <= MAX_ROWS:
        raise UsageError(f"{shown}:1: not a {SCHEMA_FINDINGS} header")
    return head["check"], head["total"]


def _row(value: dict[str, object], shown: str, number: int) -> FindingRow:
    get = value.get
    fingerprint, ident, kind, location, message, mark, line_hash = (
        get("fingerprint"), get("id"), get("kind"), get("location"), get("message"),
        get("baselined"), get("line_hash"))
    if type(fingerprint) is str and type(ident) is str and type(kind) is str \
            and type(message) is str and (location is None or type(location) is str) \
            and (mark is None or mark is True) \
            and (line_hash is None or (type(line_hash) is str and len(line_hash) == 32
                                       and not line_hash.strip(_HEX))) \
            and len(value) == 4 + (location is not None) + (mark is not None) \
            + (line_hash is not None) and _FINGERPRINT.fullmatch(fingerprint):
        return FindingRow(fingerprint, ident, kind, location, message,
                          baselined=mark is True, line_hash=line_hash or "")
    raise UsageError(f"{shown}:{number}: not a finding line of {SCHEMA_FINDINGS}")
