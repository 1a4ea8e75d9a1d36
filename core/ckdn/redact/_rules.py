"""The built-in rules: what a credential looks like, keyed by a literal it always contains.

Every pattern rule has *anchors*, literals one of which every match contains
(``AKIA``, ``ghp_``, ``://``...). A text is searched for its anchors first
(``str.find``, gigabytes a second) and a rule's regular expression runs only on
a text that holds one of them, so a log without credentials costs a few string
searches, not a regex scan per rule. Anchors of a case-insensitive rule are
searched in the lowered text.

A rule replaces one group of its match (the credential, not the key name or
the ``Authorization:`` before it), and has an *edge* form: what is left of a
match at the end of a text that was cut (a parser kept the first 500
characters of a message; ``AKIA`` and 10 characters of the key are all that is
left), matched only there, so a cut can never show most of a credential.

The shapes are the providers' documented token formats; none is tied to a
service's check digits, so a rule never needs the network and never misses a
token for failing a checksum.
"""

from __future__ import annotations

import re

from ckdn.redact import ENTROPY_RULE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["BUILTIN", "ENTROPY", "PatternRule", "compile_user"]

#: Characters of base64 (standard and URL-safe), the body of most tokens.
_B64 = "A-Za-z0-9+/=_-"


class PatternRule:
    """One rule: its name (shown in ``[REDACTED:name]``), anchors, pattern and edge pattern."""

    __slots__ = ("_edge", "_pattern", "anchors", "edge_source", "group", "lowered", "name",
                 "requires", "source")

    def __init__(self, name: str, anchors: Sequence[str], source: str, *, group: int = 0,
                 edge: str | None = None, lowered: bool = False, requires: str = "") -> None:
        self.name = name
        self.anchors = tuple(anchors)
        #: a literal every whole match also holds (``@`` of a URL's password): a line with
        #: the anchor but not this is not searched (a log has many URLs, few passwords)
        self.requires = requires
        self.source = source
        self.group = group
        self.edge_source = edge
        self.lowered = lowered
        self._pattern: re.Pattern[str] | None = None
        self._edge: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most runs hit no anchor of most rules."""
        if self._pattern is None:
            self._pattern = re.compile(self.source, re.IGNORECASE if self.lowered else 0)
        return self._pattern

    @property
    def edge(self) -> re.Pattern[str] | None:
        if self._edge is None and self.edge_source is not None:
            self._edge = re.compile(self.edge_source + r"\Z",
                                    re.IGNORECASE if self.lowered else 0)
        return self._edge

    def present(self, text: str, lowered: str) -> bool:
        """Whether ``text`` holds one of the anchors (searched in ``lowered`` if so)."""
        haystack = lowered if self.lowered else text
        return any(anchor in haystack for anchor in self.anchors)


#: A tool's own truncation mark inside a value (pytest's ``'ghp_A1b2...Q7r8'``, reprlib).
_ELLIPSIS = "(?:\\.\\.\\.|\u2026)"
_SHORTENED_MOST = 512


def _shortened(chars: str, most: int) -> str:
    """A value a tool cut short with an ellipsis: some of its characters on either side
    (at least one), so what is left of a secret is taken whole, never 24 of 40 characters.
    Each side is bounded (a tool's shortened repr is a few hundred characters)."""
    most = min(most, _SHORTENED_MOST)
    return (f"(?:[{chars}]{{1,{most}}}{_ELLIPSIS}[{chars}]{{0,{most}}}"
            f"|{_ELLIPSIS}[{chars}]{{1,{most}}})")


def _prefixed(name: str, prefixes: Sequence[str], body: str, least: int, most: int = 255
              ) -> PatternRule:
    """A token that starts with one of ``prefixes`` and goes on in ``body`` characters
    (or in some of them around an ellipsis: the tool shortened it)."""
    escaped = [re.escape(prefix) for prefix in prefixes]
    head = escaped[0] if len(escaped) == 1 else f"(?:{'|'.join(escaped)})"
    return PatternRule(name, prefixes,
                       f"{head}(?:{_shortened(body, most)}|[{body}]{{{least},{most}}})",
                       edge=f"{head}[{body}]*")


def _keyed(name: str, anchors: Sequence[str], key: str, value: str, *, least: int,
           most: int = 4096) -> PatternRule:
    """A value after its key (``key = value``, ``"key": "value"``): the value only; the
    key is matched case-insensitively (its anchors are searched lowered)."""
    head = rf"{key}[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?"
    return PatternRule(name, anchors,
                       rf"{head}({_shortened(value, most)}|[{value}]{{{least},{most}}})",
                       group=1, lowered=True, edge=rf"{head}([{value}]*)")


#: The scheme an ``Authorization`` header names before its credential.
_SCHEME = r"(?:bearer|basic|token|digest|negotiate)[ \t]{1,8}"

BUILTIN: tuple[PatternRule, ...] = (
    # AWS access key ids (long-term AKIA, temporary ASIA): 4 + 16 upper-case alphanumerics.
    _prefixed("aws-access-key", ("AKIA", "ASIA"), "A-Z0-9", 16, 16),
    # The secret access key has no prefix: 40 base64 characters named by its key.
    _keyed("aws-secret-key", ("secret_access_key", "secretaccesskey", "secret-access-key"),
           r"secret[_-]?access[_-]?key", "A-Za-z0-9/+=", least=40, most=40),
    _prefixed("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "A-Za-z0-9", 30),
    _prefixed("github-token", ("github_pat_",), "A-Za-z0-9_", 22),
    _prefixed("gitlab-token", ("glpat-",), "A-Za-z0-9_-", 20),
    PatternRule("slack-token", ("xox",),
                rf"xox[a-z]-(?:{_shortened('A-Za-z0-9-', 255)}|[A-Za-z0-9-]{{10,255}})",
                edge=r"xox[a-z]-[A-Za-z0-9-]*"),
    PatternRule("stripe-key", ("k_live_",),
                rf"[sr]k_live_(?:{_shortened('A-Za-z0-9', 255)}|[A-Za-z0-9]{{10,255}})",
                edge=r"[sr]k_live_[A-Za-z0-9]*"),
    _prefixed("google-api-key", ("AIza",), "A-Za-z0-9_-", 35, 35),
    _prefixed("npm-token", ("npm_",), "A-Za-z0-9", 36, 36),
    _keyed("npm-token", ("_authtoken",), "_authToken", "^\\s\"'", least=8),
    _prefixed("pypi-token", ("pypi-Ag",), "A-Za-z0-9_-", 50, 4096),
    # header.payload.signature, the first two base64url JSON objects ({"...)
    PatternRule("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,8192}"
                rf"(?:\.[A-Za-z0-9_-]{{0,4096}}(?:{_ELLIPSIS}[A-Za-z0-9_.-]{{0,8192}})?"
                rf"|{_ELLIPSIS}[A-Za-z0-9_.-]{{0,8192}})"
                rf"|eyJ{_shortened('A-Za-z0-9_.-', 8192)}",
                edge=r"eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}"),
    # The credential after an Authorization header's scheme; a bare Bearer token.
    PatternRule("authorization", ("authorization",),
                rf"authorization[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?{_SCHEME}"
                r"([^\s\"',;]{4,4096})", group=1, lowered=True,
                edge=rf"authorization[\"']?[ \t]{{0,8}}[:=][ \t]{{0,8}}[\"']?{_SCHEME}"
                     r"([^\s\"',;]*)"),
    PatternRule("authorization", ("bearer",), r"bearer[ \t]{1,8}("
                rf"{_shortened('A-Za-z0-9._~+/-', 4096)}|[A-Za-z0-9._~+/-]{{8,4096}}=*)",
                group=1, lowered=True, edge=r"bearer[ \t]{1,8}([A-Za-z0-9._~+/-]*=*)"),
    # scheme://user:password@host: the password only
    PatternRule("url-password", ("://",), r"://[^\s:/@\"'<>]{0,255}:([^\s/\"'<>]{1,1024})@",
                group=1, edge=r"://[^\s:/@\"'<>]{0,255}:([^\s/\"'<>@]*)", requires="@"),
)

#: The generic rule, off by default: a long token mixing cases and digits with
#: high Shannon entropy. It also takes base64 test data and random ids, hence off.
ENTROPY = PatternRule(ENTROPY_RULE, (), rf"[{_B64}]{{24,}}")
#: The bits per character an ENTROPY match needs.
ENTROPY_BITS = 4.0


def compile_user(name: str, source: str) -> PatternRule:
    """A ``[run.redact.patterns]`` entry: no anchors, so it runs on every text."""
    return PatternRule(name, (), source)


def high_entropy(token: str) -> bool:
    """Mixed case and digits, not hex, and at least :data:`ENTROPY_BITS` bits a character."""
    if not (any(c.isdigit() for c in token) and any(c.islower() for c in token)
            and any(c.isupper() for c in token)):
        return False
    import math

    counts: dict[str, int] = {}
    for char in token:
        counts[char] = counts.get(char, 0) + 1
    size = len(token)
    bits = -sum(n / size * math.log2(n / size) for n in counts.values())
    return bits >= ENTROPY_BITS
