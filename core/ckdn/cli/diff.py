"""``ckdn diff [A] B``: two runs of one check compared by fingerprint (exit 1 on new findings)."""

from __future__ import annotations

from ckdn.app.queries import diff_runs, render_diff
from ckdn.cli._verb_io import load_config, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="earlier run: dir name or path, check name,"
                        " latest, or -N (N runs before B); alone, it is B and A is -1")
    parser.add_argument("b", metavar="B", nargs="?", help="later run: dir name or path, check"
                        " name (its newest run), or latest")
    parser.add_argument("--json", action="store_true", help="the ckdn.diff/1 document")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    # One run named (`ckdn diff tests`): it against the run of its check just before it.
    earlier, later = ("-1", args.a) if args.b is None else (args.a, args.b)
    doc = diff_runs(load_config(args, required=False), earlier, later)
    if args.json:
        print_document(doc)
    else:
        print_line(render_diff(doc))
    return 1 if doc["counts"]["new"] else 0
