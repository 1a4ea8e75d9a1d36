"""The packed identity table gives every finding the fingerprint the list function gives,
and matching it gives what matching the list gives; the spool writes the same file.

The table is what a run uses (findings handed over one by one, none kept); the
list function is what reports and merges use. Two ways to one identity would be
two identities, so they are held equal on any findings, in any order.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.identity import (
    BaselineIndex,
    FindingsSpool,
    IdentityTable,
    SourceLines,
    encode_findings,
    fingerprints,
    match,
)
from ckdn.parsers.base import Finding

SOURCE = tempfile.mkdtemp(prefix="ckdn-table-")
for _name, _lines in (("a.py", ["x = 1", "x = 1", "  x = 1", "y = 2", ""]),
                      ("b.py", ["import os", "import os", "z"])):
    Path(SOURCE, _name).write_text("\n".join(_lines) + "\n")

finding = st.builds(
    lambda path, line, rule, message: Finding(
        f"{path}:{line}:1:{rule}" if path else rule, "lint_violation", message,
        f"{path}:{line}:1" if path else None),
    st.sampled_from(["a.py", "b.py", "gone.py", ""]), st.integers(1, 7),
    st.sampled_from(["F401", "F841", "E1"]),
    st.sampled_from(["unused 'x'", "unused 'y'", "line 3 too long", "caf\u00e9 \udcff"]))


def table_of(findings: list[Finding]) -> IdentityTable:
    table = IdentityTable(SourceLines(SOURCE))
    for item in findings:
        table.add(item)
    return table


@given(st.lists(finding, max_size=40))
def test_the_table_gives_each_finding_the_list_functions_fingerprint(
        findings: list[Finding]) -> None:
    listed = fingerprints(findings, SourceLines(SOURCE))
    table = table_of(findings)
    assert len(table) == len(findings)
    assert [table.fingerprint(i) for i in range(len(table))] == [
        item.fingerprint for item in listed]
    assert [table.path(i) for i in range(len(table))] == [item.path for item in listed]
    assert [table.line(i) for i in range(len(table))] == [item.line for item in listed]


@given(st.lists(finding, max_size=30), st.lists(finding, max_size=30),
       st.sampled_from([None, {"a.py": ["old.py"]}, {"b.py": ["a.py"]}]))
def test_matching_the_table_is_matching_the_list(
        before: list[Finding], after: list[Finding],
        renames: dict[str, list[str]] | None) -> None:
    entries = [item.fingerprint for item in fingerprints(before, SourceLines(SOURCE))]
    listed = match(entries, fingerprints(after, SourceLines(SOURCE)), renames)
    tabled = match(BaselineIndex(entries), table_of(after), lambda: renames or {})
    assert tabled.known == listed.known
    assert tabled.stale == listed.stale
    assert tabled.by_pass == listed.by_pass


def test_renames_are_asked_only_when_the_exact_pass_leaves_both_sides_over() -> None:
    findings = [Finding("a.py:1:1:F841", "lint_violation", "unused 'x'", "a.py:1:1")]
    entries = [item.fingerprint for item in fingerprints(findings, SourceLines(SOURCE))]
    asked: list[int] = []

    def renames() -> dict[str, list[str]]:
        asked.append(1)
        return {}

    assert match(BaselineIndex(entries), table_of(findings), renames).new == 0
    assert asked == []  # all known: git is never started
    moved = [Finding("b.py:3:1:F841", "lint_violation", "other", "b.py:3:1")]
    assert match(BaselineIndex(entries), table_of(moved), renames).new == 1
    assert asked == [1]


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(st.lists(finding, max_size=30), st.data())
def test_the_spool_writes_the_bytes_the_list_encoder_writes(
        findings: list[Finding], data: st.DataObject) -> None:
    known = data.draw(st.lists(st.booleans(), min_size=len(findings), max_size=len(findings)))
    listed = fingerprints(findings, SourceLines(SOURCE))
    expected = b"".join(encode_findings("ruff", findings, listed, known))
    with tempfile.TemporaryDirectory() as where:
        spool = FindingsSpool(os.path.join(where, ".spool"))
        table = table_of(findings)
        for index, item in enumerate(findings):
            spool.add(item, table.line_hash(index))
        assert b"".join(spool.encode("ruff", table.fingerprints(), known)) == expected
        spool.discard()
        assert os.listdir(where) == []


def test_a_spool_that_cannot_be_made_says_why_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".spool").symlink_to(tmp_path / "elsewhere")
    spool = FindingsSpool(str(tmp_path / ".spool"))
    spool.add(Finding("x", "k", "m"))
    assert "cannot write .spool" in spool.problem
    assert not (tmp_path / "elsewhere").exists()
    with pytest.raises(OSError, match=r"cannot write \.spool"):
        b"".join(spool.encode("ruff", ["0" * 24 + ":0:" + "0" * 12]))


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
def test_a_table_holds_about_42_bytes_a_finding() -> None:
    import tracemalloc

    findings = (Finding(f"a.py:{i % 5 + 1}:1:F{i % 7}", "lint_violation", f"m {i}",
                        f"a.py:{i % 5 + 1}:1") for i in range(20_000))
    tracemalloc.start()
    table = table_of(list(findings)[:0])  # warm the caches' types
    start = tracemalloc.take_snapshot()
    table = IdentityTable(SourceLines(SOURCE))
    for item in (Finding(f"a.py:{i % 5 + 1}:1:F{i % 7}", "lint_violation", "m",
                         f"a.py:{i % 5 + 1}:1") for i in range(20_000)):
        table.add(item)
    grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(
        start, "filename"))
    tracemalloc.stop()
    assert len(table) == 20_000
    assert grown < 20_000 * 60  # 42 bytes a row, and the bytearray's slack


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
def test_a_table_spilling_its_line_hashes_holds_26_bytes_a_finding_at_n_and_4n(
        tmp_path: Path) -> None:
    """The line hashes (16 bytes a finding, read only for a renamed file) go to a private
    file: what stays in memory is primary, secondary, line and path number, at any size;
    each line hash and renamed key still reads back as a table in memory gives it."""
    import tracemalloc

    def grown(count: int, spill: Path | None) -> tuple[int, IdentityTable]:
        items = [Finding(f"f{i // 50}.py:{i % 5 + 1}:1:F{i % 7}", "lint_violation", f"m{i % 3}",
                         f"f{i // 50}.py:{i % 5 + 1}:1") for i in range(count)]
        table_of(items[:1])  # warm the caches' types
        tracemalloc.start()
        start = tracemalloc.take_snapshot()
        table = IdentityTable(SourceLines(SOURCE), None if spill is None else str(spill))
        for item in items:
            table.add(item)
        size = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(
            start, "filename"))
        tracemalloc.stop()
        return size, table

    small, _ = grown(5_000, tmp_path / "small")
    large, table = grown(20_000, tmp_path / "large")
    in_memory, kept = grown(20_000, None)
    assert large - small < 15_000 * 40, (small, large)  # 26 bytes a row, slack, paths
    assert large < in_memory - 20_000 * 14, (large, in_memory)  # the line hashes are not
    assert not (tmp_path / "large").exists()  # removed at once, the descriptor kept
    for index in (0, 1, 4_095, 4_096, 12_345, 19_999):
        assert table.line_hash(index) == kept.line_hash(index)
        assert table.retried(index, "old.py") == kept.retried(index, "old.py")
        assert table.fingerprint(index) == kept.fingerprint(index)
    table.discard()
    assert os.listdir(tmp_path) == []


def test_a_spill_file_that_cannot_be_made_keeps_the_line_hashes_in_memory(
        tmp_path: Path) -> None:
    (tmp_path / "spill").symlink_to(tmp_path / "elsewhere")
    table = IdentityTable(SourceLines(SOURCE), str(tmp_path / "spill"))
    items = [Finding(f"a.py:{i % 3 + 1}:1:F401", "k", f"m{i}", f"a.py:{i % 3 + 1}:1")
             for i in range(5_000)]
    for item in items:
        table.add(item)
    assert not (tmp_path / "elsewhere").exists()
    listed = fingerprints(items, SourceLines(SOURCE))
    assert [table.line_hash(i) for i in range(len(table))] == [
        item.inner.hex() for item in listed]
    table.discard()


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
def test_numbering_the_table_holds_one_files_sort_keys_not_the_runs() -> None:
    """A primary hash includes the path, so occurrences are counted file by file: 20,000
    findings in 400 files sort 50 keys at a time (all at once they were ~60 bytes each)."""
    import tracemalloc

    table = IdentityTable(SourceLines(SOURCE))
    for i in range(20_000):
        path = f"f{i % 400}.py"
        table.add(Finding(f"{path}:{i % 3 + 1}:1:F401", "lint_violation", "m",
                          f"{path}:{i % 3 + 1}:1"))
    tracemalloc.start()
    table.number()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert table.key(0)[-4:] == bytes(4)  # numbered
    assert peak < 20_000 * 8 + 20_000 * 20  # the occurrences list, and the files' rows


def test_a_table_whose_rows_are_on_disk_reads_back_what_one_in_memory_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a block, the rows (26 bytes a finding) go to a private file beside the line
    hashes: memory stays a block however many findings there are, and every field, the
    numbering (a file met again included) and matching read back as in memory."""
    import tracemalloc

    from ckdn.identity import _fingerprint

    row = _fingerprint.ROW
    monkeypatch.setattr(_fingerprint, "_ROWS_BLOCK", row * 7)
    monkeypatch.setattr(_fingerprint, "_SPILL_BLOCK", 16 * 7)
    monkeypatch.setattr(_fingerprint, "_CACHED", row * 20)  # a cached block outgrown
    monkeypatch.setattr(_fingerprint, "_READ_BLOCK", row * 11)
    # files met again (f0..f3 interleaved), equal lines, lines out of order
    items = [Finding(f"f{i // 7 % 4}.py:{(i * 5) % 9 + 1}:1:F{i % 3}", "lint_violation",
                     f"m{i % 2}", f"f{i // 7 % 4}.py:{(i * 5) % 9 + 1}:1")
             for i in range(3_000)]
    kept = table_of(items)
    table_of(items[:1])  # warm the caches' types
    tracemalloc.start()
    start = tracemalloc.take_snapshot()
    table = IdentityTable(SourceLines(SOURCE), str(tmp_path / "spill"))
    for position, item in enumerate(items):
        table.add(item)
        # as the tap asks of the row just added (a block read back, then grown on disk)
        assert table.path(position) == kept.path(position)
        assert table.line_hash(position) == kept.line_hash(position)
    held = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(
        start, "filename"))
    tracemalloc.stop()
    assert held < 3_000 * 8, held  # neither rows (26) nor line hashes (16) a finding
    assert os.listdir(tmp_path) == []  # both files removed at once, their descriptors kept
    assert list(table.fingerprints()) == list(kept.fingerprints())
    assert list(table.keys()) == list(kept.keys())
    assert table.records() == kept.records()
    assert table.columns() == kept.columns()
    for index in (*range(0, 3_000, 97), 6, 7, 2_999):
        assert table.key(index) == kept.key(index)
        assert table.key_at_zero(index) == kept.key_at_zero(index)
        assert table.secondary(index) == kept.secondary(index)
        assert table.path(index) == kept.path(index)
        assert table.line(index) == kept.line(index)
        assert table.fingerprint(index) == kept.fingerprint(index)
        assert table.retried(index, "old.py") == kept.retried(index, "old.py")
    listed = fingerprints(items, SourceLines(SOURCE))
    assert list(table.fingerprints()) == [item.fingerprint for item in listed]
    entries = [item.fingerprint for item in listed[::3]]
    assert match(entries, table).flags == match(entries, listed).flags
    table.discard()
