"""ckdn._lite.canonical: byte for byte the ``json.dumps`` it stands in for, escaper fallback too."""

from __future__ import annotations

import json
import json.encoder
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn import _lite as canonical_module
from ckdn._lite import canonical, encoded_size
from ckdn.documents.textcap import Cut


def dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8", "replace")


def test_encode_is_canonical_compact_utf8_without_newline() -> None:
    data = canonical({"b": 1, "a": ["é", {"d": 2, "c": 3}]})
    assert data == '{"a":["é",{"c":3,"d":2}],"b":1}'.encode()


JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=5) | st.tuples(children, children)
    | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_encode_is_byte_for_byte_what_json_dumps_gives(value: Any) -> None:
    assert canonical(value) == dumps(value)
    assert encoded_size(value) == len(dumps(value))


def test_encode_turns_a_lone_surrogate_into_a_question_mark_as_before() -> None:
    assert canonical({"k\ud800": ["a\udfffb"]}) == b'{"k?":["a?b"]}'


@pytest.mark.parametrize("value", [float("nan"), [float("inf")], {"a": -float("inf")}])
def test_encode_refuses_what_json_refuses_out_of_range_floats(value: Any) -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        canonical(value)


@pytest.mark.parametrize("value", [{1: "int key"}, {"a": {1, 2}}, [b"bytes"], object()])
def test_encode_refuses_values_that_are_not_json(value: Any) -> None:
    with pytest.raises(TypeError):
        canonical(value)


@given(JSON_VALUES)
def test_the_fallback_escaper_gives_the_same_bytes(value: Any) -> None:
    """Where ``_json`` is missing, json.encoder's own Python escaper is used: same bytes."""
    with mock.patch.object(canonical_module, "_quote", json.encoder.py_encode_basestring):
        assert canonical(value) == dumps(value)


def test_a_cut_string_is_encoded_as_the_text_a_reader_sees() -> None:
    assert canonical({"m": Cut("abc", 7)}) == b'{"m":"abc... [+7 chars]"}'


@given(st.text() | st.sampled_from(['a"b', "a\\b", "tab\there", "\x7f", "é", "\u2028", "\ud800"]))
def test_a_string_is_quoted_as_json_quotes_it_with_or_without_the_c_escaper(text: str) -> None:
    """Plain strings are quoted without loading ``_json``; the rest go through its escaper."""
    assert canonical_module._quote(text) == json.encoder.py_encode_basestring(text)
    assert canonical([text]) == dumps([text])
