"""``ckdn plan CHECK --shards N``: the shard plan, from the durations ckdn already keeps."""

from __future__ import annotations

from ckdn.app.shards import plan_check, write_plan_file
from ckdn.cli._verb_io import load_config, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("check", help="the pytest check to shard")
    parser.add_argument("--shards", type=int, required=True, metavar="N",
                        help="how many shards (fewer tests than N: refused)")
    parser.add_argument("-o", "--output", default=None, metavar="FILE",
                        help="write the plan to FILE and print one line per shard")
    parser.add_argument("--durations", default=None, metavar="FILE",
                        help="the durations ledger to read (default: ckdn.durations.json "
                             "when present)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args)
    plan = plan_check(config, args.check, args.shards, durations=args.durations)
    if args.output is None:
        print_document(plan.document())
        return 0
    write_plan_file(config, plan, args.output)
    print_line(f"plan {plan.plan_id}: {len(plan.shard_of)} test(s) of {plan.check} in "
               f"{plan.total} shards, written to {args.output}")
    for index, (tests, seconds) in enumerate(zip(plan.shards, plan.seconds, strict=True), 1):
        print_line(f"  shard {index}/{plan.total}: {len(tests)} test(s), {seconds:.2f}s")
    return 0
