"""The last green run a run's facts are compared with: found from the names, newest first,
looking at no more run dirs than it must, and never at an unfinished one's facts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.app._running.run_facts import FACTS_FILE, SCHEMA_FACTS, newest_facts, reference
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


RUNS = st.lists(st.tuples(st.sampled_from([None, "main", "topic"]), st.booleans()), max_size=6)


@settings(max_examples=40)  # each example makes up to 6 real run dirs on disk
@given(runs=RUNS, branch=st.sampled_from([None, "main", "topic"]))
def test_what_was_read_while_the_child_ran_gives_the_same_answer(
        tmp_path_factory: pytest.TempPathFactory, runs: list[tuple[str | None, bool]],
        branch: str | None) -> None:
    """A run reads the newest earlier run's facts while its child runs (newest_facts);
    the reference it then picks is the one a fresh look at the runs dir picks."""
    root = tmp_path_factory.mktemp("runs")
    store = Store(root / "runs", root, durable=False)
    for run_branch, digest in runs:
        finished_run(store, run_branch, digest=digest)
    this_run = store.new_dir("unit")

    early = newest_facts(store, "unit", this_run)

    assert reference(store, "unit", this_run, branch, [early]) == reference(
        store, "unit", this_run, branch)


def test_a_first_look_that_found_no_facts_answers_without_a_second(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    this_run = store.new_dir("unit")
    monkeypatch.setattr(Store, "run_names", lambda *args: pytest.fail("listed again"))
    assert reference(store, "unit", this_run, "main", [None]) is None


def test_a_planted_facts_file_nested_too_deep_is_no_reference(tmp_path: Path) -> None:
    """Hostile input: json's scanner recurses; a run (whose child is running meanwhile)
    reads such a file as no facts, never as a traceback."""
    store = Store(tmp_path / "runs", tmp_path, durable=False)
    planted = finished_run(store, "main")
    Path(planted, FACTS_FILE).write_text("[" * 60000)
    this_run = store.new_dir("unit")
    assert newest_facts(store, "unit", this_run) is None
    assert reference(store, "unit", this_run, "main") is None
