"""The streaming JSON reader (``ckdn.parsers._jsonstream``), held to ``json.loads``.

Whatever mix of walking and decoding a parser uses, it reads what ``json.loads``
reads, refuses what it refuses, and refuses a value past its cap instead of
decoding it. The reader's memory figures are in ``test_reading_memory.py``.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers._jsonstream import MAX_DEPTH, JsonStream, TooLarge
from ckdn.parsers.bandit import BanditParser
from ckdn.parsers.base import BaseParser
from ckdn.parsers.pip_audit import PipAuditParser
from ckdn.parsers.pylint_json2 import PylintParser
from ckdn.parsers.ruff_json import RuffParser
from ckdn.parsers.sarif import SarifParser
from ckdn.reconcile import PASS, Exit, reconcile
from ckdn.testing import run_parser as parse_run
from tests.timing import LINEAR_GROWTH, growth

from .conftest import FIXTURES

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=25)


def walk(reader: JsonStream, rnd: random.Random, *, leave: bool = False) -> Any:
    """Read the next value by a random mix of walking and decoding (and, with ``leave``,
    leaving some members unread, which the reader must then step over)."""
    first = reader.peek()
    if first == "[" and rnd.random() < 0.6:
        items = []
        for _ in reader.elements():
            reader.peek()
            items.append("LEFT" if leave and rnd.random() < 0.3 else walk(reader, rnd,
                                                                            leave=leave))
        return items
    if first == "{" and rnd.random() < 0.6:
        members = {}
        for key in reader.members():
            reader.peek()
            members[key] = "LEFT" if leave and rnd.random() < 0.3 else walk(reader, rnd,
                                                                              leave=leave)
        return members
    return reader.value()


def left_out(value: Any, rnd: random.Random) -> Any:
    """``value`` as :func:`walk` with ``leave`` reads it, making the same random choices."""
    if not isinstance(value, list | dict) or rnd.random() >= 0.6:
        return value
    if isinstance(value, list):
        return ["LEFT" if rnd.random() < 0.3 else left_out(v, rnd) for v in value]
    return {k: "LEFT" if rnd.random() < 0.3 else left_out(v, rnd) for k, v in value.items()}


@given(value=_values, indent=st.sampled_from([None, 0, 2]), chunk=st.integers(1, 40),
       seed=st.integers(0, 99), ascii_only=st.booleans())
def test_any_walk_of_a_document_reads_what_json_loads_reads(
        value: Any, indent: int | None, chunk: int, seed: int, ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    reader = JsonStream(io.StringIO(text), chunk=chunk)
    assert walk(reader, random.Random(seed)) == json.loads(text)
    reader.finish()
    skipped = JsonStream(io.StringIO(text), chunk=chunk)
    skipped.skip()
    skipped.finish()


@given(value=_values, chunk=st.integers(1, 40), seed=st.integers(0, 99))
def test_members_and_items_left_unread_are_stepped_over(value: Any, chunk: int,
                                                        seed: int) -> None:
    text = json.dumps(value, indent=1)
    reader = JsonStream(io.StringIO(text), chunk=chunk)
    assert walk(reader, random.Random(seed), leave=True) == left_out(json.loads(text),
                                                                     random.Random(seed))
    reader.finish()


@given(text=st.text(alphabet='[]{}",:0123456789.eE+-tfnrulas \\\n', max_size=40),
       chunk=st.integers(1, 16), seed=st.integers(0, 9))
def test_what_json_loads_refuses_is_refused_whatever_the_walk(text: str, chunk: int,
                                                               seed: int) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = ValueError
    reader = JsonStream(io.StringIO(text), chunk=chunk)
    try:
        got = walk(reader, random.Random(seed))
        reader.finish()
    except ValueError:
        got = ValueError
    assert got == expected


@given(value=_values, chunk=st.integers(1, 40), cap=st.integers(1, 30))
def test_a_value_past_the_cap_is_refused_and_any_other_read(value: Any, chunk: int,
                                                            cap: int) -> None:
    text = json.dumps(value)
    try:
        got = JsonStream(io.StringIO(text), chunk=chunk, cap=cap).value()
    except TooLarge:
        assert len(text) > cap
    else:
        assert len(text) <= cap
        assert got == value or text == json.dumps(got)


@given(keys=st.lists(st.text(max_size=12), max_size=6, unique=True), chunk=st.integers(1, 40),
       cap=st.integers(1, 16), ascii_only=st.booleans(), pretty=st.booleans())
def test_a_property_name_past_the_cap_is_refused_and_every_other_read(
        keys: list[str], chunk: int, cap: int, ascii_only: bool, pretty: bool) -> None:
    text = json.dumps(dict.fromkeys(keys, 1), ensure_ascii=ascii_only, indent=2 if pretty else None)
    reader = JsonStream(io.StringIO(text), chunk=chunk, cap=cap)
    too_long = [k for k in keys if len(json.dumps(k, ensure_ascii=ascii_only)) > cap]
    seen: list[str] = []
    if too_long:
        with pytest.raises(TooLarge):
            seen.extend(reader.members())
        assert seen == keys[:keys.index(too_long[0])]
    else:
        seen.extend(reader.members())
        assert seen == keys
        reader.finish()


def test_a_big_object_is_walked_member_by_member_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Members named plainly are read by one match each and scalars stepped over in C, so the
    walk of a big object (a 32 MiB one in a pyright log: 3.2 s, now 1.5) costs little
    Python a member: counted in peeks, which the general path takes six of a member."""
    text = "{" + ", ".join(f'"key{i}": {i}, "name{i}": "x{i}"' for i in range(1000)) + "}"
    peeks = [0]
    peek = JsonStream.peek

    def counted(self: JsonStream) -> str:
        peeks[0] += 1
        return peek(self)

    monkeypatch.setattr(JsonStream, "peek", counted)
    reader = JsonStream(io.StringIO(text), chunk=1 << 12)
    assert sum(1 for _ in reader.members()) == 2000
    assert peeks[0] < 2000 // 10


