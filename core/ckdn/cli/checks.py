"""``ckdn checks``: the configured checks and aliases, one line each."""

from __future__ import annotations

import shlex

from ckdn.app.queries import describe_checks
from ckdn.cli._verb_io import load_config, print_document, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON array")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    rows = describe_checks(load_config(args))
    if args.json:
        print_document({"checks": rows})
        return 0
    for row in rows:
        if row["kind"] == "alias":
            fail_fast = "true" if row["fail_fast"] else "false"
            print_line(f"{row['name']}\talias={','.join(row['members'])}\tfail_fast={fail_fast}")
        else:
            command = row["command"]
            if not isinstance(command, str):  # an array-form command is shown joined
                command = shlex.join(command)
            print_line(f"{row['name']}\tparser={row['parser']}\t{command}")
    return 0
