"""Pairing two runs' fingerprints: the baseline's passes, and counts that add up."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ckdn.app._stored.diff import classify
from ckdn.identity import FindingRow, Fingerprinted, match
from ckdn.identity.diff import pair

# few distinct parts, so that heads and secondaries collide as often as they can
PRINTS = st.builds(lambda p, o, s: f"{p * 24}:{o}:{s * 12}",
                   st.sampled_from("abc"), st.integers(0, 2), st.sampled_from("01"))
RUNS = st.lists(PRINTS, max_size=12)
#: What one real run holds: PRIMARY:OCCURRENCE is unique in it (the occurrence index).
REAL_RUNS = st.lists(PRINTS, max_size=12, unique_by=lambda p: p.rpartition(":")[0])


def identity(fingerprint: str) -> Fingerprinted:
    """A current-side identity holding exactly ``fingerprint`` (what match compares)."""
    primary, occurrence, secondary = fingerprint.split(":")
    item = Fingerprinted("F401", "app.py", 1, "import os")
    item.primary, item.occurrence, item.secondary = primary, int(occurrence), secondary
    return item


def rows(prints: list[str], place: int) -> list[FindingRow]:
    return [FindingRow(p, f"id{i}", "lint_violation", f"app.py:{i + place}", "m")
            for i, p in enumerate(prints)]


@given(before=RUNS, after=RUNS)
def test_pairing_knows_exactly_what_the_baseline_match_knows(before: list[str],
                                                             after: list[str]) -> None:
    paired = pair(before, after)
    matched = match(before, [identity(p) for p in after])
    assert [index >= 0 for index in paired] == matched.known
    left = [entry for index, entry in enumerate(before) if index not in paired]
    assert sorted(left) == matched.stale


@given(before=RUNS, after=RUNS)
def test_no_earlier_finding_is_paired_twice(before: list[str], after: list[str]) -> None:
    given_out = [index for index in pair(before, after) if index >= 0]
    assert len(given_out) == len(set(given_out))
    assert all(0 <= index < len(before) for index in given_out)


@given(before=REAL_RUNS, after=REAL_RUNS, shift=st.integers(0, 1), top=st.integers(1, 5))
def test_a_finding_in_both_runs_is_never_new_or_fixed_and_the_counts_add_up(
        before: list[str], after: list[str], shift: int, top: int) -> None:
    counts, lists = classify(rows(before, 0), rows(after, shift), top)
    assert counts["new"] + counts["unchanged"] + counts["moved"] == len(after)
    assert counts["fixed"] + counts["unchanged"] + counts["moved"] == len(before)
    both = set(before) & set(after)
    assert not {e["fingerprint"] for e in lists["new"] + lists["fixed"]} & both
    for name, entries in lists.items():
        assert len(entries) == min(top, counts[name])


def test_a_second_copy_of_a_finding_is_new_and_an_edited_line_is_still_the_same() -> None:
    known = "a" * 24 + ":0:" + "1" * 12
    second = "a" * 24 + ":1:" + "1" * 12
    edited = "b" * 24 + ":0:" + "1" * 12  # the flagged line changed; rule, path, message not
    assert pair([known], [known, second]) == [0, -1]
    assert pair([known], [edited]) == [0]
