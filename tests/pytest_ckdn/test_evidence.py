"""The evidence file (``ckdn-pytest.json``): written by real sessions, read strictly."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.app.host import ProgressLog
from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.parsers.junit import PytestParser
from ckdn.parsers.pytest_evidence import (
    EVIDENCE_FILE,
    PROGRESS_FILE,
    PROGRESS_RUNNING,
    SCHEMA,
    encode_evidence,
    encode_progress,
    evidence_result,
    parse_evidence,
    read_evidence,
    read_progress,
)
from tests.pytest_ckdn.sessions import QUIET

SOURCE = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_fails(n):
    assert n < 0

def test_ok():
    pass
"""


def evidence_session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                     *args: str, source: str = SOURCE) -> tuple[pytest.RunResult, Path]:
    outer = pytester.mkdir("outer-run")
    monkeypatch.setenv("CKDN_RUN_DIR", str(outer))
    monkeypatch.setenv("CKDN_CHECK", "pytest")
    pytester.makepyfile(test_sample_ev=source)
    result = pytester.runpytest("--ckdn-digest", *QUIET, *args)
    return result, outer / EVIDENCE_FILE


@pytest.fixture
def real_evidence(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    _, path = evidence_session(pytester, monkeypatch)
    return path


def context(run_dir: Path, rc: int, top: int = 20) -> ParseContext:
    return ParseContext(check="pytest", run_dir=run_dir, cwd=run_dir, rc=rc, top=top)


def test_under_ckdn_run_the_session_writes_evidence_and_no_run_dir_of_its_own(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result, path = evidence_session(pytester, monkeypatch)
    assert result.ret == 1
    facts, exitstatus = read_evidence(path)
    assert exitstatus == 1
    assert facts.total == 4
    assert facts.summary["counts"]["failures"] == 4
    assert not (pytester.path / ".agent-runs").exists()
    assert not result.outlines[-1].startswith("{")


def test_under_ckdn_run_the_plugin_leaves_the_exit_code_to_the_outer_run(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "import pytest\n\n@pytest.mark.skip(reason='x')\ndef test_a():\n    pass\n"
    result, path = evidence_session(pytester, monkeypatch, source=source)
    assert result.ret == 0
    facts, exitstatus = read_evidence(path)
    assert exitstatus == 0
    assert facts.gate_failures == ["no tests ran: all 1 test(s) skipped"]


def test_evidence_that_cannot_be_written_is_one_line_on_stderr(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKDN_RUN_DIR", str(pytester.path / "missing" / "dir"))
    pytester.makepyfile(test_sample_nowrite="def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET)
    assert result.ret == 0
    errors = [line for line in result.errlines if line]
    assert errors  # the progress line could not be kept either: each said in one line
    assert all(line.startswith("ckdn: cannot ") for line in errors)
    assert errors[-1].startswith("ckdn: cannot write evidence into ")


def test_evidence_round_trips_through_read_and_encode(real_evidence: Path) -> None:
    facts, exitstatus = read_evidence(real_evidence)
    assert encode_evidence(facts, exitstatus) == real_evidence.read_bytes()


def test_evidence_agreeing_with_the_exit_code_is_trusted(real_evidence: Path) -> None:
    facts = evidence_result(context(real_evidence.parent, rc=1), real_evidence)
    assert facts.parser_ok
    assert facts.total == 4


def test_evidence_contradicting_the_exit_code_is_a_confused_parser(real_evidence: Path) -> None:
    facts = evidence_result(context(real_evidence.parent, rc=0), real_evidence)
    assert not facts.parser_ok
    assert facts.notes[-1] == (f"{EVIDENCE_FILE} records pytest exit status 1 but the command "
                               "exited with 0")


def test_evidence_keeps_top_findings_and_the_true_total(real_evidence: Path) -> None:
    facts = evidence_result(context(real_evidence.parent, rc=1, top=2), real_evidence)
    assert len(facts.findings) == 2
    assert facts.total == 4


def test_a_run_dir_without_evidence_leaves_the_parser_to_junit(tmp_path: Path) -> None:
    assert parse_evidence(context(tmp_path, rc=1)) is None


def test_a_foreign_schema_is_refused(real_evidence: Path) -> None:
    doc = json.loads(real_evidence.read_bytes())
    doc["schema"] = "ckdn.pytest-evidence/3"
    real_evidence.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"schema is 'ckdn\.pytest-evidence/3'"):
        read_evidence(real_evidence)
    facts = evidence_result(context(real_evidence.parent, rc=1), real_evidence)
    assert not facts.parser_ok


scalars = (st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False)
           | st.text(max_size=5))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*prefix, index)))
    return found


