"""Real runs for the report tests: ruff, mypy and pytest run by ckdn on the fixture projects.

Each project is a copy of one the fixtures were recorded on
(tests/fixtures/*/projects, whose case.json files say which tool and version),
and each tool is the pinned one of the dev extra, run for real by ``ckdn run``:
the digests and findings files the views read are the ones a user's run leaves.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from tests.project import UNUSED_ADDOPTS, Project
from tests.shared import shared_dir

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"
PY = sys.executable

RUFF_OUT = "--output-file {run_dir}/ruff.json"
JUNIT = "--junitxml {run_dir}/junit.xml"
TESTS = "tests/check_failing.py"
LEAN = UNUSED_ADDOPTS
#: name -> (fixture project, the ckdn.toml check table)
RUNS = {
    "ruff": ("ruff/projects/violations", f"""
        [check.ruff]
        command = "{PY} -m ruff check --no-cache --output-format json {RUFF_OUT} ."
        parser = "ruff"
    """),
    "mypy": ("mypy/projects/type_errors", f"""
        [check.mypy]
        command = "{PY} -m mypy --cache-dir={{run_dir}}/mypy-cache --output json ."
        parser = "mypy"
        format = "json"
    """),
    "pytest": ("pytest/projects/failing", f"""
        [check.pytest]
        command = "{PY} -m pytest -p no:cacheprovider -p no:randomly {LEAN} {JUNIT} {TESTS}"
        parser = "pytest"
    """),
}


@dataclass
class RealRun:
    name: str
    project: Project

    def annotate(self, fmt: str, *args: str, env: dict[str, str] | None = None) -> str:
        proc = self.project.ckdn("annotate", "--format", fmt, *args, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def normalised(self, text: str) -> str:
        """``text`` with what differs between runs (the run dir's stamp, the project's path)
        replaced, for comparison with a golden file."""
        text = text.replace(str(self.project.root), "<PROJECT>")
        text = re.sub(r"\b0x[0-9a-f]{6,16}\b", "0x<ADDRESS>", text)  # a repr in a traceback
        return re.sub(r"\d{8}T\d{6}Z", "<STAMP>", text)


def make_run(root: Path, name: str, *, extra_config: str = "") -> RealRun:
    source, table = RUNS[name]
    shutil.copytree(FIXTURES / source, root, dirs_exist_ok=True)
    project = Project(root)
    project.config(extra_config + table)
    proc = project.ckdn("run", name)
    assert proc.returncode != 2, proc.stderr
    return RealRun(name, project)


@pytest.fixture(scope="session")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RealRun]:
    """One real red run of each tool, made once a suite run for every worker (read only:
    a test that runs again makes its own with :func:`make_run`)."""
    return {name: RealRun(name, Project(shared_dir(tmp_path_factory, f"reports-{name}",
                                                   partial(make_run, name=name))))
            for name in RUNS}
