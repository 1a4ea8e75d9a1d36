"""``ckdn gc``: prune old run directories, as every run does for its own check."""

from __future__ import annotations

from ckdn.app.queries import prune_runs, shown_runs_dir
from ckdn.cli._verb_io import load_config, print_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", type=int, default=None, metavar="N",
                        help="finished runs to keep per check (default: [run].keep)")
    parser.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config = load_config(args, required=False)
    keep = config.run.keep if args.keep is None else args.keep
    removed = prune_runs(config, args.keep, dry_run=args.dry_run)
    kept = (f"kept up to {keep} finished runs per check" if keep else
            "no limit by count ([run].keep = 0 means never prune by count; pass --keep N)")
    for path in removed if args.dry_run else ():
        print_line(f"would remove {path}")
    did = "would remove" if args.dry_run else "removed"
    print_line(f"{did} {len(removed)} run director{'y' if len(removed) == 1 else 'ies'}; "
               f"{kept} in {shown_runs_dir(config)}")
    return 0
