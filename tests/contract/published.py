"""The published schemas, rebuilt from the tables of CONTRACT.md.

CONTRACT.md (a copy of the team's ``shared/CONTRACT.md``, kept beside these
tests) states the key sets and constraints of the three schemas the public ckdn
distribution ships. These schemas are built from its text, not from ours, so a
test comparing the two, or validating our documents against these, catches a
drift on either side: a key renamed in our schema, a row added to the contract.

Only the phrasings CONTRACT.md uses are understood; anything else fails loudly,
so a new row is never read as "any value".
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

CONTRACT = Path(__file__).with_name("CONTRACT.md")

_STATUSES = ["pass", "fail", "error", "parse_mismatch"]
_GATE = {"type": "object", "additionalProperties": False, "required": ["status", "policy"],
         "properties": {"status": {"enum": ["pass", "fail", "unavailable"]},
                        "policy": {"type": "string"}, "reason": {"type": "string"}}}

#: (pattern of a type cell, schema); the first match wins, and one must match.
_TYPES: list[tuple[str, dict[str, Any]]] = [
    (r"const `([^`]+)`", {}),  # filled from the match
    (r"`pass` / `fail` / `error` / `parse_mismatch`", {"enum": _STATUSES}),
    (r"see below", {"enum": ["pass", "fail"]}),  # the aggregate: "allows only pass/fail"
    (r"string, min(?: length)? 1", {"type": "string", "minLength": 1}),
    (r"string: ISO 8601 UTC, whole seconds, `\+00:00` offset",
     {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$"}),
    (r"string, 64 lowercase hex", {"type": "string", "pattern": "^[0-9a-f]{64}$"}),
    (r"string", {"type": "string"}),
    (r"integer >= 1", {"type": "integer", "minimum": 1}),
    (r"integer >= 0", {"type": "integer", "minimum": 0}),
    (r"integer", {"type": "integer"}),
    (r"number >= 0", {"type": "number", "minimum": 0}),
    (r"boolean", {"type": "boolean"}),
    (r"object \(free-form\)", {"type": "object"}),
    (r"object `\{known: int >= 0, new: int >= 0\}`, both required, closed",
     {"type": "object", "additionalProperties": False, "required": ["known", "new"],
      "properties": {"known": {"type": "integer", "minimum": 0},
                     "new": {"type": "integer", "minimum": 0}}}),
    (r"object `\{status: pass/fail/unavailable, policy: string, reason\?: string\}`", _GATE),
    (r"as in the digest", _GATE),
    (r"array of strings, at least 1", {"type": "array", "items": {"type": "string"},
                                       "minItems": 1}),
    (r"array of strings \(may be empty\)", {"type": "array", "items": {"type": "string"}}),
    (r"array of strings", {"type": "array", "items": {"type": "string"}}),
    (r"array of finding, at least 1 item", {"type": "array", "minItems": 1,
                                            "items": {"$ref": "#/$defs/finding"}}),
    (r"array of member", {"type": "array", "items": {"$ref": "#/$defs/member"}}),
]


def type_schema(cell: str) -> dict[str, Any]:
    """The JSON Schema a type cell of CONTRACT.md describes."""
    for pattern, schema in _TYPES:
        found = re.match(pattern, cell)
        if found:
            if pattern.startswith("const"):
                value = found.group(1)
                return {"const": True if value == "true" else value}
            return dict(schema)
    raise AssertionError(f"CONTRACT.md type not understood: {cell!r}")


def section(title: str) -> str:
    text = CONTRACT.read_text(encoding="utf-8")
    start = text.index(f"### {title}\n")
    end = min((i for i in (text.find("\n### ", start + 1), text.find("\n## ", start + 1))
               if i > 0), default=len(text))
    return text[start:end]


def table(text: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table in ``text``, header dropped."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def keys_of(cell: str) -> list[str]:
    return [key.strip() for key in cell.split(",")]


def document(title: str) -> dict[str, Any]:
    """A closed object schema from a section's key table (``required``: yes / no / ...)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key_cell, type_cell, *rest in table(section(title)):
        for key in keys_of(key_cell):
            properties[key] = type_schema(type_cell)
            if rest and rest[0] == "yes":
                required.append(key)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "additionalProperties": False, "required": required, "properties": properties}


def sentence_object(text: str, lead: str) -> dict[str, Any]:
    """A closed object from a sentence like ``A finding: `id` (string, min 1), ... required;
    `location` (string) ... optional; closed.``"""
    found = re.search(rf"^{lead}: (.*?)closed\.", text, re.MULTILINE | re.DOTALL)
    assert found, f"no {lead!r} sentence in CONTRACT.md"
    body = " ".join(found.group(1).split())
    needed, _, optional = body.partition(" required;")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, cell in re.findall(r"`(\w+)`(?: \(([^)]*)\))?", needed):
        properties[key] = type_schema(cell) if cell else {}
        required.append(key)
    for key, cell in re.findall(r"`(\w+)` \(([^)]*)\)", optional):  # a typed name only
        properties[key] = type_schema(cell)
    return {"type": "object", "additionalProperties": False, "required": required,
            "properties": properties}


@cache
def digest_schema() -> dict[str, Any]:
    schema = document("`ckdn.digest/2`")
    schema["$defs"] = {"finding": sentence_object(section("`ckdn.digest/2`"), "A finding")}
    # status_reason: "present exactly when status is not `pass`"
    schema["if"] = {"properties": {"status": {"const": "pass"}}}
    schema["then"] = {"not": {"required": ["status_reason"]}}
    schema["else"] = {"required": ["status_reason"]}
    return schema


@cache
def aggregate_schema() -> dict[str, Any]:
    text = section("`ckdn.aggregate/1`")
    schema = document("`ckdn.aggregate/1`")
    member = sentence_object(text, "A member")
    member["properties"]["status"] = {"enum": _STATUSES}
    # "run_dir present exactly when the member's status is not pass, absent on a passing one"
    member["if"] = {"properties": {"status": {"const": "pass"}}}
    member["then"] = {"not": {"required": ["run_dir"]}}
    member["else"] = {"required": ["run_dir"]}
    schema["$defs"] = {"member": member}
    return schema


@cache
def meta_schema() -> dict[str, Any]:
    return document("`ckdn.meta/1`")


def seed_000_aggregate_schema() -> dict[str, Any]:
    """The published aggregate schema with the two differences seed 000 wins on (stated in
    CONTRACT.md): a member fail-fast never reached is ``{check, status: "skipped"}``, and
    the aggregate takes the first non-green member's status, whatever it is."""
    import copy

    schema = copy.deepcopy(aggregate_schema())
    schema["properties"]["status"] = {"enum": _STATUSES}
    skipped = {"type": "object", "additionalProperties": False, "required": ["check", "status"],
               "properties": {"check": {"type": "string"}, "status": {"const": "skipped"}}}
    schema["$defs"]["member"] = {"anyOf": [schema["$defs"]["member"], skipped]}
    return schema
