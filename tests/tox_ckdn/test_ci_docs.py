"""docs/ci.md: the workflow parses, calls only commands that exist, and its steps work."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.core.reports.test_sarif import github_problems, schema_errors
from tests.tox_ckdn.realtox import ROOT, TOX, examples, run_tox, scrub
from tests.tox_ckdn.yamlish import YamlSubsetError, load

PAGE = examples("ci.md")
WORKFLOW_NAME = ".github/workflows/checks.yml"


def workflow() -> dict[str, Any]:
    doc: dict[str, Any] = load(PAGE[WORKFLOW_NAME])
    return doc


def steps() -> list[dict[str, Any]]:
    jobs = workflow()["jobs"]
    return [step for job in jobs.values() for step in job["steps"]]


def run_commands() -> list[list[str]]:
    return [shlex.split(step["run"]) for step in steps() if "run" in step]


def test_the_workflow_is_a_github_workflow_with_jobs_of_steps() -> None:
    doc = workflow()
    assert set(doc) == {"name", "on", "jobs"}
    for job in doc["jobs"].values():
        assert job["runs-on"]
        assert job["permissions"]["security-events"] == "write"  # upload-sarif needs it
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), step


def test_every_run_step_calls_a_command_that_exists() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for argv in run_commands():
        if argv[0] == "python":
            assert argv[1:4] == ["-m", "pip", "install"]
            assert set(argv[4:]) == {"tox", project["project"]["name"]}
        elif argv[0] == "ckdn":
            assert argv[1:4] == ["annotate", "--format", "sarif"]
        else:
            assert argv[0] == "tox"
            assert TOX.exists()
    # the `ckdn` command: a shared script (core/scripts/ckdn), not a console script
    assert "ckdn" in project["tool"]["hatch"]["build"]["targets"]["wheel"][
        "shared-scripts"].values()
    assert project["project"]["entry-points"]["tox"]["ckdn"] == "tox_ckdn.plugin"


def test_the_sarif_and_the_evidence_are_uploaded_even_when_the_checks_fail() -> None:
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == ".agent-runs/"
    assert upload["with"]["include-hidden-files"] is True
    assert upload["if"] == "always()"
    sarif = next(s for s in steps() if s.get("run", "").startswith("ckdn annotate"))
    written = shlex.split(sarif["run"])[-1]
    assert sarif["if"] == "always()"
    scanning = next(s for s in steps()
                    if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert scanning["with"]["sarif_file"] == written
    assert scanning["if"] == "always()"


def test_the_workflows_steps_work_on_the_tox_pages_example_in_a_github_job(
        tmp_path: Path, wheelhouse: Path) -> None:
    tox_page = examples("tox.md")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("ckdn.toml", "tox.toml", "app.py"):
        (project / name).write_text(tox_page[name])
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    summary = tmp_path / "step-summary.md"
    job = {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(temp), "GITHUB_JOB": "checks",
           "GITHUB_STEP_SUMMARY": str(summary)}
    installs = ["python", "-m", "pip"]
    tox_step, sarif_step = (argv for argv in run_commands() if argv[:3] != installs)

    checked = run_tox(project, *tox_step[1:], wheels=wheelhouse, env=job)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    annotations = [line for line in checked.stdout.splitlines() if line.startswith("::")]
    assert "\n".join(annotations) + "\n" == PAGE["annotations"]
    assert scrub(summary.read_text(encoding="utf-8")).startswith(scrub(PAGE["summary"]))

    annotate = subprocess.run([sys.executable, "-m", "ckdn", *sarif_step[1:]], cwd=project,
                              env=job, capture_output=True, text=True, check=False)
    assert annotate.returncode == 0, annotate.stderr
    text = (project / sarif_step[-1]).read_text(encoding="utf-8")
    assert schema_errors(json.loads(text)) == []
    assert github_problems(text) == []
    categories = [run["automationDetails"]["id"] for run in json.loads(text)["runs"]]
    assert categories == ["ckdn/ruff@lint/", "ckdn/ruff@style/"]


@pytest.mark.parametrize("text", [
    "on: [push]\n", "run: |\n  tox\n", "a: &x 1\n", "a: 1\n a: 2\n", "a: 1\na: 2\n",
])
def test_yaml_outside_the_checked_subset_is_refused(text: str) -> None:
    with pytest.raises(YamlSubsetError):
        load(text)
