"""The baseline gate from pytest's side: recorded through `ckdn baseline`, honoured by a
standalone `pytest --ckdn-digest` session (one rule, in ckdn.app), `--ckdn-gate`."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.project import UNUSED_PLUGINS, Project, clean_env

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
          *UNUSED_PLUGINS, "-q"]
TESTS = """
def test_known_failure():
    assert 1 + 1 == 3

def test_fine():
    pass
"""


def standalone(project: Project, *args: str) -> tuple[dict[str, Any], int]:
    proc = subprocess.run([*PYTEST, "--ckdn-digest", *args], cwd=project.root, env=clean_env(),
                          capture_output=True, text=True, check=False)
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc, proc.returncode


def test_a_session_honours_the_baseline_ckdn_baseline_recorded(project: Project) -> None:
    project.config(f"""
        [run]
        baseline = "ckdn.baseline.json"

        [check.pytest]
        command = {json.dumps([*PYTEST, "--ckdn-digest"])}
        parser = "pytest"
    """)
    (project.root / "test_sample_gate.py").write_text(TESTS)
    recorded = project.ckdn("baseline", "pytest")
    assert json.loads(recorded.stdout)["checks"] == {"pytest": {"recorded": 1}}, recorded.stderr
    doc, code = standalone(project, "--ckdn-gate")
    assert doc["status"] == "fail"
    assert doc["gate"] == {"status": "pass", "policy": "no_new_findings"}
    assert doc["baseline"] == {"known": 1, "new": 0}
    assert code == 0
    (project.root / "test_sample_gate.py").write_text(
        "# a comment above moves nothing\n" + TESTS + "\ndef test_new():\n    assert False\n")
    doc, code = standalone(project, "--ckdn-gate")
    assert doc["gate"]["status"] == "fail"
    assert doc["baseline"] == {"known": 1, "new": 1}
    assert doc["findings"][0]["id"] == "test_sample_gate.py::test_new"
    assert code == 1
    doc, code = standalone(project)  # without --ckdn-gate: pytest's own exit status
    assert (doc["gate"]["status"], code) == ("fail", 1)


def test_ckdn_gate_without_a_baseline_is_a_usage_error(project: Project) -> None:
    project.config('[check.pytest]\ncommand = "pytest"\nparser = "pytest"\n')
    (project.root / "test_sample_gate.py").write_text(TESTS)
    proc = subprocess.run([*PYTEST, "--ckdn-digest", "--ckdn-gate"], cwd=project.root,
                          env=clean_env(), capture_output=True, text=True, check=False)
    assert proc.returncode == 4
    assert "ckdn: --ckdn-gate needs a baseline: set baseline under [run] in ckdn.toml" in (
        proc.stderr)
