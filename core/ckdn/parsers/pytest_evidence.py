"""The pytest plugin's evidence file: the facts a pytest session under `ckdn run` hands over.

Read strictly, streamed, never through a symlink: a reader that guessed at a half-written
or foreign file could report a clean run that never happened (docs/pytest.md).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import IO, Any

from ckdn._lite import canonical
from ckdn.documents.textcap import Cut, cut
from ckdn.evidence_files import NotRegular, open_regular, read_regular
from ckdn.parsers._jsonstream import JsonStream, kind_of
from ckdn.parsers._pytest_log import stopped
from ckdn.parsers.base import Finding, ParseContext, ParseResult

__all__ = ["EVIDENCE_FILE", "MAX_EVIDENCE_BYTES", "PROGRESS_FILE", "PROGRESS_SCHEMA", "SCHEMA",
           "TERMINATED_STATUS", "Progress", "encode_evidence", "encode_progress",
           "evidence_result", "parse_evidence", "read_evidence", "read_no_follow",
           "read_progress"]

# -- reading ckdn's own files: regular files only, streamed in two passes (the schema,
# which says how to read a finding, is written after the findings) --------------------

LIST = object()  # in place of the streamed array in the first pass: it is an array
OTHER = object()  # in place of a streamed member that is not an array, or a key not read


def no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: the plugin never writes them, so the file was tampered."""
    raise ValueError(f"not JSON: {name}")


def open_no_follow(path: str | os.PathLike[str]) -> int:
    """A descriptor of the regular file at ``path``; :class:`ValueError` for a symlink or
    anything else (a FIFO does not block the open: ``O_NONBLOCK``)."""
    try:
        return open_regular(path)
    except NotRegular as exc:
        raise _refused(exc) from None


def _refused(exc: NotRegular) -> ValueError:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return ValueError("it is a symlink: refused (never read through a symlink)")
    return ValueError("not a regular file: refused")


