"""``findings.jsonl`` written as the findings come (no baseline): the same bytes, no table.

The writer numbers one file's findings at a time; whatever order a report lists
them in (by file, by rule, a file met again, a file with more findings than one
group holds), its bytes are those of :func:`encode_findings` over every finding's
identity, and its memory does not grow with the findings.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.identity import FindingsWriter, SourceLines, _writer, encode_findings, fingerprints
from ckdn.parsers.base import Finding


def project(root: Path, files: int, lines: int = 20) -> None:
    for f in range(files):
        (root / f"m{f}.py").write_text("".join(
            f"import x{i % 7}\n" if i % 3 else "\n" for i in range(lines)))


def finding(f: int, line: int, rule: str = "F401") -> Finding:
    where = f"m{f}.py:{line}:1"
    return Finding(f"{where}:{rule}", "lint_violation", f"{rule} `x{line % 7}` unused", where)


def streamed(root: Path, findings: list[Finding]) -> bytes:
    writer = FindingsWriter(str(root / ".spool"), SourceLines(str(root)))
    for item in findings:
        writer.add(item)
    try:
        return b"".join(writer.encode("ruff"))
    finally:
        writer.discard()


def listed(root: Path, findings: list[Finding]) -> bytes:
    return b"".join(encode_findings("ruff", findings,
                                    fingerprints(findings, SourceLines(str(root)))))


#: by file; by rule (every file met again); a file met again after others; lines out of
#: order with copies of one line (occurrences counted in line order); no location at all
ORDERS = {
    "by file": [finding(f, line) for f in range(4) for line in range(1, 21)],
    "by rule": [finding(f, line, rule) for rule in ("F401", "E501") for f in range(4)
                for line in range(1, 21)],
    "file again": [*(finding(0, n) for n in range(1, 9)), *(finding(1, n) for n in range(1, 5)),
                   *(finding(0, n) for n in range(1, 9))],
    "copies": [finding(2, n) for n in (9, 3, 3, 12, 3, 1, 9)],
    "no location": [Finding("pip-audit:a==1", "vulnerability", "GHSA-1", None),
                    Finding("pip-audit:a==1", "vulnerability", "GHSA-1", None),
                    Finding("m0.py", "lint_violation", "whole file", "m0.py")],
}


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_the_streamed_file_is_the_listed_one_byte_for_byte(tmp_path: Path, order: str) -> None:
    project(tmp_path, 4)
    assert streamed(tmp_path, ORDERS[order]) == listed(tmp_path, ORDERS[order])


def test_a_file_with_more_findings_than_a_group_is_numbered_over_all_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_writer, "GROUP", 5)
    project(tmp_path, 1)
    findings = [finding(0, n % 20 + 1) for n in range(23)]  # every line more than once
    assert streamed(tmp_path, findings) == listed(tmp_path, findings)
    assert b":1:" in streamed(tmp_path, findings)  # second copies were numbered


def test_a_file_met_again_and_again_has_every_row_numbered_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_writer, "_RANGES_KEPT", 2)
    project(tmp_path, 3)
    # file 0 in five runs, between them files 1 and 2 split too
    findings = [finding(f, line) for _ in range(5) for f in (0, 1, 0, 2) for line in (3, 1, 3)]
    assert streamed(tmp_path, findings) == listed(tmp_path, findings)


def count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the source files ``os.open`` opens from now on, one entry an open."""
    opened: list[str] = []
    real = os.open

    def counting(path: str, *args: int, **kwargs: Any) -> int:
        if str(path).endswith(".py"):
            opened.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return opened


def test_each_source_file_is_opened_once_per_run_not_once_per_finding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, 100)
    opened = count_opens(monkeypatch)
    # sorted by rule, not by file: each file is met again for every rule
    findings = [finding(f, line, rule) for rule in ("F401", "E501", "W291") for f in range(100)
                for line in range(1, 21, 4)]
    streamed(tmp_path, [*findings, finding(100, 1)])  # and one missing file
    assert len(findings) == 1500
    assert sorted(opened) == sorted({f"m{f}.py" for f in range(101)})


