"""``ckdn list``: the recent runs, oldest first (a file apart: ``list`` is a builtin's name)."""

from __future__ import annotations

from ckdn.app.queries import list_runs, shown_runs_dir
from ckdn.cli._verb_io import load_config, note, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", type=int, default=10, metavar="N", help="how many (default 10)")
    parser.add_argument("--json", action="store_true", help='one JSON object, {"runs": [...]}')


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args, required=False)
    rows = list_runs(config, args.n)
    if args.json:
        print_document({"runs": rows})
        return 0
    if not rows:  # stdout carries only run lines; say it where a person looks
        note(f"no runs in {shown_runs_dir(config)} yet")
    for row in rows:
        print_line(f"{row['run_id']}\t{row['check']}\t{row['status']}")
    return 0