def read_no_follow(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, never through a symlink.

    :class:`ValueError` when it is refused (a symlink, not a regular file, larger
    than ``limit`` bytes); :class:`OSError` when it cannot be read at all. A FIFO
    does not block the open (``O_NONBLOCK``), it is refused like any non-file.
    """
    try:
        data = read_regular(path, limit)
    except NotRegular as exc:
        raise _refused(exc) from None
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


def json_bytes(data: bytes) -> Any:
    """A small file's JSON, strictly (UTF-8, no NaN): :class:`ValueError` saying what is wrong."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=no_constant)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte offset {exc.start})") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None


def _stream(handle: IO[str]) -> JsonStream:
    return JsonStream(handle, parse_constant=no_constant)


def members_but(handle: IO[str], streamed: str, keys: frozenset[str]) -> dict[str, Any]:
    """Pass 1: the top-level object's members in ``keys``, decoded, but ``streamed``
    (:data:`LIST` or :data:`OTHER` in its place); others are :data:`OTHER`, unread."""
    reader = _stream(handle)
    kind = kind_of(reader)
    if kind != "dict":
        raise ValueError(f"top level must be an object, not {kind}")
    doc: dict[str, Any] = {}
    for key in reader.members():
        if key in doc:
            raise ValueError(f"key {key!r} appears twice")
        if key == streamed:
            doc[key] = LIST if reader.peek() == "[" else OTHER
        else:
            doc[key] = reader.value() if key in keys else OTHER
    reader.finish()
    return doc


def items_of(handle: IO[str], streamed: str) -> Iterator[Any]:
    """Pass 2: the items of the top-level array ``streamed``, one at a time."""
    reader = _stream(handle)
    for key in reader.members():
        if key == streamed:
            yield from reader.items()
    reader.finish()


# -- the evidence --------------------------------------------------------------------------

# Format history:
#
# * ``ckdn.pytest-evidence/1`` -- ``schema``, ``exitstatus``, ``findings``,
#   ``findings_total``, ``summary``, ``notes``, ``gate_failures``, ``parser_ok``,
#   ``evidence_expected``, ``wants_log_tail``; every key always present.
# * ``ckdn.pytest-evidence/2`` -- every finding also has ``detail_omitted`` (an
#   integer >= 0); a finding's ``message`` and ``detail`` lines, a note and a gate
#   failure may be ``{"cut": str, "omitted": int >= 1}`` instead of a string. Both
#   versions are read (a pytest env may hold an older ckdn than the outer run);
#   /2 is written. A session the plugin stopped on SIGTERM records exit status
#   143, which agrees with a run ckdn stopped (124, 130, 128 + N).
EVIDENCE_FILE = "ckdn-pytest.json"
SCHEMA = "ckdn.pytest-evidence/2"
_READ = frozenset({"ckdn.pytest-evidence/1", SCHEMA})
#: The plugin keeps at most ``top`` findings with bounded details, so a real file
#: is small; anything past this is not one of ours and is refused unread.
MAX_EVIDENCE_BYTES = 16 * 1024 * 1024

PROGRESS_FILE = "ckdn-pytest-progress.json"
PROGRESS_SCHEMA = "ckdn.pytest-progress/1"
#: A progress line is far smaller; anything past this is not one of ours.
MAX_PROGRESS_BYTES = 64 * 1024
#: The running tests a progress line names (more are counted), and how long each id may be.
PROGRESS_RUNNING = 8
PROGRESS_ID_WIDTH = 1000
#: The exit status of a session the plugin stopped on SIGTERM (128 + 15, as ckdn's own).
TERMINATED_STATUS = 143

_KEYS = frozenset({"schema", "exitstatus", "findings", "findings_total", "summary", "notes",
                   "gate_failures", "parser_ok", "evidence_expected", "wants_log_tail"})
#: The keys of a finding, by version: (required, optional).
_FINDING_KEYS = {
    "ckdn.pytest-evidence/1": (frozenset({"id", "kind", "message", "detail"}),
                               frozenset({"location"})),
    SCHEMA: (frozenset({"id", "kind", "message", "detail", "detail_omitted"}),
             frozenset({"location"})),
}
_CUT_KEYS = frozenset({"cut", "omitted"})


def _text(value: str) -> str | dict[str, Any]:
    """A string, or a cut one with its count as data."""
    if isinstance(value, Cut):
        return {"cut": value.body, "omitted": value.omitted}
    return value


def _finding_doc(finding: Finding) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": finding.id, "kind": finding.kind,
                           "message": _text(finding.message),
                           "detail": [_text(line) for line in finding.detail],
                           "detail_omitted": finding.detail_omitted}
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
        "notes": [_text(note) for note in result.notes],
        "gate_failures": [_text(gate) for gate in result.gate_failures],
        "parser_ok": result.parser_ok,
        "evidence_expected": result.evidence_expected,
        "wants_log_tail": result.wants_log_tail,
    }
    return canonical(doc) + b"\n"


def read_evidence(path: str | os.PathLike[str],
                  keep: int | None = None) -> tuple[ParseResult, int]:
    """The parse result and pytest exit status stored in ``path``.

    Every finding is validated; only the first ``keep`` (all, when None) are kept.
    Raises :class:`ValueError` naming what is wrong for anything that is not a
    complete, well-formed ``ckdn.pytest-evidence/1`` document, or a file that is
    refused (:func:`read_no_follow`), and :class:`OSError` when the file cannot
    be read at all.
    """
    fd = open_no_follow(path)
    with open(fd, encoding="utf-8", newline="") as handle:
        if os.fstat(fd).st_size > MAX_EVIDENCE_BYTES:
            raise ValueError(f"larger than {MAX_EVIDENCE_BYTES} bytes")
        try:
            doc = members_but(handle, "findings", _KEYS)
            findings: list[Finding] = []
            listed = 0
            schema = doc.get("schema")
            if isinstance(schema, str) and schema in _READ and set(doc) == _KEYS \
                    and doc["findings"] is LIST:
                handle.seek(0)
                for index, raw in enumerate(items_of(handle, "findings")):
                    finding = _finding(schema, index, raw)  # every one is validated
                    listed += 1
                    if keep is None or len(findings) < keep:
                        findings.append(finding)
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 ({exc.reason})") from None
        except RecursionError:
            raise ValueError("nested too deeply") from None
    return _validate(doc, findings, listed)


