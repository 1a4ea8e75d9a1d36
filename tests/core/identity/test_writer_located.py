"""A finding handed to the writer as its fields (``FindingsWriter.located``, ruff's way past
the digest's findings) is the same line of ``findings.jsonl``, byte for byte, as the same
finding handed over built (``add``): whatever its path, code, position or message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.identity import FindingsWriter, IdentityTable, SourceLines, TableSpool
from ckdn.parsers.base import Finding

KIND = "lint_violation"

#: paths a report may name: with colons and digits, ``#``, escapes, lone surrogates, longer
#: than the writer writes itself (800) and than the file's cut (1000)
PATHS = st.one_of(
    st.sampled_from(["m0.py", "m1.py", "a:12.py", "dir/m0.py", "x#1.py", "é\"\\.py", "",
                     "\ud800.py", "p" * 799, "p" * 801, "a:3", "b:cell1", "q" * 1200]),
    st.text(st.characters(codec="utf-8") | st.sampled_from(":#\ud800\n0"), max_size=12))
CODES = st.one_of(st.sampled_from(["F401", "E501", "invalid-syntax", "1X", "A:B", "N#2", "",
                                   "C" * 60, "C" * 61, "\ud801"]),
                  st.text(max_size=6))
POSITIONS = st.one_of(st.integers(1, 60), st.sampled_from([10 ** 18 - 1, 10 ** 18, 0, -1]))
MESSAGES = st.one_of(st.sampled_from(["F401 `os` imported but unused", "E501 x 12 > 88",
                                      "m" * 1500, "\ud800 'q'"]), st.text(max_size=20))
#: a notebook's cell (ruff's id ``path:cellN:row:col:code``, located at the path), or none
CELLS = st.one_of(st.none(), st.none(), st.integers(-1, 4), st.just(10 ** 18))
ENTRIES = st.lists(st.tuples(PATHS, POSITIONS, POSITIONS, CODES, MESSAGES, CELLS),
                   max_size=25)


def project(root: Path) -> None:
    for name in ("m0.py", "m1.py", "dir/m0.py"):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("".join(f"import x{i % 3}\n" if i % 4 else "  \n"
                                         for i in range(30)))


Entry = tuple[str, int, int, str, str, int | None]


def written(root: Path, entries: list[Entry], *, fields: bool,
            shown: bool) -> bytes:
    spool = root / (".fields" if fields else ".built")
    writer = FindingsWriter(str(spool), SourceLines(str(root)),
                            str.upper if shown else None)
    for path, row, col, code, message, cell in entries:
        if fields:
            writer.located(path, row, col, code, KIND, message, cell)
        elif cell is None:
            place = f"{path}:{row}:{col}"
            writer.add(Finding(f"{place}:{code}", KIND, message, place))
        else:
            writer.add(Finding(f"{path}:cell{cell}:{row}:{col}:{code}", KIND, message, path))
    try:
        return b"".join(writer.encode("ruff"))
    finally:
        writer.discard()


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@given(entries=ENTRIES, shown=st.booleans())
def test_fields_write_the_line_a_built_finding_writes(
        entries: list[Entry], shown: bool) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root)
        assert written(root, entries, fields=True, shown=shown) \
            == written(root, entries, fields=False, shown=shown)


def test_a_file_met_again_is_numbered_over_all_its_findings(tmp_path: Path) -> None:
    """The same content twice in m0.py, met again after m1.py: the occurrences are the
    built way's, counted over both runs of m0.py's findings."""
    project(tmp_path)
    entries: list[Entry] = [("m0.py", 5, 1, "F401", "F401 `x2` unused", None),
                            ("m1.py", 2, 1, "F401", "F", None),
                            ("m0.py", 2, 1, "F401", "F401 `x2` unused", None),
                            ("m0.py", 5, 1, "F401", "F401 `x2` unused", None)]
    fields = written(tmp_path, entries, fields=True, shown=False)
    assert fields == written(tmp_path, entries, fields=False, shown=False)
    assert b":1:" in fields.split(b"\n")[4]  # the second copy of line 5


def tabled(root: Path, entries: list[Entry], *, fields: bool, shown: bool) -> bytes:
    """The file of a run with a table (a baseline's): each entry as the tap hands it over,
    as its fields (``TableSpool.located``, a Finding when it declines) or built."""
    spool = TableSpool(str(root / (".table-fields" if fields else ".table-built")),
                       str.upper if shown else None)
    table = IdentityTable(SourceLines(str(root)))
    for path, row, col, code, message, cell in entries:
        if fields and spool.located(table, path, row, col, code, KIND, message,
                                    cell) is not None:
            continue
        if cell is None:
            place = f"{path}:{row}:{col}"
            finding = Finding(f"{place}:{code}", KIND, message, place)
        else:
            finding = Finding(f"{path}:cell{cell}:{row}:{col}:{code}", KIND, message, path)
        position = len(table)
        table.add(finding)
        spool.add(finding, table.line_hash(position))
    try:
        return b"".join(spool.encode("ruff", table.fingerprints()))
    finally:
        spool.discard()


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@given(entries=ENTRIES, shown=st.booleans())
def test_fields_with_a_table_write_the_line_a_built_finding_writes(
        entries: list[Entry], shown: bool) -> None:
    """The same with a table: a notebook cell's finding included (taken as its fields)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root)
        assert tabled(root, entries, fields=True, shown=shown) \
            == tabled(root, entries, fields=False, shown=shown) \
            == written(root, entries, fields=False, shown=shown)


def written_by_file(root: Path, entries: list[Entry], cuts: list[int], *, shown: bool) -> bytes:
    """``entries`` handed over as ``located_file`` takes them: each run of one path's
    findings in one call, cut where ``cuts`` says (a parser hands a long file in parts)."""
    spool = root / ".by-file"
    writer = FindingsWriter(str(spool), SourceLines(str(root)), str.upper if shown else None)
    batch: list[tuple[int, int, str, str, int | None]] = []
    current: str | None = None
    for index, (path, row, col, code, message, cell) in enumerate(entries):
        if batch and (path != current or index in cuts):
            writer.located_file(current or "", KIND, batch)
            batch = []
        current = path
        batch.append((row, col, code, message, cell))
    if batch:
        writer.located_file(current or "", KIND, batch)
    try:
        return b"".join(writer.encode("ruff"))
    finally:
        writer.discard()


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@given(entries=ENTRIES, cuts=st.lists(st.integers(0, 25), max_size=4), shown=st.booleans())
def test_a_files_findings_at_once_write_the_lines_one_at_a_time_writes(
        entries: list[Entry], cuts: list[int], shown: bool) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root)
        assert written_by_file(root, entries, cuts, shown=shown) \
            == written(root, entries, fields=True, shown=shown)


