"""Secrets kept out of what a reader sees: the digest, the findings file, meta's command.

An agent reads the digest, and whatever a tool printed reaches the model, so
every string a digest, an aggregate or ``findings.jsonl`` carries from a tool's
output is redacted when the document is built (``[REDACTED:rule]`` in place of
the secret), and the command meta.json and ``ckdn checks`` show has its
secret-looking values redacted. The rules (docs/security.md):

* ``env``: the values (8+ characters, not a path) of the variables in the
  check's environment whose names look secret (:func:`secret_name`: ``*TOKEN*``,
  ``*SECRET*``, ``*PASSWORD*``, ``*PASSWD*``, ``*KEY*``, and the names
  ``[run.redact].names`` adds), and their URL-, JSON- and base64-encoded forms;
* the providers' token shapes, keyed by a literal they contain
  (:mod:`ckdn.redact._rules`), PEM private key blocks (:mod:`ckdn.redact._pem`);
* ``[run.redact.patterns]``, and the generic ``high-entropy`` rule when asked.

This module is what a green run needs of it, without ``re``: the settings, the
name test, and :class:`Redaction`, which screens a text with string searches
and builds the redactor (:mod:`ckdn.redact._text`) only for a text that may
hold a secret. A green ``true`` check carries no such text; its command is
screened token by token (:meth:`Redaction.argv`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import IO

    from ckdn.redact._text import Redactor

__all__ = [
    "DEFAULT",
    "ENTROPY_RULE",
    "MIN_SECRET",
    "SECRET_WORDS",
    "RedactSettings",
    "Redaction",
    "marker",
    "open_block_after",
    "open_block_before",
    "secret_name",
    "secret_option",
    "secret_values",
]

#: Words that make a variable's name look secret (upper-cased name contains one).
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY")
#: Shorter values are not redacted by name: too many ordinary words would go.
MIN_SECRET = 8
ENTROPY_RULE = "high-entropy"
#: Literals one of which every built-in pattern match contains (the anchors of
#: :data:`ckdn.redact._rules.BUILTIN` and the PEM rule; a test holds them equal).
ANCHORS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
           "xox", "k_live_", "AIza", "npm_", "pypi-Ag", "eyJ", "://",
           "PRIVATE KEY")
#: Anchors of the case-insensitive rules, searched in the lowered text.
LOWERED_ANCHORS = ("secret_access_key", "secretaccesskey", "secret-access-key", "_authtoken",
                   "authorization", "bearer")


def marker(rule: str) -> str:
    """What a redacted secret reads as."""
    return f"[REDACTED:{rule}]"


class RedactSettings:
    """``[run].redact``: on by default; ``full_log`` redacts full.log too; ``allow`` values
    are never redacted; ``names`` are more variable names (``*`` globs) whose values are
    secrets; ``patterns`` are ``(rule name, regular expression)`` pairs.

    Frozen and compared by value, written out rather than a :mod:`ckdn._lite.record`:
    this module is on every run's path, and making a record class costs as much as
    the rest of the module.
    """

    __slots__ = ("allow", "enabled", "full_log", "high_entropy", "names", "patterns")
    enabled: bool
    full_log: bool
    high_entropy: bool
    allow: tuple[str, ...]
    names: tuple[str, ...]
    patterns: tuple[tuple[str, str], ...]

    def __init__(self, enabled: bool = True, full_log: bool = False,  # noqa: PLR0917
                 high_entropy: bool = False, allow: tuple[str, ...] = (),
                 names: tuple[str, ...] = (),
                 patterns: tuple[tuple[str, str], ...] = ()) -> None:
        for name, value in zip(self.__slots__, (tuple(allow), enabled, full_log,
                                                high_entropy, tuple(names), tuple(patterns)),
                               strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RedactSettings is frozen: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not RedactSettings:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"RedactSettings({fields})"


DEFAULT = RedactSettings()


def open_block_after(line: str, open_block: str | None) -> str | None:
    """The prefix of a private-key block still open after ``line`` (None: none is), given
    the one open before it: what a reader that passes lines before a window feeds, so
    a window that starts inside a key shows none of its body."""
    if open_block is None and "PRIVATE KEY" not in line:
        return None
    from ckdn.redact._pem import open_after  # a key block is rare: its module loads for one

    return open_after(line, open_block)


def open_block_before(handle: IO[bytes], offset: int) -> str | None:
    """The prefix of a private-key block open where the line at byte ``offset`` of a
    binary file starts (None: none is), looked up from there: for a backward reader."""
    from ckdn.redact._pem import open_before  # loaded only by a reader with a redaction

    return open_before(handle, offset)


def secret_name(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether a variable called ``name`` holds a secret: a secret word in it, or one of
    the ``extra`` names (``*`` matches any run of characters; case-insensitive)."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS) or any(
        _glob(pattern.upper(), upper) for pattern in extra)


def _glob(pattern: str, name: str) -> bool:
    """``fnmatch`` for ``*`` alone (fnmatch is not on the run path)."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == name
    if not (name.startswith(parts[0]) and name.endswith(parts[-1])):
        return False
    position = len(parts[0])
    for part in parts[1:-1]:
        found = name.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return position <= len(name) - len(parts[-1])


