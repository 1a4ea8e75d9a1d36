"""A check whose program is not the env's own says which file ran: a note in its digest.

tox puts the env's bin directory first on ``PATH``; a check with no
``requires`` (and no deps) still finds its tool further along, the ruff of
whatever environment tox itself runs from. That run looked exactly like one of
the env's own ruff. The harness runs tox inside this suite's venv, so that is
where the outer ruff is.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.tox_ckdn.toxproject import Project


@pytest.fixture(autouse=True)
def suite_venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outer ruff is this suite's venv's, as when the venv is activated (as in CI)."""
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", os.pathsep.join([bin_dir, os.environ.get("PATH", "")]))

CHECKS = """\
[check.outer]
command = "ruff --version"
parser = "generic"

[check.inner]
command = "python -c pass"
parser = "generic"

[check.both]
members = ["inner", "outer"]
fail_fast = false
"""


def test_a_program_found_outside_the_env_is_named_with_its_path_in_a_note(
        project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["outer"]
    """, checks=CHECKS)
    run("-e", "lint").assert_success()
    outer = shutil.which("ruff")
    assert outer is not None
    digest = run.digest("outer@lint")
    assert digest["status"] == "pass"
    assert digest["notes"] == [
        f"ruff ran from {outer}, found on PATH outside the env (its bin directory "
        f"{run.path / '.tox' / 'lint' / 'bin'}): the env has no ruff of its own"]


def test_the_envs_own_program_gets_no_note(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["both"]
    """, checks=CHECKS)
    run("-e", "lint").assert_success()
    assert "notes" not in run.digest("inner@lint")
    assert Path(run.digest("outer@lint")["notes"][0].split(" ran from ")[1].split(",")[0]) \
        == Path(str(shutil.which("ruff")))


def test_a_zero_config_env_says_so_too(project: Project) -> None:
    run = project.make("", checks=CHECKS)
    run("-e", "outer").assert_success()
    assert run.digest("outer")["notes"][0].startswith("ruff ran from ")
