"""``ckdn lock-config``: ckdn.lock.toml written, a hash of every setting that decides a verdict."""

from __future__ import annotations

from ckdn.app.queries import lock_config
from ckdn.cli._verb_io import load_config, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default=None, metavar="PATH",
                        help="where to write it (default: beside the config)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args)
    print_line(f"wrote {lock_config(config, args.output)}: {len(config.checks)} checks,"
               f" {len(config.aliases)} aliases and [run] locked")
    return 0
