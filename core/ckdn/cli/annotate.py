"""``ckdn annotate [RUN] [--format F] [--diff-base REF]``: a stored run as a view for people
or CI; runs nothing."""

from __future__ import annotations

from ckdn.app.queries import REPORT_FORMATS, annotate
from ckdn.cli._verb_io import colour, load_config, write_output

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["ANNOTATE_FORMATS", "add_options", "handle"]

#: ``--format``'s choices: the report formats' one table (:mod:`ckdn.reports`).
ANNOTATE_FORMATS = REPORT_FORMATS


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?",
                        help="run dir name or path, or a check's name: its newest run"
                        " (default: latest)")
    parser.add_argument("--format", default="github", choices=ANNOTATE_FORMATS,
                        help="the view (docs/reports.md; default: github, as the contract's)")
    parser.add_argument("--diff-base", default=None, metavar="REF",
                        help="annotate only lines the change since `git merge-base REF HEAD` "
                             "added (docs/diff-gate.md)")
    parser.add_argument("--output", "-o", default=None, metavar="PATH",
                        help="write the view to PATH instead of stdout (a CI step's SARIF file)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    """Exit 0 whatever the run's status: the view is the product."""
    config = load_config(args, required=False)
    text = annotate(config, args.run, args.format,
                    color=args.format == "text" and args.output is None and colour(),
                    diff_base=args.diff_base)
    write_output(text, args.output)
    return 0