def test_a_file_past_a_group_at_once_is_numbered_as_one_at_a_time(tmp_path: Path) -> None:
    """One file's 5,000 findings (past a group, 4,096), the same few lines and messages over
    and over and a line going back, handed over 1,024 at a time: the lines one at a time."""
    project(tmp_path)
    entries: list[Entry] = [("m0.py", (i * 7) % 30 + 1, i % 3 + 1, "F401", f"F401 m{i % 5}",
                             2 if i % 97 == 0 else None) for i in range(5000)]
    cuts = list(range(0, 5000, 1024))
    by_file = written_by_file(tmp_path, entries, cuts, shown=False)
    assert by_file == written(tmp_path, entries, fields=True, shown=False)
    assert by_file.count(b"\n") == 5001


def test_a_cut_location_met_again_is_numbered_by_its_own_line(tmp_path: Path) -> None:
    """A path past the file's 1,000-character cut loses ``:row:col`` from the written
    location; its file met again is still numbered by the finding's line (here the column:
    a 19-digit row is part of the path), as the table and a built finding number it
    (hypothesis found the writer numbering the copies in the report's order instead)."""
    project(tmp_path)
    long = "q" * 1200
    other: Entry = ("m0.py", 1, 1, "F401", "F401 `os` imported but unused", None)
    entries: list[Entry] = [other, (long, 10 ** 18, 2, "F401", "", None), other,
                            (long, 10 ** 18, 1, "F401", "", None)]
    lines = written(tmp_path, entries, fields=False, shown=False).split(b"\n")
    assert b'"location":"' + b"q" * 1000 + b'"' in lines[2]
    assert b":1:" in lines[2].split(b'"')[3]
    assert b":0:" in lines[4].split(b'"')[3]
    assert tabled(tmp_path, entries, fields=True, shown=False) \
        == written(tmp_path, entries, fields=False, shown=False)
