"""The packaged JSON Schemas (Draft 2020-12) of the documents ckdn writes."""

from __future__ import annotations

import json
import os

from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["UnknownSchemaError", "load_schema", "schema_ids"]

# Stdlib only, so a consumer can fetch a schema without ckdn pulling a validator
# in: ``load_schema("ckdn.digest/2")`` returns the parsed schema, and the
# validating is the caller's (ckdn's own suite does it with ``jsonschema``).
#
# ``ckdn.baseline/1`` is a documented schema id with no packaged schema on
# purpose: the baseline file is ckdn's own state, not output to validate, so it is
# neither listed nor loadable.

#: schema id -> file in ``ckdn/schemas/`` (shipped inside the wheel).
_FILES = {
    "ckdn.aggregate/1": "aggregate-1.json",
    "ckdn.change/1": "change-1.json",
    "ckdn.diff/1": "diff-1.json",
    "ckdn.digest/2": "digest-2.json",
    "ckdn.doctor/1": "doctor-1.json",
    "ckdn.meta/1": "meta-1.json",
    "ckdn.status/1": "status-1.json",
    "ckdn.plan/1": "plan-1.json",
}
_UNPACKAGED = {"ckdn.baseline/1": "it is ckdn's own state, not output to validate"}
_DIR = os.path.join(os.path.dirname(__file__), "schemas")


class UnknownSchemaError(UsageError, KeyError):
    """No packaged schema has this id. A UsageError (one line, exit 2) and a KeyError."""


def schema_ids() -> list[str]:
    """The ids :func:`load_schema` accepts, sorted."""
    return sorted(_FILES)


def load_schema(schema_id: str) -> dict[str, Any]:
    """The parsed JSON Schema of ``schema_id``; a fresh dict on every call."""
    name = _FILES.get(schema_id) if isinstance(schema_id, str) else None
    if name is None:
        known = ", ".join(schema_ids())
        why = _UNPACKAGED.get(schema_id) if isinstance(schema_id, str) else None
        if why:
            raise UnknownSchemaError(f"schema {schema_id} has no packaged JSON Schema ({why}); "
                                     f"packaged: {known}")
        raise UnknownSchemaError(f"unknown schema id {schema_id!r}; use one of: {known}")

    with open(os.path.join(_DIR, name), encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded
