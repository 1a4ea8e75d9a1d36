"""``Project.ckdn`` runs the CLI in the test's process; what a test sees of a call (exit
code, stdout, stderr) must be what a ``python -m ckdn`` child shows it, or a test would
pass on a harness the user never runs."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from tests.project import UNUSED_ADDOPTS, Project, py

GREEN = py("print('ok')")
RED = py("import sys; print('boom'); print('café'); sys.exit(3)")
ENV = py("import os; print(os.environ.get('CKDN_HARNESS', 'unset'))")
CONFIG = f"""
[check.green]
command = {json.dumps(GREEN)}
parser = "generic"

[check.red]
command = {json.dumps(RED)}
parser = "generic"

[check.env]
command = {json.dumps(ENV)}
parser = "generic"
env_allow = ["CKDN_HARNESS"]
"""

CALLS = [
    ("--version",),
    ("run", "green"),
    ("run", "red"),
    ("run", "nope"),
    ("show", "red"),
    ("list",),
    ("checks",),
    ("run", "--no-such-option"),  # argparse's usage error: SystemExit(2)
    ("--help",),  # argparse's SystemExit(0)
    ("gc", "--keep", "x"),
]


@pytest.mark.parametrize("argv", CALLS, ids=" ".join)
def test_a_call_in_process_shows_what_a_child_shows(project: Project,
                                                   argv: tuple[str, ...]) -> None:
    project.config(CONFIG)
    stored = project.ckdn("run", "red", own_process=True)  # a stored run for show and list
    assert stored.returncode == 3, stored.stdout + stored.stderr
    child = project.ckdn(*argv, own_process=True)
    here = project.ckdn(*argv)
    assert (here.returncode, _steady(here.stderr)) == (child.returncode, _steady(child.stderr))
    assert _steady(here.stdout) == _steady(child.stdout)


def _steady(text: str) -> str:
    """What differs between two runs of one command whichever way it runs (run ids, times,
    durations) is masked by shape, not by value."""
    text = re.sub(r"\d{8}T\d{6}[\w.-]*", "RUN", text)
    text = re.sub(r"\d+(\.\d+)?(ms| ms|s\b|\"|Z)", "N", text)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", "TIME", text)


def test_the_call_leaves_the_process_as_it_found_it(project: Project) -> None:
    project.config(CONFIG)
    before = dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)
    proc = project.ckdn("run", "env", env={"CKDN_HARNESS": "given"})
    assert '"status":"pass"' in proc.stdout.replace(" ", ""), proc.stdout + proc.stderr
    assert (dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)) == before
    assert "CKDN_HARNESS" not in os.environ


def test_the_call_sees_the_environment_it_is_given(project: Project) -> None:
    project.config(CONFIG)
    proc = project.ckdn("run", "env", env={"CKDN_HARNESS": "given"})
    log = next(project.runs.rglob("*.log")).read_text()
    assert "given" in log, proc.stdout + proc.stderr


def test_a_pytest_the_run_starts_skips_the_suites_unused_plugins(project: Project) -> None:
    """hypothesis's plugin imports all of hypothesis for its summary (~0.65 s a session);
    a caller's own ``PYTEST_ADDOPTS`` replaces the harness's."""
    probe = py("import os; print('ADDOPTS=' + os.environ['PYTEST_ADDOPTS'] + '.')")
    project.config(f'[check.probe]\ncommand = {json.dumps(probe)}\nparser = "generic"\n')
    project.ckdn("run", "probe")
    project.ckdn("run", "probe", env={"PYTEST_ADDOPTS": "-p no:randomly"})
    logs = sorted(path.read_text() for path in project.runs.rglob("*.log"))
    assert [log.strip().splitlines()[-1] for log in logs] == [
        f"ADDOPTS={UNUSED_ADDOPTS}.", "ADDOPTS=-p no:randomly."]
