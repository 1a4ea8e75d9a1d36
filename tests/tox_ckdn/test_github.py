"""In a GitHub Actions job real tox annotates the findings of the checks it ran and adds the
step summary, once, for its whole run; ``ckdn_github = false`` turns it off."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.tox_ckdn.toxproject import Project, Run, last_json

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
ENV = """
    [env.lint]
    ckdn_checks = ["lint"]
"""


def lint_run(project: Project, core: str = "") -> Run:
    assert RUFF is not None
    command = [RUFF, "check", "--no-cache", "--isolated", "--select", "F", "--output-format",
               "json", "--output-file", "{run_dir}/ruff.json", "app.py"]
    checks = f'[check.lint]\ncommand = {json.dumps(command)}\nparser = "ruff"\n'
    return project.make(ENV, core=core, checks=checks, files={"app.py": "import os\n"})


def github_job(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("RUNNER_TEMP", str(temp))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return tmp_path / "summary.md"


def test_tox_in_a_github_job_annotates_and_summarises_its_checks(
        project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    summary = github_job(monkeypatch, tmp_path)
    run = lint_run(project)
    result = run("-e", "lint")
    result.assert_failed()
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    assert annotations == ["::error file=app.py,line=1,endLine=1,col=8,"
                           "title=lint%3A lint_violation::F401 `os` imported but unused"]
    assert last_json(result.out)["alias"] == "tox"  # the aggregate is still the last line
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## ❌ ckdn: tox fail (rc 1)")
    assert "| lint | ❌ fail | 1 | 1 |" in text


def test_ckdn_github_false_turns_it_off(project: Project, monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    summary = github_job(monkeypatch, tmp_path)
    run = lint_run(project, core="ckdn_github = false\n")
    result = run("-e", "lint")
    result.assert_failed()
    assert "::error" not in result.out
    assert not summary.exists()
