"""``ckdn verify-config``: the config compared with ckdn.lock.toml (exit 1 on a difference)."""

from __future__ import annotations

from ckdn.app.queries import verify_config
from ckdn.cli._verb_io import load_config, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--locked", action="store_true", help="a missing lock file fails too")
    parser.add_argument("--json", action="store_true", help="one JSON line")
    parser.add_argument("--lock-file", default=None, metavar="PATH",
                        help="the lock file to compare with (default: ckdn.lock.toml beside "
                             "the config)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    doc = verify_config(load_config(args), locked=args.locked, lock_file=args.lock_file)
    if args.json:
        print_document({k: v for k, v in doc.items() if k != "lines"})
    else:
        for line in doc["lines"]:
            print_line(line)
    return 0 if doc["ok"] else 1
