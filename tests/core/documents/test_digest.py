"""The digest: sparse, deterministic, and bounded in bytes whatever the tool printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ckdn import __version__ as ckdn_version
from ckdn.documents import (
    DIGEST_BUDGET,
    MAX_DIGEST_BYTES,
    SCHEMA_DIGEST,
    SCHEMA_META,
    Bounds,
    build_digest,
    build_meta,
    encode,
)
from ckdn.documents import _logtail as logtail
from ckdn.documents._logtail import read_log_tail
from ckdn.documents.aggregate import SCHEMA_AGGREGATE, Member, aggregate_status, build_aggregate
from ckdn.documents.render import render
from ckdn.documents.textcap import LINE_WIDTH, MESSAGE_WIDTH
from ckdn.parsers.base import Finding, FindingSink, ParseContext, ParseResult, cap_line
from ckdn.parsers.generic import GenericParser
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, SKIPPED, Exit, reconcile
from ckdn.schema import load_schema
from tests.contract import published

if TYPE_CHECKING:
    from ckdn.documents.types import Digest

RUN_DIR = ".agent-runs/20260707T101500Z-pytest"
ALWAYS = {"schema", "check", "status", "rc", "run_dir"}
DIGEST_SCHEMA = Draft202012Validator(load_schema(SCHEMA_DIGEST))
#: The published schema, rebuilt from CONTRACT.md: a consumer's validator accepts it too.
PUBLISHED_DIGEST = Draft202012Validator(published.digest_schema())

FAILURE = Finding(
    id="tests.test_digest::test_sparse_keys",
    kind="test_failure",
    message="assert 'notes' not in digest",
    location="tests/test_digest.py:41",
    detail=("E       AssertionError: assert 'notes' not in digest",),
)


def run_tool(run_dir: Path, code: str) -> int:
    """Run a real Python process with stdout+stderr in ``run_dir/full.log``; its rc."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "full.log", "wb") as log:
        return subprocess.run([sys.executable, "-c", code], stdout=log,
                              stderr=subprocess.STDOUT, check=False).returncode


def digest(exit: Exit, result: ParseResult, run_dir: Path, *,
           bounds: Bounds | None = None, notes: Sequence[str] = (), check: str = "pytest",
           artifacts: Sequence[str] | None = None) -> Digest:
    """The digest of a finished run in ``run_dir``, reconciled as the app does it."""
    names = sorted(os.listdir(run_dir)) if artifacts is None else artifacts
    return build_digest(check=check, verdict=reconcile(exit, result), exit=exit, result=result,
                        run_dir=RUN_DIR, artifacts=names, log_path=str(run_dir / "full.log"),
                        bounds=bounds or Bounds(), notes=notes)


def assert_bounded_and_valid(doc: Mapping[str, Any]) -> bytes:
    data = encode(doc)
    assert len(data) < MAX_DIGEST_BYTES
    assert json.loads(data.decode("utf-8")) == doc
    DIGEST_SCHEMA.validate(doc)
    PUBLISHED_DIGEST.validate(doc)
    return data


# ------------------------------------------------------------- status variants


