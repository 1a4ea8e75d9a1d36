"""Shard plans alone: the split, its id, a shard's selection, and every way shards can fail to
run a plan exactly once (1,000 random mutations, each caught)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.errors import UsageError
from ckdn.identity.plan import (
    Plan,
    ShardRecord,
    check_shards,
    hashed_shard,
    make_plan,
    read_plan,
    read_shard_record,
    select,
    superseded,
)
from ckdn.schema import load_schema


def suite(count: int, seed: int = 0) -> dict[str, float | None]:
    rng = random.Random(seed)
    return {f"tests/test_{i // 10}.py::test_{i}": rng.uniform(0.01, 2.0) for i in range(count)}


def test_a_plan_puts_each_test_in_exactly_one_shard() -> None:
    plan = make_plan("tests", suite(100), 4)
    placed = [ident for shard in plan.shards for ident in shard]
    assert sorted(placed) == sorted(suite(100))
    assert len(placed) == len(set(placed))


def test_the_same_tests_and_durations_make_the_same_plan_in_any_order() -> None:
    tests = suite(50)
    shuffled = dict(sorted(tests.items(), key=lambda item: item[1] or 0.0))
    assert make_plan("tests", tests, 3).document() == make_plan("tests", shuffled, 3).document()


def test_the_plan_id_changes_with_the_tests_the_durations_and_the_number_of_shards() -> None:
    tests = suite(30)
    first = make_plan("tests", tests, 3).plan_id
    assert make_plan("tests", tests, 2).plan_id != first
    assert make_plan("tests", {**tests, "tests/test_new.py::test_x": 1.0}, 3).plan_id != first
    slower = dict(tests)
    slower["tests/test_0.py::test_0"] = 9.0
    assert make_plan("tests", slower, 3).plan_id != first


def test_longest_tests_go_first_onto_the_least_loaded_shard() -> None:
    plan = make_plan("t", {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 2.0}, 2)
    assert plan.shards == [["a", "d", "e"], ["b", "c"]]  # e: a tie, the lower shard
    assert plan.seconds == [9.0, 7.0]


def test_a_test_without_a_duration_weighs_the_median_of_the_timed_ones() -> None:
    plan = make_plan("t", {"a": 1.0, "b": 3.0, "c": 10.0, "d": None}, 2)
    assert plan.default_seconds == 3.0
    assert sum(plan.seconds) == pytest.approx(17.0)


@pytest.mark.parametrize(("tests", "shards"), [(3, 4), (0, 1)])
def test_fewer_tests_than_shards_is_refused_never_an_empty_shard(tests: int,
                                                                 shards: int) -> None:
    with pytest.raises(UsageError, match="a shard would run nothing"):
        make_plan("t", suite(tests), shards)


@pytest.mark.parametrize("shards", [2, 4, 8])
def test_with_known_durations_and_20n_tests_the_slowest_shard_is_within_110_percent(
        shards: int) -> None:
    for seed in range(20):
        plan = make_plan("t", suite(20 * shards, seed), shards)
        mean = sum(plan.seconds) / shards
        assert max(plan.seconds) <= 1.10 * mean


def test_the_plan_document_validates_and_reads_back_as_the_same_plan() -> None:
    plan = make_plan("tests", suite(40), 4)
    document = json.loads(json.dumps(plan.document()))
    jsonschema.Draft202012Validator(load_schema("ckdn.plan/1")).validate(document)
    again = read_plan(document, "plan.json")
    assert again.document() == plan.document()


@pytest.mark.parametrize("broken", [
    lambda d: d.update(schema="ckdn.plan/2"),
    lambda d: d["shards"][1].update(index=3),
    lambda d: d["shards"][0]["tests"].append(d["shards"][1]["tests"][0]),
    lambda d: d.update(tests=d["tests"] + 1),
    lambda d: d.update(total=5),
    lambda d: d["shards"][0].update(count=0),
])
def test_a_document_that_is_not_a_plan_is_refused_in_one_line(broken: object) -> None:
    document = make_plan("tests", suite(20), 2).document()
    broken(document)  # type: ignore[operator]
    with pytest.raises(UsageError) as caught:
        read_plan(document, "plan.json")
    assert caught.value.message.startswith("plan.json: not a ckdn.plan/1 document")


def test_shards_of_a_plan_select_disjoint_parts_covering_every_collected_test() -> None:
    plan = make_plan("tests", suite(60), 4)
    collected = [*sorted(suite(60)), "tests/test_new.py::test_a", "tests/test_new.py::test_b"]
    parts = [select(plan, collected, k, 4) for k in range(1, 5)]
    chosen = [ident for part in parts for ident in part.selected]
    assert sorted(chosen) == sorted(collected)
    assert all(part.deselected == len(collected) - len(part.selected) for part in parts)
    unplanned = sorted(ident for part in parts for ident in part.unplanned)
    assert unplanned == ["tests/test_new.py::test_a", "tests/test_new.py::test_b"]


def test_an_unplanned_test_lands_in_its_hashed_shard_on_every_machine() -> None:
    assert hashed_shard("tests/test_x.py::test_y", 4) == hashed_shard("tests/test_x.py::test_y", 4)
    counts = [0] * 4
    for i in range(4000):
        counts[hashed_shard(f"t::{i}", 4) - 1] += 1
    assert min(counts) > 800


def test_a_planned_test_no_longer_collected_is_named_by_its_shard() -> None:
    plan = make_plan("t", {"a": 1.0, "b": 1.0}, 2)
    part = select(plan, ["b"], plan.shard_of["a"], 2)
    assert part.gone == ["a"]
    assert part.selected == []


def test_a_shard_of_another_number_of_shards_than_the_plan_is_refused() -> None:
    plan = make_plan("t", suite(10), 2)
    with pytest.raises(UsageError, match="the plan has 2 shards"):
        select(plan, list(suite(10)), 1, 3)


# --------------------------------------------------------------- the merge's checks


def honest(plan: Plan, collected: list[str]) -> list[tuple[str, ShardRecord | None,
                                                           dict[str, str] | None]]:
    out: list[tuple[str, ShardRecord | None, dict[str, str] | None]] = []
    for k in range(1, plan.total + 1):
        part = select(plan, collected, k, plan.total)
        record = read_shard_record(json.loads(json.dumps(part.record())))
        out.append((f"s{k}", record, dict.fromkeys(part.selected, "passed")))
    return out


def test_shards_that_ran_the_plan_exactly_once_make_no_problem() -> None:
    plan = make_plan("t", suite(40), 4)
    problems, notes = check_shards(plan, honest(plan, list(suite(40))))
    assert problems == []
    assert notes == []


def test_unplanned_tests_the_shards_declared_are_listed_not_problems() -> None:
    plan = make_plan("t", suite(40), 4)
    problems, notes = check_shards(plan, honest(plan, [*suite(40), "tests/new.py::test_n"]))
    assert problems == []
    assert any("tests/new.py::test_n" in note and "unplanned" in note for note in notes)


def test_a_shard_cannot_excuse_another_shards_test_as_no_longer_collected() -> None:
    plan = make_plan("t", suite(20), 2)
    shards = honest(plan, list(suite(20)))
    _name, record, outcomes = shards[1]
    assert record is not None
    assert outcomes is not None
    theirs = plan.shards[0][0]
    record.gone.append(theirs)
    first = shards[0][2]
    assert first is not None
    del first[theirs]
    problems, _notes = check_shards(plan, shards)
    assert any("run by no shard" in p and theirs in p for p in problems)


def test_a_run_marked_as_a_rerun_replaces_the_other_runs_of_its_shard_only() -> None:
    def record(index: int, rerun: bool = False) -> ShardRecord:
        return ShardRecord("p", index, 2, unplanned=[], gone=[], rerun=rerun)

    assert superseded([record(1), record(2), record(1, rerun=True)]) == {0: 2}
    assert superseded([record(1), record(1)]) == {}  # no mark: both count (a problem)
    assert superseded([record(1, rerun=True), record(2)]) == {}
    assert superseded([None, record(1), record(1, True), record(1, True)]) == {1: 3, 2: 3}


MUTATIONS = ("drop", "duplicate", "unplanned", "missing", "other_plan", "twice")


def mutate(plan: Plan, shards: list[tuple[str, ShardRecord | None, dict[str, str] | None]],
           kind: str, rng: random.Random) -> None:
    k = rng.randrange(len(shards))
    name, record, outcomes = shards[k]
    assert record is not None
    assert outcomes is not None
    if kind == "drop" or (kind == "duplicate" and len(shards) == 1):
        candidates = [s for s in shards if s[2]]
        victim = rng.choice(candidates)[2]
        assert victim is not None
        del victim[rng.choice(sorted(victim))]
    elif kind == "duplicate" and len(shards) > 1:
        other = shards[(k + 1) % len(shards)][2]
        assert other is not None
        outcomes[rng.choice(sorted(other))] = "passed"
    elif kind == "unplanned":
        outcomes[f"tests/test_ghost.py::test_{rng.randrange(10**6)}"] = "passed"
    elif kind == "missing":
        del shards[k]
    elif kind == "other_plan":
        record.plan_id = "0" * 16 if record.plan_id != "0" * 16 else "1" * 16
    elif kind == "twice":
        shards.append((name + "-again", record, dict(outcomes)))


# Over the profile's budget on purpose: the claim is a thousand mutations, and each is a
# pure plan check of a few ms (no process, no file). Deadline and order: the profile's.
@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
@settings(max_examples=1000)
@given(st.integers(0, 2**32), st.integers(2, 6), st.integers(0, 2**32),
       st.sampled_from(MUTATIONS))
def test_a_thousand_random_mutations_of_a_plans_shards_are_all_caught(
        suite_seed: int, total: int, seed: int, kind: str) -> None:
    rng = random.Random(seed)
    tests = suite(rng.randrange(total, 12 * total), suite_seed)
    plan = make_plan("t", tests, total)
    shards = honest(plan, list(tests))
    assert check_shards(plan, shards) == ([], [])
    mutate(plan, shards, kind, rng)
    problems, _notes = check_shards(plan, shards)
    assert problems, kind
