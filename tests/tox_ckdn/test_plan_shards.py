"""`tox p` as the shard engine: each env runs its shard of a plan (`--ckdn-shard auto` reading
the env's `CKDN_SHARD`), and `ckdn merge --plan` makes them one green run. Real tox, real
pytest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shard_suite import sharded_project, write_ledger
from tests.tox_ckdn.realtox import run_tox


def tox_toml(shards: int) -> str:
    envs = [f"shard-{k}" for k in range(1, shards + 1)]
    text = (f"env_list = {json.dumps(envs)}\n\n[env_run_base]\nskip_install = true\n"
            'ckdn_checks = ["tests"]\n')
    for k, env in enumerate(envs, 1):
        text += (f'\n[env.{env}]\nset_env = {{ CKDN_SHARD = "{k}/{shards}", '
                 'PYTEST_ADDOPTS = "--ckdn-shard auto --ckdn-plan plan.json" }\n')
    return text


@pytest.mark.parametrize("shards", [2, 4])
def test_tox_envs_run_the_shards_of_a_plan_and_merge_green(tmp_path: Path, shards: int) -> None:
    project = sharded_project(tmp_path / "p")
    write_ledger(project.root)  # the designed durations: the same plan at any load
    planned = project.ckdn("plan", "tests", "--shards", str(shards), "-o", "plan.json")
    assert planned.returncode == 0, planned.stderr
    (project.root / "tox.toml").write_text(tox_toml(shards))
    proc = run_tox(project.root, "p")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = sorted(str(p.relative_to(project.root))
                  for p in project.runs.glob("*-tests@shard-*"))
    assert len(runs) == shards
    merged = project.digest(project.ckdn("merge", "--check", "tests", "--plan", "plan.json",
                                         *runs))
    assert merged["status"] == "pass", merged
    assert merged["summary"]["counts"] == {"passed": 24, "tests": 24}
    partial = project.digest(project.ckdn("merge", "--check", "tests", "--plan", "plan.json",
                                          *runs[:-1]))
    assert partial["status"] != "pass"