def test_a_green_pass_is_exactly_the_tiny_contract_shape(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('214 passed')")
    doc = digest(Exit(rc), ParseResult(summary={"counts": {"failures": 0, "errors": 0}}),
                 tmp_path, check="ruff")
    assert doc == {"schema": "ckdn.digest/2", "check": "ruff", "status": "pass", "rc": 0,
                   "run_dir": RUN_DIR}
    assert encode(doc) == (b'{"check":"ruff","rc":0,"run_dir":"' + RUN_DIR.encode()
                           + b'","schema":"ckdn.digest/2","status":"pass"}')


def test_a_failure_with_findings_has_the_contract_keys_and_no_others(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('F'); raise SystemExit(1)")
    (tmp_path / "junit.xml").write_text("<testsuites/>")
    result = ParseResult(findings=[FAILURE],
                         summary={"counts": {"tests": 214, "failures": 1, "skipped": 2,
                                             "errors": 0}})
    doc = digest(Exit(rc), result, tmp_path)
    assert doc == {
        "schema": "ckdn.digest/2",
        "check": "pytest",
        "status": "fail",
        "status_reason": "exit code 1 with 1 finding(s)",
        "rc": 1,
        "summary": {"counts": {"tests": 214, "failures": 1, "skipped": 2}},
        "findings_total": 1,
        "findings": [{
            "id": "tests.test_digest::test_sparse_keys",
            "kind": "test_failure",
            "message": "assert 'notes' not in digest",
            "location": "tests/test_digest.py:41",
            "detail": ["E       AssertionError: assert 'notes' not in digest"],
        }],
        "run_dir": RUN_DIR,
        "artifacts": ["full.log", "junit.xml", "meta.json"],
    }
    assert_bounded_and_valid(doc)


def test_a_failed_gate_alone_reports_gate_failures_without_findings(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('TOTAL 79%')")
    result = ParseResult(summary={"coverage": 79.0},
                         gate_failures=["coverage 79.0% < fail_under 96.0%"])
    doc = digest(Exit(rc), result, tmp_path)
    assert set(doc) == ALWAYS | {"status_reason", "summary", "gate_failures", "artifacts"}
    assert doc["status"] == FAIL
    assert doc["rc"] == 0
    assert doc["gate_failures"] == ["coverage 79.0% < fail_under 96.0%"]
    assert_bounded_and_valid(doc)


def test_a_generic_failure_carries_the_log_tail(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "import sys\nfor i in range(100): print('step', i)\n"
                            "print('boom', file=sys.stderr); sys.exit(3)")
    ctx = ParseContext(check="build", run_dir=tmp_path, cwd=tmp_path, rc=rc)
    doc = digest(Exit(rc), GenericParser().parse(ctx), tmp_path, check="build")
    assert set(doc) == ALWAYS | {"status_reason", "log_tail", "artifacts", "summary"}
    assert (doc["status"], doc["rc"]) == (FAIL, 3)
    assert doc["log_tail"] == [f"step {i}" for i in range(61, 100)] + ["boom"]
    assert doc["summary"] == {"log_lines": 101}  # the tail shows 40 of them
    assert_bounded_and_valid(doc)


def test_a_failure_with_findings_carries_no_log_tail(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('noise'); raise SystemExit(1)")
    doc = digest(Exit(rc), ParseResult(findings=[FAILURE]), tmp_path)
    assert "log_tail" not in doc


def test_a_parser_asking_for_the_tail_gets_it_on_a_plain_failure(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('context'); raise SystemExit(1)")
    doc = digest(Exit(rc), ParseResult(findings=[FAILURE], wants_log_tail=True), tmp_path)
    assert doc["log_tail"] == ["context"]


def test_a_timed_out_run_is_an_error_flagged_timed_out(tmp_path: Path) -> None:
    run_tool(tmp_path, "print('collecting ...', flush=True)")
    exit = Exit(124, timed_out=True, timeout=2.0, duration=2.0)
    doc = digest(exit, ParseResult(), tmp_path, notes=["timed out after 2s; process group killed"])
    assert set(doc) == ALWAYS | {"status_reason", "timed_out", "notes", "log_tail", "artifacts"}
    assert (doc["status"], doc["rc"], doc["timed_out"]) == (ERROR, 124, True)
    assert doc["log_tail"] == ["collecting ..."]
    assert_bounded_and_valid(doc)


def test_an_interrupted_run_is_an_error_flagged_interrupted(tmp_path: Path) -> None:
    run_tool(tmp_path, "print('running test 3 of 9')")
    doc = digest(Exit(130, interrupted=True), ParseResult(), tmp_path)
    assert set(doc) == ALWAYS | {"status_reason", "interrupted", "log_tail", "artifacts"}
    assert (doc["status"], doc["rc"], doc["interrupted"]) == (ERROR, 130, True)
    assert_bounded_and_valid(doc)


def test_a_command_that_never_started_is_an_error_with_an_empty_log(tmp_path: Path) -> None:
    (tmp_path / "full.log").write_bytes(b"")
    doc = digest(Exit(127, started=False), ParseResult(), tmp_path,
                 notes=["command not found: 'no-such-tool'"])
    assert set(doc) == ALWAYS | {"status_reason", "notes", "artifacts"}
    assert doc["status"] == ERROR
    assert doc["notes"] == ["command not found: 'no-such-tool'"]
    assert_bounded_and_valid(doc)


def test_a_red_exit_without_the_promised_findings_is_an_error_with_tail(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "import sys; print('ERROR collecting tests/test_x.py'); sys.exit(2)")
    doc = digest(Exit(rc), ParseResult(), tmp_path)
    assert set(doc) == ALWAYS | {"status_reason", "log_tail", "artifacts"}
    assert (doc["status"], doc["rc"]) == (ERROR, 2)
    assert doc["log_tail"] == ["ERROR collecting tests/test_x.py"]
    assert_bounded_and_valid(doc)


def test_a_green_exit_the_parser_cannot_read_is_a_parse_mismatch(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "print('all good, trust me')")
    result = ParseResult(parser_ok=False, notes=["report not found: junit.xml"])
    doc = digest(Exit(rc), result, tmp_path)
    assert set(doc) == ALWAYS | {"status_reason", "notes", "log_tail", "artifacts"}
    assert (doc["status"], doc["rc"]) == (PARSE_MISMATCH, 0)
    assert doc["log_tail"] == ["all good, trust me"]
    assert_bounded_and_valid(doc)


def test_rc_keeps_a_negative_signal_code(tmp_path: Path) -> None:
    rc = run_tool(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert rc == -signal.SIGKILL
    doc = digest(Exit(rc), ParseResult(), tmp_path)
    assert (doc["status"], doc["rc"]) == (ERROR, -9)
    assert_bounded_and_valid(doc)


def test_status_reason_never_appears_on_a_pass(tmp_path: Path) -> None:
    doc = build_digest(check="x", verdict=reconcile(Exit(0), ParseResult()), exit=Exit(0),
                       result=ParseResult(), run_dir=RUN_DIR, artifacts=["full.log"],
                       log_path=None, bounds=Bounds())
    assert "status_reason" not in doc
    assert "artifacts" not in doc


# --------------------------------------------------------------------- sparseness


def test_summary_empty_values_are_pruned_recursively(tmp_path: Path) -> None:
    summary = {"counts": {"tests": 3, "failures": 0, "errors": 0.0, "skipped": None},
               "flags": {"xdist": False, "note": ""}, "empty": {}, "also": [],
               "coverage": 91.5, "tool": "pytest 9.2.0", "ok": True}
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary=summary), tmp_path)
    assert doc["summary"] == {"counts": {"tests": 3}, "coverage": 91.5,
                              "tool": "pytest 9.2.0", "ok": True}


def test_summary_list_items_keep_their_positions(tmp_path: Path) -> None:
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary={"per_file": [0, 3, None]}),
                 tmp_path)
    assert doc["summary"] == {"per_file": [0, 3, None]}


def test_a_summary_of_only_empty_values_is_absent(tmp_path: Path) -> None:
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary={"a": {"b": 0}, "c": ""}),
                 tmp_path)
    assert "summary" not in doc


