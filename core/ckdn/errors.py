"""The one exception family every adapter turns into exit 2 and a single line, never a traceback.

A message quotes what a user or the OS supplied, so the one-line rule is kept here once
(:func:`one_line` on every message; :func:`quote`, :func:`os_reason`, :func:`suggest`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["BusyError", "CkdnError", "ConfigError", "RefusedError", "UsageError", "one_line",
           "os_reason", "quote", "suggest"]

#: How much of a user-supplied string a message quotes.
_QUOTED = 200


def one_line(text: str) -> str:
    """``text`` with every character that is not printable escaped as ``repr`` would.

    A line break becomes ``\\n``, a terminal escape ``\\x1b``: the message stays
    one line and inert wherever it is printed.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def quote(text: str) -> str:
    """A user-supplied string for a message: ``repr``, bounded, on one line."""
    if len(text) > _QUOTED:
        return repr(text[:_QUOTED]) + "..."
    return repr(text)


def suggest(word: str, candidates: Iterable[str]) -> str:
    """``; did you mean 'x'?`` for a near miss among ``candidates``, else empty."""
    import difflib  # here: it costs every run, and only a mistake's message needs it

    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def os_reason(exc: OSError) -> str:
    """What the OS said, with its errno: ``Permission denied [Errno 13]``."""
    if exc.strerror:
        return f"{exc.strerror} [Errno {exc.errno}]"
    return one_line(str(exc))


class CkdnError(Exception):
    """Base of every error ckdn reports to a user as one line and exit 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        message = one_line(message)
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(CkdnError):
    """``ckdn.toml`` (or a parser option in it) is not valid; names file, table and key."""


class UsageError(CkdnError):
    """The command line asked for something that does not exist or cannot be combined."""


class RefusedError(CkdnError):
    """A run could not start: its lock is held, or the runs dir cannot be written."""


class BusyError(RefusedError):
    """A run could not start because another run of the same check holds its lock.

    Not a mistake in the call: a host that reports results as data (the MCP
    server) reports this one as data too, and every other refusal as an error.
    """