def _path_like(value: str) -> bool:
    return value.startswith(("/", "~", "./", "../"))


def secret_values(env: Mapping[str, str], settings: RedactSettings = DEFAULT
                  ) -> tuple[str, ...]:
    """The values to redact of ``env``: secret names, 8+ characters, not a path, not
    allowlisted; longest first, each once."""
    allow = set(settings.allow)
    found = {value for name, value in env.items()
             if len(value) >= MIN_SECRET and value not in allow and not _path_like(value)
             and secret_name(name, settings.names)}
    return tuple(sorted(found, key=lambda value: (-len(value), value)))


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
            import os

            self._values = secret_values(os.environ if self._env is None else self._env,
                                         self.settings)
        return self._values

    @property
    def redactor(self) -> Redactor:
        """The whole machinery, built on first need (imports ``re``)."""
        if self._redactor is None:
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

    def may_hold(self, text: str, encoded: bool = True) -> bool:
        """Whether ``text`` may hold a secret (False: it certainly holds none).

        With ``encoded`` an env secret may be there in an encoded form, which only the
        redactor computes: any text may then hold one (a run with secrets in its
        environment pays for the redactor once it has text to show). Without, only
        the values as they are count (a command line is never encoded).
        """
        if not self.settings.enabled or len(text) < 4:
            return False
        settings = self.settings
        if settings.patterns or settings.high_entropy:
            return True
        if any(anchor in text for anchor in ANCHORS):
            return True
        if len(text) >= MIN_SECRET:  # the env is looked at only for a text that could hold one
            values = self.values
            if values and (encoded or any(value in text for value in values)):
                return True
        lowered = text.lower()
        return any(anchor in lowered for anchor in LOWERED_ANCHORS)

    def text(self, text: str, edge: bool = False) -> str:
        """``text`` with its secrets redacted; ``edge``: it was cut at its end."""
        if not self.may_hold(text):
            return text
        return self.redactor.text(text, edge)

    def lines(self, items: Sequence[str], edges: Sequence[bool] = (),
              open_block: str | None = None) -> list[str]:
        """Lines (a log tail, a finding's detail) redacted together, so a key block that
        spans them is found; ``edges[i]``: line ``i`` was cut at its end; ``open_block``:
        the lines start inside a key block with that prefix (:func:`open_block_after`,
        :func:`open_block_before`: its BEGIN is above what is shown)."""
        if open_block is None and not any(self.may_hold(item) for item in items):
            return list(items)
        if not self.settings.enabled:
            return list(items)
        return self.redactor.lines(items, edges, open_block)

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command with its secret-looking values redacted (:mod:`ckdn.redact._argv`)."""
        if not self.settings.enabled:
            return list(argv)
        if not _argv_may_hold(argv, self):
            return list(argv)
        from ckdn.redact._argv import redact_argv

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
        from ckdn.errors import CkdnError
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


#: Words of an option name (``--api-token``, ``--db_password``) that say its value is a
#: secret; :data:`NOT_A_VALUE` endings say it takes a file or a flag instead.
OPTION_WORDS = frozenset({"token", "secret", "password", "passwd", "passphrase", "apikey",
                          "credential", "credentials", "auth"})
OPTION_COMPOUNDS = ("api-key", "api_key", "access-key", "access_key", "private-key",
                    "private_key", "secret-key", "secret_key")
NOT_A_VALUE = ("-file", "_file", "-stdin", "-env", "-path", "-prompt", "-command", "-cmd",
               "-helper", "-type", "-url", "_url", "-dir")
#: Programs whose short options take a password (``-p`` is not one elsewhere:
#: ``pytest -p plugin``); their tokens are screened by name.
PASSWORD_PROGRAMS = frozenset({"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow",
                               "mysqlcheck", "mariadb", "mariadb-dump", "mariadb-admin",
                               "sshpass", "redis-cli", "curl", "wget", "docker", "podman",
                               "openssl"})


def secret_option(name: str) -> bool:
    """Whether an option called ``name`` (``--api-token``, ``-password``, ``DB_PASSWORD``)
    takes a secret as its value."""
    low = name.lstrip("-").lower()
    if not low or low.startswith(("no-", "no_")) or low.endswith(NOT_A_VALUE):
        return False
    if any(compound in low for compound in OPTION_COMPOUNDS):
        return True
    words = low.replace("_", "-").replace(".", "-").split("-")
    return any(word in OPTION_WORDS for word in words)


def _argv_may_hold(argv: Sequence[str], redaction: Redaction) -> bool:
    """Whether any rule could touch ``argv``: string searches only, no ``re``."""
    for token in argv:
        if redaction.may_hold(token, encoded=False):
            return True
        head, equals, _value = token.partition("=")
        if equals and (secret_option(head) or secret_name(head, redaction.settings.names)):
            return True
        if token.startswith("-") and secret_option(token):
            return True
        if token.rpartition("/")[2] in PASSWORD_PROGRAMS:
            return True
    return False
