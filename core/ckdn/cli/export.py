"""``ckdn export --format junit|ctrf [RUN] [-o FILE]``: a stored run (native or imported) as a
document a test dashboard ingests; runs nothing."""

from __future__ import annotations

from ckdn.app.exchange import EXPORT_FORMATS, export_run
from ckdn.cli._verb_io import load_config, write_output

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?",
                        help="run dir name or path, or a check's name: its newest run"
                        " (default: latest)")
    parser.add_argument("--format", required=True, choices=EXPORT_FORMATS,
                        help="junit (JUnit XML) or ctrf (CTRF JSON)")
    parser.add_argument("--output", "-o", default=None, metavar="FILE",
                        help="write the document to FILE instead of stdout")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    """Exit 0 whatever the run's status: the document is the product."""
    config = load_config(args, required=False)
    text = export_run(config, args.run, args.format)
    write_output(text, args.output)
    return 0
