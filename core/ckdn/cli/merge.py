"""``ckdn merge --check NAME RUN...``: shard runs sealed as one run, never green when one is
missing or disagrees."""

from __future__ import annotations

from ckdn import app
from ckdn.cli._verb_io import load_config, print_document, require_baseline

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="*", metavar="RUN",
                        help="a shard: its run dir (or its digest.json) copied from the job "
                             "that ran it, or a run id here")
    parser.add_argument("--check", required=True, metavar="NAME", help="the check the shards ran")
    parser.add_argument("--expect", type=int, default=None, metavar="N",
                        help="how many shards there must be (fewer or more: not green)")
    parser.add_argument("--plan", default=None, metavar="FILE",
                        help="the ckdn.plan/1 file the shards ran: every planned test run by "
                             "exactly one shard, every shard of the plan, one plan")
    parser.add_argument("--gate", action="store_true",
                        help="exit code follows the baseline gate: 0 pass, 1 fail (else the "
                             "merge's)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args)
    if args.gate:  # refused before the merge writes a run
        require_baseline(config)
    outcome = app.merge_runs(config, args.check, args.runs, expect=args.expect,
                             plan=args.plan)
    print_document(outcome.document)
    return app.gate_exit_code(outcome) if args.gate else outcome.exit_code
