"""``ckdn schema [ID]``: a packaged JSON Schema, or the ids of all of them."""

from __future__ import annotations

import json

from ckdn.app.queries import load_schema, schema_ids
from ckdn.cli._verb_io import print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", help="schema id, e.g. ckdn.digest/2 (default: list ids)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    if args.id is None:
        for sid in schema_ids():
            print_line(sid)
        return 0
    print_line(json.dumps(load_schema(args.id), indent=2, sort_keys=False))
    return 0
