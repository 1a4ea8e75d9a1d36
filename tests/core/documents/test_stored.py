"""Reading a stored document or a log back: one reader, and never through a symlink."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ckdn.documents import Bounds, build_digest
from ckdn.documents._logtail import read_log_tail
from ckdn.documents.stored import read_stored
from ckdn.errors import UsageError
from ckdn.parsers.base import ParseResult
from ckdn.reconcile import Exit, reconcile

RUN = "20260707T101500Z-ruff"
PLANTED = {"schema": "ckdn.digest/2", "check": "secret", "status": "pass", "rc": 0,
           "run_dir": "somewhere", "token": "do-not-show"}


def shown(path: str) -> str:
    return os.path.basename(path)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    path = tmp_path / "runs" / RUN
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("marker", ["digest.json", "aggregate.json"])
def test_a_document_that_is_a_symlink_out_of_the_run_dir_is_refused_unread(
        run_dir: Path, tmp_path: Path, marker: str) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(PLANTED))
    (run_dir / marker).symlink_to(outside)
    with pytest.raises(UsageError) as refused:
        read_stored(str(run_dir), shown)
    assert refused.value.message == (
        f"{marker}: cannot read: it is a symlink, and ckdn reads nothing in the runs dir"
        " through one")


def test_a_document_that_is_a_fifo_is_refused_without_waiting_for_a_writer(
        run_dir: Path) -> None:
    os.mkfifo(run_dir / "digest.json")
    with pytest.raises(UsageError, match=r"digest\.json: cannot read: not a regular file"):
        read_stored(str(run_dir), shown)


def test_a_run_dir_that_is_a_symlink_is_refused(run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "digest.json").write_text(json.dumps(PLANTED))
    link = tmp_path / "runs" / "20260707T101501Z-link"
    link.symlink_to(run_dir)
    with pytest.raises(UsageError, match="cannot read: it is a symlink"):
        read_stored(str(link), shown)


def test_an_unfinished_run_names_itself_and_its_log(run_dir: Path) -> None:
    (run_dir / "full.log").write_text("working\n")
    with pytest.raises(UsageError) as refused:
        read_stored(str(run_dir), shown)
    assert refused.value.message == (
        f"{RUN} is unfinished: no digest yet (it is still running, or it was killed);"
        " its log is full.log")


def test_a_regular_document_is_read(run_dir: Path) -> None:
    doc = {"schema": "ckdn.digest/2", "check": "ruff", "status": "pass", "rc": 0,
           "run_dir": f".agent-runs/{RUN}"}
    (run_dir / "digest.json").write_text(json.dumps(doc))
    assert read_stored(str(run_dir), shown) == doc


def failing_digest(run_dir: Path) -> dict[str, object]:
    exit = Exit(2)
    result = ParseResult()
    return dict(build_digest(check="c", verdict=reconcile(exit, result), exit=exit,
                             result=result, run_dir=f".agent-runs/{RUN}", artifacts=[],
                             log_path=str(run_dir / "full.log"), bounds=Bounds()))


def test_a_full_log_swapped_for_a_symlink_gives_a_note_and_none_of_its_target(
        run_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/sh\n")
    (run_dir / "full.log").symlink_to(secret)
    with pytest.raises(OSError, match=r"full\.log is a symlink, not followed"):
        read_log_tail(run_dir / "full.log", 40)
    doc = failing_digest(run_dir)
    assert "log_tail" not in doc
    assert doc["notes"] == ["log tail unavailable: full.log is a symlink, not followed"]
    assert "root:" not in json.dumps(doc)


def test_a_full_log_swapped_for_a_fifo_gives_a_note_without_waiting(run_dir: Path) -> None:
    os.mkfifo(run_dir / "full.log")
    doc = failing_digest(run_dir)
    assert doc["notes"] == ["log tail unavailable: full.log is not a regular file, not read"]
