"""A run is one value through named steps: the tuple is the run, and docs/design.md lists it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ckdn import app
from ckdn.app._running import steps
from tests.project import Project

ROOT = Path(__file__).resolve().parents[3]
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")


def test_the_design_page_lists_the_run_steps_in_the_tuples_order() -> None:
    section = DESIGN[DESIGN.index("### The steps of one run"):]
    section = section[:section.index("\n## ")]
    listed = re.findall(r"^\d+\. `(\w+)`", section, re.MULTILINE)
    assert listed == [step.__name__ for step in steps.RUN_STEPS]


def test_a_host_made_run_enters_the_same_steps_after_the_spawn() -> None:
    names = [step.__name__ for step in steps.RUN_STEPS]
    assert [step.__name__ for step in steps.HOST_STEPS] == names[names.index("spawn") + 1:]


def test_adding_a_step_is_one_function_and_one_entry(project: Project,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, Any]] = []

    def note_status(run: steps.Run) -> steps.Run:
        assert run.verdict is not None
        seen.append((run.name, run.verdict.status))
        return run

    at = steps.RUN_STEPS.index(steps.decide_status) + 1
    monkeypatch.setattr(steps, "RUN_STEPS",
                        (*steps.RUN_STEPS[:at], note_status, *steps.RUN_STEPS[at:]))
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    outcome = app.run(app.load_config(str(project.root)), "ok")
    assert outcome.status == "pass"
    assert seen == [("ok", "pass")]


def test_a_step_that_raises_still_releases_the_lock(project: Project,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(run: steps.Run) -> steps.Run:
        raise RuntimeError("a step failed")

    at = steps.RUN_STEPS.index(steps.parse)
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    config = app.load_config(str(project.root))
    with monkeypatch.context() as patch:
        patch.setattr(steps, "RUN_STEPS", (*steps.RUN_STEPS[:at], broken))
        with pytest.raises(RuntimeError):
            app.run(config, "ok")
    assert app.run(config, "ok").status == "pass"  # the lock was dropped: the next run starts


def test_a_run_lists_the_runs_dir_once(project: Project,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The names listed when the run dir is made serve the earlier facts and the prune:
    the check's lock lets no other run of it appear meanwhile (was 3 listings a run)."""
    project.config('[run]\nkeep = 2\n[check.ok]\ncommand = "true"\nparser = "generic"\n')
    config = app.load_config(str(project.root))
    for _ in range(3):
        app.run(config, "ok")
    runs_dir = os.path.realpath(project.root / ".agent-runs")
    listings: list[str] = []
    real_scandir, real_listdir = os.scandir, os.listdir

    def counted(real: Any) -> Any:
        def listing(path: Any = ".") -> Any:
            if not isinstance(path, int) and os.path.realpath(path) == runs_dir:
                listings.append(real.__name__)
            return real(path)
        return listing

    monkeypatch.setattr(os, "scandir", counted(real_scandir))
    monkeypatch.setattr(os, "listdir", counted(real_listdir))
    outcome = app.run(config, "ok")
    assert outcome.status == "pass"
    assert len(listings) == 1, listings
    monkeypatch.undo()
    assert len([name for name in os.listdir(runs_dir) if name.endswith("-ok")]) == 2
    facts = json.loads((project.root / ".agent-runs" / "latest" / "facts.json").read_text())
    assert facts["check"] == "ok"
