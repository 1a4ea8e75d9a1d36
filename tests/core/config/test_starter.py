"""Every `ckdn init` recipe works: run it, through the real `ckdn`, with the real tool.

A recipe runs on a small clean project when its tool is installed: the venv's
tools always (pytest, coverage, ruff, mypy), and the rest where the fixtures venv
of tests/fixtures/requirements.txt exists. A recipe whose tool is missing is
skipped, never faked. pip-audit needs its vulnerability service, which this
test cannot assume: it must then fail loudly with an explanation, never pass.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ckdn.app._install import setup
from ckdn.config.starter import PLUGIN_PYTEST, RECIPES, STARTER, Recipe, starter
from tests.project import Project

REPO = Path(__file__).resolve().parents[2]
TOOL_DIRS = [Path(sys.executable).parent, REPO / ".fixtures-venv" / "bin"]
SEARCH_PATH = os.pathsep.join([*(str(d) for d in TOOL_DIRS if d.is_dir()),
                               os.environ.get("PATH", "")])
NEEDS_SERVICE = {"pip_audit"}

CLEAN_PROJECT = {
    "src/sample/__init__.py": '"""A tiny, clean package for recipe tests."""\n',
    "src/sample/maths.py": (
        '"""Arithmetic that every checker accepts."""\n\n\n'
        "def add(left: int, right: int) -> int:\n"
        '    """Return the sum of two integers."""\n'
        "    return left + right\n"
    ),
    "tests/test_maths.py": (
        '"""Tests for sample.maths."""\n\n'
        "from sample.maths import add\n\n\n"
        "def test_add() -> None:\n"
        '    """Adding works."""\n'
        "    assert add(2, 3) == 5\n"
    ),
    "pyproject.toml": (
        '[project]\nname = "sample"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n'
        '[tool.mypy]\nmypy_path = "src"\n\n'
        '[tool.pyright]\nextraPaths = ["src"]\n\n'
        '[tool.coverage.run]\nsource = ["src"]\n\n'
        '[tool.ty.environment]\nextra-paths = ["src"]\n'
    ),
    "semgrep.yml": (
        "rules:\n  - id: no-eval\n    pattern: eval(...)\n    message: eval is dangerous\n"
        "    languages: [python]\n    severity: ERROR\n"
    ),
    ".pre-commit-config.yaml": (
        "repos:\n  - repo: local\n    hooks:\n      - id: no-tabs\n        name: no tabs\n"
        "        entry: 'false'\n        language: unsupported\n        files: '\\t'\n"
        "      - id: ok\n        name: always ok\n        entry: 'true'\n"
        "        language: unsupported\n        pass_filenames: false\n"
    ),
}


def tool_of(recipe: Recipe) -> str:
    return shlex.split(recipe.command)[0]


def enabled(recipe: Recipe) -> str:
    lines = [f"[check.{recipe.name}]", f"command = {recipe.command!r}",
             f'parser = "{recipe.parser}"']
    lines += [f"{key} = {value}" for key, value in recipe.options]
    return "\n".join(lines) + "\n"


def make_project(root: Path) -> None:
    for name, text in CLEAN_PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)


def test_the_starter_holds_every_recipe_and_loads() -> None:
    doc = tomllib.loads(STARTER)
    assert set(doc["check"]) == {"pytest", "ruff", "mypy", "lint"}
    for recipe in RECIPES:
        assert f"[check.{recipe.name}]" in STARTER
        assert recipe.command in STARTER


def test_the_plugin_starter_differs_only_in_its_pytest_command_and_loads() -> None:
    text = starter(plugin=True)
    doc, plain = tomllib.loads(text), tomllib.loads(STARTER)
    assert doc["check"]["pytest"]["command"] == "pytest -q --ckdn-digest"
    assert doc["check"]["pytest"]["parser"] == "pytest"
    del doc["check"]["pytest"]["command"], plain["check"]["pytest"]["command"]
    assert doc == plain
    assert "--junitxml {run_dir}/junit.xml" in text.split("[check.pytest]")[0]  # the way back
    assert starter(plugin=False) == STARTER


def test_the_pre_commit_starter_enables_its_check_outside_lint_and_loads() -> None:
    for plugin in (False, True):
        doc = tomllib.loads(starter(plugin=plugin, pre_commit=True))
        plain = tomllib.loads(starter(plugin=plugin))
        assert doc["check"]["pre_commit"] == {"command": "pre-commit run --all-files",
                                              "parser": "pre_commit"}
        assert doc["check"]["lint"] == plain["check"]["lint"] == {"members": ["ruff", "mypy"]}
        del doc["check"]["pre_commit"]
        assert doc == plain


def test_the_plugin_is_beside_this_environments_own_pytest_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = str(Path(sys.executable).parent)
    assert setup.plugin_beside_pytest(ours)
    assert not setup.plugin_beside_pytest(str(tmp_path))  # no pytest at all
    other = tmp_path / "pytest"
    other.write_text("#!/bin/sh\nexit 0\n")
    other.chmod(0o755)
    assert not setup.plugin_beside_pytest(os.pathsep.join([str(tmp_path), ours]))
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    assert not setup.plugin_beside_pytest(ours)  # pytest here, the plugin not registered


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@pytest.mark.parametrize("recipe", [*RECIPES, PLUGIN_PYTEST],
                         ids=[*(r.name for r in RECIPES), "pytest-plugin"])
def test_each_recipe_runs_green_on_a_clean_project(recipe: Recipe, project: Project) -> None:
    if shutil.which(tool_of(recipe), path=SEARCH_PATH) is None:
        pytest.skip(f"{tool_of(recipe)} is not installed")
    if recipe.name == "pre_commit" and shutil.which("git") is None:
        pytest.skip("pre-commit needs git")
    make_project(project.root)
    project.config(enabled(recipe))
    proc = project.ckdn("run", recipe.name, timeout=300,
                        env={"PATH": SEARCH_PATH, "PRE_COMMIT_HOME": str(project.root / ".pc"),
                             "PYTHONPATH": str(project.root / "src")})
    doc = project.digest(proc)
    if recipe.name in NEEDS_SERVICE and doc["status"] != "pass":
        assert doc["status"] in ("error", "fail", "parse_mismatch")
        assert doc.get("notes") or doc.get("gate_failures"), doc
        return
    assert doc["status"] == "pass", doc
    assert proc.returncode == 0


def test_the_starters_guard_rail_lines_load_when_uncommented(tmp_path: Path) -> None:
    from ckdn.config import load_config

    rest = STARTER.split("# The guard rails", 1)[1]
    lines = [line for line in rest.splitlines() if line.startswith("# ") and " = " in line
             and line.split(" = ")[0][2:] in ("command_policy", "require_lock", "max_age_days",
                                              "max_bytes", "inherit_env")]
    assert len(lines) == 5
    text = STARTER
    for line in lines:
        text = text.replace(line, line[2:], 1)
    (tmp_path / "ckdn.toml").write_text(text)
    run = load_config(tmp_path).run
    assert (run.command_policy, run.require_lock, run.max_age_days, run.max_bytes,
            run.inherit_env) == ("workspace", True, 30.0, 2 << 30, False)