def test_a_summary_with_odd_python_values_still_encodes(tmp_path: Path) -> None:
    summary: dict[Any, Any] = {1: "int key", "nan": float("nan"), "big": 10**5000,
                               "set": {"b", "a"}, "raw": b"\xffbytes", "path": Path("a/b")}
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary=summary), tmp_path)
    assert doc["summary"] == {"1": "int key", "nan": "nan", "big": "<int of 16610 bits>",
                              "set": ["a", "b"], "raw": "\ufffdbytes", "path": "a/b"}
    assert_bounded_and_valid(doc)


def test_identical_inputs_give_byte_identical_digests(tmp_path: Path) -> None:
    def make() -> bytes:
        result = ParseResult(findings=[FAILURE] * 3, summary={"counts": {"tests": 5}},
                             notes=["note"], findings_total=30)
        return encode(digest(Exit(1, duration=1.5), result, tmp_path))

    run_tool(tmp_path, "print('x'); raise SystemExit(1)")
    first = make()
    run_tool(tmp_path, "print('x'); raise SystemExit(1)")
    assert make() == first


def test_run_level_notes_come_before_parser_notes_and_repeats_show_once(tmp_path: Path) -> None:
    result = ParseResult(findings=[FAILURE], notes=["parser note", "lock reclaimed"])
    doc = digest(Exit(1), result, tmp_path, notes=["lock reclaimed", "runner note"])
    assert doc["notes"] == ["lock reclaimed", "runner note", "parser note"]


# ----------------------------------------------------------------- findings shape


def test_findings_beyond_top_are_counted_not_shown(tmp_path: Path) -> None:
    findings = [Finding(id=f"t{i}", kind="test_failure", message="m") for i in range(30)]
    doc = digest(Exit(1), ParseResult(findings=findings), tmp_path, bounds=Bounds(top=5))
    assert [f["id"] for f in doc["findings"]] == ["t0", "t1", "t2", "t3", "t4"]
    assert (doc["findings_total"], doc["findings_truncated"]) == (30, 25)


def test_a_million_findings_make_a_small_digest_with_the_true_count(tmp_path: Path) -> None:
    distinct = [Finding(id=f"a.py:{i}:1:E501", kind="lint_violation", message="line too long")
                for i in range(1000)]
    sink = FindingSink(keep=20)
    for i in range(1_000_000):
        sink.add(distinct[i % 1000])
    doc = digest(Exit(1), sink.result(), tmp_path)
    assert (doc["findings_total"], len(doc["findings"])) == (1_000_000, 20)
    assert doc["findings_truncated"] == 999_980
    assert len(assert_bounded_and_valid(doc)) < 8192


def test_a_huge_top_is_bounded_by_bytes_and_counted(tmp_path: Path) -> None:
    findings = [Finding(id=f"t{i}", kind="test_failure", message="m" * 400,
                        detail=tuple("d" * 200 for _ in range(12))) for i in range(5000)]
    doc = digest(Exit(1), ParseResult(findings=findings), tmp_path,
                 bounds=Bounds(top=100_000))
    assert_bounded_and_valid(doc)
    shown = len(doc["findings"])
    assert 1 <= shown < 5000
    assert doc["findings_truncated"] == 5000 - shown
    assert [f["id"] for f in doc["findings"]] == [f"t{i}" for i in range(shown)]


def test_a_finding_message_folds_its_lines_into_one(tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="AssertionError: boom\n  where x = 3\r\n")
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    assert doc["findings"][0]["message"] == "AssertionError: boom where x = 3"


def test_a_long_message_is_capped_with_a_count_of_what_was_cut(tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="x" * (MESSAGE_WIDTH + 123))
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    assert doc["findings"][0]["message"] == "x" * MESSAGE_WIDTH + "... [+123 chars]"


def test_a_parser_cap_marker_is_merged_into_the_digest_cap(tmp_path: Path) -> None:
    line = "y" * 2000
    finding = Finding(id="t", kind="k", message="m", detail=(cap_line(line),))
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    assert doc["findings"][0]["detail"] == ["y" * LINE_WIDTH + f"... [+{2000 - LINE_WIDTH} chars]"]


