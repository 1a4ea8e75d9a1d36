"""The packed baseline index and the streamed read of a baseline: the same entries, the same
takes and the same refusals as the dict and the whole read they replace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.errors import ConfigError
from ckdn.identity import (
    BaselineIndex,
    Fingerprinted,
    encode_baseline,
    match,
    read_baseline,
)
from ckdn.identity import _baseline as baseline_module
from ckdn.identity._baseline import read_index

# few distinct parts, so that keys and secondaries collide as often as they can; the
# primaries spread over the buckets (their first bits), the file's order unsorted
PRINTS = st.builds(lambda p, o, s: f"{p * 24}:{o}:{s * 12}",
                   st.sampled_from("0a7f"), st.integers(0, 2), st.sampled_from("01"))
RUNS = st.lists(PRINTS, max_size=14)


def identity(fingerprint: str) -> Fingerprinted:
    primary, occurrence, secondary = fingerprint.split(":")
    item = Fingerprinted("F401", "app.py", 1, "import os")
    item.primary, item.occurrence, item.secondary = primary, int(occurrence), secondary
    return item


def packed(entries: list[str]) -> BaselineIndex:
    """The index packed, however few its entries (past ``DICT_UP_TO`` it always is)."""
    saved, baseline_module.DICT_UP_TO = baseline_module.DICT_UP_TO, -1
    try:
        return BaselineIndex(entries)
    finally:
        baseline_module.DICT_UP_TO = saved


def as_dict(entries: list[str]) -> BaselineIndex:
    """The index turned into the dict it was before it was packed (what placing edits)."""
    index = packed(entries)
    assert isinstance(index.entries, dict)
    return index


@given(before=RUNS, after=RUNS)
def test_the_packed_index_matches_as_the_dict_did(before: list[str], after: list[str]) -> None:
    current = [identity(p) for p in after]
    packed_, plain = match(packed(before), current), match(as_dict(before), current)
    assert packed_.known == plain.known
    assert packed_.stale == plain.stale
    assert packed_.by_pass == plain.by_pass


@given(before=RUNS, taken=RUNS)
def test_the_dict_made_after_some_takes_holds_what_is_left_in_the_files_order(
        before: list[str], taken: list[str]) -> None:
    index, plain = packed(before), as_dict(before)
    for entry in taken:
        key = bytes.fromhex(entry[:24]) + int(entry.split(":")[1]).to_bytes(4, "big")
        assert (key in index) == (key in plain)
        assert index.take(key) == plain.take(key)
    assert len(index) == len(plain)
    assert list(index.entries.items()) == list(plain.entries.items())


def test_records_and_strings_make_the_same_index() -> None:
    prints = [f"{p * 24}:{o}:{s * 12}" for p in "f07" for o in (1, 0) for s in "10"]
    records = b"".join(bytes.fromhex(p[:24]) + int(p.split(":")[1]).to_bytes(4, "big")
                       + bytes.fromhex(p[-12:]) for p in prints)
    saved, baseline_module.DICT_UP_TO = baseline_module.DICT_UP_TO, -1
    try:
        assert BaselineIndex.from_records(records).left() == packed(prints).left() \
            == BaselineIndex(prints).left() == sorted(prints)
    finally:
        baseline_module.DICT_UP_TO = saved
    assert BaselineIndex.from_records(records).left() == sorted(prints)


CHECKS = st.dictionaries(st.sampled_from(["ruff", "mypy", "ü ok"]), RUNS, max_size=3)


@given(checks=CHECKS, compact=st.booleans())
def test_a_streamed_baseline_holds_the_entries_the_whole_read_does(
        tmp_path_factory: pytest.TempPathFactory, checks: dict[str, list[str]],
        compact: bool) -> None:
    path = tmp_path_factory.mktemp("b") / "ckdn.baseline.json"
    if compact:  # json.dumps's own spacing, no newline at the end (as a script writes it)
        path.write_text(json.dumps({"checks": checks, "schema": "ckdn.baseline/1"}))
    else:
        path.write_bytes(encode_baseline(checks))
    whole = read_baseline(str(path)).checks
    for name in ("ruff", "mypy", "ü ok", "absent"):
        assert read_index(str(path), None, name).left() == sorted(whole.get(name, []))


def test_a_written_baseline_is_streamed_in_blocks_never_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prints = [f"{n:024x}:{n % 3 if n % 5 else n * 99_991}:{n:012x}" for n in range(0, 3000, 7)]
    prints.append(f"{7:024x}:0007:{7:012x}")  # leading zeros: the whole read takes them too
    path = tmp_path / "ckdn.baseline.json"
    path.write_bytes(encode_baseline({"ruff": prints, "other": prints[:5]}))
    reads: list[int] = []

    def whole(*args: object) -> object:
        raise AssertionError("read whole")

    monkeypatch.setattr(baseline_module, "read_baseline", whole)
    monkeypatch.setattr(baseline_module, "BLOCK", 64)  # blocks cut through the entries
    real = baseline_module._Stream._more

    def more(self: baseline_module._Stream) -> None:
        reads.append(len(self.buffer) - self.pos)
        real(self)

    monkeypatch.setattr(baseline_module._Stream, "_more", more)
    expected = sorted(f"{p[:24]}:{int(p.split(':')[1])}:{p[-12:]}" for p in prints)
    assert read_index(str(path), None, "ruff").left() == expected
    assert len(reads) > path.stat().st_size // 64
    assert max(reads) <= 64  # what is carried over to the next block is under one block


REFUSED = [
    b'{"schema": "ckdn.baseline/2", "checks": {}}\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": ["nope"]}}\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": ["' + b"a" * 24 + b':0:' + b"b" * 12
    + b'",]}}\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": []}, "extra": 1}\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": []}} trailing\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": [',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": {}}}\n',
    b'{"schema": "ckdn.baseline/1", "checks": {"\xff": []}}\n',
    b'{"schema": "ckdn.baseline/1",\x0c"checks": {}}\n',
    b'[]\n',
    b'',
]


@pytest.mark.parametrize("data", REFUSED)
def test_a_file_the_whole_read_refuses_is_refused_in_the_same_words(tmp_path: Path,
                                                                    data: bytes) -> None:
    path = tmp_path / "ckdn.baseline.json"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as whole:
        read_baseline(str(path), "ckdn.baseline.json")
    with pytest.raises(ConfigError) as streamed:
        read_index(str(path), "ckdn.baseline.json", "ruff")
    assert streamed.value.message == whole.value.message


ODD_BUT_GOOD = [
    # escapes, a key twice (the last one wins), the schema last: the whole read decides
    b'{"checks": {"r\\u0075ff": ["' + b"a" * 24 + b':0:' + b"b" * 12 + b'"]},'
    b' "schema": "ckdn.baseline/1"}',
    b'{"schema": "ckdn.baseline/1", "checks": {"ruff": [], "ruff": ["' + b"a" * 24
    + b':1:' + b"b" * 12 + b'"]}}\n',
    b'\xef\xbb\xbf{"schema": "ckdn.baseline/1", "checks": {"ruff": []}}',
]


@pytest.mark.parametrize("data", ODD_BUT_GOOD)
def test_a_file_in_an_unusual_shape_is_read_as_the_whole_read_reads_it(tmp_path: Path,
                                                                      data: bytes) -> None:
    path = tmp_path / "ckdn.baseline.json"
    path.write_bytes(data)
    assert read_index(str(path), None, "ruff").left() \
        == sorted(read_baseline(str(path)).checks.get("ruff", []))


def test_a_missing_baseline_is_refused_as_before(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        read_index(str(tmp_path / "none.json"), "none.json", "ruff")
