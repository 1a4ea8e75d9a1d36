"""Every reader holds its memory on a huge input of any shape, and never passes what it
could not read.

Each case runs one parser in a fresh interpreter on a run dir holding a real
fixture case with one part grown to 32 MiB (a log line, a JSON string, an XML
attribute, a report of repeated real items, ...; generated, not any tool's output)
and reads the process's peak resident size from ``/proc/self/status`` (``VmHWM``)
twice: once its imports are done, and after the read. What the read adds must stay
under half the input, so a reader that holds the input even once (or half of it
twice) fails; the property is flatness, true at any size above the readers' fixed
buffers (the readers add at most ~10 MiB at 80 MiB). The whole process also stays
under issue 10's bound, 64 MiB, start-up included. Before the readers were bounded
these inputs cost three times their size or, for an XML attribute, never finished
(expat rescanned the unfinished tag on every chunk). The 200 MB and 2 GB figures
are in ``bench/bench_hostile.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import FIXTURES

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="reads VmHWM from /proc (Linux)")

SIZE = 32 * 1024 * 1024
#: What a read may add to the process's peak: holding the input once breaks it.
GROWTH_MIB = SIZE / 2 / (1024 * 1024)
PEAK_MIB = 64
_BLOCK = 8 * 1024 * 1024

#: One parser on one run dir; prints its peak RSS before and after the read, the status
#: and the notes as JSON.
CHILD = r"""
import json, sys
from ckdn.parsers import get_parser
from ckdn.parsers.base import ParseContext
from ckdn.reconcile import Exit, reconcile
def peak():
    with open("/proc/self/status") as status:
        return int(status.read().split("VmHWM:")[1].split()[0]) / 1024
name, run_dir, cwd, rc, options = sys.argv[1:6]
start = peak()
ctx = ParseContext(check=name, run_dir=run_dir, cwd=cwd, rc=int(rc), options=json.loads(options))
result = get_parser(name).parse(ctx)
print(json.dumps({"start": start, "peak": peak(), "status": reconcile(Exit(int(rc)), result).status,
                  "notes": [str(note)[:400] for note in result.notes]}))
"""


def run_parser(parser: str, run_dir: Path, cwd: Path, rc: int,
               options: dict[str, Any] | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", CHILD, parser, str(run_dir), str(cwd),
                           str(rc), json.dumps(options or {})],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts: dict[str, Any] = json.loads(proc.stdout)
    return facts


def repeat(out: Any, unit: str, size: int) -> None:
    """``unit`` (ASCII) repeated to ``size`` bytes, written in blocks: the test stays small."""
    block = (unit * (_BLOCK // len(unit) + 1))[:_BLOCK]
    left = size
    while left > 0:
        piece = block[:left]
        out.write(piece)
        left -= len(piece)


def case(tmp_path: Path, family: str, name: str) -> tuple[Path, Path, int]:
    """A real fixture case as a run dir: (run dir, its recorded cwd, its exit code)."""
    src = FIXTURES / family / name
    run_dir = tmp_path / "run"
    shutil.copytree(src, run_dir, ignore=shutil.ignore_patterns("case.json"))
    meta = json.loads((src / "case.json").read_text())
    return run_dir, Path(meta["cwd"]), int(meta["rc"])


@pytest.fixture
def big(tmp_path: Path) -> Any:
    """The run dir the test grows; removed at once (pytest keeps tmp dirs of three runs)."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def grow(path: Path, marker: str, unit: str) -> None:
    """Replace the JSON string ``marker`` in the file by a ``SIZE``-byte string of ``unit``."""
    head, tail = path.read_text(encoding="utf-8").split(json.dumps(marker))
    with open(path, "w", encoding="utf-8") as out:
        out.write(head + '"')
        repeat(out, unit, SIZE)
        out.write('"' + tail)


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def assert_bounded(facts: dict[str, Any]) -> None:
    assert facts["peak"] - facts["start"] < GROWTH_MIB, facts
    assert facts["peak"] < PEAK_MIB, facts


# --- the log: one 32 MiB line, in every parser that reads the log -------------------------