def _validate(doc: dict[str, Any], findings: list[Finding],
              listed: int) -> tuple[ParseResult, int]:
    schema = doc.get("schema")
    if not isinstance(schema, str) or schema not in _READ:
        raise ValueError(f"schema is {schema!r}, expected {SCHEMA!r}")
    keys = set(doc)
    if keys != _KEYS:
        missing, extra = sorted(_KEYS - keys), sorted(keys - _KEYS)
        raise ValueError("keys do not match the schema"
                         + (f"; missing: {', '.join(missing)}" if missing else "")
                         + (f"; unexpected: {', '.join(extra)}" if extra else ""))
    exitstatus = _int(doc, "exitstatus")
    cuts = schema == SCHEMA
    if doc["findings"] is not LIST:
        raise ValueError("findings must be an array")
    total = _int(doc, "findings_total")
    if total < listed:
        raise ValueError(f"findings_total {total} is less than the {listed} findings listed")
    summary = doc["summary"]
    if not isinstance(summary, dict):
        raise ValueError("summary must be an object")
    result = ParseResult(
        findings=findings, summary=summary, parser_ok=_bool(doc, "parser_ok"),
        notes=_texts(doc, "notes", cuts=cuts),
        gate_failures=_texts(doc, "gate_failures", cuts=cuts),
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


def _texts(doc: dict[str, Any], key: str, *, cuts: bool) -> list[str]:
    return [_read_text(item, f"{key}[{index}]", cuts=cuts)
            for index, item in enumerate(_list(doc, key))]


def _read_text(value: Any, where: str, *, cuts: bool) -> str:
    """A string, or (format /2) ``{"cut": str, "omitted": int >= 1}`` read back as a Cut."""
    if isinstance(value, str):
        return value
    if cuts and isinstance(value, dict) and set(value) == _CUT_KEYS \
            and isinstance(value["cut"], str):
        omitted = value["omitted"]
        if isinstance(omitted, int) and not isinstance(omitted, bool) and omitted >= 1:
            return Cut(value["cut"], omitted)
    raise ValueError(f"{where} must be a string or a cut string")


def _finding(schema: str, index: int, raw: Any) -> Finding:
    where = f"findings[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    keys = set(raw)
    required, optional = _FINDING_KEYS[schema]
    if not required <= keys <= required | optional:
        raise ValueError(f"{where} keys must be {', '.join(sorted(required))} "
                         "and optionally location")
    cuts = schema == SCHEMA
    for key in ("id", "kind"):
        if not isinstance(raw[key], str):
            raise ValueError(f"{where}.{key} must be a string")
    location = raw.get("location")
    if "location" in raw and not isinstance(location, str):
        raise ValueError(f"{where}.location must be a string when present")
    detail = raw["detail"]
    if not isinstance(detail, list):
        raise ValueError(f"{where}.detail must be an array of strings")
    omitted = raw.get("detail_omitted", 0)
    if isinstance(omitted, bool) or not isinstance(omitted, int) or omitted < 0:
        raise ValueError(f"{where}.detail_omitted must be an integer >= 0")
    return Finding(id=raw["id"], kind=raw["kind"],
                   message=_read_text(raw["message"], f"{where}.message", cuts=cuts),
                   location=location,
                   detail=tuple(_read_text(line, f"{where}.detail[{i}]", cuts=cuts)
                                for i, line in enumerate(detail)),
                   detail_omitted=omitted)


def parse_evidence(ctx: ParseContext) -> ParseResult | None:
    """The ``pytest`` parser's first step: the plugin's evidence, when the run left one.

    ``None`` when the run dir holds no evidence file (the parser goes on to JUnit
    XML); otherwise :func:`evidence_result`.
    """
    path = Path(ctx.run_dir, EVIDENCE_FILE)
    if not os.path.lexists(path):  # a symlink is there too: refused by the reader, with a note
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
        result, exitstatus = read_evidence(path, keep=ctx.top)
    except (OSError, ValueError) as exc:
        return ParseResult(parser_ok=False,
                           notes=[f"{EVIDENCE_FILE} is not valid pytest plugin evidence: {exc}"])
    if exitstatus != ctx.rc and not (exitstatus == TERMINATED_STATUS and stopped(ctx.rc)):
        result.parser_ok = False
        result.notes.append(f"{EVIDENCE_FILE} records pytest exit status {exitstatus} but the "
                            f"command exited with {ctx.rc}")
    result.findings_total = result.total
    del result.findings[ctx.top:]
    return result


# -- progress -----------------------------------------------------------------------------


class Progress:
    """Where a session was when its progress line was last written."""

    __slots__ = ("findings", "finished", "running", "running_total", "started")

    def __init__(self, running: Sequence[str], running_total: int, started: int,
                 finished: int, findings: int) -> None:
        self.running = tuple(running)
        self.running_total = running_total
        self.started = started
        self.finished = finished
        self.findings = findings

    def describe(self) -> str:
        """One sentence: the tests that were running, and how far the session got."""
        tally = (f"{self.started} test(s) started, {self.finished} finished, "
                 f"{self.findings} finding(s) so far")
        if not self.running:
            where = ("before any test started" if not self.started else
                     "between tests (in a fixture's teardown, or the session's end)")
            return f"pytest stopped {where} ({tally})"
        shown = ", ".join(self.running)
        more = self.running_total - len(self.running)
        if more > 0:
            shown += f" and {more} more"
        return f"pytest was running {shown} when it stopped ({tally})"


_PROGRESS_KEYS = frozenset({"schema", "running", "running_total", "started", "finished",
                            "findings"})


def encode_progress(running: Sequence[str], started: int, finished: int, findings: int) -> bytes:
    """One progress line: at most :data:`PROGRESS_RUNNING` running ids, each cut (counted).

    Written as each test starts and ends, so it is formatted directly (about a
    microsecond) rather than through the document encoder; the keys are in the
    encoder's order all the same.
    """
    shown = running[:PROGRESS_RUNNING]
    if any(len(nodeid) > PROGRESS_ID_WIDTH for nodeid in shown):
        ids = canonical([_text(cut(nodeid, PROGRESS_ID_WIDTH)) for nodeid in shown])
    else:  # json.dumps' bytes, by its own C quoting: the encoder's machinery was most of it
        ids = ("[" + ", ".join(map(encode_basestring_ascii, shown)) + "]").encode("ascii")
    return (b'{"findings":%d,"finished":%d,"running":%s,"running_total":%d,"schema":"%s",'
            b'"started":%d}\n' % (findings, finished, ids, len(running),
                                   PROGRESS_SCHEMA.encode("ascii"), started))


def read_progress(path: str | os.PathLike[str]) -> Progress:
    """The progress line at ``path``; :class:`ValueError` for anything else (or refused)."""
    doc = json_bytes(read_no_follow(path, MAX_PROGRESS_BYTES).strip())
    if not isinstance(doc, dict) or doc.get("schema") != PROGRESS_SCHEMA \
            or set(doc) != _PROGRESS_KEYS:
        raise ValueError(f"not a {PROGRESS_SCHEMA} line")
    running = _list(doc, "running")
    if len(running) > PROGRESS_RUNNING:
        raise ValueError(f"names more than {PROGRESS_RUNNING} running tests")
    counts = {key: _int(doc, key) for key in ("running_total", "started", "finished",
                                               "findings")}
    if counts["running_total"] < len(running):
        raise ValueError("running_total is less than the running tests listed")
    return Progress([_read_text(item, f"running[{i}]", cuts=True)
                     for i, item in enumerate(running)], **counts)
