"""The command line as argparse reads it, for every shape but ``ckdn run NAME``.

A verb's sub-parser gets its options (and its module is imported) only when
argparse picks that verb, so reading ``ckdn show`` loads no other verb.
"""

from __future__ import annotations

import argparse
import shlex

from ckdn import DISTRIBUTION, __version__
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, NoReturn

__all__ = ["CommandLineParser", "build_parser"]


class CommandLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: Any = None) -> Any:
        """Unknown words are blamed on the verb they followed, whose help lists its options."""
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            raise UsageError(unrecognized(parsed, unknown))
        return parsed


def unrecognized(parsed: Any, unknown: list[str]) -> str:
    """The refusal of ``unknown`` after the verb; ``run NAME --fix`` also shows the
    ``--`` that hands words to the tool, as pytest/nox/tox users expect to type."""
    verb = getattr(parsed, "verb", None)
    message = f"unrecognized arguments: {' '.join(unknown)}"
    if verb is None:
        return f"{message} (see `ckdn --help`)"
    check = getattr(parsed, "check", None) if verb == "run" else None
    if check:
        message += (f"; a tool's own arguments go after --: "
                    f"`ckdn run {shlex.join([check, '--', *unknown])}`")
    return f"{message} (see `ckdn {verb} --help`)"


class VerbParser(CommandLineParser):
    """One verb's sub-parser: ``add_options`` fills it when argparse first hands it the
    arguments after the verb (``ckdn VERB --help`` included)."""

    add_options: Callable[[argparse.ArgumentParser], None] | None = None

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: Any = None) -> tuple[Any, list[str]]:
        if self.add_options is not None:
            add, self.add_options = self.add_options, None
            add(self)
        return super().parse_known_args(args, namespace)


def global_options() -> argparse.ArgumentParser:
    """``--config`` and ``--cwd``, which every verb takes before or after its name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, metavar="PATH",
                        help="config file (default: $CKDN_CONFIG, else ./ckdn.toml)")
    common.add_argument("--cwd", default=argparse.SUPPRESS, metavar="DIR",
                        help="directory checks run in and paths resolve from "
                             "(default: $CKDN_CWD, else the current directory)")
    return common


def build_parser(summaries: Mapping[str, str],
                 add_options: Callable[[str, argparse.ArgumentParser], None]
                 ) -> argparse.ArgumentParser:
    """The ``ckdn`` parser: one sub-parser per verb of ``summaries`` (verb -> its help
    line), filled by ``add_options(verb, sub_parser)`` when that verb is read."""
    common = global_options()
    parser = CommandLineParser(prog="ckdn", parents=[common],
                               description="Deterministic check runner and log digester.")
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=VerbParser)
    for verb, summary in summaries.items():
        # typeshed wants parents of the sub-parsers' own class; argparse takes any parser
        verb_parser = sub.add_parser(verb, parents=[common], help=summary)  # type: ignore[list-item]
        verb_parser.add_options = _filler(add_options, verb)
    return parser


def _filler(add_options: Callable[[str, argparse.ArgumentParser], None],
            verb: str) -> Callable[[argparse.ArgumentParser], None]:
    return lambda parser: add_options(verb, parser)
