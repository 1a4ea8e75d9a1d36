"""A check's ``command`` string split into argv without ``shlex``, which imports ``re``.

A command with a quote or a backslash goes to shlex itself; tests/core/lite/test_argv.py
holds the two equal on generated input.
"""

from __future__ import annotations

__all__ = ["split_command"]

#: What shlex treats specially in a posix split: quotes and the escape.
_SHLEX_SPECIAL = frozenset("'\"\\")
#: shlex's whitespace in posix mode (not str.split's: no \x0b, \x0c, \x1c-\x1f, ...).
_SHLEX_SPACE = " \t\r\n"


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
