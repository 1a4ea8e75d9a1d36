"""`tox p` splits one check over envs (`tests@shard-a`, `tests@shard-b`); `ckdn merge
--check tests` takes those runs as the check's shards. Real tox, real pytest and coverage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.project import UNUSED_PLUGINS, Project
from tests.tox_ckdn.realtox import run_tox

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
          "-p", "no:cacheprovider", *UNUSED_PLUGINS, "--junitxml", "{run_dir}/junit.xml",
          "--cov=calc", "--cov-report=json:{run_dir}/coverage.json"]
CKDN_TOML = f"""
[check.tests]
command = {json.dumps(PYTEST)}
parser = "coverage"
fail_under = 95
env = {{ COVERAGE_FILE = "{{run_dir}}/.coverage" }}
"""
TOX_TOML = """
env_list = ["shard-a", "shard-b"]

[env_run_base]
skip_install = true
ckdn_checks = ["tests"]

[env.shard-a]
set_env = { PYTEST_ADDOPTS = "tests/test_a.py" }

[env.shard-b]
set_env = { PYTEST_ADDOPTS = "tests/test_b.py" }
"""
CALC = "def sign(x):\n    if x > 0:\n        return 1\n    return 0\n"


def test_the_envs_runs_of_a_check_merge_as_its_shards(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.config(CKDN_TOML)
    (tmp_path / "tox.toml").write_text(TOX_TOML)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n[tool.coverage.run]\n'
        "relative_files = true\n")
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "__init__.py").write_text(CALC)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "from calc import sign\n\n\ndef test_one():\n    assert sign(1) == 1\n")
    (tmp_path / "tests" / "test_b.py").write_text(
        "from calc import sign\n\n\ndef test_zero():\n    assert sign(0) == 0\n")
    proc = run_tox(tmp_path, "p")
    assert proc.returncode != 0, proc.stdout  # each env alone misses fail_under
    shards = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / ".agent-runs").glob(
        "*-tests@shard-*"))
    assert [s.rsplit("@", 1)[1] for s in shards] == ["shard-a", "shard-b"]
    merged: subprocess.CompletedProcess[str] = project.ckdn(
        "merge", "--check", "tests", "--expect", "2", *shards)
    digest = json.loads(merged.stdout)
    assert (merged.returncode, digest["status"], digest["check"]) == (0, "pass", "tests")
    assert digest["summary"]["coverage"]["percent"] == 100.0
    assert digest["summary"]["counts"]["tests"] == 2
