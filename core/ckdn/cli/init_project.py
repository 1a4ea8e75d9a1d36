"""``ckdn init``: a starter ckdn.toml, the agent skill, or an agent's kit (``--agent``)
(a file apart from ``__init__``)."""

from __future__ import annotations

import os

from ckdn.app.queries import AGENTS, write_agent_kit, write_skills, write_starter
from ckdn.cli._verb_io import load_config, print_line, project_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]

#: The alias the edit hook runs when the project has it; else every atomic check.
EDIT_ALIAS = "lint"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.add_argument("--skill", metavar="DIR", default=None,
                        help="instead, install the agent skill into DIR (DIR/verified-fix-loop/)")
    parser.add_argument("--agent", choices=AGENTS, action="append", default=None,
                        help="write that client's kit (MCP config, hooks, skill or rules),"
                             " merged into files that exist; repeatable; the starter ckdn.toml"
                             " too when there is none")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    if args.skill is not None:
        for path in write_skills(args.skill, force=args.force):
            print_line(f"wrote {path}")
        return 0
    if args.agent:
        return _kit(args)
    path = write_starter(project_dir(args), getattr(args, "config", None), force=args.force)
    print_line(f"wrote {path}; the runs dir ckdn makes keeps itself out of git")
    return 0


def _kit(args: SimpleNamespace) -> int:
    cwd = project_dir(args)
    config = load_config(args, required=False)
    if config.path is None or not os.path.isfile(config.path):
        print_line(f"wrote {write_starter(cwd, getattr(args, 'config', None))}")
        config = load_config(args)
    names = EDIT_ALIAS if EDIT_ALIAS in {*config.checks, *config.aliases} else "--all"
    for agent in dict.fromkeys(args.agent):
        for path, done in write_agent_kit(cwd, agent, names):
            print_line(f"{done} {path}")
    return 0
