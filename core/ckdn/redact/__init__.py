"""Secrets kept out of what a reader sees: the digest, the findings file, meta's command.

:class:`Redaction` screens a text with string searches and builds the ``re``-based
redactor only for a text that may hold a secret (a green run has none); docs/security.md.
"""

from __future__ import annotations

import os

from ckdn.errors import CkdnError
from ckdn.redact._settings import (
    ANCHORS,
    DEFAULT,
    ENTROPY_RULE,
    LOWERED_ANCHORS,
    MIN_SECRET,
    PASSWORD_PROGRAMS,
    SECRET_WORDS,
    RedactSettings,
    marker,
    secret_name,
    secret_option,
    secret_values,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import IO

    from ckdn.redact._text import Redactor

__all__ = [
    "ANCHORS",
    "ARGV_RULE",
    "DEFAULT",
    "ENTROPY_RULE",
    "LOWERED_ANCHORS",
    "MIN_SECRET",
    "PASSWORD_PROGRAMS",
    "SECRET_WORDS",
    "RedactSettings",
    "Redaction",
    "marker",
    "open_block_after",
    "open_block_before",
    "redact_argv",
    "secret_name",
    "secret_option",
    "secret_values",
]


def open_block_after(line: str, open_block: str | None) -> str | None:
    """The prefix of a private-key block still open after ``line`` (None: none is), given
    the one open before it: what a reader that passes lines before a window feeds, so
    a window that starts inside a key shows none of its body."""
    if open_block is None and "PRIVATE KEY" not in line:
        return None
    from ckdn.redact._text import open_after  # a key block is rare: its module loads for one

    return open_after(line, open_block)


def open_block_before(handle: IO[bytes], offset: int) -> str | None:
    """The prefix of a private-key block open where the line at byte ``offset`` of a
    binary file starts (None: none is), looked up from there: for a backward reader."""
    from ckdn.redact._text import open_before  # loaded only by a reader with a redaction

    return open_before(handle, offset)


class Redaction:
    """The redaction of one run: screens texts cheaply, redacts what may hold a secret,
    counts what it redacted per rule (:meth:`notes`).

    ``env`` is the environment the check ran with (ours, the host's, with the check's
    own ``env``). Disabled settings make every method the identity.
    """

    def __init__(self, settings: RedactSettings = DEFAULT,
                 env: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self._env = env
        self._values: tuple[str, ...] | None = None
        self._redactor: Redactor | None = None
        self.counts: dict[str, int] = {}
        #: what went wrong redacting (notes for the digest)
        self.problems: list[str] = []
        #: what :meth:`argv` redacted, per rule
        self.command_counts: dict[str, int] = {}
        #: what :meth:`sealed_log` redacted in full.log, per rule
        self.log_counts: dict[str, int] = {}

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def values(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = secret_values(os.environ if self._env is None else self._env,
                                         self.settings)
        return self._values

    @property
    def redactor(self) -> Redactor:
        """The whole machinery, built on first need (imports ``re``)."""
        if self._redactor is None:
            # Imported here, the one way in: `re` and the patterns cost every green run,
            # and only a text that may hold a secret needs them.
            from ckdn.redact._text import Redactor

            self._redactor = Redactor(secrets=self.values, allow=self.settings.allow,
                                      patterns=self.settings.patterns,
                                      high_entropy=self.settings.high_entropy,
                                      counts=self.counts)
        return self._redactor

    @property
    def margin(self) -> int:
        """Characters past a cut that are read to redact what straddles it."""
        return self.redactor.margin if self._redactor is not None or self.values else 1024

    def may_hold(self, text: str, encoded: bool = True, edge: bool = True) -> bool:
        """Whether ``text`` may hold a secret (False: it certainly holds none).

        With ``encoded`` an env secret may be there in an encoded form, which only the
        redactor computes: any text may then hold one (a run with secrets in its
        environment pays for the redactor once it has text to show). Without, only
        the values as they are count (a command line is never encoded). ``edge``: the
        text may be cut at its end (the default, the safe guess).
        """
        if not self.settings.enabled or len(text) < 4:
            return False
        settings = self.settings
        if settings.patterns or settings.high_entropy:
            return True
        if _holds_any(text, _WHOLE_ANCHORS):
            return True
        # url-password needs its "@" (the rule's own ``requires``), unless the text was cut
        # before it: a rule's link (ruff's, mypy's) costs no redactor
        if _URL_ANCHOR in text and (edge or "@" in text):
            return True
        if len(text) >= MIN_SECRET:  # the env is looked at only for a text that could hold one
            values = self.values
            if values and (encoded or any(value in text for value in values)):
                return True
        lowered = text.lower()
        return _holds_any(lowered, LOWERED_ANCHORS)

    def text(self, text: str, edge: bool = False) -> str:
        """``text`` with its secrets redacted; ``edge``: it was cut at its end."""
        if not self.may_hold(text, edge=edge):
            return text
        return self.redactor.text(text, edge)

    def lines(self, items: Sequence[str], edges: Sequence[bool] = (),
              open_block: str | None = None) -> list[str]:
        """Lines (a log tail, a finding's detail) redacted together, so a key block that
        spans them is found; ``edges[i]``: line ``i`` was cut at its end; ``open_block``:
        the lines start inside a key block with that prefix (:func:`open_block_after`,
        :func:`open_block_before`: its BEGIN is above what is shown)."""
        if open_block is None and not any(
                self.may_hold(item, edge=index < len(edges) and edges[index])
                for index, item in enumerate(items)):
            return list(items)
        if not self.settings.enabled:
            return list(items)
        return self.redactor.lines(items, edges, open_block)

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command with its secret-looking values redacted (:func:`redact_argv`)."""
        if not self.settings.enabled:
            return list(argv)
        if not _argv_may_hold(argv, self):
            return list(argv)
        own = self.fork()
        shown = redact_argv(argv, own)
        self.command_counts = own.counts
        return shown

    def fork(self) -> Redaction:
        """The same rules with counts of their own (what the digest's note does not count)."""
        other = Redaction(self.settings, self._env)
        other._values = self._values
        return other

    def sealed_log(self, path: str, write: Callable[[str, Iterator[bytes]], object],
                   sha256: str, size: int) -> tuple[str, int]:
        """The log's sha256 and size once it is what the run keeps: with
        ``[run.redact].full_log`` its redacted copy replaces it, streamed through ``write``
        (an atomic writer of chunks); else, or if that fails (then a note says why), the
        raw log as it was sealed."""
        if not (self.settings.enabled and self.settings.full_log):
            return sha256, size
        # Imported here: rewriting full.log streams it through the redactor (`re`, threads),
        # which only `[run.redact].full_log` asks for.
        from ckdn.redact._stream import rewrite

        own = self.fork()
        try:
            sealed = rewrite(path, write, own.redactor)
        except (OSError, CkdnError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else exc.message
            self.problems.append(f"full.log kept raw, not redacted: {reason or exc}")
            return sha256, size
        self.log_counts = own.counts  # the tail is read from the redacted log: counted here
        return sealed

    def notes(self) -> list[str]:
        """The digest's notes: what was redacted, per rule, and what could not be."""
        notes = [f"redacted {_counted(self.counts)}"] if self.counts else []
        if self.command_counts:
            notes.append(f"meta.json command: redacted {_counted(self.command_counts)}")
        if self.log_counts:
            notes.append(f"full.log: redacted {_counted(self.log_counts)}")
        return notes + self.problems


def _counted(counts: Mapping[str, int]) -> str:
    """``3 secrets (env 1, jwt 2)``: the total, then per rule by name."""
    total = sum(counts.values())
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(counts.items()))
    return f"{total} secret{'s' if total != 1 else ''} ({rules})"


#: The url-password rule's anchor, and the other rules' (which need no second literal).
_URL_ANCHOR = "://"
_WHOLE_ANCHORS = tuple(anchor for anchor in ANCHORS if anchor != _URL_ANCHOR)


def _holds_any(text: str, anchors: tuple[str, ...]) -> bool:
    """Whether ``text`` contains one of ``anchors``: a plain loop, a third quicker than
    ``any()`` over a generator (the screen of every finding's message)."""
    for anchor in anchors:  # noqa: SIM110 - the loop is the point (speed)
        if anchor in text:
            return True
    return False


def _argv_may_hold(argv: Sequence[str], redaction: Redaction) -> bool:
    """Whether any rule could touch ``argv``: string searches only, no ``re``."""
    for token in argv:
        if redaction.may_hold(token, encoded=False, edge=False):  # a token is whole
            return True
        head, equals, _value = token.partition("=")
        if equals and (secret_option(head) or secret_name(head, redaction.settings.names)):
            return True
        if token.startswith("-") and secret_option(token):
            return True
        if token.rpartition("/")[2] in PASSWORD_PROGRAMS:
            return True
    return False


# -- a command line, for meta.json and `ckdn checks` ----------------------------------------

ARGV_RULE = "argv"
_MYSQL = frozenset(PASSWORD_PROGRAMS - {"sshpass", "redis-cli", "curl", "wget", "docker",
                                        "podman", "openssl"})
#: (program, short option): the next token (or the rest of this one) is a password.
_SHORT = {"sshpass": "-p", "redis-cli": "-a", "docker login": "-p", "podman login": "-p"}
_USER = ("-u", "--user", "--proxy-user")  # curl and wget: user:password


def redact_argv(argv: Sequence[str], redaction: Redaction) -> list[str]:
    """``argv`` with its secret-looking values redacted: each token through the text rules,
    then the command-line ones (docs/security.md lists them)."""
    out: list[str] = []
    program = ""
    pending = ""  # what the next token is: "" (itself), "value" (a secret), "user" (user:pw)
    for token in argv:
        base = token.rpartition("/")[2]
        if base in PASSWORD_PROGRAMS and not token.startswith("-"):
            program, pending = base, ""
            out.append(token)
        elif program in ("docker", "podman") and token == "login":  # noqa: S105
            program += " login"  # `docker run -p 8080:80` publishes a port
            out.append(token)
        elif pending == "value" and not token.startswith("-"):
            out.append(_hidden(redaction))
            pending = ""
        elif pending == "user":
            out.append(_user(token, redaction))
            pending = ""
        else:
            shown, pending = _token(token, program, redaction)
            out.append(shown)
    return out


def _token(token: str, program: str, redaction: Redaction) -> tuple[str, str]:
    """One token as shown, and what the next one is (see :func:`redact_argv`)."""
    head, equals, value = token.partition("=")
    named = head.lstrip("-")
    if equals and value and named.replace("-", "_").isidentifier() and (
            secret_option(head) or (head == named and secret_name(head, redaction.settings.names))):
        return f"{head}={_hidden(redaction)}", ""
    if token.startswith("--") and not equals and secret_option(token):
        return token, "value"
    short = "-p" if program in _MYSQL else _SHORT.get(program)
    if short is not None and token.startswith(short) and not token.startswith("--"):
        if token != short:
            return short + _hidden(redaction), ""
        # `mysql -p` alone prompts: the next token is a database, not a password
        return token, "" if program in _MYSQL else "value"
    if program in ("curl", "wget"):
        if token in _USER:
            return token, "user"
        if token.startswith("-u") and not token.startswith("--"):
            return "-u" + _user(token[2:], redaction), ""
        if equals and head in _USER[1:]:
            return f"{head}={_user(value, redaction)}", ""
    if program == "openssl" and token.startswith("pass:") and len(token) > 5:
        return "pass:" + _hidden(redaction), ""
    return redaction.text(token), ""


def _user(token: str, redaction: Redaction) -> str:
    user, colon, password = token.partition(":")
    return f"{user}:{_hidden(redaction)}" if colon and password else token


def _hidden(redaction: Redaction) -> str:
    redaction.counts[ARGV_RULE] = redaction.counts.get(ARGV_RULE, 0) + 1
    return marker(ARGV_RULE)
