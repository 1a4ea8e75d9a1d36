"""The output schemas the tools declare: ckdn's packaged document schemas, embedded.

A tool's output schema is one JSON Schema object. The digest's, the aggregate's
and the diff's packaged schemas are embedded in it as they are, except that their
``$id`` and ``$schema`` go and their ``$defs`` move to the root (prefixed), so every
``$ref`` is a plain ``#/$defs/...`` pointer that any client's validator resolves:
the schemas are not typed twice, only re-rooted.
"""

from __future__ import annotations

from typing import Any

from ckdn.app.queries import load_schema

__all__ = ["OUTPUT_SCHEMAS"]

_DOCUMENTS = {"digest": "ckdn.digest/2", "aggregate": "ckdn.aggregate/1", "diff": "ckdn.diff/1",
              "meta": "ckdn.meta/1", "status": "ckdn.status/1"}
_INT = {"type": "integer"}
_STR = {"type": "string"}


def _rerooted(value: Any, prefix: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str) and item.startswith("#/$defs/"):
                out[key] = f"#/$defs/{prefix}.{item[len('#/$defs/'):]}"
            else:
                out[key] = _rerooted(item, prefix)
        return out
    if isinstance(value, list):
        return [_rerooted(item, prefix) for item in value]
    return value


def _embed(key: str, defs: dict[str, Any]) -> dict[str, Any]:
    """The body of ``key``'s packaged schema; its ``$defs`` added to ``defs``."""
    schema = load_schema(_DOCUMENTS[key])
    for name, sub in schema.pop("$defs", {}).items():
        defs[f"{key}.{name}"] = _rerooted(sub, key)
    schema.pop("$id", None)
    schema.pop("$schema", None)
    return dict(_rerooted(schema, key))


def _object(properties: dict[str, Any], required: list[str],
            one_of: list[list[str]] | None = None, defs: dict[str, Any] | None = None,
            ) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "required": required, "additionalProperties": False}
    if one_of:
        schema["oneOf"] = [{"required": names} for names in one_of]
    if defs:
        schema["$defs"] = defs
    return schema


def _run_result(key: str) -> dict[str, Any]:
    """``{run_id, exit_code, <key>}``, or ``{refused, exit_code}`` when the lock was held."""
    defs: dict[str, Any] = {}
    return _object({"run_id": _STR, "exit_code": _INT, key: _embed(key, defs),
                    "refused": _STR}, ["exit_code"],
                   [["run_id", key], ["refused"]], defs)


def _evidence(digest: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """get_evidence's answer: the run's evidence in the digest's own terms, a window, meta."""
    shown = digest["properties"]
    window = _object({"name": _STR, "offset": _INT, "limit": _INT, "returned": _INT,
                      "total_lines": _INT, "lines_cut": _INT, "truncated": {"type": "boolean"},
                      "next_offset": {"type": ["integer", "null"]},
                      "lines": {"type": "array", "items": _STR}},
                     ["name", "offset", "limit", "total_lines", "truncated", "lines"])
    routed = _object({"run_id": _STR, "alias": _STR, "member": _STR},
                     ["run_id", "alias", "member"])
    properties = {"run_id": _STR, "artifacts": {"type": "array", "items": _STR},
                  **{key: shown[key] for key in (
                      "check", "status", "rc", "run_dir", "status_reason", "timed_out",
                      "interrupted", "findings_total", "findings_truncated", "findings",
                      "log_tail", "notes", "gate", "baseline")},
                  "alias_run": routed, "artifact": window, "meta": _embed("meta", defs)}
    return _object(properties, ["run_id", "check", "status", "rc", "run_dir", "artifacts"],
                   defs=defs)


def _build() -> dict[str, dict[str, Any]]:
    digest_defs: dict[str, Any] = {}
    digest = _embed("digest", digest_defs)
    aggregate = _embed("aggregate", digest_defs)
    evidence_defs: dict[str, Any] = {}
    evidence = _evidence(_embed("digest", evidence_defs), evidence_defs)
    diff_defs: dict[str, Any] = {}
    status_defs: dict[str, Any] = {}
    row = {"type": "object"}
    return {
        "list_checks": _object({"config": _STR, "cwd": _STR, "runs_dir": _STR,
                                "checks": {"type": "array", "items": row}},
                               ["config", "cwd", "runs_dir", "checks"]),
        "run_check": _run_result("digest"),
        "run_group": _run_result("aggregate"),
        "run_all": _run_result("aggregate"),
        "get_digest": {"type": "object", "anyOf": [digest, aggregate], "$defs": digest_defs},
        "list_runs": _object({"runs": {"type": "array", "items": row}}, ["runs"]),
        "get_evidence": evidence,
        "diff": _object({"diff": _embed("diff", diff_defs)}, ["diff"], defs=diff_defs),
        "status": _embed("status", status_defs) | ({"$defs": status_defs} if status_defs else {}),
    }


#: tool name -> its output schema.
OUTPUT_SCHEMAS = _build()
