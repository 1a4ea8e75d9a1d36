"""The last green run a run's facts are compared with: found from the names, newest first,
looking at no more run dirs than it must, and never at an unfinished one's facts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ckdn.app._running.run_facts import FACTS_FILE, SCHEMA_FACTS, reference
from ckdn.store import Store


def finished_run(store: Store, branch: str | None, *, digest: bool = True) -> str:
    run_dir = store.new_dir("unit")
    facts = {"schema": SCHEMA_FACTS, "check": "unit", "branch": branch}
    Path(run_dir, FACTS_FILE).write_text(json.dumps(facts))
    if digest:
        Path(run_dir, "digest.json").write_text("{}\n")
    return run_dir


def test_the_newest_finished_run_on_the_branch_answers(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    older = finished_run(store, "main")
    finished_run(store, "topic")
    finished_run(store, "main", digest=False)  # unfinished: its facts may not be durable
    this_run = store.new_dir("unit")

    found = reference(store, "unit", this_run, "main")

    assert found is not None
    assert found[0] == os.path.basename(older)
    assert found[1]["branch"] == "main"


def test_the_runs_after_the_answer_are_never_looked_at(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    for _ in range(20):
        finished_run(store, "main")
    newest = finished_run(store, "main")
    this_run = store.new_dir("unit")
    looked: list[str] = []
    lstat = os.lstat

    def counted(path: str, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.path.dirname(path))
        return lstat(path)

    monkeypatch.setattr(os, "lstat", counted)

    found = reference(store, "unit", this_run, "main")

    assert found is not None
    assert found[0] == os.path.basename(newest)
    assert set(looked) == {newest}  # this run is passed by its path; no other run dir
