"""``[run].inherit_env = false`` and ``env_allow``: a check's child gets a minimal environment."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from tests.project import Project

#: Prints the child's environment as JSON into the run dir.
DUMP = ("import json, os; "
        "json.dump(dict(os.environ), open(os.environ['CKDN_RUN_DIR'] + '/env.json', 'w'))")


def child_environment(project: Project, run: str = "", check: str = "",
                      env: dict[str, str] | None = None) -> dict[str, str]:
    command = shlex.join([sys.executable, "-c", DUMP])
    project.config(f"""
        [run]
        {run}
        [check.env]
        command = {json.dumps(command)}
        parser = "generic"
        {check}
    """)
    proc = project.ckdn("run", "env", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = project.digest(proc)
    result: dict[str, str] = json.loads((project.root / doc["run_dir"] / "env.json").read_text())
    return result


CI = {"CI_JOB_TOKEN": "glpat-abcdefghijklmnop", "AWS_SECRET_ACCESS_KEY": "x" * 40,
      "PYTEST_ADDOPTS": "-q", "LANG": "C.UTF-8", "TERM": "dumb"}


def test_by_default_the_child_inherits_ckdns_environment(project: Project) -> None:
    seen = child_environment(project, env=CI)
    assert seen["CI_JOB_TOKEN"] == CI["CI_JOB_TOKEN"]


def test_inherit_env_false_gives_only_the_minimal_set_the_checks_env_and_the_markers(
        project: Project) -> None:
    seen = child_environment(project, run="inherit_env = false",
                             check='env = { MODE = "strict" }', env=CI)
    assert "CI_JOB_TOKEN" not in seen
    assert "AWS_SECRET_ACCESS_KEY" not in seen
    assert "PYTEST_ADDOPTS" not in seen
    assert seen["LANG"] == "C.UTF-8"
    assert seen["TERM"] == "dumb"
    assert "PATH" in seen
    assert seen["MODE"] == "strict"
    assert seen["CKDN_CHECK"] == "env"
    assert seen["CKDN_RUN_DIR"].endswith("-env")
    assert set(seen) - {"PATH", "HOME", "LANG", "TERM", "MODE", "CKDN_CHECK", "CKDN_RUN_DIR",
                        "PYTHONUNBUFFERED", "LC_CTYPE"} == set()


def test_env_allow_keeps_the_named_variables_and_prefixes_only(project: Project) -> None:
    seen = child_environment(project, check='env_allow = ["PYTEST_ADDOPTS", "AWS_*"]', env=CI)
    assert seen["PYTEST_ADDOPTS"] == "-q"
    assert seen["AWS_SECRET_ACCESS_KEY"] == CI["AWS_SECRET_ACCESS_KEY"]
    assert "CI_JOB_TOKEN" not in seen


def test_a_minimal_environment_still_runs_a_real_tool(project: Project, tmp_path: Path) -> None:
    (project.root / "mod.py").write_text("x = 1\n")
    project.config("""
        [run]
        inherit_env = false
        [check.ruff]
        command = "ruff check --output-format json --output-file {run_dir}/ruff.json ."
        parser = "ruff"
    """)
    # the dev extra's ruff, on PATH as an activated venv puts it (not only when it is)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    proc = project.ckdn("run", "ruff", env={"RUFF_CACHE_DIR": str(tmp_path / "cache"),
                                            "PATH": path})
    assert proc.returncode == 0, proc.stdout + proc.stderr
