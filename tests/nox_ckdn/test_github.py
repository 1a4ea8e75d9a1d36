"""In a GitHub Actions job a real nox session annotates its check's findings and adds the
step summary; ``github=False`` and ``CKDN_GITHUB=0`` turn it off."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.nox_ckdn.noxproject import NoxProject

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))


def lint_job(nox_project: NoxProject, tmp_path: Path, option: str = "") -> dict[str, str]:
    assert RUFF is not None
    command = [RUFF, "check", "--no-cache", "--isolated", "--select", "F", "--output-format",
               "json", "--output-file", "{run_dir}/ruff.json", "."]
    nox_project.config(f"""
        [check.lint]
        command = {json.dumps(command)}
        parser = "ruff"
    """)
    nox_project.noxfile(f"import nox_ckdn\n\nnox_ckdn.sessions(python=False{option})\n")
    (nox_project.root / "app.py").write_text("import os\nimport sys\n")
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    return {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(temp),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}


def test_a_session_in_a_github_job_annotates_and_summarises(nox_project: NoxProject,
                                                            tmp_path: Path) -> None:
    env = lint_job(nox_project, tmp_path)
    proc = nox_project.nox("-s", "lint", env=env)
    assert proc.returncode == 1
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert annotations == [
        "::error file=app.py,line=1,endLine=1,col=8,title=lint%3A lint_violation::"
        "F401 `os` imported but unused",
        "::error file=app.py,line=2,endLine=2,col=8,title=lint%3A lint_violation::"
        "F401 `sys` imported but unused",
    ]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "| lint | ❌ fail | 1 | 2 |" in summary


@pytest.mark.parametrize(("option", "env"), [(", github=False", {}),
                                             ("", {"CKDN_GITHUB": "0"})])
def test_github_false_or_ckdn_github_0_turns_it_off(nox_project: NoxProject, tmp_path: Path,
                                                    option: str, env: dict[str, str]) -> None:
    job = lint_job(nox_project, tmp_path, option)
    proc = nox_project.nox("-s", "lint", env={**job, **env})
    assert proc.returncode == 1
    assert "::error" not in proc.stdout
    assert not (tmp_path / "summary.md").exists()
