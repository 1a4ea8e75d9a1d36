"""``ckdn show [RUN]``: a stored digest, as text on a terminal and as JSON when piped."""

from __future__ import annotations

from ckdn.app.queries import read_run, render, report_text
from ckdn.cli._verb_io import colour, load_config, print_document, print_line, terminal, write_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?",
                        help="run dir name or path, or a check's name: its newest run"
                        " (default: latest)")
    parser.add_argument("--json", action="store_true", help="print the stored JSON as is")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args, required=False)
    doc = read_run(config, args.run)
    if args.json:
        print_document(doc)
    elif terminal():
        write_text(report_text(config, doc, color=colour()))
    else:
        print_line(render(doc))
    return 0
