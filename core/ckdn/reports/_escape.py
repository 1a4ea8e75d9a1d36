"""Escaping for the places a report goes: GitHub workflow commands, Markdown, HTML."""

from __future__ import annotations

import re

from ckdn.documents.textcap import inert

__all__ = ["decode_data", "decode_property", "escape_data", "escape_property", "html",
           "markdown"]

# Whatever a stored digest holds (a tool's message is any text: ``%``, ``::``, a
# line break, a pipe, a backtick, a control byte) is shown as text and never acts:
# it cannot end a workflow command and start another, close a table cell, open a
# link or an HTML element, or move a terminal's cursor. Every function first makes
# the text inert (:func:`ckdn.documents.textcap.inert`: a control character is
# shown as ``\\uXXXX``), then applies the place's own escaping.

_DATA = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY = (*_DATA, (":", "%3A"), (",", "%2C"))
#: The ASCII punctuation that means something in GitHub's Markdown (CommonMark's
#: specials, ``:`` emoji, ``$`` maths, ``@`` mentions), each backslash-escaped.
_MARKDOWN = frozenset("\\`*_{}[]()#+-.!|<>~&:$@")


def _inert_lines(text: str) -> str:
    """``text`` inert but for its CRs and LFs, which the escaping below carries."""
    if text.isascii() and text.isprintable():
        return text

    return "".join(part if part in ("\r", "\n") else inert(part)
                   for part in re.split(r"([\r\n])", text))


def escape_data(text: str) -> str:
    """The message of a workflow command, as GitHub's toolkit escapes it (``%``, CR, LF).

    A line break becomes ``%0A``, which GitHub shows as a line break inside the one
    annotation; every other control character is made inert.
    """
    text = _inert_lines(text)
    for raw, escaped in _DATA:
        text = text.replace(raw, escaped)
    return text


def escape_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which end one."""
    text = _inert_lines(text)
    for raw, escaped in _PROPERTY:
        text = text.replace(raw, escaped)
    return text


def decode_data(text: str) -> str:
    """What GitHub's runner reads back from an escaped message (its documented decoding)."""
    for raw, escaped in reversed(_DATA):
        text = text.replace(escaped, raw)
    return text


def decode_property(text: str) -> str:
    """What GitHub's runner reads back from an escaped property value."""
    for raw, escaped in reversed(_PROPERTY):
        text = text.replace(escaped, raw)
    return text


def markdown(text: str) -> str:
    """Inline Markdown that shows ``text`` literally: one line, every special escaped."""
    text = inert(" ".join(text.splitlines()))
    return "".join(f"\\{c}" if c in _MARKDOWN else c for c in text)


def html(text: str) -> str:
    """Text for inside ``<pre>``: ``&``, ``<``, ``>`` as entities, control characters inert."""
    text = "\n".join(inert(line) for line in text.splitlines())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
