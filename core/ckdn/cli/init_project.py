"""``ckdn init``: a starter ckdn.toml, or the agent skill (a file apart from ``__init__``)."""

from __future__ import annotations

from ckdn.app.queries import write_skills, write_starter
from ckdn.cli._output import print_line
from ckdn.cli._project import project_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.add_argument("--skill", metavar="DIR", default=None,
                        help="instead, install the agent skill into DIR (DIR/verified-fix-loop/)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    if args.skill is not None:
        for path in write_skills(args.skill, force=args.force):
            print_line(f"wrote {path}")
        return 0
    path = write_starter(project_dir(args), getattr(args, "config", None), force=args.force)
    print_line(f"wrote {path}; the runs dir ckdn makes keeps itself out of git")
    return 0
