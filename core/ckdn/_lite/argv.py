"""Reading argv without the modules that usually read it: ``argparse`` and ``shlex``."""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["GLOBAL_OPTIONS", "quick_run", "split_command"]

# Two stand-ins, each for the common shape only, each handing everything else to
# the stdlib piece it stands in for:
#
# * :func:`quick_run` reads ``ckdn run NAME`` (with ``-q``, ``--config``, ``--cwd``)
#   as ckdn's argparse parser would and returns None for any other command line,
#   which argparse then reads, mistakes and messages included. Importing argparse
#   and building ckdn's parser cost more than the rest of the command line.
# * :func:`split_command` splits a check's ``command`` string as
#   ``shlex.split(command)`` does when it holds no quote and no backslash, and
#   calls shlex for anything else. ``shlex`` imports ``re``, which a trivial
#   ``ckdn run`` otherwise never needs.
#
# Differential tests: tests/core/lite/test_argv.py holds both to their stdlib
# pieces on generated input.

#: Options every verb takes, with a value; ``--config=PATH`` works too.
GLOBAL_OPTIONS = ("--config", "--cwd")
#: What shlex treats specially in a posix split: quotes and the escape.
_SHLEX_SPECIAL = frozenset("'\"\\")
#: shlex's whitespace in posix mode (not str.split's: no \x0b, \x0c, \x1c-\x1f, ...).
_SHLEX_SPACE = " \t\r\n"


def quick_run(argv: list[str]) -> SimpleNamespace | None:
    """``run NAME`` with ``--quiet``/``-q``, ``--gate``, ``--config``, ``--cwd``: what argparse
    would read.

    None for any other command line (another verb, ``--all``, ``--fail-fast``, an
    abbreviation, ``--help``, a mistake): argparse reads that one.
    """
    args = SimpleNamespace(verb=None, check=None, all=False, quiet=False, fail_fast=None,
                           gate=False, format="json", extra=[])
    words = iter(argv)
    for word in words:
        if word in GLOBAL_OPTIONS:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            setattr(args, word[2:], value)
        elif word.startswith(("--config=", "--cwd=")):
            key, _, value = word[2:].partition("=")
            setattr(args, key, value)
        elif args.verb is None:
            if word != "run":
                return None
            args.verb = word
        elif word in ("--quiet", "-q"):
            args.quiet = True
        elif word == "--gate":
            args.gate = True
        elif args.check is None and not word.startswith("-"):
            args.check = word
        else:
            return None
    return args if args.check is not None else None


def split_command(command: str) -> list[str]:
    """``shlex.split(command)``: read here when nothing in it is quoted or escaped.

    Raises ``ValueError`` as shlex does (an unclosed quote, a trailing backslash).
    """
    if _SHLEX_SPECIAL.isdisjoint(command):
        for space in _SHLEX_SPACE[1:]:
            command = command.replace(space, " ")
        return [word for word in command.split(" ") if word]
    import shlex  # here, the fallback: only a command with quotes or backslashes needs it

    return shlex.split(command, posix=True)
