"""What counts as a secret: the ``[run].redact`` settings, secret names and options, the marker.

Read by config and by every redaction rule; no ``re``, so a green run pays nothing for it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "ANCHORS",
    "DEFAULT",
    "ENTROPY_RULE",
    "LOWERED_ANCHORS",
    "MIN_SECRET",
    "PASSWORD_PROGRAMS",
    "SECRET_WORDS",
    "RedactSettings",
    "marker",
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
#: :data:`ckdn.redact._text.BUILTIN` and the PEM rule; a test holds them equal).
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

    Frozen and compared by value, written out rather than a :func:`ckdn._lite.record`:
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
