"""``findings.jsonl`` written as a run's parse hands the findings over, with no table.

The streaming writer of a run without a baseline (a run with one matches a packed
table, :class:`~ckdn.identity.IdentityTable`, and writes from
:class:`~ckdn.identity.FindingsSpool`): the lines are the same bytes
:func:`~ckdn.identity.encode_findings` makes of every finding's identity.
"""

from __future__ import annotations

import json

from ckdn.evidence_files import open_regular
from ckdn.identity._findings_file import _HEADS, SpoolFile, _header_line, _tailer
from ckdn.identity._fingerprint import PRIMARY_HEX, Hasher, split_location

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ckdn.identity._fingerprint import FindingLike, SourceLines

__all__ = ["GROUP", "FindingsWriter", "occurrences"]


class FindingsWriter(SpoolFile):
    """The file's lines written as the parser hands the findings over: no table kept.

    A fingerprint's occurrence counts the findings that share its primary hash, and
    that hash includes the path: a file's findings are numbered among themselves.
    A report lists a file's findings together (every built-in tool's does), so the
    writer holds one file's findings (at most :data:`GROUP`), numbers them when the
    next file starts and spools their finished lines to ``path`` (created new,
    owner-only). A file met again later, or one with more findings than
    :data:`GROUP`, is numbered again at the end from the spool (memory for its
    findings only). A spool that cannot be written says why (``problem``): the run
    then gets a note instead of the file, never a partial one.
    """

    __slots__ = ("_all_again", "_group", "_group_path", "_hasher", "_ranges", "_split", "_tail",
                 "_written", "count")

    def __init__(self, path: str, source: SourceLines,
                 shown: Callable[[str], str] | None = None) -> None:
        super().__init__(path)
        self.count = 0
        self._hasher = Hasher(source)
        self._tail = _tailer(shown)
        #: the current file's findings: (primary hash in hex, line, what follows the primary)
        self._group: list[tuple[str, int, str]] = []
        self._group_path: str | None = None
        #: file -> the row ranges its findings were written in (one per run of them)
        self._ranges: dict[str, list[tuple[int, int]]] = {}
        self._split: set[str] = set()  # files written in more than one run: numbered again
        self._written = 0
        self._all_again = False

    def add(self, finding: FindingLike) -> None:
        self.count += 1
        key, path, line = self._hasher.hashes(finding)
        if path != self._group_path or len(self._group) >= GROUP:
            self._close_group()
            self._group_path = path
        digits = key.hex()  # inner (32 digits), primary (24), secondary (12)
        self._group.append((digits[32:56], line,
                            f":{digits[56:]}{self._tail(finding, digits[:32])}"))

    def _close_group(self) -> None:
        group, path = self._group, self._group_path
        if not group or path is None:
            return
        self._group = []
        start = self._written
        self._written += len(group)
        ranges = self._ranges.setdefault(path, [])
        if ranges:
            self._split.add(path)
        if len(ranges) < _RANGES_KEPT:
            ranges.append((start, self._written))
        else:  # a file met over and over: every row is numbered again, all together
            self._all_again = True
        buffer = self._buffer
        for (primary, _, rest), occurrence in zip(group, occurrences(group), strict=True):
            buffer.append(f"{_HEADS[0]}{primary}:{occurrence}{rest}")
        if len(buffer) >= 4096:
            self._flush()

    def encode(self, check: str) -> Iterator[bytes]:
        """The whole file, in order: the header, then the spooled lines (those of a file
        met more than once with their occurrences counted over all of its findings)."""
        self._close_group()
        self._flush()
        self.close()
        if self.problem:
            raise OSError(self.problem)
        yield _header_line(check, self.count)
        rows = self._rows_again()
        fixed = _renumbered(self.path, rows) if rows else {}
        with open(open_regular(self.path), "rb") as handle:
            if not fixed:
                while block := handle.read(1 << 20):
                    yield block
                return
            lines: list[bytes] = []
            for index, raw in enumerate(handle):
                occurrence = fixed.get(index)
                if occurrence is not None:
                    head, rest = raw[len(_HEADS[0]):].split(b":", 1)
                    raw = b"%s%s:%d:%s" % (_HEADS[0].encode(), head, occurrence,
                                           rest.split(b":", 1)[1])
                lines.append(raw)
                if len(lines) >= 4096:
                    yield b"".join(lines)
                    lines = []
            yield b"".join(lines)

    def _rows_again(self) -> list[tuple[int, int]]:
        """The row ranges to number again: every run of a file met more than once (all
        rows, merged, when one was met more than :data:`_RANGES_KEPT` times)."""
        if self._all_again:
            return [(0, self._written)]
        return sorted(span for path in self._split for span in self._ranges[path])


#: A file's findings held at once before they are written (see :class:`FindingsWriter`).
GROUP = 4096
#: Row ranges remembered per file; past them every row is numbered again at the end.
_RANGES_KEPT = 64


def occurrences(group: Sequence[tuple[str, int, str]]) -> list[int]:
    """Each finding's index among those of ``group`` (one file's) sharing its primary hash,
    in line order (the tool's order for equal lines), as :func:`fingerprints` counts."""
    count = len(group)
    if count == 1:
        return [0]
    firsts: dict[str, int] = {}
    shared: dict[str, list[int]] = {}
    for position, entry in enumerate(group):
        primary = entry[0]
        first = firsts.setdefault(primary, position)
        if first != position:
            shared.setdefault(primary, [first]).append(position)
    out = [0] * count
    for positions in shared.values():
        positions.sort(key=lambda p: group[p][1])  # stable: equal lines keep the tool's order
        for index, position in enumerate(positions):
            out[position] = index
    return out


def _renumbered(path: str, spans: list[tuple[int, int]]) -> dict[int, int]:
    """Row -> occurrence for the rows in ``spans``, counted over all of them (a file's
    findings written in more than one run), from the spooled lines at ``path``."""
    group: list[tuple[str, int, str]] = []
    rows: list[int] = []
    spans_left = iter(spans)
    span = next(spans_left, None)
    with open(open_regular(path), "rb") as handle:
        for index, raw in enumerate(handle):
            while span is not None and index >= span[1]:
                span = next(spans_left, None)
            if span is None:
                break
            if index < span[0]:
                continue
            value = json.loads(raw)
            _, line = split_location(value.get("location"))
            group.append((value["fingerprint"][:PRIMARY_HEX], line, ""))
            rows.append(index)
    return dict(zip(rows, occurrences(group), strict=True))