@given(data=st.data())
def test_a_mutated_evidence_file_is_refused_or_read_exactly_as_written(
        real_evidence: Path, data: st.DataObject) -> None:
    original = real_evidence.read_bytes()
    doc = json.loads(original)
    path = data.draw(st.sampled_from(_paths(doc)))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    action = data.draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "replace":
        parent[path[-1]] = data.draw(json_values)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=6))] = data.draw(json_values)
    else:
        parent.append(data.draw(json_values))
    mutated = real_evidence.with_name("mutated.json")
    mutated.write_text(json.dumps(doc))
    try:
        facts, exitstatus = read_evidence(mutated)
    except ValueError:
        return
    assert doc["schema"] == SCHEMA
    assert json.loads(encode_evidence(facts, exitstatus)) == doc


@given(cut=st.integers(min_value=0), junk=st.binary(max_size=20))
def test_truncated_or_garbage_evidence_is_refused_never_read_as_clean(
        real_evidence: Path, cut: int, junk: bytes) -> None:
    original = real_evidence.read_bytes()
    broken = original[:cut % len(original)] + junk
    path = real_evidence.with_name("broken.json")
    path.write_bytes(broken)
    try:
        read_evidence(path)
    except ValueError:
        facts = evidence_result(context(path.parent, rc=1), path)
        assert not facts.parser_ok
        return
    assert json.loads(broken) == json.loads(original)


@pytest.mark.parametrize("constant", ["Infinity", "-Infinity", "NaN"])
def test_non_json_numbers_in_evidence_are_refused(real_evidence: Path, constant: str) -> None:
    doc = json.loads(real_evidence.read_bytes())
    doc["exitstatus"] = "PLACEHOLDER"
    text = json.dumps(doc).replace('"PLACEHOLDER"', constant)
    path = real_evidence.with_name("constant.json")
    path.write_text(text)
    with pytest.raises(ValueError, match=constant):
        read_evidence(path)


# -- issue 10: never through a symlink; the progress line -------------------------------------


@pytest.fixture
def green_evidence(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    _, path = evidence_session(pytester, monkeypatch, source="def test_ok():\n    pass\n")
    facts, exitstatus = read_evidence(path)
    assert (exitstatus, facts.total) == (0, 0)
    return path


def test_a_symlinked_evidence_file_is_refused_with_a_note_never_read(
        green_evidence: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / EVIDENCE_FILE).symlink_to(green_evidence)  # green evidence from elsewhere
    result = PytestParser().parse(context(run_dir, rc=0))
    assert not result.parser_ok
    assert result.summary == {}
    assert any(note.startswith(f"{EVIDENCE_FILE} is not valid pytest plugin evidence: it is a "
                               "symlink: refused") for note in result.notes)
    with pytest.raises(ValueError, match="symlink"):
        read_evidence(run_dir / EVIDENCE_FILE)


def test_a_fifo_in_place_of_the_evidence_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / EVIDENCE_FILE)  # opening it for reading would block forever
    done: list[ParseResult] = []
    worker = threading.Thread(target=lambda: done.append(
        PytestParser().parse(context(tmp_path, rc=0))), daemon=True)
    worker.start()
    worker.join(10)
    assert done, "the parser blocked on a FIFO"
    assert not done[0].parser_ok
    assert any("not a regular file" in note for note in done[0].notes)


