"""Shard plans: plan and select 10,000 tests (target <= 200 ms), the balance of shards with
known durations (target: slowest within 1.10x of the mean), 1,000 mutations all caught.

Prints figures; it is not a timed test. Usage::

    python bench/bench_plan.py              # 10,000 tests, 4 shards
    python bench/bench_plan.py -n 50000 --shards 8 --repeat 7

The time is in this process (plan, then every shard's selection of the whole collected set,
as each job does once) beside a floor measured in the same run: sorting the same
``(duration, id)`` pairs and building one set of the ids, the least any plan must do.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ckdn.identity.plan import check_shards, make_plan, read_shard_record, select
from tests.core.identity.test_plan import MUTATIONS, honest, mutate


def suite(count: int, seed: int) -> dict[str, float | None]:
    rng = random.Random(seed)
    tests: dict[str, float | None] = {}
    for i in range(count):  # a long tail, as real suites have: most quick, a few slow
        tests[f"tests/pkg{i % 37}/test_mod{i // 50}.py::test_case_{i}"] = rng.lognormvariate(
            -3, 1.5)
    return tests


def uniform(count: int, seed: int) -> dict[str, float | None]:
    rng = random.Random(seed)
    return {f"tests/test_{i // 10}.py::test_{i}": rng.uniform(0.01, 2.0) for i in range(count)}


def plan_and_select(tests: dict[str, float | None], shards: int) -> float:
    start = time.perf_counter()
    plan = make_plan("tests", tests, shards)
    collected = list(tests)
    for k in range(1, shards + 1):
        select(plan, collected, k, shards)
    return time.perf_counter() - start


def floor(tests: dict[str, float | None]) -> float:
    start = time.perf_counter()
    ordered = sorted(((s or 0.0, ident) for ident, s in tests.items()), reverse=True)
    ids = {ident for _s, ident in ordered}
    assert len(ids) == len(tests)
    return time.perf_counter() - start


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=10_000, help="tests")
    args.add_argument("--shards", type=int, default=4)
    args.add_argument("--repeat", type=int, default=5)
    opts = args.parse_args()
    print(f"python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f} (1 min)")
    tests = suite(opts.n, 1)
    times = [plan_and_select(tests, opts.shards) for _ in range(opts.repeat)]
    floors = [floor(tests) for _ in range(opts.repeat)]
    best, base = min(times), min(floors)
    print(f"plan + select {opts.n:,} tests into {opts.shards} shards: min {best * 1000:.1f} ms, "
          f"median {statistics.median(times) * 1000:.1f} ms (target <= 200 ms); floor "
          f"(sort + set) {base * 1000:.1f} ms; ratio {best / base:.1f}x")
    for label, spread in (("uniform 0.01-2 s", None), ("long tail (lognormal)", 1.5)):
        worst = bound = 0.0
        for shards in (2, 4, 8, 16):
            for seed in range(10):
                timed = (uniform(20 * shards, seed) if spread is None
                         else suite(20 * shards, seed))
                plan = make_plan("t", timed, shards)
                mean = sum(plan.seconds) / shards
                longest = max(s or 0.0 for s in timed.values())
                worst = max(worst, max(plan.seconds) / mean)
                bound = max(bound, max(plan.seconds) / max(mean, longest))
        print(f"balance, 20xN tests with known durations ({label}), N in 2..16, 10 suites "
              f"each: slowest shard {worst:.3f}x the mean (target <= 1.10x); "
              f"{bound:.3f}x max(mean, the longest test)")
    rng = random.Random(7)
    caught = 0
    for trial in range(1000):
        shards = rng.randint(2, 6)
        tests_n = suite(rng.randrange(shards, 12 * shards), trial)
        plan = make_plan("t", tests_n, shards)
        results = honest(plan, list(tests_n))
        mutate(plan, results, rng.choice(MUTATIONS), rng)
        problems, _notes = check_shards(plan, results)
        caught += bool(problems)
    assert read_shard_record({}) is None
    print(f"mutations caught by merge --plan's checks: {caught}/1000")


if __name__ == "__main__":
    main()
