"""``ckdn durations update CHECK``: each test's median seconds over the last whole runs, into
the ledger ``ckdn plan`` reads."""

from __future__ import annotations

from ckdn.app.shards import update_durations
from ckdn.cli._verb_io import load_config, print_document

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("update",), help="update: fold the last runs in")
    parser.add_argument("check", help="the check whose runs are folded")
    parser.add_argument("--last", type=int, default=5, metavar="K",
                        help="whole runs to fold, newest first (default: 5); merged shards "
                             "count, a lone shard does not")
    parser.add_argument("--file", default=None, metavar="PATH",
                        help="the ledger (default: ckdn.durations.json)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args)
    print_document(update_durations(config, args.check, last=args.last, path=args.file))
    return 0
