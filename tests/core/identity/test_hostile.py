"""Identity on hostile input: any baseline bytes, any finding text, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.errors import ConfigError
from ckdn.identity import SourceLines, fingerprints, match, read_baseline
from ckdn.parsers.base import Finding

_JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                        lambda kids: st.lists(kids, max_size=4)
                        | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=12)


@given(data=st.one_of(st.binary(max_size=300),
                      _JSONISH.map(lambda v: json.dumps(v).encode()),
                      st.builds(lambda checks: json.dumps(
                          {"schema": "ckdn.baseline/1", "checks": checks}).encode(), _JSONISH)))
def test_any_bytes_are_a_baseline_or_one_line_refusal(
        tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("b") / "ckdn.baseline.json"
    path.write_bytes(data)
    refusal = ""
    try:
        got = read_baseline(str(path), "ckdn.baseline.json")
    except ConfigError as exc:
        refusal = str(exc)
    if refusal:
        assert "\n" not in refusal
        assert refusal.startswith("[run] baseline: ckdn.baseline.json ")
    else:
        assert all(isinstance(v, list) for v in got.checks.values())


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@given(findings=st.lists(st.builds(
    Finding, st.text(max_size=40), st.text(max_size=10), st.text(max_size=200),
    st.one_of(st.none(), st.text(max_size=40),
              st.builds(lambda p, n: f"{p}:{n}", st.sampled_from(["a.py", "../x", "/etc/hostname",
                                                                  "nope.py", ""]),
                        st.integers(-3, 10**12).map(str) | st.just("9" * 5000)))),
    max_size=20),
       entries=st.lists(st.text(max_size=60), max_size=10))
def test_any_findings_get_fingerprints_and_match_any_entries(
        tmp_path_factory: pytest.TempPathFactory, findings: list[Finding],
        entries: list[str]) -> None:
    root = tmp_path_factory.mktemp("src")
    (root / "a.py").write_text("x = 1\n\ty  =  2\n")
    ids = fingerprints(findings, SourceLines(str(root)))
    assert len(ids) == len(findings)
    assert all(len(i.fingerprint.split(":")) == 3 for i in ids)
    matched = match([*entries, *(i.fingerprint for i in ids[:2])], ids)
    assert len(matched.known) == len(findings)
    assert all(matched.known[:2])


def test_a_fifo_or_a_huge_file_in_a_location_is_not_read(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.py")
    finding = Finding("pipe.py:1:E1", "lint_violation", "E1 boom", "pipe.py:1")
    (one,) = fingerprints([finding], SourceLines(str(tmp_path)))  # returns, never blocks
    (two,) = fingerprints([Finding("pipe.py:1:E1", "lint_violation", "E1 boom", None)],
                          SourceLines(str(tmp_path)))
    assert one.fingerprint.split(":")[0] != two.fingerprint.split(":")[0]  # the path differs
