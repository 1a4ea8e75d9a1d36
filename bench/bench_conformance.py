"""The conformance kit's figures: cases per parser and time, under a hypothesis profile.

Prints figures; it is not a timed test (tests/core/parsers/test_conformance.py is the
test). Usage, from a checkout (the kit's corpus is the checkout's fixtures)::

    python bench/bench_conformance.py             # the ci profile: the budget CI runs
    python bench/bench_conformance.py --profile dev
    python bench/bench_conformance.py ruff mypy   # some parsers only
    python bench/bench_conformance.py --cases 3000  # at least 3,000 generated per parser

For every registered parser (or the ones named) it runs each rule of
``ckdn.testing.conformance`` as the suite does, and prints how many cases each
rule ran (generated ones: hypothesis examples; the others: parser runs over
recorded and foreign outputs) and the wall time, then the totals. ``--cases N`` raises
each parser's examples per generated rule so that its generated rules run at least
``N`` cases in all (the issue-24 run: ``--cases 3000``). A rule that finds a false
green (or a traceback) is printed and counted; the exit code is 1 if any did.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "core"), str(ROOT)]

from hypothesis import settings  # noqa: E402

from ckdn.parsers import BUILTIN  # noqa: E402
from ckdn.testing.conformance import GENERATED, RULES, generated_rules  # noqa: E402
from ckdn.testing.profiles import load_profile  # noqa: E402
from tests.core.parsers.test_conformance import spec  # noqa: E402


def main(argv: list[str]) -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("parsers", nargs="*", help="parser names (default: every registered one)")
    cli.add_argument("--profile", default="ci", help="hypothesis profile (default: ci)")
    cli.add_argument("--cases", type=int, default=0, metavar="N",
                     help="at least N generated cases per parser (more examples per rule)")
    args = cli.parse_args(argv)
    profile = load_profile({"HYPOTHESIS_PROFILE": args.profile})
    names = args.parsers or sorted(BUILTIN)
    print(f"profile {profile}; rules: {', '.join(rule.__name__ for rule in RULES)}")
    print(f"{'parser':<12} {'generated':>9} {'other':>7} {'seconds':>8}  false greens")
    totals = [0, 0, 0.0]
    failed = 0
    for name in names:
        conformance = spec(name)
        per_rule = settings.get_profile(profile).max_examples
        wanted = generated_rules(conformance)
        if args.cases and wanted:
            per_rule = max(per_rule, math.ceil(args.cases / len(wanted)))
        settings.register_profile("bench-cases", parent=settings.get_profile(profile),
                                  max_examples=per_rule)
        settings.load_profile("bench-cases")
        generated = other = 0
        problems: list[str] = []
        start = time.perf_counter()
        for rule in RULES:
            try:
                ran = rule(conformance)
            except Exception as exc:  # a false green or a crash: the figure to report
                problems.append(f"{rule.__name__}: {str(exc).splitlines()[0][:300]}")
                continue
            if rule in GENERATED:
                generated += ran
            else:
                other += ran
        took = time.perf_counter() - start
        print(f"{name:<12} {generated:>9} {other:>7} {took:>8.1f}  {len(problems)}", flush=True)
        for problem in problems:
            print(f"    {problem}", flush=True)
        failed += len(problems)
        totals[0] += generated
        totals[1] += other
        totals[2] += took
    print(f"{'total':<12} {totals[0]:>9} {totals[1]:>7} {totals[2]:>8.1f}  {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
