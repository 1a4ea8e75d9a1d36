"""tox judges ``ckdn_checks`` by their baseline gate when asked (``ckdn_gate``, CKDN_GATE)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.project import clean_env
from tests.tox_ckdn.toxproject import Project, Run, last_json

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
ENV = """
    [env.lint]
    ckdn_checks = ["lint"]
"""


def lint_run(project: Project, core: str = "") -> Run:
    assert RUFF is not None
    command = [RUFF, "check", "--no-cache", "--isolated", "--select", "F", "--output-format",
               "json", "--output-file", "{run_dir}/ruff.json", "app.py"]
    checks = (f'[run]\nbaseline = "ckdn.baseline.json"\n\n[check.lint]\n'
              f'command = {json.dumps(command)}\nparser = "ruff"\n')
    run = project.make(ENV, core=core, checks=checks, files={"app.py": "import os\n"})
    recorded = subprocess.run([sys.executable, "-m", "ckdn", "baseline", "lint"], cwd=run.path,
                              env=clean_env(), capture_output=True, text=True, check=False)
    assert recorded.returncode == 0, recorded.stderr
    return run


def test_a_gated_env_passes_with_known_findings_and_fails_on_a_new_one(
        project: Project) -> None:
    run = lint_run(project, core="ckdn_gate = true\n")
    result = run("-e", "lint")
    result.assert_success()
    assert run.digest("lint")["gate"] == {"status": "pass", "policy": "no_new_findings"}
    # the closing aggregate keeps the true status and says, as tox's verdict does, the gate
    closing = last_json(result.out)
    assert (closing["status"], closing["rc"]) == ("fail", 1)
    assert closing["gate"] == {"status": "pass", "policy": "no_new_findings"}
    assert run.stored_aggregate() == closing
    (run.path / "app.py").write_text("import os\nimport sys\n")
    result = run("-e", "lint")
    result.assert_failed()
    assert run.digest("lint")["gate"]["status"] == "fail"
    assert last_json(result.out)["gate"] == {
        "status": "fail", "policy": "no_new_findings",
        "reason": "lint: 1 new finding(s) not in the baseline (first: app.py:2:8:F401)"}


def test_a_gated_env_that_tox_fails_by_its_own_commands_fails_the_closing_gate(
        project: Project) -> None:
    run = lint_run(project, core="ckdn_gate = true\n")
    (run.path / "tox.toml").write_text((run.path / "tox.toml").read_text().replace(
        'ckdn_checks = ["lint"]',
        'ckdn_checks = ["lint"]\ncommands = [["python", "-c", "raise SystemExit(3)"]]'))
    result = run("-e", "lint")
    result.assert_failed()
    closing = last_json(result.out)
    assert closing["gate"] == {
        "status": "fail", "policy": "no_new_findings",
        "reason": "tox-lint: status fail, not a check judged by its gate"}


def test_an_ungated_env_goes_by_the_status(project: Project) -> None:
    run = lint_run(project)
    result = run("-e", "lint")
    result.assert_failed()
    assert run.digest("lint")["gate"]["status"] == "pass"
    assert "gate" not in last_json(result.out)  # nothing was judged by a gate