def test_a_files_findings_at_once_open_each_source_file_once_per_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``located_file`` (ruff's way) reads the lines as ``add`` does: once a file a run, the
    files met again for every rule, and writes the lines ``add`` writes."""
    project(tmp_path, 100)
    opened = count_opens(monkeypatch)
    rules = ("F401", "E501", "W291")
    writer = FindingsWriter(str(tmp_path / ".by-file"), SourceLines(str(tmp_path)))
    for rule in rules:
        for f in range(101):  # and one missing file
            writer.located_file(f"m{f}.py", "lint_violation", [
                (line, 1, rule, f"{rule} `x{line % 7}` unused", None)
                for line in range(1, 21, 4)])
    try:
        by_file = b"".join(writer.encode("ruff"))
    finally:
        writer.discard()
    assert sorted(opened) == sorted({f"m{f}.py" for f in range(101)})
    opened.clear()
    assert by_file == streamed(tmp_path, [finding(f, line, rule) for rule in rules
                                          for f in range(101) for line in range(1, 21, 4)])


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@pytest.mark.parametrize("by_file", [False, True])
def test_no_table_grows_with_the_findings_when_no_baseline_is_set(
        tmp_path: Path, by_file: bool) -> None:
    """Ten times the findings (in the same 200 files) cost no more memory: none is held past
    its file, and nothing is kept per finding (a 42-byte table row would be 1.5 MB here)."""
    project(tmp_path, 200)

    def peak(count: int) -> int:
        per_file = count // 200
        findings = (finding(n // per_file, n % 20 + 1) for n in range(count))
        writer = FindingsWriter(str(tmp_path / f".spool{count}"), SourceLines(str(tmp_path)))
        tracemalloc.start()
        try:
            if by_file:  # ruff's way: each file's findings at once, 1,024 at most
                for n in range(0, count, 1024):
                    rows = range(n, min(n + 1024, count))
                    for f in sorted({r // per_file for r in rows}):
                        writer.located_file(f"m{f}.py", "lint_violation", [
                            (r % 20 + 1, 1, "F401", f"F401 `x{(r % 20 + 1) % 7}` unused", None)
                            for r in rows if r // per_file == f])
            for item in findings if not by_file else ():
                writer.add(item)
            for _ in writer.encode("ruff"):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            writer.discard()

    small, large = peak(4_000), peak(40_000)
    assert large < small + 400_000, (small, large)


def test_a_run_without_a_baseline_builds_no_identity_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn.app._running.findings import write_findings
    from ckdn.app._running.parsing import FindingTap
    from ckdn.identity import _fingerprint
    from ckdn.parsers.base import ParseResult
    from ckdn.store import write_atomic as written

    def refused(*_args: object) -> None:
        raise AssertionError("a table was built")

    monkeypatch.setattr(_fingerprint.IdentityTable, "__init__", refused)
    project(tmp_path, 4)

    class Store:
        write_atomic = staticmethod(written)

    tap = FindingTap(str(tmp_path), str(tmp_path), check="ruff", top=3)
    for item in ORDERS["by rule"]:
        tap(item)
    assert tap.count == len(ORDERS["by rule"])
    assert [f.id for f in tap.first] == [f.id for f in ORDERS["by rule"][:3]]
    result = ParseResult(findings=list(tap.first), findings_total=tap.count)
    notes = write_findings(Store(), str(tmp_path), check="ruff",  # type: ignore[arg-type]
                           cwd=str(tmp_path), result=result, gated=None, every=None, tap=tap)
    assert notes == []
    tap.discard()
    assert (tmp_path / "findings.jsonl").read_bytes() == listed(tmp_path, ORDERS["by rule"])
    assert not (tmp_path / ".findings.spool").exists()


@given(lines=st.lists(st.integers(1, 20), max_size=40), files=st.integers(1, 3))
def test_copies_in_any_order_are_numbered_in_line_order(lines: list[int], files: int) -> None:
    """Occurrences are counted as the findings come, and again only for a hash whose lines
    went back: whatever the order, the bytes of the listed file."""
    import tempfile

    found = [finding(index % files, line) for index, line in enumerate(lines)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root, 3)
        assert streamed(root, found) == listed(root, found)


def test_a_file_listed_in_line_order_is_never_counted_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A report lists a file's findings by line: their occurrences, copies and all, are
    # right as they come, and counting a group again was a sixth of the writer's time.
    project(tmp_path, 4)
    again: list[int] = []
    count_again = _writer._count_again

    def counted(group: list[tuple[str, int, str]], hashes: set[str]) -> None:
        again.append(len(hashes))
        count_again(group, hashes)

    monkeypatch.setattr(_writer, "_count_again", counted)
    in_order = [finding(f, line) for f in range(4) for line in (1, 2, 2, 4, 5, 5, 5, 7, 8)]
    assert streamed(tmp_path, in_order) == listed(tmp_path, in_order)
    assert again == []
    back = [finding(0, line) for line in (12, 3, 5, 5)]  # lines 12 and 5 alike: one goes back
    assert streamed(tmp_path, back) == listed(tmp_path, back)
    assert again == [1]


@given(rows=st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 4)), max_size=30),
       again=st.sets(st.sampled_from("abcd")))
def test_a_group_counted_again_is_numbered_as_occurrences_numbers_it(
        rows: list[tuple[str, int]], again: set[str]) -> None:
    """Counting a group again (one pass a hash for a few, one pass for more) gives the hashes
    counted again :func:`occurrences`' numbers, in line order, and leaves the rest alone."""
    head = _writer._HEAD
    primaries = {name: name * 24 for name in "abcd"}
    group = [(primaries[name], line, f"{head}{primaries[name]}:{index * 7}:{index}x{line}")
             for index, (name, line) in enumerate(rows)]
    expected = _writer.occurrences(group)
    hashes = {primaries[name] for name in again}
    before = list(group)
    _writer._count_again(group, hashes)
    for index, (old, new) in enumerate(zip(before, group, strict=True)):
        if old[0] in hashes:
            assert new == (old[0], old[1], f"{head}{old[0]}:{expected[index]}:{index}x{old[1]}")
        else:
            assert new == old
