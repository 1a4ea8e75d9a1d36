"""Redaction where a digest's strings are made: before each is cut, after ANSI is gone.

A secret that straddles a cut must not show its first half, so a string is
redacted before the digest cuts it to its width, with a margin past the width
(:attr:`ckdn.redact.Redaction.margin`) so what straddles the cut is whole; a
string a parser already cut (a :class:`~ckdn.documents.textcap.Cut`) is redacted
with its edge rules, which take what is left of a token at its end. ANSI
sequences are stripped first: ``\\x1b[31mghp_...`` must read as the token it is.

The cut counts stay exact: what a reader does not see is counted in characters
of the redacted text within the window, plus every character past it.
"""

from __future__ import annotations

from ckdn.documents.textcap import Cut, parts, strip_ansi

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ckdn.redact import Redaction

__all__ = ["redacted", "redacted_pieces"]


def redacted(redaction: Redaction | None, value: object, width: int) -> object:
    """``value`` with its secrets redacted, ready for ``clean_line``/``clean_cap`` at
    ``width``: the value itself when nothing in it can be a secret."""
    if redaction is None or not redaction.enabled:
        return value
    body, omitted = parts(value)
    if len(body) < 4:
        return value
    body = strip_ansi(body)
    limit = width + redaction.margin
    window = body[:limit]
    if not redaction.may_hold(window):
        return value
    rest = len(body) - len(window)
    shown = redaction.text(window, edge=bool(rest or omitted))
    return Cut(shown, omitted + rest) if omitted + rest else shown


def redacted_pieces(redaction: Redaction | None, pieces: Sequence[tuple[str, int]],
                    width: int) -> list[tuple[str, int]]:
    """Lines ``(text, characters already cut off)`` redacted together (a key block
    spans them), each cut to ``width`` plus the margin first; the same pairs back."""
    if redaction is None or not redaction.enabled or not pieces:
        return list(pieces)
    limit = width + redaction.margin
    windows: list[str] = []
    counts: list[int] = []
    for text, omitted in pieces:
        body = strip_ansi(text)
        window = body[:limit]
        windows.append(window)
        counts.append(omitted + len(body) - len(window))
    shown = redaction.lines(windows, [count > 0 for count in counts])
    return list(zip(shown, counts, strict=True))
