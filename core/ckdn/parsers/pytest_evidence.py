"""The pytest plugin's evidence file: what a pytest session under ``ckdn run`` hands the parser.

When pytest runs as a ``ckdn run`` check, the runner exports ``CKDN_RUN_DIR``; the
plugin (``pytest --ckdn-digest``) then writes the facts it took from pytest's
own session hooks into ``$CKDN_RUN_DIR/ckdn-pytest.json`` instead of creating a
run dir of its own, and the ``pytest`` parser prefers that file over JUnit XML.
The outer process still owns the exit code: the file records the exit status
pytest itself ended with, and :func:`parse_evidence` turns a disagreement with
the real exit code into ``parser_ok=False`` (agree-or-alarm).

The file is ckdn's own, versioned by :data:`SCHEMA` and validated strictly on
read: a reader that guessed at a half-written or foreign file could report a
clean run that never happened, so anything malformed is a :class:`ValueError`.

Format history:

* ``ckdn.pytest-evidence/1`` -- ``schema``, ``exitstatus``, ``findings``,
  ``findings_total``, ``summary``, ``notes``, ``gate_failures``, ``parser_ok``,
  ``evidence_expected``, ``wants_log_tail``; every key always present.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ckdn.parsers.base import Finding, ParseContext, ParseResult

__all__ = ["EVIDENCE_FILE", "MAX_EVIDENCE_BYTES", "SCHEMA", "encode_evidence", "evidence_result",
           "parse_evidence", "read_evidence", "write_evidence"]

EVIDENCE_FILE = "ckdn-pytest.json"
SCHEMA = "ckdn.pytest-evidence/1"
#: The plugin keeps at most ``top`` findings with bounded details, so a real file
#: is small; anything past this is not one of ours and is refused unread.
MAX_EVIDENCE_BYTES = 16 * 1024 * 1024

_KEYS = frozenset({"schema", "exitstatus", "findings", "findings_total", "summary", "notes",
                   "gate_failures", "parser_ok", "evidence_expected", "wants_log_tail"})
_FINDING_KEYS = frozenset({"id", "kind", "message", "location", "detail"})


def _finding_doc(finding: Finding) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": finding.id, "kind": finding.kind, "message": finding.message,
                           "detail": list(finding.detail)}
    if finding.location is not None:
        doc["location"] = finding.location
    return doc


def encode_evidence(result: ParseResult, exitstatus: int) -> bytes:
    """The evidence document for ``result`` and pytest's final exit status, as bytes."""
    doc = {
        "schema": SCHEMA,
        "exitstatus": int(exitstatus),
        "findings": [_finding_doc(f) for f in result.findings],
        "findings_total": result.total,
        "summary": result.summary,
        "notes": list(result.notes),
        "gate_failures": list(result.gate_failures),
        "parser_ok": result.parser_ok,
        "evidence_expected": result.evidence_expected,
        "wants_log_tail": result.wants_log_tail,
    }
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8", "surrogateescape") + b"\n"