def test_snippets_beyond_max_lines_end_in_a_counted_marker(tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="m",
                      detail=tuple(f"line {i}" for i in range(20)))
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path,
                 bounds=Bounds(max_snippet_lines=4))
    assert doc["findings"][0]["detail"] == ["line 0", "line 1", "line 2", "line 3",
                                            "... [+16 more lines]"]


def test_the_lines_a_parser_left_out_are_counted_on_by_the_digest(tmp_path: Path) -> None:
    ctx = ParseContext(check="c", run_dir=tmp_path, cwd=tmp_path, rc=1, max_snippet_lines=12)
    finding = Finding(id="t", kind="k", message="m",
                      detail=ctx.snippet(f"line {i}" for i in range(20)))
    assert (list(finding.detail), finding.detail_omitted) == ([f"line {i}" for i in range(12)], 8)
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path,
                 bounds=Bounds(max_snippet_lines=5))
    assert doc["findings"][0]["detail"] == [*(f"line {i}" for i in range(5)),
                                            "... [+15 more lines]"]


def test_a_line_that_reads_like_a_marker_is_text_not_a_count(tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="m ... [+7 chars]",
                      detail=("a", "... [+99 more lines]"))
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path,
                 bounds=Bounds(max_snippet_lines=5))
    assert doc["findings"][0]["message"] == "m ... [+7 chars]"
    assert doc["findings"][0]["detail"] == ["a", "... [+99 more lines]"]


def test_a_detail_entry_with_line_breaks_becomes_several_lines(tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="m", detail=("a\nb\r\nc",))
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    assert doc["findings"][0]["detail"] == ["a", "b", "c"]


def test_ansi_sequences_are_stripped_and_control_characters_escaped_visibly(
        tmp_path: Path) -> None:
    finding = Finding(id="t\x00", kind="k", message="\x1b[31mred\x1b[0m \x07bell\tend",
                      location="", detail=())
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    assert doc["findings"][0] == {"id": "t\\u0000", "kind": "k",
                                  "message": "red \\u0007bell\tend"}


