"""The shard merge's rules alone: dedupe by fingerprint, summaries, conflicting outcomes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ckdn.identity import FindingRow
from ckdn.identity.merge import dedupe, merge_summaries, outcome_conflicts
from ckdn.parsers.outcomes import OUTCOMES, worse


def row(fingerprint: str, ident: str = "a.py:1:1:F401") -> FindingRow:
    return FindingRow(fingerprint, ident, "lint_violation", "a.py:1:1", "m")


PRINT = st.builds(lambda p, o: f"{p:024x}:{o}:{0:012x}",
                  st.integers(0, 5), st.integers(0, 2))


@given(st.lists(st.lists(PRINT, max_size=8), max_size=5))
def test_dedupe_keeps_every_distinct_fingerprint_once_in_first_seen_order(
        groups: list[list[str]]) -> None:
    merged = [r.fingerprint for r in dedupe([[row(p) for p in g] for g in groups])]
    first_seen = list(dict.fromkeys(p for g in groups for p in g))
    assert merged == first_seen


def test_dedupe_keeps_a_second_copy_of_a_finding_which_has_another_occurrence_index() -> None:
    one = [row("a" * 24 + ":0:" + "b" * 12)]
    two = [row("a" * 24 + ":0:" + "b" * 12), row("a" * 24 + ":1:" + "b" * 12)]
    assert len(dedupe([one, two])) == 2


def test_summaries_sum_counts_merge_objects_and_drop_values_the_shards_disagree_on() -> None:
    merged, dropped = merge_summaries([
        {"counts": {"tests": 3, "failures": 1}, "by_rule": {"F401": 2}, "tool": "ruff",
         "coverage": {"percent": 60.0}},
        {"counts": {"tests": 4, "failures": 0}, "by_rule": {"E501": 1}, "tool": "ruff",
         "coverage": {"percent": 80.0}},
    ])
    assert merged == {"counts": {"tests": 7, "failures": 1}, "by_rule": {"F401": 2, "E501": 1},
                      "tool": "ruff", "coverage": {}}
    assert dropped == ["coverage.percent"]


def test_a_boolean_is_not_a_count() -> None:
    merged, dropped = merge_summaries([{"flag": True}, {"flag": True}, {"flag": False}])
    assert merged == {}
    assert dropped == ["flag"]


OUTCOME = st.sampled_from(OUTCOMES)
SHARD = st.one_of(st.none(), st.dictionaries(st.sampled_from("abcdef"), OUTCOME, max_size=6))


@given(st.lists(SHARD, max_size=5))
def test_a_conflict_is_exactly_a_test_known_shards_report_with_two_outcomes(
        shards: list[dict[str, str] | None]) -> None:
    conflicts, total, repeated = outcome_conflicts(shards)
    said: dict[str, set[str]] = {}
    ran: dict[str, int] = {}
    for outcomes in shards:
        for ident, outcome in (outcomes or {}).items():
            said.setdefault(ident, set()).add(outcome)
            ran[ident] = ran.get(ident, 0) + 1
    expected = sorted(i for i, seen in said.items() if len(seen) > 1)
    assert [c.id for c in conflicts] == expected[:20]
    assert total == len(expected)
    assert repeated == sum(1 for count in ran.values() if count > 1)
    for conflict in conflicts:
        assert set(conflict.outcomes) == said[conflict.id]


def test_a_conflict_names_each_outcome_and_the_shards_that_reported_it() -> None:
    conflicts, _, _ = outcome_conflicts([{"t::x": "passed"}, None, {"t::x": "failed"}])
    assert conflicts[0].describe(["s1", "s2", "s3"]) == "t::x: failed in s3; passed in s1"


@given(OUTCOME, OUTCOME)
def test_the_worse_outcome_is_symmetric_and_error_is_the_worst(a: str, b: str) -> None:
    assert worse(a, b) == worse(b, a)
    assert worse(a, "error") == "error"
    assert worse(a, "passed") == a


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


@given(st.lists(st.dictionaries(st.sampled_from("abc"), JSON, max_size=3), max_size=4))
def test_any_summaries_merge_without_error_and_every_count_is_the_sum(
        summaries: list[dict[str, object]]) -> None:
    merged, dropped = merge_summaries(summaries)
    for key, value in merged.items():
        present = [s[key] for s in summaries if key in s]
        if type(value) is int and all(type(p) is int for p in present):
            assert value == sum(present)  # type: ignore[arg-type]
    assert set(merged).isdisjoint(dropped)
