"""``findings.jsonl`` written as a run's parse hands the findings over, with no table.

The streaming writer of a run without a baseline (a run with one matches a packed
table, :class:`~ckdn.identity.IdentityTable`, and writes from
:class:`~ckdn.identity.FindingsSpool`): the lines are the same bytes
:func:`~ckdn.identity.encode_findings` makes of every finding's identity.
"""

from __future__ import annotations

import json
import json.encoder
from array import array

from ckdn.evidence_files import open_regular
from ckdn.identity._findings_file import (
    _HEADS,
    MAX_TEXT,
    FindingsSpool,
    SpoolFile,
    _header_line,
    _tailer,
)
from ckdn.identity._fingerprint import (
    LINE_BYTES,
    PRIMARY_HEX,
    Hasher,
    normalise_line,
    split_location,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ckdn.identity._fingerprint import FindingLike, IdentityTable, SourceLines

__all__ = ["GROUP", "FindingsWriter", "TableSpool", "occurrences"]


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

    __slots__ = ("_all_again", "_copies", "_cut_lines", "_group", "_group_path", "_hasher",
                 "_messages", "_parts", "_parts_of", "_quoted_path", "_ranges", "_reordered",
                 "_rules", "_shown", "_split", "_tail", "_written", "count")

    def __init__(self, path: str, source: SourceLines,
                 shown: Callable[[str], str] | None = None) -> None:
        super().__init__(path)
        self.count = 0
        self._hasher = Hasher(source)
        self._tail = _tailer(shown)
        self._shown = shown
        #: for :meth:`located`: code -> (kind, rule, quoted kind, code's JSON escape), the
        #: rule None for a code its id would not give back; the last path, its escape (None
        #: for a path too long to be kept whole) and whether it is a location without a line
        #: (a cell's); messages as the file writes them (bounded)
        self._rules: dict[str, tuple[str, str | None, str, str]] = {}
        self._quoted_path: tuple[str, str | None, bool] = ("", None, False)
        self._messages: dict[str, str] = {}
        #: for :meth:`located_file`: (code, line text, message) -> the parts of its line
        #: (:meth:`_parts_for`), for one path and kind
        self._parts: dict[tuple[str, str, str], tuple[str, str, str, str, str]] = {}
        self._parts_of: tuple[str, str] = ("", "")
        #: the current file's findings: (primary hash in hex, line, the file's line with its
        #: occurrence counted in the report's order: in line order, as a report lists a file's
        #: findings, that is the line's own, and the line is made once)
        self._group: list[tuple[str, int, str]] = []
        self._group_path: str | None = None
        #: primary hash -> (its findings in the current group so far, the last one's line);
        #: the hashes whose line went back (their findings are then counted again)
        self._copies: dict[str, tuple[int, int]] = {}
        self._reordered: set[str] = set()
        #: file -> the row ranges its findings were written in (one per run of them)
        self._ranges: dict[str, list[tuple[int, int]]] = {}
        self._split: set[str] = set()  # files written in more than one run: numbered again
        self._written = 0
        self._all_again = False
        #: row, line of each finding whose location the file cuts (past MAX_TEXT characters,
        #: ``:row:col`` lost): numbered again, it is numbered by its line, not the cut one's
        self._cut_lines = array("q")

    def add(self, finding: FindingLike) -> None:
        self.count += 1
        key, path, line = self._hasher.hashes(finding)
        if path != self._group_path or len(self._group) >= GROUP:
            self._close_group()
            self._group_path = path
        digits = key.hex()  # inner (32 digits), primary (24), secondary (12)
        primary = digits[32:56]
        occurrence = self._occurrence(primary, line)
        location = finding.location
        if location is not None and len(location) > MAX_TEXT:
            self._cut_lines.extend((self._written + len(self._group), line))
        self._group.append((primary, line, f"{_HEAD}{primary}:{occurrence}:{digits[56:]}"
                                           f"{self._tail(finding, digits[:32])}"))

    def located(self, path: str, row: int, col: int, code: str,  # noqa: PLR0917
                kind: str, message: str, cell: int | None = None) -> None:
        """:meth:`add` of the finding ``path:row:col:code`` of ``kind`` at ``path:row:col``
        (in a notebook ``cell``: ``path:cellN:row:col:code`` at ``path``), handed over as
        its fields: the same line, byte for byte, without a Finding, the location split
        again or the id taken apart (ruff's 100,000 findings)."""
        if cell is not None:
            self._in_cell(path, row, col, code, kind, message, cell)
            return
        rule = self._rules.get(code)
        if rule is None or rule[0] is not kind:
            rule = _rule(self._rules, kind, code)
        seen, escaped, _ = self._quoted_path
        if path != seen:
            escaped = self._quote(path)
        _, ruled, kind_json, code_json = rule
        if ruled is None or escaped is None or type(row) is not int or type(col) is not int \
                or not (0 < row < _POSITION_LIMIT and 0 < col < _POSITION_LIMIT):
            place = f"{path}:{row}:{col}"
            self.add(_Fields(f"{place}:{code}", kind, message, place))
            return
        self.count += 1
        key = self._hasher.located(path, row, ruled, message)
        if path != self._group_path or len(self._group) >= GROUP:
            self._close_group()
            self._group_path = path
        message_json = self._messages.get(message)  # the cache first: a call less a finding
        if message_json is None:
            message_json = _message_json(self._messages, self._shown, message)
        digits = key.hex()
        primary = digits[32:56]
        copies = self._copies  # _occurrence's body: a call less a finding
        counted = copies.get(primary)
        if counted is None:
            occurrence = 0
        else:
            occurrence = counted[0]
            if row < counted[1]:
                self._reordered.add(primary)
        copies[primary] = (occurrence + 1, row)
        self._group.append((primary, row,
                            f'{_HEAD}{primary}:{occurrence}:{digits[56:]}","id":"{escaped}:{row}:'
                            f'{col}:{code_json}",'
                            f'"kind":{kind_json},"line_hash":"{digits[:32]}",'
                            f'"location":"{escaped}:{row}:{col}","message":{message_json}}}'))

    def located_file(self, path: str, kind: str,  # noqa: PLR0915 - one loop, inline
                     found: Sequence[tuple[int, int, str, str, int | None]]) -> None:
        """:meth:`located` of each of one file's findings, ``(row, col, code, message, cell)``
        in the report's order: the same lines, with the path and the fingerprint's file looked
        up once, and a line's parts (its hashes, code, kind, message) once a file for the
        findings that share them, not once a finding (ruff's 100,000 findings)."""
        seen, escaped, _ = self._quoted_path
        if path != seen:
            escaped = self._quote(path)
        if escaped is None:  # a path too long to be written here: the general way, each
            for row, col, code, message, cell in found:
                self.located(path, row, col, code, kind, message, cell)
            return
        hasher = self._hasher
        if path != hasher._path:  # Hasher.located's, once for the file
            hasher._enter(path)
        if path != self._group_path:
            self._close_group()
            self._group_path = path
        if self._parts_of != (path, kind):
            self._parts_of = (path, kind)
            self._parts = {}
        parts = self._parts
        lines = hasher._lines
        last_line = len(lines) if lines else 0
        group, copies = self._group, self._copies
        count = self.count
        lineless = self._quoted_path[2]
        limit, full, reordered = _POSITION_LIMIT, GROUP, self._reordered  # locals: read a finding
        for row, col, code, message, cell in found:
            if cell is not None:  # _in_cell's: at line 0, so hashed with no line's text
                made = None
                if lineless and type(cell) is int and type(row) is int and type(col) is int \
                        and 0 <= cell < _POSITION_LIMIT and 0 <= row < _POSITION_LIMIT \
                        and 0 <= col < _POSITION_LIMIT:
                    known = (code, "", message)
                    made = parts.get(known)
                    if made is None:
                        made = self._parts_for(known, kind, escaped)
                if made is not None:
                    count += 1
                    primary, head, middle, tail, end = made
                    if len(group) >= full:
                        self._close_group()
                        self._group_path = path
                        group, copies, reordered = self._group, self._copies, self._reordered
                    occurrence = self._occurrence(primary, 0)  # a call more, for a cell only
                    group.append((primary, 0, f"{head}{occurrence}{middle}cell{cell}:{row}:{col}"
                                              f"{tail[:-1]}{end}"))
                    continue
            elif type(row) is not int or type(col) is not int \
                    or not (0 < row < limit and 0 < col < limit):
                made = None
            else:
                # the line's text as Hasher.located reads it
                if row <= last_line:
                    content = lines[row - 1][:LINE_BYTES].decode(  # type: ignore[index]
                        "utf-8", "replace")
                    text = normalise_line(content) if content and not content.isspace() else ""
                else:
                    text = ""
                known = (code, text, message)
                made = parts.get(known)
                if made is None:
                    made = self._parts_for(known, kind, escaped)
            if made is None:  # fields the general way takes (a cell's, a code not read back)
                self.count = count
                self.located(path, row, col, code, kind, message, cell)
                count = self.count  # the general way may have ended the group, or entered
                if path != self._group_path:  # another path: all read afresh
                    self._close_group()
                    self._group_path = path
                group, copies, reordered = self._group, self._copies, self._reordered
                if path != hasher._path:
                    hasher._enter(path)
                continue
            count += 1
            primary, head, middle, tail, end = made
            if len(group) >= full:
                self._close_group()
                self._group_path = path
                group, copies, reordered = self._group, self._copies, self._reordered
            counted = copies.get(primary)  # _occurrence's body
            if counted is None:
                occurrence = 0
            else:
                occurrence = counted[0]
                if row < counted[1]:
                    reordered.add(primary)
            copies[primary] = (occurrence + 1, row)
            place = f"{row}:{col}"
            group.append((primary, row, f"{head}{occurrence}{middle}{place}{tail}{place}{end}"))
        self.count = count

    def _parts_for(self, known: tuple[str, str, str], kind: str,
                   escaped: str) -> tuple[str, str, str, str, str] | None:
        """The parts of the line of ``(code, line text, message)`` at the current path
        around its occurrence and ``row:col`` (twice), as :meth:`located` writes it, kept for
        the path (a bounded number); None for a code the id would not give back."""
        code, text, message = known
        rule = self._rules.get(code)
        if rule is None or rule[0] is not kind:
            rule = _rule(self._rules, kind, code)
        _, ruled, kind_json, code_json = rule
        if ruled is None:
            return None
        hasher = self._hasher
        plain = hasher._messages.get(message)  # Hasher.located's, from the line's text
        if plain is None:
            plain = hasher.normalised(message)
        hashed = (ruled, text, plain)
        key = hasher._keys.get(hashed)
        if key is None:
            key = hasher.new_key(hashed, hasher._path)
        message_json = self._messages.get(message)
        if message_json is None:
            message_json = _message_json(self._messages, self._shown, message)
        digits = key.hex()  # inner (32 digits), primary (24), secondary (12)
        primary = digits[32:56]
        made = (primary, f"{_HEAD}{primary}:", f':{digits[56:]}","id":"{escaped}:',
                f':{code_json}","kind":{kind_json},"line_hash":"{digits[:32]}",'
                f'"location":"{escaped}:', f'","message":{message_json}}}')
        parts = self._parts
        if len(parts) >= _PARTS_KEPT:
            parts.clear()
        parts[known] = made
        return made

    def _in_cell(self, path: str, row: int, col: int, code: str,  # noqa: PLR0917
                 kind: str, message: str, cell: int) -> None:
        """:meth:`located` of a notebook cell's finding: at line 0 (its location is its path),
        so its line hash is of its message."""
        rule = self._rules.get(code)
        if rule is None or rule[0] is not kind:
            rule = _rule(self._rules, kind, code)
        _, ruled, kind_json, code_json = rule
        seen, escaped, lineless = self._quoted_path
        if path != seen:
            escaped = self._quote(path)
            lineless = self._quoted_path[2]
        if ruled is None or escaped is None or not lineless \
                or type(cell) is not int or type(row) is not int or type(col) is not int \
                or not (0 <= cell < _POSITION_LIMIT and 0 <= row < _POSITION_LIMIT
                        and 0 <= col < _POSITION_LIMIT):
            self.add(_Fields(f"{path}:cell{cell}:{row}:{col}:{code}", kind, message, path))
            return
        self.count += 1
        key = self._hasher.located(path, 0, ruled, message)
        if path != self._group_path or len(self._group) >= GROUP:
            self._close_group()
            self._group_path = path
        message_json = self._messages.get(message)  # as in located: a call less a finding
        if message_json is None:
            message_json = _message_json(self._messages, self._shown, message)
        digits = key.hex()
        primary = digits[32:56]
        occurrence = self._occurrence(primary, 0)
        self._group.append((primary, 0,
                            f'{_HEAD}{primary}:{occurrence}:{digits[56:]}","id":"{escaped}:cell'
                            f'{cell}:{row}:{col}:{code_json}","kind":{kind_json},'
                            f'"line_hash":"{digits[:32]}","location":"{escaped}",'
                            f'"message":{message_json}}}'))

    def _occurrence(self, primary: str, line: int) -> int:
        """The finding's occurrence among the group's earlier ones sharing ``primary``: its
        own while their lines never go back (else :meth:`_close_group` counts them again)."""
        copies = self._copies
        counted = copies.get(primary)
        if counted is None:
            occurrence = 0
        else:
            occurrence = counted[0]
            if line < counted[1]:
                self._reordered.add(primary)
        copies[primary] = (occurrence + 1, line)
        return occurrence

    def _quote(self, path: str) -> str | None:
        """A new path's escape (:func:`_path_escape`), remembered with whether the path is
        a location without a line (a cell's, :func:`split_location`): once a file, not once
        a finding."""
        escaped = _path_escape(path)
        self._quoted_path = (path, escaped,
                             escaped is not None and split_location(path) == (path, 0))
        return escaped

    def _close_group(self) -> None:
        group, path, reordered = self._group, self._group_path, self._reordered
        if not group or path is None:
            return
        self._group = []
        self._copies = {}
        if reordered:
            self._reordered = set()
            _count_again(group, reordered)
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
        buffer.extend([entry[2] for entry in group])
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
        fixed = _renumbered(self.path, rows, self._cut_lines) if rows else {}
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


_quoted = json.encoder.encode_basestring_ascii
#: A line's start, and where its occurrence (after ``PRIMARY:``) starts.
_HEAD = _HEADS[0]
_OCCURRENCE_AT = len(_HEAD) + PRIMARY_HEX + 1
#: A row or column :func:`~ckdn.identity.split_location` reads as one (at most 18 digits).
_POSITION_LIMIT = 10 ** 18
#: Codes and messages remembered by :meth:`FindingsWriter.located`, each set cleared when
#: full (a report can vary them all), and the longest message remembered.
_RULES_KEPT = 1024
_MESSAGES_KEPT = 1024
#: Lines' parts :meth:`FindingsWriter.located_file` keeps for one file (each holds a source
#: line and a message, up to a few KiB: a bounded number).
_PARTS_KEPT = 512
_MESSAGE_KEPT = 256
#: The longest path and code :meth:`FindingsWriter.located` writes itself: with three
#: 18-digit numbers (a cell's) the id stays under the file's cut (``MAX_TEXT``): none is cut.
_PATH_KEPT = 800
_CODE_KEPT = 60


class _Fields:
    """A finding made of :meth:`FindingsWriter.located`'s fields, for the general path."""

    __slots__ = ("id", "kind", "location", "message")

    def __init__(self, id: str, kind: str, message: str, location: str) -> None:
        self.id, self.kind, self.message, self.location = id, kind, message, location


def _message_json(messages: dict[str, str], shown: Callable[[str], str] | None,
                  message: str) -> str:
    """A message not in ``messages`` as the file writes it: redacted, cut, quoted; a short
    one kept there (a bounded number of them: a report can vary them all)."""
    text = message if shown is None else shown(message)
    message_json = _quoted(text[:MAX_TEXT])
    if len(message) <= _MESSAGE_KEPT:
        if len(messages) >= _MESSAGES_KEPT:
            messages.clear()
        messages[message] = message_json
    return message_json


def _rule(rules: dict[str, tuple[str, str | None, str, str]], kind: str,
          code: str) -> tuple[str, str | None, str, str]:
    """:func:`_rule_parts`, a short code's kept in ``rules`` (a bounded number of them)."""
    rule = _rule_parts(kind, code)
    if len(code) <= _CODE_KEPT:
        if len(rules) >= _RULES_KEPT:
            rules.clear()
        rules[code] = rule
    return rule


def _rule_parts(kind: str, code: str) -> tuple[str, str | None, str, str]:
    """The rule of ``path:row:col:code`` as :func:`~ckdn.identity.rule_of` makes it, the
    kind quoted and the code escaped, or None where the id is not read back as
    ``code`` (a colon, a ``#``, a leading digit) or would be cut."""
    if not code or ":" in code or "#" in code or code[:1].isdigit() or len(code) > _CODE_KEPT:
        return kind, None, "", ""
    return kind, f"{kind}\0{code}", _quoted(kind[:MAX_TEXT]), _quoted(code)[1:-1]


def _path_escape(path: str) -> str | None:
    """``path``'s JSON escape without its quotes (each character escaped alone, so the
    id's and the location's escapes are this and the rest's), or None when too long."""
    if not path or len(path) > _PATH_KEPT:
        return None
    return _quoted(path)[1:-1]


#: A file's findings held at once before they are written (see :class:`FindingsWriter`).
GROUP = 4096
#: Row ranges remembered per file; past them every row is numbered again at the end.
_RANGES_KEPT = 64


def _count_again(group: list[tuple[str, int, str]], hashes: set[str]) -> None:
    """The lines of ``group`` (one file's) that share one of ``hashes`` given their
    occurrences in line order (the tool's order for equal lines), as :func:`occurrences`
    counts: those findings were counted in the report's order, and their lines went back."""
    # (line, position) sorted is line order, the tool's order for equal lines; a hash or two
    # (a notebook cell's line 0 after rows, every group of ruff's bench) one pass each
    if len(hashes) <= _FEW_AGAIN:
        shared = [[(entry[1], position) for position, entry in enumerate(group)
                   if entry[0] == primary] for primary in hashes]
    else:
        by_hash: dict[str, list[tuple[int, int]]] = {}
        for position, entry in enumerate(group):
            if entry[0] in hashes:
                by_hash.setdefault(entry[0], []).append((entry[1], position))
        shared = list(by_hash.values())
    for found in shared:
        found.sort()
        for occurrence, (line, position) in enumerate(found):
            primary, _, text = group[position]
            group[position] = (primary, line, f"{_HEAD}{primary}:{occurrence}"
                                              f"{text[text.index(':', _OCCURRENCE_AT):]}")


#: Hashes counted again one pass of the group each (more: one pass for all).
_FEW_AGAIN = 2


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


def _renumbered(path: str, spans: list[tuple[int, int]], cut_lines: Sequence[int] = ()
                ) -> dict[int, int]:
    """Row -> occurrence for the rows in ``spans``, counted over all of them (a file's
    findings written in more than one run), from the spooled lines at ``path``; a row in
    ``cut_lines`` (row, line pairs, in row order) has its line there, its location cut."""
    group: list[tuple[str, int, str]] = []
    rows: list[int] = []
    spans_left = iter(spans)
    span = next(spans_left, None)
    cut_at = 0
    with open(open_regular(path), "rb") as handle:
        for index, raw in enumerate(handle):
            while span is not None and index >= span[1]:
                span = next(spans_left, None)
            if span is None:
                break
            if index < span[0]:
                continue
            value = json.loads(raw)
            while cut_at < len(cut_lines) and cut_lines[cut_at] < index:
                cut_at += 2
            if cut_at < len(cut_lines) and cut_lines[cut_at] == index:
                line = cut_lines[cut_at + 1]
            else:
                _, line = split_location(value.get("location"))
            group.append((value["fingerprint"][:PRIMARY_HEX], line, ""))
            rows.append(index)
    return dict(zip(rows, occurrences(group), strict=True))


# -- the spool of a run with an identity table (a baseline gate, a diff scope) -------------

class TableSpool(FindingsSpool):
    """:class:`~ckdn.identity.FindingsSpool` with :meth:`located`: a finding's line written
    from its fields, the same bytes :meth:`add` writes of the Finding they make."""

    __slots__ = ("_messages", "_quoted_path", "_rules", "_shown")

    def __init__(self, path: str, shown: Callable[[str], str] | None = None) -> None:
        super().__init__(path, shown)
        self._shown = shown
        #: as :class:`~ckdn.identity.FindingsWriter` keeps them: code -> (kind, rule, quoted
        #: kind, code's escape); the last path, its escape and whether it is a location
        #: without a line (a cell's); messages as written (bounded)
        self._rules: dict[str, tuple[str, str | None, str, str]] = {}
        self._quoted_path: tuple[str, str | None, bool] = ("", None, False)
        self._messages: dict[str, str] = {}

    def located(self, table: IdentityTable, path: str, row: int,  # noqa: PLR0917
                col: int, code: str, kind: str, message: str,
                cell: int | None = None) -> bytes | None:
        """The finding ``path:row:col:code`` of ``kind`` at ``path:row:col`` (in a notebook
        ``cell``: ``path:cellN:row:col:code`` at ``path``) added to ``table`` and spooled;
        its key, or None (nothing done) for fields the general path must take as a Finding
        (a code or path the id would not give back)."""
        rule = self._rules.get(code)
        if rule is None or rule[0] is not kind:
            rule = _rule(self._rules, kind, code)
        seen, escaped, lineless = self._quoted_path
        if path != seen:
            escaped = _path_escape(path)
            lineless = escaped is not None and split_location(path) == (path, 0)
            self._quoted_path = (path, escaped, lineless)
        _, ruled, kind_json, code_json = rule
        if ruled is None or escaped is None or type(row) is not int or type(col) is not int:
            return None
        if cell is None:
            if not (0 < row < _POSITION_LIMIT and 0 < col < _POSITION_LIMIT):
                return None
            key = table.located(path, row, ruled, message)
            place = f"{escaped}:{row}:{col}"
            ident = f"{place}:{code_json}"
        else:  # as FindingsWriter._in_cell: at line 0, its location its path
            if not lineless or type(cell) is not int \
                    or not (0 <= cell < _POSITION_LIMIT and 0 <= row < _POSITION_LIMIT
                            and 0 <= col < _POSITION_LIMIT):
                return None
            key = table.located(path, 0, ruled, message)
            place = escaped
            ident = f"{escaped}:cell{cell}:{row}:{col}:{code_json}"
        self.count += 1
        if self._handle is None:
            return key
        message_json = self._messages.get(message)
        if message_json is None:
            message_json = _message_json(self._messages, self._shown, message)
        buffer = self._buffer
        buffer.append(f'","id":"{ident}","kind":{kind_json},'
                      f'"line_hash":"{key[:16].hex()}","location":"{place}",'
                      f'"message":{message_json}}}')
        if len(buffer) >= 4096:
            self._flush()
        return key