def test_a_string_far_past_the_cap_is_skipped_without_holding_it() -> None:
    text = '{"big": "' + "x\\\"" * 3_000_000 + '", "small": 1}'
    reader = JsonStream(io.StringIO(text), chunk=1 << 16)
    seen = {}
    for key in reader.members():
        if key == "small":
            seen[key] = reader.value()
    reader.finish()
    assert seen == {"small": 1}
    with pytest.raises(TooLarge, match="more than 2,097,152 characters"):
        JsonStream(io.StringIO(text)).value()


def test_nesting_too_deep_to_decode_is_refused_not_walked_without_end() -> None:
    text = "[" * 100_000 + "]" * 100_000  # past json's own recursion limit
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_DEPTH}"):
        JsonStream(io.StringIO(text)).skip()
    with pytest.raises(ValueError, match="nested too deeply"):
        JsonStream(io.StringIO(text)).value()


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le",
                                      "utf-16-be", "utf-32"])
def test_a_report_is_read_in_the_encoding_json_load_detects(tmp_path: Path,
                                                            encoding: str) -> None:
    value = {"message": "caf\u00e9 \U0001f600", "n": [1, 2.5, None]}
    path = tmp_path / "report.json"
    path.write_bytes(json.dumps(value, ensure_ascii=False).encode(encoding))
    with open(path, "rb") as handle:
        assert json.load(handle) == value
    with JsonStream.open(path) as reader:
        assert reader.value() == value
        reader.finish()


# --- in the parsers ---------------------------------------------------------------------

PARSERS: dict[str, BaseParser] = {"ruff": RuffParser(), "bandit": BanditParser(),
                                  "pip_audit": PipAuditParser(), "pylint": PylintParser(),
                                  "sarif": SarifParser()}
