"""docs/ci.md: the workflow parses, calls only commands that exist, and its steps work."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tox_ckdn.realtox import ROOT, TOX, examples, run_tox
from tests.tox_ckdn.yamlish import YamlSubsetError, load

PAGE = examples("ci.md")
WORKFLOW_NAME = ".github/workflows/checks.yml"
SCRIPT_NAME = ".github/ckdn_annotations.py"


def workflow() -> dict[str, Any]:
    doc: dict[str, Any] = load(PAGE[WORKFLOW_NAME])
    return doc


def steps() -> list[dict[str, Any]]:
    jobs = workflow()["jobs"]
    return [step for job in jobs.values() for step in job["steps"]]


def run_commands() -> list[list[str]]:
    return [shlex.split(step["run"]) for step in steps() if "run" in step]


def annotate_module() -> ModuleType:
    module = ModuleType("ckdn_annotations")
    exec(compile(PAGE[SCRIPT_NAME], SCRIPT_NAME, "exec"), module.__dict__)
    return module


def test_the_workflow_is_a_github_workflow_with_jobs_of_steps() -> None:
    doc = workflow()
    assert set(doc) == {"name", "on", "jobs"}
    for job in doc["jobs"].values():
        assert job["runs-on"]
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), step


def test_every_run_step_calls_a_command_that_exists() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for argv in run_commands():
        if argv[0] == "python":
            assert Path(sys.executable).exists()
            if argv[1:3] == ["-m", "pip"]:
                assert argv[3] == "install"
                assert set(argv[4:]) == {"tox", project["project"]["name"]}
            else:
                assert argv[1] == SCRIPT_NAME, "a script run by the workflow is in the page"
        else:
            assert argv[0] == "tox"
            assert TOX.exists()
    assert "ckdn" in project["project"]["scripts"]
    assert project["project"]["entry-points"]["tox"]["ckdn"] == "tox_ckdn.plugin"


def test_the_evidence_is_uploaded_even_when_the_checks_fail() -> None:
    upload = next(s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == ".agent-runs/"
    assert upload["with"]["include-hidden-files"] is True
    assert upload["if"] == "always()"
    annotate = next(s for s in steps() if SCRIPT_NAME in s.get("run", ""))
    assert annotate["if"] == "always()"


def test_the_workflows_tox_and_annotation_steps_work_on_the_tox_pages_example(
        tmp_path: Path, wheelhouse: Path) -> None:
    tox_page = examples("tox.md")
    for name in ("ckdn.toml", "tox.toml", "app.py"):
        (tmp_path / name).write_text(tox_page[name])
    script = tmp_path / SCRIPT_NAME
    script.parent.mkdir(parents=True)
    script.write_text(PAGE[SCRIPT_NAME])
    installs = ["python", "-m", "pip"]
    tox_step, annotate_step = (argv for argv in run_commands() if argv[:3] != installs)

    checked = run_tox(tmp_path, *tox_step[1:], wheels=wheelhouse)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    annotated = subprocess.run([sys.executable, *annotate_step[1:]], cwd=tmp_path,
                               capture_output=True, text=True, check=False)

    assert annotated.returncode == 0
    assert annotated.stdout == PAGE["annotations"]
    assert annotated.stderr == ""


def run_ckdn(root: Path, *args: str) -> None:
    ckdn = shutil.which("ckdn", path=str(Path(sys.executable).parent))
    assert ckdn is not None
    subprocess.run([ckdn, *args], cwd=root, capture_output=True, check=False)


def test_a_red_digest_without_findings_gets_one_annotation_with_its_reason(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(
        f'[check.crash]\ncommand = "{sys.executable} -c \'raise SystemExit(5)\'"\n'
        'parser = "generic"\n')
    run_ckdn(tmp_path, "run", "crash")
    digest = json.loads((tmp_path / ".agent-runs/latest/digest.json").read_text())
    lines = list(annotate_module().annotations(tmp_path / ".agent-runs"))
    assert lines == [("error", {"title": "crash: fail"},
                      f"exit code 5 (evidence: {digest['run_dir']})")]


def test_only_the_newest_digest_of_a_check_is_annotated_and_green_ones_are_not(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(
        f'[check.flaky]\ncommand = "{sys.executable} flaky.py"\nparser = "generic"\n')
    (tmp_path / "flaky.py").write_text("raise SystemExit(1)\n")
    run_ckdn(tmp_path, "run", "flaky")
    (tmp_path / "flaky.py").write_text("pass\n")
    run_ckdn(tmp_path, "run", "flaky")
    assert list(annotate_module().annotations(tmp_path / ".agent-runs")) == []


def test_findings_left_out_of_a_digest_are_counted_in_a_notice(tmp_path: Path) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    (tmp_path / "ckdn.toml").write_text(
        f'[run]\ntop = 1\n\n[check.ruff]\ncommand = "{ruff} check --output-format json'
        ' --output-file {run_dir}/ruff.json ."\nparser = "ruff"\n')
    (tmp_path / "two.py").write_text("import os\nimport sys\n")
    run_ckdn(tmp_path, "run", "ruff")
    digest = json.loads((tmp_path / ".agent-runs/latest/digest.json").read_text())
    found = list(annotate_module().annotations(tmp_path / ".agent-runs"))
    assert found == [
        ("error", {"file": "two.py", "line": "1", "col": "8", "title": "ruff: lint_violation"},
         "F401 `os` imported but unused"),
        ("notice", {"title": "ruff"}, f"1 more finding(s) in {digest['run_dir']}"),
    ]


@given(st.text())
def test_escaped_text_is_one_line_and_unescapes_to_itself(text: str) -> None:
    escape = annotate_module().escape
    for prop in (False, True):
        shown = escape(text, prop=prop)
        assert "\n" not in shown
        assert "\r" not in shown
        if prop:
            assert ":" not in shown
            assert "," not in shown
        assert unescape(shown) == text


def unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


@pytest.mark.parametrize(("location", "props"), [
    ("app.py:2:8", {"file": "app.py", "line": "2", "col": "8"}),
    ("app.py:2", {"file": "app.py", "line": "2"}),
    ("app.py", {"file": "app.py"}),
    ("C:/x/app.py:3", {"file": "C:/x/app.py", "line": "3"}),
])
def test_a_location_becomes_file_line_and_column(location: str, props: dict[str, str]) -> None:
    assert annotate_module().where(location) == props


@pytest.mark.parametrize("text", [
    "on: [push]\n", "run: |\n  tox\n", "a: &x 1\n", "a: 1\n a: 2\n", "a: 1\na: 2\n",
])
def test_yaml_outside_the_checked_subset_is_refused(text: str) -> None:
    with pytest.raises(YamlSubsetError):
        load(text)