def test_a_symlinked_progress_line_is_refused_with_a_note(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(encode_progress(["test_x.py::test_secret"], 1, 0, 0))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / PROGRESS_FILE).symlink_to(elsewhere)
    result = PytestParser().parse(context(run_dir, rc=-9))
    assert "test_secret" not in repr(result)
    assert any(note.startswith(f"{PROGRESS_FILE} is not a readable progress line of the ckdn "
                               "pytest plugin: it is a symlink: refused") for note in result.notes)


def test_the_plugin_never_writes_its_progress_through_a_symlink(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    outer = pytester.mkdir("outer-run")
    target = tmp_path / "not-yours.txt"
    target.write_text("untouched\n")
    (outer / PROGRESS_FILE).symlink_to(target)
    monkeypatch.setenv("CKDN_RUN_DIR", str(outer))
    pytester.makepyfile(test_sample_link="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET)
    assert result.ret == 0
    assert target.read_text() == "untouched\n"
    assert next(line for line in result.errlines if line).startswith(
        f"ckdn: cannot keep progress in {outer}: ")
    assert read_evidence(outer / EVIDENCE_FILE)[1] == 0  # the evidence itself is fine


def test_the_progress_line_names_the_running_tests_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / PROGRESS_FILE
    running = [f"t.py::test_{i}" for i in range(10)] + ["t.py::test_" + "x" * 3000]
    path.write_bytes(encode_progress(running, 40, 29, 3) + b"   ")
    progress = read_progress(path)
    assert progress.running == tuple(running[:8])
    assert progress.describe() == (
        "pytest was running " + ", ".join(running[:8]) + " and 3 more when it stopped "
        "(40 test(s) started, 29 finished, 3 finding(s) so far)")


@given(data=st.binary(max_size=300))
def test_a_damaged_progress_line_is_refused_never_believed(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, PROGRESS_FILE)
        path.write_bytes(data)
        try:
            read_progress(path)
        except ValueError:
            return
    raise AssertionError(f"read {data!r} as a progress line")


@given(running=st.lists(st.text(max_size=40), max_size=12),
       counts=st.tuples(*[st.integers(0, 10**9)] * 3))
def test_a_progress_line_is_the_json_the_encoder_would_write(
        running: list[str], counts: tuple[int, int, int]) -> None:
    """The progress line is formatted by hand (it is written twice a test): its bytes are the
    encoder's, whatever the ids hold (quotes, controls, lone surrogates), and read back."""
    started, finished, findings = counts
    line = encode_progress(running, started, finished, findings)
    ids = json.dumps(running[:PROGRESS_RUNNING])  # the encoder's own list: ", " between ids
    expected = (f'{{"findings":{findings},"finished":{finished},"running":{ids},'
                f'"running_total":{len(running)},"schema":"ckdn.pytest-progress/1",'
                f'"started":{started}}}\n')
    assert line == expected.encode("ascii")
    assert json.loads(line)["running"] == running[:PROGRESS_RUNNING]


def test_the_progress_line_is_written_once_a_test_not_twice(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's finish rides on the next test's start (issue 22: two writes a test were most
    of evidence mode's cost); the loop's end brings the line up to date once."""
    updates: list[tuple[list[str], int, int]] = []
    real_update = ProgressLog.update

    def counted(self: ProgressLog, running: list[str], started: int, finished: int,
                findings: int) -> None:
        updates.append((list(running), started, finished))
        real_update(self, running, started, finished, findings)

    monkeypatch.setattr(ProgressLog, "update", counted)
    monkeypatch.setenv("CKDN_RUN_DIR", str(pytester.mkdir("outer-run")))
    pytester.makepyfile(test_many="".join(f"def test_{n}():\n    pass\n" for n in range(20)))
    result = pytester.runpytest_inprocess("--ckdn-digest", "-p", "no:randomly", *QUIET)
    assert result.ret == 0
    assert len(updates) == 20 + 2  # the start, one a test, the catch-up after the loop
    assert updates[-1] == ([], 20, 20)  # after the last test: "between tests", all finished
    assert updates[5] == (["test_many.py::test_4"], 5, 4)  # a start carries the finish before
