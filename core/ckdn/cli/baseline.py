"""``ckdn baseline NAME``: run a check (or read its stored run) and record its findings as the
accepted ones."""

from __future__ import annotations

from ckdn import app
from ckdn.cli._verb_io import load_config, print_document

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("check", help="atomic check or alias name")
    parser.add_argument("--prune", action="store_true", help="drop fixed findings; add none")
    parser.add_argument("--stored", action="store_true",
                        help="record from each check's newest stored run (one a nox session or"
                             " a tox env made) instead of running it")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    print_document(app.record_baseline(load_config(args), args.check, prune=args.prune,
                                       stored=args.stored))
    return 0