LOG_READERS = {
    "mypy": ("mypy", "text_clean"), "ty": ("ty", "full_clean"),
    "reformat": ("reformat", "black_clean"), "pre_commit": ("pre_commit", "passing"),
    "pyright": ("pyright", "clean"), "ruff": ("ruff", "clean"), "bandit": ("bandit", "clean"),
    "pip_audit": ("pip_audit", "clean"), "pylint": ("pylint", "clean"),
    "sarif": ("sarif", "semgrep_clean"), "pytest": ("pytest", "all_pass"),
}


@pytest.mark.parametrize("parser", sorted(LOG_READERS))
def test_a_huge_log_line_costs_bounded_memory_and_is_never_green(big: Path,
                                                                   parser: str) -> None:
    run_dir, cwd, rc = case(big, *LOG_READERS[parser])
    log = run_dir / "full.log"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True) or ["\n"]
    # The clean log's own verdict (its longest line), repeated: read whole, it would pass.
    unit = max((line.rstrip("\n") for line in lines), key=len) or "All checks passed!"
    with open(log, "w", encoding="utf-8") as out:
        out.write(lines[0])
        repeat(out, unit, SIZE)
        out.write("\n")
        out.writelines(lines[1:])
    facts = run_parser(parser, run_dir, cwd, rc)
    assert_bounded(facts)
    if parser == "pytest":
        # pytest's verdict is its JUnit report; the log is read only at its end (64 KiB).
        assert facts["status"] == "pass"
    else:
        assert facts["status"] != "pass", facts


def test_the_log_tail_of_a_huge_line_costs_bounded_memory(big: Path) -> None:
    log = big / "full.log"
    with open(log, "w", encoding="ascii") as out:
        out.write("first\n")
        repeat(out, "a long line ", SIZE)
        out.write("\nlast\n")
    code = ("import sys; from ckdn.documents._logtail import read_log_tail; "
            "peak = lambda: int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]); "
            "start = peak(); tail = read_log_tail(sys.argv[1], 3); "
            "print(start / 1024, peak() / 1024, tail[1][-20:])")
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True,
                          timeout=120, check=True)
    start, peak, end = proc.stdout.split(maxsplit=2)
    assert_bounded({"start": float(start), "peak": float(peak)})
    assert end.strip().endswith("chars]")


# --- JSON reports: one value grown to 32 MiB, or 32 MiB of real items ---------------------

def _ruff_message(data: Any) -> None:
    data[0]["message"] = "GROW"


def _bandit_code(data: Any) -> None:
    data["results"][0]["code"] = "GROW"


def _pip_audit_description(data: Any) -> None:
    dep = next(d for d in data["dependencies"] if d.get("vulns"))
    dep["vulns"][0]["description"] = "GROW"


def _pylint_message(data: Any) -> None:
    data["messages"][0]["message"] = "GROW"


def _sarif_message(data: Any) -> None:
    data["runs"][0]["results"][0]["message"]["text"] = "GROW"


def _coverage_file_name(data: Any) -> None:
    name, entry = next(iter(data["files"].items()))
    del data["files"][name]
    data["files"]["GROW"] = entry


GROWN_FIELDS: dict[str, tuple[str, str, str, Callable[[Any], None], dict[str, Any]]] = {
    "ruff": ("ruff", "violations", "ruff.json", _ruff_message, {}),
    "bandit": ("bandit", "issues", "bandit.json", _bandit_code, {}),
    "pip_audit": ("pip_audit", "vulnerable", "pip-audit.json", _pip_audit_description, {}),
    "pylint": ("pylint", "messages", "pylint.json", _pylint_message, {}),
    "sarif": ("sarif", "semgrep", "report.sarif", _sarif_message, {}),
    "coverage": ("coverage", "boundary_json_only", "coverage.json", _coverage_file_name, {}),
}


@pytest.mark.parametrize("parser", sorted(GROWN_FIELDS))
def test_a_huge_string_in_a_json_report_is_refused_unread(big: Path, parser: str) -> None:
    family, name, report, change, options = GROWN_FIELDS[parser]
    run_dir, cwd, rc = case(big, family, name)
    edit_json(run_dir / report, change)
    grow(run_dir / report, "GROW", "grown text ")
    facts = run_parser(parser, run_dir, cwd, rc, options)
    assert_bounded(facts)
    assert facts["status"] != "pass"
    assert any("too large to read" in note for note in facts["notes"]), facts


