"""The one exception family every adapter turns into exit 2 and a single line.

Every refusal (a bad config, an unknown check, a held lock, an unwritable runs
dir) is raised as a :class:`CkdnError` carrying a message that already says what
was wrong, where, and how to fix it; adapters print ``ckdn: <message>`` and never
a traceback.
"""

from __future__ import annotations

__all__ = ["CkdnError", "ConfigError", "RefusedError", "UsageError"]


class CkdnError(Exception):
    """Base of every error ckdn reports to a user as one line and exit 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
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