#: Characters that act rather than show: C0, DEL, C1 (CSI, OSC, NEL), bidi controls, a
#: lone ESC (not part of a sequence), the line and paragraph separators.
ACTING = ("\x00\x07\x08\x0b\x0c\x1b\x7f\x85\x9b\x9d\u061c\u200e\u200f\u2028\u2029"
          "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if c in ACTING or c == "\r" else c for c in text)


def test_every_string_of_a_digest_shows_acting_characters_escaped_never_raw(
        tmp_path: Path) -> None:
    evil = "a\u202eb\x9b31mc\x9d0;t\x07d\u2066e\x1bf"
    (tmp_path / "full.log").write_bytes(f"tail {evil}\r\n".encode())
    finding = Finding(id=f"id {evil}", kind=f"kind {evil}", message=f"message {evil}",
                      location=f"loc {evil}", detail=(f"detail {evil}",))
    result = ParseResult(findings=[finding], notes=[f"note {evil}"],
                         gate_failures=[f"gate {evil}"], summary={f"key {evil}": f"value {evil}"},
                         wants_log_tail=True)
    doc = build_digest(check=f"check {evil}", verdict=reconcile(Exit(1), result), exit=Exit(1),
                       result=result, run_dir=f"{RUN_DIR}{evil}", artifacts=[f"art {evil}"],
                       log_path=str(tmp_path / "full.log"), bounds=Bounds())
    data = assert_bounded_and_valid(doc).decode("utf-8")
    assert not set(ACTING) & set(data)
    seen = escaped(evil)
    assert seen == "a\\u202eb\\u009b31mc\\u009d0;t\\u0007d\\u2066e\\u001bf"
    assert doc["check"] == f"check {seen}"
    assert doc["run_dir"] == f"{RUN_DIR}{seen}"
    assert doc["findings"] == [{"id": f"id {seen}", "kind": f"kind {seen}",
                                "message": f"message {seen}", "location": f"loc {seen}",
                                "detail": [f"detail {seen}"]}]
    assert doc["notes"] == [f"note {seen}"]
    assert doc["gate_failures"] == [f"gate {seen}"]
    assert doc["summary"] == {f"key {seen}": f"value {seen}"}
    assert doc["log_tail"] == [f"tail {seen}"]
    assert f"art {seen}" in doc["artifacts"]


def test_escapes_count_against_the_width_and_the_cut_counts_original_characters(
        tmp_path: Path) -> None:
    finding = Finding(id="t", kind="k", message="\u202e" * 1000)
    doc = digest(Exit(1), ParseResult(findings=[finding]), tmp_path)
    shown = MESSAGE_WIDTH // 6  # 83 escapes of six characters fit in 500; the 84th does not
    assert doc["findings"][0]["message"] == "\\u202e" * shown + f"... [+{1000 - shown} chars]"


# ------------------------------------------------------------------------- log tail


def test_the_tail_is_the_last_lines_of_a_real_log(tmp_path: Path) -> None:
    run_tool(tmp_path, "for i in range(10000): print(f'line {i}')")
    assert read_log_tail(tmp_path / "full.log", 40) == [f"line {i}" for i in range(9960, 10000)]


def test_the_tail_of_a_log_without_final_newline_keeps_the_last_line(tmp_path: Path) -> None:
    (tmp_path / "full.log").write_bytes(b"one\r\ntwo\r\n\nthree")
    assert read_log_tail(tmp_path / "full.log", 10) == ["one", "two", "", "three"]


def test_a_missing_or_empty_log_has_no_tail(tmp_path: Path) -> None:
    assert read_log_tail(tmp_path / "full.log", 40) == []
    (tmp_path / "full.log").write_bytes(b"")
    assert read_log_tail(tmp_path / "full.log", 40) == []
    doc = digest(Exit(2), ParseResult(), tmp_path)
    assert "log_tail" not in doc


def test_a_100_mb_single_line_log_gives_a_small_digest_in_constant_memory(tmp_path: Path) -> None:
    size = 100 * 1024 * 1024
    block = b"\x1b[32m.\x1b[0m" + b"x" * (1024 * 1024 - 10)
    with open(tmp_path / "full.log", "wb") as log:
        for _ in range(100):
            log.write(block)
    tracemalloc.start()
    try:
        tail = read_log_tail(tmp_path / "full.log", 40)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    visible = size - 100 * 9  # every block loses its two ANSI sequences
    assert tail == ["." + "x" * (LINE_WIDTH - 1) + f"... [+{visible - LINE_WIDTH} chars]"]
    doc = digest(Exit(1), ParseResult(evidence_expected=False), tmp_path)
    assert doc["log_tail"] == tail
    assert len(assert_bounded_and_valid(doc)) < 4096


def test_a_log_of_invalid_utf8_gives_replacement_characters(tmp_path: Path) -> None:
    noise = bytes(b for b in range(256) if b != 10) * 4 + b"\xc3\x28 \xe2\x82 \xf0\x9f\x98"
    (tmp_path / "full.log").write_bytes(b"\n".join([noise] * 2000) + b"\n\xff\xfeend\n")
    doc = digest(Exit(2), ParseResult(), tmp_path)
    data = assert_bounded_and_valid(doc)
    tail = doc["log_tail"]
    assert len(tail) == 40
    assert tail[-1] == "\ufffd\ufffdend"
    assert all(line.endswith(" chars]") for line in tail[:-1])
    assert "\x1b" not in data.decode("utf-8")


@pytest.mark.parametrize("sequence", ["\x1b[1;31m", "\x1b]8;;http://x\x1b\\", "\x1b]0;t\x07"])
def test_ansi_sequences_split_across_stream_chunks_are_still_stripped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sequence: str) -> None:
    monkeypatch.setattr(logtail, "_TAIL_IN_MEMORY", 0)  # stream even a small tail
    # Streamed reads are 16 KiB, 32 KiB, 64 KiB...: the first boundary falls in the
    # shown head (width 20000), the later ones where the rest is only counted.
    for offset in range(1, len(sequence)):
        pieces, length = [], 0
        for boundary in (16384, 49152, 114688):
            pieces += ["a" * (boundary - offset - length), sequence]
            length = boundary - offset + len(sequence)
        line = "".join([*pieces, "a" * 1000])
        (tmp_path / "full.log").write_text(line + "\n")
        visible = len(line) - 3 * len(sequence)
        assert read_log_tail(tmp_path / "full.log", 1, width=20_000) == [
            "a" * 20_000 + f"... [+{visible - 20_000} chars]"]


log_piece = st.sampled_from([
    b"\x1b", b"\x1b[3", b"1m", b"1", b";", b"[", b"]", b"X", b"\x1b]8;;u", b"\x1b\\", b"\x07",
    b"\r", b"\n", b"\x00", b"\xff", b"\xe2\x82", b"\xac", b"\xf0\x9f\x98\x80", b"plain"])
log_chunk = st.builds(lambda piece, n: piece * n, log_piece, st.integers(1, 9000))


@given(chunks=st.lists(log_chunk, max_size=12), lines=st.integers(1, 50),
       width=st.integers(1, 40_000))
def test_a_streamed_tail_reads_exactly_like_an_in_memory_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: list[bytes], lines: int,
        width: int) -> None:
    path = tmp_path / "full.log"
    path.write_bytes(b"".join(chunks))
    in_memory = read_log_tail(path, lines, width)
    with monkeypatch.context() as patch:
        patch.setattr(logtail, "_TAIL_IN_MEMORY", 0)
        assert read_log_tail(path, lines, width) == in_memory


def test_the_tail_reads_only_the_end_of_a_huge_sparse_log(tmp_path: Path) -> None:
    path = tmp_path / "full.log"
    with open(path, "wb") as log:
        log.truncate(64 * 1024**3)  # 64 GiB of holes: reading it would take minutes
        log.seek(0, os.SEEK_END)
        log.write(b"".join(b"tail line %d\n" % i for i in range(100)))
    if os.stat(path).st_blocks * 512 > 16 * 1024 * 1024:
        pytest.skip("this filesystem does not make sparse files")
    assert read_log_tail(path, 40) == [f"tail line {i}" for i in range(60, 100)]


