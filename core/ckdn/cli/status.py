"""``ckdn status [NAMES]``: may the agent say it is done? Each check's latest run, and whether it
still holds for the tree now (exit 0 only when every named check is a fresh ``pass``)."""

from __future__ import annotations

from ckdn.app.freshness import render_status, status
from ckdn.cli._verb_io import load_config, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="checks or aliases (default: [run].required, else every check)")
    parser.add_argument("--json", action="store_true", help="the ckdn.status/1 document")
    parser.add_argument("--run", action="store_true",
                        help="rerun the checks that are stale or missing, then answer")
    parser.add_argument("--accept-weakened", action="store_true",
                        help="a fresh pass that checked less than the green run before it "
                             "counts as green")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    doc = status(load_config(args), args.names, accept_weakened=args.accept_weakened,
                 run=args.run)
    if args.json:
        print_document(doc)
    else:
        print_line(render_status(doc))
    return 0 if doc["verdict"] == "green" else 1
