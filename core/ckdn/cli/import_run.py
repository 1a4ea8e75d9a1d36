"""``ckdn import FORMAT FILE --as NAME``: another tool's results file stored as a run of NAME,
visibly weaker than one ckdn ran (``origin``, ``rc: null``); digest on stdout."""

from __future__ import annotations

from ckdn.app.importing import IMPORT_FORMATS, import_results
from ckdn.cli._output import print_document
from ckdn.cli._project import load_config

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=IMPORT_FORMATS, help="the file's format (docs/import.md)")
    parser.add_argument("file", help="the results file (taken from the current directory)")
    parser.add_argument("--as", dest="name", required=True, metavar="NAME",
                        help="the name its run is stored under (list, show, diff, baselines)")
    parser.add_argument("--top", type=int, default=None, metavar="N",
                        help="findings the digest shows (default: [run].top)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    """Exit 0 for a reconciled pass, 1 for any other status (an import has no exit code)."""
    config = load_config(args, required=False)
    outcome = import_results(config, args.format, args.file, name=args.name, top=args.top)
    print_document(outcome.document)
    return outcome.exit_code
