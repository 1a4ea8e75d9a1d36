"""tox under ``CKDN_DIFF_BASE`` gives the same diff-scoped gate as ``ckdn run --diff-base``."""

from __future__ import annotations

import pytest

from tests.diffgate_repo import (
    CONFIG,
    FILES,
    break_a_caller_and_add_an_error,
    gate_facts,
    git,
)
from tests.project import Project as CkdnProject
from tests.tox_ckdn.toxproject import Project

ENV = """
    [env.lint]
    ckdn_checks = ["lint"]
"""


def test_an_env_under_ckdn_diff_base_is_judged_by_the_same_gate(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    run = project.make(ENV, checks=CONFIG, files=dict(FILES))
    git(run.path, "init", "-q")
    git(run.path, "add", "-A")
    git(run.path, "commit", "-q", "-m", "base")
    break_a_caller_and_add_an_error(run.path)
    proc = CkdnProject(run.path).ckdn("run", "lint", "--gate", "--diff-base", "HEAD")
    expected = gate_facts(CkdnProject(run.path).digest(proc))
    monkeypatch.setenv("CKDN_DIFF_BASE", "HEAD")
    run("-e", "lint").assert_failed()
    assert gate_facts(run.digest("lint")) == expected
    (run.path / "lib.py").write_text("def surface():\n    pass\ndef area():\n    pass\n")
    run("-e", "lint").assert_success()
    assert run.digest("lint")["gate"]["status"] == "pass"


def test_an_env_under_a_base_it_cannot_trust_fails(project: Project,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run = project.make(ENV, checks=CONFIG, files={**FILES, "app.py": "x = 1\nuse area\n"})
    git(run.path, "init", "-q")
    git(run.path, "add", "-A")
    git(run.path, "commit", "-q", "-m", "base")
    monkeypatch.setenv("CKDN_DIFF_BASE", "no-such-ref")
    run("-e", "lint").assert_failed()
    digest = run.digest("lint")
    assert (digest["status"], digest["gate"]["status"]) == ("pass", "unavailable")