def test_a_long_tail_shrinks_from_its_start_with_a_counted_marker(tmp_path: Path) -> None:
    (tmp_path / "full.log").write_text("".join(f"{i:05d} " + "z" * 400 + "\n"
                                               for i in range(5000)))
    doc = digest(Exit(2), ParseResult(), tmp_path, bounds=Bounds(log_tail_lines=5000))
    assert_bounded_and_valid(doc)
    tail = doc["log_tail"]
    dropped = int(tail[0].split()[1].strip("["))
    assert tail[0] == f"... [{dropped} earlier tail lines dropped to fit the digest]"
    assert tail[1].startswith(f"{dropped:05d} ")
    assert tail[-1].startswith("04999 ")
    assert dropped + len(tail) - 1 == 5000


# --------------------------------------------------------------------- byte bound


def test_many_notes_are_dropped_from_the_end_with_a_counted_marker(tmp_path: Path) -> None:
    notes = [f"note {i} " + "n" * 400 for i in range(100_000)]
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], notes=notes), tmp_path)
    assert_bounded_and_valid(doc)
    shown, marker = doc["notes"][:-1], doc["notes"][-1]
    assert shown[0].startswith("note 0 ")
    assert marker == f"... [+{100_000 - len(shown)} more notes]"


def test_a_huge_summary_is_pruned_to_fit_and_the_drop_is_counted(tmp_path: Path) -> None:
    summary = {"counts": {"tests": 5, "failures": 1},
               "per_file": {f"src/module_{i}.py": "v" * 200 for i in range(2000)}}
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary=summary), tmp_path)
    assert_bounded_and_valid(doc)
    assert doc["summary"]["counts"] == {"tests": 5, "failures": 1}
    kept = len(doc["summary"].get("per_file", {}))
    assert doc["notes"][-1] == f"... [summary: {2000 - kept} values dropped to fit the digest]"


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@pytest.mark.parametrize("wide", [
    "\x01" * 5000 + "\U0001f600" * 5000,  # escapes first: every string shows escapes
    "\U0001f600" * 5000,  # four bytes a character, the most any shown character costs
    "\u202e\\" * 5000,  # an escape (7 bytes for 6 characters) beside a shown backslash
    '"\U0001f600\x9b' * 5000,
], ids=["escapes", "astral", "bidi-backslash", "mixed"])
def test_every_part_huge_at_once_still_fits_under_the_ceiling(tmp_path: Path,
                                                              wide: str) -> None:
    with open(tmp_path / "full.log", "wb") as log:
        log.write((wide.encode() + b"\n") * 3000)
    findings = [Finding(id=wide, kind=wide, message=wide, location=wide,
                        detail=(wide,) * 5000)]
    result = ParseResult(findings=findings, findings_total=10**9, notes=[wide] * 1000,
                         summary={wide + str(i): wide for i in range(1000)},
                         gate_failures=[f"{i} {wide}" for i in range(1000)],
                         wants_log_tail=True)
    doc = build_digest(check=wide[:200], verdict=reconcile(Exit(1), result), exit=Exit(1),
                       result=result, run_dir=RUN_DIR,
                       artifacts=[f"{i:04d}{wide}" for i in range(1000)],
                       log_path=str(tmp_path / "full.log"),
                       bounds=Bounds(top=100_000, max_snippet_lines=100_000,
                                     log_tail_lines=100_000))
    data = assert_bounded_and_valid(doc)
    assert len(data) <= DIGEST_BUDGET
    assert doc["findings_total"] == 10**9
    assert doc["findings"][0]["detail"][-1].endswith(" more lines]")
    assert doc["artifacts"][-1].endswith(" more]")
    assert doc["gate_failures"][-1].endswith(" more gate failures]")


def test_what_the_fitting_cannot_shrink_fits_the_budget() -> None:
    """The byte bound from the numbers alone: every string the fitting keeps, at its width
    in shown characters, four bytes each (the most any shown character costs, an escape
    included), plus its cut marker, quotes and comma, plus a kilobyte for keys and brackets."""
    from ckdn.documents._digest import MAX_GATE_FAILURES
    from ckdn.documents.textcap import CHECK_WIDTH, ID_WIDTH, KIND_WIDTH, RUN_DIR_WIDTH

    kept = [CHECK_WIDTH, RUN_DIR_WIDTH, MESSAGE_WIDTH,  # check, run_dir, status_reason
            ID_WIDTH, KIND_WIDTH, MESSAGE_WIDTH, ID_WIDTH,  # the one finding always kept
            LINE_WIDTH,  # the last tail line
            *[LINE_WIDTH] * MAX_GATE_FAILURES]
    marker = len(f"... [+{2**64} chars]")
    worst = sum(4 * width + marker + 3 for width in kept) + 3 * (marker + 3) + 1024
    assert worst < 40 * 1024 < DIGEST_BUDGET


