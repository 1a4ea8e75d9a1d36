"""``ckdn import FORMAT FILE --as NAME``: another tool's results file stored as a run of NAME,
visibly weaker than one ckdn ran (``origin``, ``rc: null``); digest on stdout.

Its usual shape is read here without argparse (:func:`read_quickly`, as ``ckdn run NAME``
is: argparse's import and set-up cost a CI job's import more than the seal), held to
argparse by a differential test."""

from __future__ import annotations

from types import SimpleNamespace

from ckdn.app.importing import IMPORT_FORMATS, import_results
from ckdn.cli._verb_io import GLOBAL_OPTIONS, load_config, print_document

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse

__all__ = ["add_options", "handle", "read_quickly"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=IMPORT_FORMATS, help="the file's format (docs/import.md)")
    parser.add_argument("file", help="the results file (taken from the current directory)")
    parser.add_argument("--as", dest="name", required=True, metavar="NAME",
                        help="the name its run is stored under (list, show, diff, baselines)")
    parser.add_argument("--top", type=int, default=None, metavar="N",
                        help="findings the digest shows (default: [run].top)")


def read_quickly(argv: list[str]) -> SimpleNamespace | None:
    """``import FORMAT FILE --as NAME [--top N]`` with ``--config``/``--cwd``: what argparse
    would read. None for any other command line (an unknown format, ``--as=NAME``, an
    abbreviation, ``--help``, a word starting with ``-`` where a value goes): argparse
    reads that one."""
    args = SimpleNamespace(verb=None, format=None, file=None, name=None, top=None)
    words = iter(argv)
    for word in words:
        if word in GLOBAL_OPTIONS or (args.verb is not None and word in ("--as", "--top")):
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            if word == "--top":
                try:
                    args.top = int(value)
                except ValueError:
                    return None
            else:
                setattr(args, "name" if word == "--as" else word[2:], value)
        elif word.startswith(("--config=", "--cwd=")):
            key, _, value = word[2:].partition("=")
            setattr(args, key, value)
        elif word.startswith("-"):
            return None
        elif args.verb is None:
            if word != "import":
                return None
            args.verb = word
        elif args.format is None:
            if word not in IMPORT_FORMATS:
                return None
            args.format = word
        elif args.file is None:
            args.file = word
        else:
            return None
    return args if args.file is not None and args.name is not None else None


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    """Exit 0 for a reconciled pass, 1 for any other status (an import has no exit code)."""
    config = load_config(args, required=False)
    outcome = import_results(config, args.format, args.file, name=args.name, top=args.top)
    print_document(outcome.document)
    return outcome.exit_code