REAL_BANDIT = (FIXTURES / "bandit" / "issues" / "bandit.json").read_text()


def test_a_report_with_a_key_twice_is_not_the_tools(tmp_path: Path) -> None:
    # json.loads would keep the second "results" and drop the first unseen.
    doubled = REAL_BANDIT.replace('"results": [', '"results": [], "results": [', 1)
    assert json.loads(doubled)["results"]
    result = parse_run(PARSERS["bandit"], 1, files={"bandit.json": doubled.encode()})
    assert not result.parser_ok
    assert "its key 'results' appears twice" in result.notes[0]


@pytest.mark.parametrize(("report", "parser"), [
    ("ruff.json", "ruff"), ("bandit.json", "bandit"), ("pip-audit.json", "pip_audit"),
    ("pylint.json", "pylint"), ("report.sarif", "sarif"),
])
def test_a_report_cut_anywhere_is_never_green(report: str, parser: str) -> None:
    family = {"ruff": "ruff/violations", "bandit": "bandit/issues",
              "pip_audit": "pip_audit/vulnerable", "pylint": "pylint/messages",
              "sarif": "sarif/semgrep"}[parser]
    data = (FIXTURES / family / report).read_bytes()
    for cut in range(0, len(data) - 1, max(1, len(data) // 97)):
        result = parse_run(PARSERS[parser], 0, files={report: data[:cut]})
        assert reconcile(Exit(0), result).status != PASS, (cut, result.notes)


def test_sarif_results_found_by_rule_id_cost_one_look_up_each() -> None:
    # n rules, n results naming theirs by id only (as semgrep does): a scan of the rules per
    # result grows as n * n (20,000 of each: 9.4 s here), a look-up per result as n (0.33 s).
    def sarif(count: int) -> bytes:
        rules = [{"id": f"rule-{i}", "defaultConfiguration": {"level": "error"}}
                 for i in range(count)]
        results = [{"ruleId": f"rule-{count - 1 - i}", "message": {"text": "m"}}
                   for i in range(count)]
        return json.dumps({"version": "2.1.0", "runs": [
            {"results": results, "tool": {"driver": {"name": "x", "rules": rules}}}]}).encode()

    def parse_at(count: int) -> Callable[[], object]:
        data = sarif(count)
        return lambda: parse_run(PARSERS["sarif"], 1, files={"report.sarif": data})

    assert growth(parse_at, 20_000) < LINEAR_GROWTH
    result = parse_run(PARSERS["sarif"], 1, files={"report.sarif": sarif(20_000)})
    assert result.summary["counts"]["error"] == 20_000


def test_an_array_of_small_items_decodes_each_once_across_chunks() -> None:
    # An item cut at the buffer's end fails to decode, and the failure counts the buffer's
    # newlines (JSONDecodeError's line number): a tenth of a 100,000-finding ruff run. The
    # reader reads on before the buffer runs low, so no decode fails and none is repeated.
    items = [{"filename": f"src/m{i}.py", "message": "x" * (i % 50), "row": i}
             for i in range(3000)]
    text = json.dumps(items, indent=2)
    reader = JsonStream(io.StringIO(text), chunk=1 << 13)
    decodes = [0]
    scan = reader._scan

    def counted(buf: str, at: int) -> tuple[Any, int]:
        decodes[0] += 1
        return scan(buf, at)

    reader._scan = counted
    reader._decode = None  # type: ignore[assignment]  # the slow way: never taken here
    assert list(reader.items()) == items
    reader.finish()
    assert len(text) > 20 * (1 << 13)  # many chunk boundaries crossed
    assert decodes[0] == len(items)


def test_an_item_larger_than_the_read_ahead_still_reads_across_chunks() -> None:
    items = [{"message": "y" * 300, "n": i} for i in range(40)]
    text = json.dumps(items)
    assert list(JsonStream(io.StringIO(text), chunk=64).items()) == items
