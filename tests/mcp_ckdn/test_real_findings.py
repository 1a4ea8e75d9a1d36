"""Real ruff findings through the tools: the baseline gate and `baselined` per finding, and
a result that stays bounded however many findings the tool reported."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from ckdn.app import load_config, record_baseline
from tests.mcp_ckdn.conftest import call, data
from tests.project import Project

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
CONFIG = f"""\
[run]
baseline = "ckdn.baseline.json"

[check.ruff]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
parser = "ruff"
"""


@pytest.fixture
def root(project: Project) -> Path:
    project.config(CONFIG)
    (project.root / "app.py").write_text("import os\n")
    return project.root


def test_with_a_baseline_the_digest_carries_the_gate_and_which_findings_are_new(
        root: Path) -> None:
    record_baseline(load_config(str(root)), "ruff")
    (root / "lib.py").write_text("import sys\n")
    plain = data(call(root, "run_check", {"check": "ruff"}))
    gated = data(call(root, "run_check", {"check": "ruff", "gate": True}))
    for result in (plain, gated):
        digest = result["digest"]
        assert digest["status"] == "fail"
        assert digest["gate"]["status"] == "fail"
        flags = {f["location"].split(":")[0]: f.get("baselined") for f in digest["findings"]}
        assert flags == {"lib.py": None, "app.py": True}  # new ones first, unmarked
    assert plain["exit_code"] == 1  # the tool's own
    assert gated["exit_code"] == 1  # the gate's: a new finding
    (root / "lib.py").unlink()
    passing = data(call(root, "run_check", {"check": "ruff", "gate": True}))
    assert (passing["digest"]["status"], passing["digest"]["gate"]["status"]) == ("fail", "pass")
    assert passing["exit_code"] == 0


def test_a_result_stays_bounded_whatever_the_tool_reported(root: Path) -> None:
    """20,000 real findings (ruff on a generated file): the answer stays under 20,000
    tokens (the text is JSON, well over one character per token; 64 KiB of digest)."""
    (root / "many.py").write_text("import os\n" * 20_000)
    result = call(root, "run_check", {"check": "ruff"})
    found = data(result)
    assert found["digest"]["findings_total"] == 20_001  # and app.py's
    (text,) = result.content
    assert len(text.text) <= 65_536 + 200  # type: ignore[union-attr]
    assert len(json.dumps(found)) <= 65_536 + 200
    window = data(call(root, "get_evidence", {"run": found["run_id"], "artifact": "ruff.json",
                                              "limit": 200}))
    assert len(json.dumps(window)) <= 20_000