text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
long_text = st.one_of(text, st.builds(lambda s, n: s * n, text, st.integers(1, 300)))
findings_st = st.lists(st.builds(Finding, id=long_text, kind=text, message=long_text,
                                 location=st.none() | long_text,
                                 detail=st.lists(long_text, max_size=30).map(tuple)),
                       max_size=25)
summary_st = st.dictionaries(text, st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | long_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5),
    max_leaves=30), max_size=10)


cases = st.fixed_dictionaries({
    "findings": findings_st, "extra": st.none() | st.integers(0, 10**7),
    "notes": st.lists(long_text, max_size=40), "run_notes": st.lists(long_text, max_size=5),
    "summary": summary_st, "gates": st.lists(long_text, max_size=5),
    "parser_ok": st.booleans(), "evidence_expected": st.booleans(),
    "wants_tail": st.booleans(), "rc": st.integers(-64, 255), "started": st.booleans(),
    "timed_out": st.booleans(), "interrupted": st.booleans(),
    "log": st.binary(max_size=300), "repeat": st.integers(0, 400),
    "top": st.integers(0, 100_000), "snippet": st.integers(0, 100_000),
    "tail_lines": st.integers(0, 2000), "artifacts": st.lists(text, max_size=10),
})


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(case=cases)
def test_any_input_gives_a_bounded_valid_digest_with_the_true_total(
        tmp_path: Path, case: dict[str, Any]) -> None:
    (tmp_path / "full.log").write_bytes(case["log"] * case["repeat"])
    findings = case["findings"]
    extra = case["extra"]
    result = ParseResult(findings=findings, summary=case["summary"],
                         parser_ok=case["parser_ok"], notes=case["notes"],
                         gate_failures=case["gates"],
                         findings_total=None if extra is None else len(findings) + extra,
                         evidence_expected=case["evidence_expected"],
                         wants_log_tail=case["wants_tail"])
    exit = Exit(case["rc"], started=case["started"], timed_out=case["timed_out"],
                interrupted=case["interrupted"])
    verdict = reconcile(exit, result)

    def build() -> Digest:
        return build_digest(check="check", verdict=verdict, exit=exit, result=result,
                            run_dir=RUN_DIR, artifacts=case["artifacts"],
                            log_path=str(tmp_path / "full.log"),
                            bounds=Bounds(top=case["top"], max_snippet_lines=case["snippet"],
                                          log_tail_lines=case["tail_lines"]),
                            notes=case["run_notes"])

    doc = build()
    assert_bounded_and_valid(doc)
    assert doc.get("findings_total", 0) == result.total
    if result.total:
        assert len(doc.get("findings", [])) + doc.get("findings_truncated", 0) == result.total
    assert doc["status"] == verdict.status
    assert encode(build()) == encode(doc)


# ------------------------------------------------------------------------ aggregate


def ran(check: str, status: str, rc: int) -> Member:
    return Member(check=check, status=status, rc=rc, run_dir=f".agent-runs/x-{check}")


def test_an_alias_passes_only_when_every_member_passed() -> None:
    members = [ran("ruff", PASS, 0), ran("pylint", PASS, 0)]
    assert aggregate_status(members) == (PASS, 0)
    doc = build_aggregate(alias="lint", members=members)
    assert (doc["schema"], doc["status"], doc["rc"]) == (SCHEMA_AGGREGATE, PASS, 0)


def test_fail_fast_lists_unreached_members_as_skipped_with_no_rc() -> None:
    doc = build_aggregate(alias="lint", members=[
        ran("ruff", FAIL, 1), Member(check="pylint", status=SKIPPED)])
    assert doc == {
        "schema": "ckdn.aggregate/1", "alias": "lint", "status": "fail", "rc": 1,
        "members": [
            {"check": "ruff", "status": "fail", "rc": 1, "run_dir": ".agent-runs/x-ruff"},
            {"check": "pylint", "status": "skipped"},
        ],
    }


def test_the_first_red_member_decides_status_and_rc() -> None:
    members = [ran("a", PASS, 0), ran("b", ERROR, 2), ran("c", FAIL, 1)]
    assert aggregate_status(members) == (ERROR, 2)


@pytest.mark.parametrize(("status", "rc", "expected"), [
    (FAIL, 0, 1),  # a gate failure with a happy tool
    (PARSE_MISMATCH, 0, 1),
    (ERROR, -9, 1),  # a signal code is outside 1-255
    (ERROR, 124, 124),
    (FAIL, 255, 255),
    (ERROR, 300, 1),
])
def test_the_alias_rc_follows_the_atomic_pass_through_rule(status: str, rc: int,
                                                           expected: int) -> None:
    assert aggregate_status([ran("a", PASS, 0), ran("b", status, rc)]) == (status, expected)


def test_an_alias_with_a_skipped_member_and_no_red_one_is_never_green() -> None:
    assert aggregate_status([ran("a", PASS, 0), Member(check="b", status=SKIPPED)]) == (ERROR, 1)


def test_an_alias_without_members_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one member"):
        build_aggregate(alias="lint", members=[])


def test_a_member_that_ran_must_carry_rc() -> None:
    with pytest.raises(ValueError, match="ran but has no rc"):
        build_aggregate(alias="lint", members=[Member(check="ruff", status=FAIL)])


