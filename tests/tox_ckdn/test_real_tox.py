"""A real ``tox`` process: a new virtualenv, a tool installed from ``requires``, run by ckdn."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.project import running
from tests.tox_ckdn.realtox import run_tox, start_tox

CKDN_TOML = """\
[check.ruff]
command = "ruff check --output-format json --output-file {run_dir}/ruff.json ."
parser = "ruff"
requires = ["ruff==0.17.6"]
"""


@pytest.mark.usefixtures("enable_pip_pypi_access")
def test_real_tox_installs_a_checks_requires_into_a_new_virtualenv_and_runs_it_there(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(CKDN_TOML)
    (tmp_path / "tox.toml").write_text("[env_run_base]\nskip_install = true\n")
    (tmp_path / "unused.py").write_text("import os\n")

    proc = run_tox(tmp_path, "-e", "ruff")

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (tmp_path / ".tox" / "ruff" / "bin" / "ruff").exists()
    assert "install_deps> python -I -m pip install ruff==0.17.6" in proc.stdout
    latest = tmp_path / ".agent-runs" / "latest" / "aggregate.json"  # the tox run's own
    aggregate = json.loads(proc.stdout.strip().splitlines()[-1])
    assert json.loads(latest.read_text()) == aggregate
    (member,) = aggregate["members"]
    digest = json.loads((tmp_path / member["run_dir"] / "digest.json").read_text())
    assert digest["check"] == "ruff"
    assert digest["status"] == "fail"
    assert [(f["id"], f["location"]) for f in digest["findings"]] == [
        ("unused.py:1:8:F401", "unused.py:1:8")]
    assert member == {"check": "ruff", "status": "fail", "rc": 1, "run_dir": digest["run_dir"]}

    (tmp_path / "unused.py").write_text("import os\n\nprint(os.sep)\n")
    again = run_tox(tmp_path, "-e", "ruff")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "install_deps>" not in again.stdout
    assert json.loads(latest.read_text())["status"] == "pass"


def test_ctrl_c_under_tox_stops_the_running_check_and_its_evidence_says_so(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(
        "[check.long]\n"
        "command = \"sh -c '(sleep 60; touch slept) & echo $! > sleeper.pid; wait'\"\n"
        'parser = "generic"\ntimeout = 120\n'
        '[check.next]\ncommand = "true"\nparser = "generic"\n'
        '[check.both]\nmembers = ["long", "next"]\nfail_fast = false\n')
    (tmp_path / "tox.toml").write_text(
        '[env_run_base]\nskip_install = true\n[env.work]\nckdn_checks = ["both"]\n')
    tox = start_tox(tmp_path, "-e", "work")
    pid_file = tmp_path / "sleeper.pid"
    try:
        deadline = time.monotonic() + 120  # the env's virtualenv is made first
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert tox.poll() is None, tox.communicate()[0]
            assert time.monotonic() < deadline, "the check never started"
            time.sleep(0.05)
        sleeper = int(pid_file.read_text())
        tox.send_signal(signal.SIGINT)
        out, _ = tox.communicate(timeout=60)
    finally:
        if tox.poll() is None:
            tox.kill()
            tox.communicate()
    assert not (tmp_path / "slept").exists(), out  # stopped, not waited for (60 s)
    assert tox.returncode != 0, out
    runs = tmp_path / ".agent-runs"
    (long_run,) = runs.glob("*-long@work")
    digest = json.loads((long_run / "digest.json").read_text())
    assert (digest["status"], digest["rc"], digest["interrupted"]) == ("error", 130, True)
    assert digest["notes"][0].startswith("stopped at the host's request (tox was interrupted);")
    assert not list(runs.glob("*-next@work"))  # the alias's next member never started
    assert not running(sleeper)
