"""A real ``tox`` process: a new virtualenv, a tool installed from ``requires``, run by ckdn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tox_ckdn.realtox import run_tox

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
    latest = tmp_path / ".agent-runs" / "latest" / "digest.json"
    digest = json.loads(latest.read_text())
    assert digest["check"] == "ruff"
    assert digest["status"] == "fail"
    assert [(f["id"], f["location"]) for f in digest["findings"]] == [
        ("unused.py:1:8:F401", "unused.py:1:8")]
    aggregate = json.loads(proc.stdout.strip().splitlines()[-1])
    assert aggregate["members"] == [{"check": "ruff", "status": "fail", "rc": 1,
                                     "run_dir": digest["run_dir"]}]

    (tmp_path / "unused.py").write_text("import os\n\nprint(os.sep)\n")
    again = run_tox(tmp_path, "-e", "ruff")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "install_deps>" not in again.stdout
    assert json.loads(latest.read_text())["status"] == "pass"
