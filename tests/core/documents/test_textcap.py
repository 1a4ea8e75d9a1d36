"""The text policy on generated input: inert, cut to the width it shows, every cut counted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn._lite import canonical
from ckdn.documents.textcap import Cut, clean_cap, clean_line, inert, marked, strip_ansi


def acts(char: str) -> bool:
    """The characters the policy escapes, written out independently of its pattern."""
    code = ord(char)
    return ((code < 0x20 and char != "\t") or 0x7F <= code <= 0x9F
            or code in (0x061C, 0x200E, 0x200F) or 0x2028 <= code <= 0x202E
            or 0x2066 <= code <= 0x2069)


def shown_as(char: str) -> str:
    if 0xD800 <= ord(char) <= 0xDFFF:
        return "\ufffd"
    return f"\\u{ord(char):04x}" if acts(char) else char


def reference_cap(text: str, width: int, omitted: int = 0) -> str:
    """What clean_cap must give: the longest prefix whose shown form fits, and the count."""
    body = strip_ansi(text)
    shown, taken = "", 0
    for char in body:
        form = shown_as(char)
        if len(shown) + len(form) > width:
            break
        shown += form
        taken += 1
    return marked(shown, omitted + len(body) - taken)


# Every acting character, often; the rest of Unicode (lone surrogates included) too.
acting = st.sampled_from([chr(c) for c in range(0x2070)  # every acting one is below
                          if acts(chr(c))] + ["\x1b[31m", "\x1b]0;t\x07", "\t", "\\", '"'])
texts = st.lists(st.one_of(acting, st.characters()), max_size=400).map("".join)


@given(text=texts, width=st.integers(0, 700), omitted=st.integers(0, 10**6))
def test_clean_cap_shows_the_longest_inert_prefix_that_fits_and_counts_the_rest(
        text: str, width: int, omitted: int) -> None:
    value = Cut(text, omitted) if omitted else text
    got = clean_cap(value, width)
    assert got == reference_cap(text, width, omitted)
    assert not any(acts(c) or 0xD800 <= ord(c) <= 0xDFFF for c in got)


@given(text=texts, width=st.integers(0, 700))
def test_no_shown_character_costs_more_than_four_bytes_of_canonical_json(
        text: str, width: int) -> None:
    got = clean_line(text, width)
    body = got.rsplit("... [+", 1)[0] if got.endswith(" chars]") else got
    assert len(body) <= width
    assert len(canonical(body)) - 2 <= 4 * len(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts.filter(
        lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts.filter(
        lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)), inner, max_size=4),
    max_leaves=12)


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(value=json_values, indent=st.sampled_from([None, 2]))
def test_inert_json_reads_back_as_the_same_document_and_carries_nothing_that_acts(
        value: Any, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    lines = [inert(line) for line in text.split("\n")]
    assert json.loads("\n".join(lines)) == value
    assert not any(acts(c) for line in lines for c in line)
