"""nox judges a check by its baseline gate when asked (sessions(gate=True), CKDN_GATE=1)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.nox_ckdn.noxproject import NoxProject

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
NOXFILE = """\
import nox_ckdn

nox_ckdn.sessions(python=False{gate})
"""


def lint_project(nox_project: NoxProject) -> None:
    assert RUFF is not None
    command = [RUFF, "check", "--no-cache", "--isolated", "--select", "F", "--output-format",
               "json", "--output-file", "{run_dir}/ruff.json", "."]
    nox_project.config(f"""
        [run]
        baseline = "ckdn.baseline.json"

        [check.lint]
        command = {json.dumps(command)}
        parser = "ruff"

        [check.fine]
        command = ["{sys.executable}", "-c", "pass"]
        parser = "generic"

        [check.both]
        members = ["lint", "fine"]
    """)
    (nox_project.root / "app.py").write_text("import os\n")
    assert nox_project.ckdn("baseline", "lint").returncode == 0


def test_a_red_check_whose_findings_are_known_passes_a_gated_session(
        nox_project: NoxProject) -> None:
    lint_project(nox_project)
    nox_project.noxfile(NOXFILE.format(gate=", gate=True"))
    proc = nox_project.nox("-s", "lint")
    assert proc.returncode == 0, proc.stderr
    assert "ckdn: lint is fail, and its baseline gate passes" in proc.stderr
    (nox_project.root / "app.py").write_text("import os\nimport sys\n")
    proc = nox_project.nox("-s", "lint")
    assert proc.returncode == 1
    newest = nox_project.run_dirs_of("lint")[-1]
    assert json.loads((newest / "digest.json").read_text())["gate"]["status"] == "fail"


def test_without_gate_the_status_decides_and_ckdn_gate_turns_it_on(
        nox_project: NoxProject) -> None:
    lint_project(nox_project)
    nox_project.noxfile(NOXFILE.format(gate=""))
    assert nox_project.nox("-s", "lint").returncode == 1
    assert nox_project.nox("-s", "lint", env={"CKDN_GATE": "1"}).returncode == 0


def test_a_gated_alias_runs_on_past_a_member_whose_findings_are_known(
        nox_project: NoxProject) -> None:
    lint_project(nox_project)  # `both` keeps fail_fast's default: true
    nox_project.noxfile(NOXFILE.format(gate=""))
    proc = nox_project.nox("-s", "both", env={"CKDN_GATE": "1"})
    assert proc.returncode == 0, proc.stderr
    aggregate = json.loads((nox_project.run_dirs_of("both")[-1] / "aggregate.json").read_text())
    assert [m["status"] for m in aggregate["members"]] == ["fail", "pass"]
    assert aggregate["gate"]["status"] == "pass"
