"""The documents' TypedDicts and the packaged JSON Schemas say the same thing, key by key.

A key added to a schema without its type (or to a type without the schema) fails
here, as does a key that is required in one and optional in the other, or typed
differently (a JSON ``integer`` is an ``int``, a ``const true`` a ``Literal[True]``).
"""

from __future__ import annotations

import typing
from typing import Any, Literal, NotRequired, get_args, get_origin, get_type_hints

import pytest

from ckdn.documents import types
from ckdn.schema import load_schema

JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool, "number": float,
                               "array": list, "object": dict, "null": type(None)}


def schema_node(schema_id: str, pointer: str) -> dict[str, Any]:
    node: dict[str, Any] = load_schema(schema_id)
    for part in filter(None, pointer.split("/")):
        node = node[part]
    return node


#: TypedDict -> (schema id, JSON pointer to the object schema it mirrors)
MIRRORS: dict[type, tuple[str, str]] = {
    types.Digest: ("ckdn.digest/2", ""),
    types.FindingDoc: ("ckdn.digest/2", "$defs/finding"),
    types.BaselineCounts: ("ckdn.digest/2", "properties/baseline"),
    types.Aggregate: ("ckdn.aggregate/1", ""),
    types.MemberDoc: ("ckdn.aggregate/1", "$defs/member"),
    types.Meta: ("ckdn.meta/1", ""),
    types.OriginDoc: ("ckdn.digest/2", "properties/origin"),
    types.ImportedOrigin: ("ckdn.digest/2", "properties/origin/properties/imported"),
    types.ImportSummary: ("ckdn.digest/2", "properties/import_summary"),
}


def resolve(schema_id: str, node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    return resolve(schema_id, schema_node(schema_id, ref.removeprefix("#/")))


def python_type_matches(hint: Any, node: dict[str, Any]) -> bool:
    """Whether the annotation ``hint`` says what the JSON Schema ``node`` says."""
    if get_origin(hint) is NotRequired:
        hint = get_args(hint)[0]
    if "const" in node:
        return get_origin(hint) is Literal and get_args(hint) == (node["const"],)
    if "enum" in node:
        return hint is str or (get_origin(hint) is Literal
                               and set(get_args(hint)) == set(node["enum"]))
    if isinstance(node["type"], list):  # a union: ``int | None`` for ["integer", "null"]
        return {JSON_TYPES[name] for name in node["type"]} == set(get_args(hint))
    expected = JSON_TYPES[node["type"]]
    origin = get_origin(hint) or hint
    if expected is dict:
        return origin is dict or typing.is_typeddict(hint)
    return bool(origin is expected)


@pytest.mark.parametrize("typed", list(MIRRORS), ids=lambda t: t.__name__)
def test_each_typed_document_has_exactly_its_schemas_keys(typed: Any) -> None:
    schema_id, pointer = MIRRORS[typed]
    node = resolve(schema_id, schema_node(schema_id, pointer))
    assert node["type"] == "object"
    assert node["additionalProperties"] is False
    properties = set(node["properties"])
    required = set(node.get("required", ()))
    assert set(typed.__required_keys__) == required
    assert set(typed.__optional_keys__) == properties - required


@pytest.mark.parametrize("typed", list(MIRRORS), ids=lambda t: t.__name__)
def test_each_key_has_the_type_its_schema_gives_it(typed: Any) -> None:
    schema_id, pointer = MIRRORS[typed]
    node = resolve(schema_id, schema_node(schema_id, pointer))
    hints = get_type_hints(typed, include_extras=True)
    wrong = {key: hints[key] for key, prop in node["properties"].items()
             if not python_type_matches(hints[key], resolve(schema_id, prop))}
    assert wrong == {}


def test_list_items_are_typed_as_their_schema_items() -> None:
    hints = get_type_hints(types.Digest)
    assert get_args(hints["findings"]) == (types.FindingDoc,)
    assert get_args(hints["notes"]) == (str,)
    assert get_args(get_type_hints(types.Aggregate)["members"]) == (types.MemberDoc,)
