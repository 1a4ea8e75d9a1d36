"""Evidence survives a kill: a Python tool's output is in full.log even when it was stopped.

A Python child whose stdout is a file buffers what it prints; killed at its timeout (or
Ctrl-C), it took that output with it, and full.log was empty. ckdn gives the child
``PYTHONUNBUFFERED=1`` unless the check's ``env`` says otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from ckdn import app
from ckdn.config import load_config
from ckdn.process.stop import StopRequest
from tests.project import clean_env

PRINTS_THEN_HANGS = ("print('collected 3 items', flush=False); import pathlib, time; "
                     "pathlib.Path('printed').touch(); time.sleep(30)")


def outer_env() -> dict[str, str]:
    """The environment ckdn runs in, without a PYTHONUNBUFFERED of its own (this suite's
    runner may export one, which would hide what ckdn does)."""
    return {key: value for key, value in clean_env().items()
            if not key.startswith(("PYTEST_", "PYTHONUNBUFFERED"))}


def config(root: Path, env: str = "", timeout: float = 1.5) -> None:
    command = json.dumps(f"{sys.executable} -c \"{PRINTS_THEN_HANGS}\"")
    (root / "ckdn.toml").write_text(
        f'[check.hangs]\ncommand = {command}\nparser = "generic"\ntimeout = {timeout}\n{env}')


def run_until_it_printed(root: Path, env: str = "") -> app.Outcome:
    """The run whose timeout stopped the tool after it printed; on a busy machine Python
    may start later than the first timeout, and the run is made again with a longer one."""
    for timeout in (1.5, 10, 40):
        (root / "printed").unlink(missing_ok=True)
        config(root, env, timeout)
        outcome = app.run(load_config(root), "hangs", env=outer_env())
        if (root / "printed").exists():
            break
    return outcome


def log_of(outcome: app.Outcome) -> str:
    assert outcome.run_dir is not None
    return Path(outcome.run_dir, "full.log").read_text()


def test_a_python_tool_killed_at_its_timeout_leaves_what_it_printed(tmp_path: Path) -> None:
    outcome = run_until_it_printed(tmp_path)
    assert outcome.digest["timed_out"] is True
    assert log_of(outcome) == "collected 3 items\n"


@pytest.mark.parametrize("value", ["", "0"])
def test_the_checks_env_has_the_last_word_on_buffering(tmp_path: Path, value: str) -> None:
    """``PYTHONUNBUFFERED`` in the check's env reaches the child as it is: empty, or 0
    (Python reads an integer), the tool buffers again and its output dies with it."""
    outcome = run_until_it_printed(tmp_path, f'env = {{ PYTHONUNBUFFERED = "{value}" }}\n')
    assert outcome.digest["timed_out"] is True
    assert log_of(outcome) == ""


def test_the_child_gets_pythonunbuffered_whatever_the_outer_environment_says(
    tmp_path: Path
) -> None:
    (tmp_path / "ckdn.toml").write_text(
        '[check.env]\ncommand = "sh -c \'echo ${PYTHONUNBUFFERED-unset}\'"\nparser = "generic"\n')
    for outer in ({}, {"PYTHONUNBUFFERED": ""}):
        outcome = app.run(load_config(tmp_path), "env", env={**outer_env(), **outer})
        assert log_of(outcome) == "1\n"


def test_a_pytest_run_stopped_while_a_test_hangs_keeps_that_tests_last_words(
    tmp_path: Path
) -> None:
    """pytest flushes its own progress; what a test printed before it hung (``-s``) is the
    evidence of why, and it was lost with the buffer."""
    (tmp_path / "test_demo.py").write_text(
        "import pathlib, time\n"
        "def test_quick():\n    pass\n"
        "def test_hangs():\n    print('waiting for the server on port 8080')\n"
        "    pathlib.Path('hanging').touch()\n    time.sleep(30)\n")
    command = json.dumps(f"{sys.executable} -m pytest -q -s -p no:cacheprovider -p no:randomly"
                         " -p no:hypothesispytest -p no:anyio test_demo.py")
    (tmp_path / "ckdn.toml").write_text(f'[check.tests]\ncommand = {command}\nparser = "generic"\n')

    def stop_once_hanging(stop: StopRequest) -> None:
        deadline = time.monotonic() + 60
        while not (tmp_path / "hanging").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # well inside the sleep
        stop.request("the test asked to stop")

    with StopRequest() as stop:
        asker = threading.Thread(target=stop_once_hanging, args=(stop,))
        asker.start()
        outcome = app.run(load_config(tmp_path), "tests", env=outer_env(), stop=stop)
        asker.join()
    assert outcome.digest["interrupted"] is True
    assert os.path.exists(tmp_path / "hanging")
    assert log_of(outcome) == ".waiting for the server on port 8080\n"