def write_evidence(path: Path, result: ParseResult, exitstatus: int) -> None:
    """Write the evidence file atomically: a reader sees no file or the whole file.

    Raises :class:`OSError` when it cannot be written (the caller reports it;
    the outer run then finds no evidence, which is never a pass on rc != 0).
    """
    data = encode_evidence(result, exitstatus)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: the plugin never writes them, so the file was tampered."""
    raise ValueError(f"not JSON: {name}")


def read_evidence(path: Path) -> tuple[ParseResult, int]:
    """The parse result and pytest exit status stored in ``path``.

    Raises :class:`ValueError` naming what is wrong for anything that is not a
    complete, well-formed ``ckdn.pytest-evidence/1`` document (and
    :class:`OSError` when the file cannot be read at all).
    """
    with open(path, "rb") as handle:
        data = handle.read(MAX_EVIDENCE_BYTES + 1)
    if len(data) > MAX_EVIDENCE_BYTES:
        raise ValueError(f"larger than {MAX_EVIDENCE_BYTES} bytes")
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte offset {exc.start})") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    return _validate(doc)


def _validate(doc: Any) -> tuple[ParseResult, int]:
    if not isinstance(doc, dict):
        raise ValueError(f"top level must be an object, not {type(doc).__name__}")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise ValueError(f"schema is {schema!r}, expected {SCHEMA!r}")
    keys = set(doc)
    if keys != _KEYS:
        missing, extra = sorted(_KEYS - keys), sorted(keys - _KEYS)
        raise ValueError("keys do not match the schema"
                         + (f"; missing: {', '.join(missing)}" if missing else "")
                         + (f"; unexpected: {', '.join(extra)}" if extra else ""))
    exitstatus = _int(doc, "exitstatus")
    findings = [_finding(i, f) for i, f in enumerate(_list(doc, "findings"))]
    total = _int(doc, "findings_total")
    if total < len(findings):
        raise ValueError(f"findings_total {total} is less than the {len(findings)} findings listed")
    summary = doc["summary"]
    if not isinstance(summary, dict):
        raise ValueError("summary must be an object")
    result = ParseResult(
        findings=findings, summary=summary, parser_ok=_bool(doc, "parser_ok"),
        notes=_strings(doc, "notes"), gate_failures=_strings(doc, "gate_failures"),
        findings_total=total, evidence_expected=_bool(doc, "evidence_expected"),
        wants_log_tail=_bool(doc, "wants_log_tail"),
    )
    return result, exitstatus


def _int(doc: dict[str, Any], key: str) -> int:
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer, not {value!r}")
    if key != "exitstatus" and value < 0:
        raise ValueError(f"{key} must not be negative, not {value}")
    return value


def _bool(doc: dict[str, Any], key: str) -> bool:
    value = doc[key]
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, not {value!r}")
    return value


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    value = doc[key]
    if not isinstance(value, list):
        raise ValueError(f"{key} must be an array")
    return value


def _strings(doc: dict[str, Any], key: str) -> list[str]:
    value = _list(doc, key)
    if not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be an array of strings")
    return value


def _finding(index: int, raw: Any) -> Finding:
    where = f"findings[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    keys = set(raw)
    required = _FINDING_KEYS - {"location"}
    if not required <= keys <= _FINDING_KEYS:
        raise ValueError(f"{where} keys must be {', '.join(sorted(required))} "
                         "and optionally location")
    for key in ("id", "kind", "message"):
        if not isinstance(raw[key], str):
            raise ValueError(f"{where}.{key} must be a string")
    location = raw.get("location")
    if "location" in raw and not isinstance(location, str):
        raise ValueError(f"{where}.location must be a string when present")
    detail = raw["detail"]
    if not isinstance(detail, list) or not all(isinstance(line, str) for line in detail):
        raise ValueError(f"{where}.detail must be an array of strings")
    return Finding(id=raw["id"], kind=raw["kind"], message=raw["message"], location=location,
                   detail=tuple(detail))


def parse_evidence(ctx: ParseContext) -> ParseResult | None:
    """The ``pytest`` parser's first step: the plugin's evidence, when the run left one.

    ``None`` when the run dir holds no evidence file (the parser goes on to JUnit
    XML); otherwise :func:`evidence_result`.
    """
    path = Path(ctx.run_dir, EVIDENCE_FILE)
    if not path.is_file():
        return None
    return evidence_result(ctx, path)


def evidence_result(ctx: ParseContext, path: Path) -> ParseResult:
    """The facts in the evidence file at ``path``, checked against the real exit code.

    At most ``ctx.top`` findings are kept (the total stays counted); the digest
    bounds details and text as for every parser. A malformed file, or one
    recording an exit status the real exit code contradicts (agree-or-alarm), is
    ``parser_ok=False`` with a note. Never raises.
    """
    try:
        result, exitstatus = read_evidence(path)
    except (OSError, ValueError) as exc:
        return ParseResult(parser_ok=False,
                           notes=[f"{EVIDENCE_FILE} is not valid pytest plugin evidence: {exc}"])
    if exitstatus != ctx.rc:
        result.parser_ok = False
        result.notes.append(f"{EVIDENCE_FILE} records pytest exit status {exitstatus} but the "
                            f"command exited with {ctx.rc}")
    result.findings_total = result.total
    del result.findings[ctx.top:]
    return result
