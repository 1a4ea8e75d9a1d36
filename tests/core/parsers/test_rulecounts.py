"""Per-rule counts (``by_rule``) in bounded memory, whatever rules a report names."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from ckdn.parsers._rulecounts import MAX_RULES, RULE_WIDTH, RuleCounts

_RULES = st.lists(st.one_of(st.sampled_from(["E501", "F401", "no-eval"]),
                            st.text(max_size=RULE_WIDTH * 2)), max_size=600)


@given(_RULES)
def test_every_result_is_counted_once_and_the_table_stays_bounded(rules: list[str]) -> None:
    counts = RuleCounts()
    for rule in rules:
        counts.add(rule)
    summary = counts.summary()
    by_rule = summary["by_rule"]
    assert isinstance(by_rule, dict)
    assert len(by_rule) <= MAX_RULES
    omitted = summary.get("by_rule_omitted", 0)
    assert isinstance(omitted, int)
    assert sum(by_rule.values()) + omitted == len(rules)
    # a longer name keeps its first RULE_WIDTH characters and says how many it lost
    assert all(len(str(getattr(name, "body", name))) <= RULE_WIDTH for name in by_rule)
    assert all(len(name) <= RULE_WIDTH or name.endswith(" chars]") for name in by_rule)
    short = Counter(rule for rule in rules if len(rule) <= RULE_WIDTH)
    if len(set(rules)) <= MAX_RULES:
        assert "by_rule_omitted" not in summary
        for rule, n in short.items():
            assert by_rule[rule] == n
    assert list(by_rule) == sorted(by_rule)


def test_ten_thousand_distinct_rules_keep_the_first_two_hundred_and_count_the_rest() -> None:
    counts = RuleCounts()
    for i in range(10_000):
        counts.add(f"R{i:05d}")
    counts.add("R00000")
    summary = counts.summary()
    assert summary["by_rule_omitted"] == 10_000 - MAX_RULES
    by_rule = summary["by_rule"]
    assert isinstance(by_rule, dict)
    assert len(by_rule) == MAX_RULES
    assert next(iter(by_rule.items())) == ("R00000", 2)