@pytest.mark.parametrize(("parser", "family", "name", "report"), [
    ("ruff", "ruff", "clean", "ruff.json"), ("bandit", "bandit", "clean", "bandit.json"),
    ("pip_audit", "pip_audit", "clean", "pip-audit.json"),
    ("pylint", "pylint", "clean", "pylint.json"), ("sarif", "sarif", "semgrep_clean",
                                                   "report.sarif"),
])
def test_a_report_that_is_one_huge_string_is_never_read_and_never_green(
        big: Path, parser: str, family: str, name: str, report: str) -> None:
    run_dir, cwd, rc = case(big, family, name)
    (run_dir / report).write_text(json.dumps("GROW"))
    grow(run_dir / report, "GROW", "abcdefghij")
    facts = run_parser(parser, run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] != "pass"


def test_a_huge_sarif_log_of_real_results_is_read_in_bounded_memory(big: Path) -> None:
    run_dir, cwd, _ = case(big, "sarif", "semgrep")
    real = json.loads((run_dir / "report.sarif").read_text())
    run = real["runs"][0]
    items = [json.dumps(result) for result in run["results"]]
    count = 0
    with open(run_dir / "report.sarif", "w", encoding="utf-8") as out:  # results before tool
        out.write('{"version": "2.1.0", "runs": [{"results": [')
        written = 0
        while written < SIZE:
            item = items[count % len(items)]
            out.write(("," if count else "") + item)
            written += len(item) + 1
            count += 1
        out.write('], "tool": ' + json.dumps(run["tool"]) + ', "invocations": '
                  + json.dumps(run["invocations"]) + "}]}")
    (run_dir / "full.log").write_text("")
    facts = run_parser("sarif", run_dir, cwd, 1, {"fail_levels": ["error", "warning", "note"]})
    assert_bounded(facts)
    assert facts["status"] == "fail", facts


def test_32_mib_of_real_ruff_diagnostics_are_read_in_bounded_memory(big: Path) -> None:
    run_dir, cwd, rc = case(big, "ruff", "violations")
    items = [json.dumps(item) for item in json.loads((run_dir / "ruff.json").read_text())]
    with open(run_dir / "ruff.json", "w", encoding="utf-8") as out:
        out.write("[")
        written = count = 0
        while written < SIZE:
            item = items[count % len(items)]
            out.write(("," if count else "") + item)
            written += len(item) + 1
            count += 1
        out.write("]")
    (run_dir / "full.log").write_text("")
    facts = run_parser("ruff", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] == "fail", facts


def test_a_pyright_document_of_32_mib_is_read_in_bounded_memory(big: Path) -> None:
    run_dir, cwd, rc = case(big, "pyright", "errors")
    lines = (run_dir / "full.log").read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("{"))
    end = next(i for i in range(len(lines) - 1, -1, -1) if lines[i].rstrip() == "}")
    doc = json.loads("".join(lines[start:end + 1]))
    diagnostics = [json.dumps(d) for d in doc["generalDiagnostics"]]
    per_copy = {s: sum(1 for d in doc["generalDiagnostics"] if d["severity"] == s)
                for s in ("error", "warning", "information")}
    copies = SIZE // sum(map(len, diagnostics)) + 1
    summary = dict(doc["summary"], errorCount=per_copy["error"] * copies,
                   warningCount=per_copy["warning"] * copies,
                   informationCount=per_copy["information"] * copies)
    with open(run_dir / "full.log", "w", encoding="utf-8") as out:
        out.writelines(lines[:start])
        out.write('{\n    "version": ' + json.dumps(doc["version"]) + ',\n    "time": '
                  + json.dumps(doc["time"]) + ',\n    "generalDiagnostics": [\n')
        for copy in range(copies):
            out.write(("," if copy else "") + ",\n".join(diagnostics) + "\n")
        out.write('    ],\n    "summary": ' + json.dumps(summary) + "\n}\n")
        out.writelines(lines[end + 1:])
    facts = run_parser("pyright", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] == "fail", facts


