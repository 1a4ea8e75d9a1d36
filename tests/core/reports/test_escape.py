"""GitHub's workflow-command escaping, Markdown and HTML: stored text shows, never acts."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ckdn.reports import decode_data, decode_property, escape_data, escape_property, markdown

#: Printable text with every character GitHub's escaping is about, often.
TEXT = st.text(alphabet=st.sampled_from("%\r\n:,ab Z0:=%25%0A") | st.characters(
    blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf")), max_size=200)


def test_a_message_with_percent_line_breaks_colons_and_commas_round_trips() -> None:
    message = "100% of a.py:3, b.py:4\r\nthen %0A and %25 literally,\nend"
    escaped = escape_data(message)
    assert "\r" not in escaped
    assert "\n" not in escaped
    assert decode_data(escaped) == message
    prop = escape_property(message)
    assert not set(prop) & set(":,\r\n")
    assert decode_property(prop) == message


@given(TEXT)
def test_any_message_round_trips_through_githubs_decoding(message: str) -> None:
    escaped = escape_data(message)
    assert "\r" not in escaped
    assert "\n" not in escaped
    assert decode_data(escaped) == message


@given(TEXT)
def test_any_property_round_trips_and_cannot_end_the_property(value: str) -> None:
    escaped = escape_property(value)
    assert not set(escaped) & set(":,\r\n")
    assert decode_property(escaped) == value


def test_a_control_character_in_a_message_is_shown_not_sent() -> None:
    escaped = escape_data("red \x1b[31mtext\x07")
    assert "\x1b" not in escaped
    assert "\x07" not in escaped
    assert "\\u001b" in escaped


def test_markdown_specials_are_escaped_so_nothing_links_or_mentions() -> None:
    shown = markdown("[click](http://x) | @team <b>*bold*</b> `code` $x$\nnext")
    assert re.search(r"(?<!\\)[][()|@<>*`$:]", shown) is None, shown
    assert "\n" not in shown