def test_a_red_member_must_carry_its_run_dir() -> None:
    with pytest.raises(ValueError, match="not green but has no run_dir"):
        build_aggregate(alias="lint", members=[Member(check="ruff", status=FAIL, rc=1)])


def test_a_passing_member_carries_no_run_dir_and_a_red_one_does() -> None:
    doc = build_aggregate(alias="lint", members=[
        Member(check="a", status=PASS, rc=0, run_dir="runs/a"),
        Member(check="b", status=FAIL, rc=1, run_dir="runs/b")])
    assert doc["members"] == [{"check": "a", "status": "pass", "rc": 0},
                              {"check": "b", "status": "fail", "rc": 1, "run_dir": "runs/b"}]
    assert "interrupted" not in doc
    assert build_aggregate(alias="lint", members=doc_members(), interrupted=True)[
        "interrupted"] is True


def doc_members() -> list[Member]:
    return [Member(check="a", status=PASS, rc=0)]


# ----------------------------------------------------------------------------- meta


def test_meta_holds_provenance_in_utc_with_the_tool_rc() -> None:
    meta = build_meta(check="ruff", argv=["ruff", "check", "."], exit=Exit(-15, duration=1.2346),
                      started_at=1783419300.7, finished_at=1783419301.25,
                      log_sha256="0" * 64, log_bytes=12, parser="ruff")
    assert meta == {"schema": SCHEMA_META, "ckdn_version": ckdn_version, "check": "ruff",
                    "parser": "ruff", "command": ["ruff", "check", "."], "rc": -15,
                    "timed_out": False, "interrupted": False,
                    "started_at": "2026-07-07T10:15:00+00:00", "duration_s": 1.235,
                    "log_sha256": "0" * 64, "log_bytes": 12}
    assert list(json.loads(encode(meta))) == sorted(meta)


def test_meta_names_the_env_keys_never_their_values() -> None:
    meta = build_meta(check="c", argv=["tool"], exit=Exit(0), started_at=0.0, finished_at=0.5,
                      log_sha256="a" * 64, log_bytes=0, parser="generic",
                      env_keys={"TOKEN": "s3cret", "LANG": "C"})
    assert meta["env_keys"] == ["LANG", "TOKEN"]
    assert "s3cret" not in encode(meta).decode()


def test_meta_replaces_undecodable_argv_bytes() -> None:
    meta = build_meta(check="c", argv=["tool", os.fsdecode(b"\xff.py")], exit=Exit(0),
                      started_at=0.0, finished_at=0.5, log_sha256="a" * 64, log_bytes=0,
                      parser="generic")
    assert meta["command"] == ["tool", "\ufffd.py"]
    assert meta["duration_s"] == 0.5
    assert "env_keys" not in meta


# --------------------------------------------------------------------------- render


def test_render_reads_in_contract_order_and_round_trips(tmp_path: Path) -> None:
    run_tool(tmp_path, "print('x'); raise SystemExit(1)")
    doc = digest(Exit(1), ParseResult(findings=[FAILURE], summary={"counts": {"tests": 2}}),
                 tmp_path)
    text = render(doc)
    assert json.loads(text) == doc
    assert list(json.loads(text)) == ["schema", "check", "status", "status_reason", "rc",
                                      "summary", "findings_total", "findings", "run_dir",
                                      "artifacts"]
    assert list(json.loads(text)["findings"][0]) == ["id", "kind", "message", "location",
                                                     "detail"]
    assert text.startswith('{\n  "schema": "ckdn.digest/2",\n  "check": "pytest",')


def test_render_keeps_a_coverage_files_missing_lines_to_a_few_lines() -> None:
    missing = [n for n in range(5, 200) if n % 5 in (0, 1, 2)][:40]
    doc = {"schema": "ckdn.digest/2", "check": "coverage", "status": "fail", "rc": 0,
           "status_reason": "exit code 0 but gate failed", "run_dir": RUN_DIR,
           "summary": {"top_uncovered_files": [
               {"file": "calc/big.py", "missing_lines_preview": missing,
                "missing_lines_truncated": 80}]}}
    text = render(doc)
    assert json.loads(text) == doc
    start = text.index('"missing_lines_preview": [')
    preview = text[start:text.index("]", start) + 1]
    assert preview.count("\n") == 2  # 40 numbers in three lines, not forty
    block = text[text.rindex("\n", 0, start) + 1:text.index("]", start) + 1]
    assert max(len(line) for line in block.splitlines()) <= 88


_WORDS = st.text("ab_ z", max_size=4)


@given(st.recursive(st.none() | st.booleans() | st.integers() | _WORDS
                    | st.floats(allow_nan=False),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(_WORDS, inner, max_size=4), max_leaves=12))
def test_render_is_indented_json_that_reads_back_as_the_document(value: object) -> None:
    doc = {"schema": "ckdn.digest/2", "summary": value}
    text = render(doc)
    assert json.loads(text) == doc
    if "[" not in json.dumps(value):  # without lists: exactly json.dumps's indented form
        assert text == json.dumps(doc, indent=2, sort_keys=True)