def test_a_pyright_diagnostic_of_32_mib_is_refused_unread(big: Path) -> None:
    run_dir, cwd, rc = case(big, "pyright", "errors")
    log = run_dir / "full.log"
    text = log.read_text(encoding="utf-8")
    first = text.index('"message": "') + len('"message": "')
    with open(log, "w", encoding="utf-8") as out:
        out.write(text[:first])
        repeat(out, "grown text ", SIZE)
        out.write(text[first:])
    facts = run_parser("pyright", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] != "pass"
    assert any("too large to read" in note for note in facts["notes"]), facts


def test_the_largest_evidence_file_of_tiny_findings_is_read_in_bounded_memory(big: Path) -> None:
    # Generated in the plugin's format: the shape that decodes largest (tiny findings).
    from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, MAX_EVIDENCE_BYTES, SCHEMA

    run_dir = big / "run"
    run_dir.mkdir()
    one = '{"detail":[],"detail_omitted":0,"id":"t","kind":"test_failure","message":"m"}'
    count = (MAX_EVIDENCE_BYTES - 1000) // (len(one) + 1)
    with open(run_dir / EVIDENCE_FILE, "w", encoding="utf-8") as out:
        out.write('{"evidence_expected":true,"exitstatus":1,"findings":[')
        out.write(",".join([one] * 1000))
        for _ in range(count // 1000 - 1):
            out.write("," + ",".join([one] * 1000))
        total = count // 1000 * 1000
        out.write(f'],"findings_total":{total},"gate_failures":[],"notes":[],"parser_ok":true,'
                  f'"schema":"{SCHEMA}","summary":{{}},"wants_log_tail":false}}')
    (run_dir / "full.log").write_text("")
    facts = run_parser("pytest", run_dir, run_dir, 1)
    assert_bounded(facts)
    assert facts["status"] == "fail", facts


# --- XML reports: a 32 MiB attribute, text node, or nesting --------------------------------

def _grow_xml(path: Path, anchor: str, offset: str, unit: str) -> None:
    text = path.read_text(encoding="utf-8")
    at = text.index(offset, text.index(anchor)) + len(offset)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text[:at])
        repeat(out, unit, SIZE)
        out.write(text[at:])


def test_a_huge_junit_attribute_is_refused_in_bounded_memory_and_time(big: Path) -> None:
    run_dir, cwd, rc = case(big, "pytest", "failing")
    _grow_xml(run_dir / "junit.xml", "<failure ", 'message="', "grown text ")
    facts = run_parser("pytest", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] != "pass"
    assert any("too large to read" in note for note in facts["notes"]), facts


def test_a_huge_junit_failure_text_is_streamed_in_bounded_memory(big: Path) -> None:
    run_dir, cwd, rc = case(big, "pytest", "failing")
    _grow_xml(run_dir / "junit.xml", "<failure ", ">", "grown text ")
    facts = run_parser("pytest", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] == "fail", facts


def test_a_huge_cobertura_attribute_is_refused_in_bounded_memory_and_time(big: Path) -> None:
    run_dir, cwd, rc = case(big, "coverage", "below")
    (run_dir / "coverage.json").unlink()
    _grow_xml(run_dir / "coverage.xml", "<class ", 'filename="', "grown/")
    facts = run_parser("coverage", run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] != "pass"
    assert any("too large to read" in note for note in facts["notes"]), facts


NESTED = {  # parser: (fixture case, report, the element opened again and again inside itself)
    "pytest": (("pytest", "all_pass"), "junit.xml", "<testsuite", '<testsuite name="s">'),
    "coverage": (("coverage", "boundary"), "coverage.xml", "<packages", "<packages>"),
}


@pytest.mark.parametrize("parser", sorted(NESTED))
def test_32_mib_of_nested_elements_are_refused_in_bounded_memory(big: Path,
                                                                 parser: str) -> None:
    fixture, report, tag, element = NESTED[parser]
    run_dir, cwd, rc = case(big, *fixture)
    if parser == "coverage":
        (run_dir / "coverage.json").unlink()
    text = (run_dir / report).read_text(encoding="utf-8")
    at = text.index(">", text.index(tag)) + 1
    with open(run_dir / report, "w", encoding="utf-8") as out:
        out.write(text[:at])
        repeat(out, element, SIZE)
        out.write(text[at:])
    facts = run_parser(parser, run_dir, cwd, rc)
    assert_bounded(facts)
    assert facts["status"] != "pass"
    assert any("nested deeper" in note for note in facts["notes"]), facts
