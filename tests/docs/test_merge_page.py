"""docs/merge.md: the CI matrix parses, and its shard and merge steps work for real.

Each shard job is played as GitHub runs it: a fresh checkout (its own runs
dir), the page's shard command, its whole `.agent-runs/` uploaded; the merge
job gets each artifact in its own directory (`download-artifact` with a
`pattern`) and runs the page's merge command, the glob expanded as a shell does.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project import Project
from tests.shared import shared_dir
from tests.tox_ckdn.realtox import examples
from tests.tox_ckdn.yamlish import load

PAGE = examples("merge.md")
WORKFLOW: dict[str, Any] = load(PAGE[".github/workflows/tests.yml"])
CALC = ("def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n"
        "    return 0\n")
TESTS = {
    "unit": "from calc import sign\n\n\ndef test_positive():\n    assert sign(2) == 1\n",
    "integration": "from calc import sign\n\n\ndef test_negative():\n    assert sign(-2) == -1\n",
    "e2e": "from calc import sign\n\n\ndef test_zero():\n    assert sign(0) == 0\n",
}


def job_step(job: str, name_start: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = WORKFLOW["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name", "").startswith(name_start))


def parts() -> list[str]:
    found: list[str] = WORKFLOW["jobs"]["shard"]["strategy"]["matrix"]["part"]
    return found


def checkout(root: Path) -> Project:
    """The project as `actions/checkout` gives each job: sources and ckdn.toml, no runs."""
    root.mkdir()
    project = Project(root)
    project.config(PAGE["ckdn.toml"])
    (root / "calc").mkdir()
    (root / "calc" / "__init__.py").write_text(CALC)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
                                         + PAGE["pyproject.toml"])
    for part, text in TESTS.items():
        (root / "tests" / part).mkdir(parents=True)
        (root / "tests" / part / f"test_{part}.py").write_text(text)
    return project


def ckdn_argv(command: str, **matrix: str) -> list[str]:
    for key, value in matrix.items():
        command = command.replace("${{ matrix.%s }}" % key, value)  # noqa: UP031
    argv = shlex.split(command)
    assert argv[0] == "ckdn"
    return argv[1:]


ENV = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def shard_jobs(root: Path) -> None:
    """Every shard job, each shard uploaded to ``root/uploads``."""
    command = job_step("shard", "Run this shard")["run"]
    upload = job_step("shard", "Upload the shard")
    for part in parts():
        job = checkout(root / f"job-{part}")
        proc = job.ckdn(*ckdn_argv(command, part=part), env=ENV)
        shard = job.digest(proc)  # a shard alone misses fail_under: red, and not the verdict
        assert shard["status"] == "fail", proc.stdout + proc.stderr
        assert shard["gate_failures"][0].startswith("coverage total of")
        name = upload["with"]["name"].replace("${{ matrix.part }}", part)
        shutil.copytree(job.root / upload["with"]["path"], root / "uploads" / name,
                        symlinks=True)


@pytest.fixture
def uploads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shard jobs' uploads, played once a suite run: each test merges a copy of them."""
    return shared_dir(tmp_path_factory, "merge-page-shards", shard_jobs) / "uploads"


def run_matrix(tmp_path: Path, uploads: Path, skip: str | None = None) -> Project:
    """The merge job's checkout with the artifacts downloaded (less shard ``skip``'s)."""
    merger = checkout(tmp_path / "merge-job")
    name = job_step("shard", "Upload the shard")["with"]["name"]
    skipped = None if skip is None else name.replace("${{ matrix.part }}", skip)
    for shard in sorted(uploads.iterdir()):
        if shard.name != skipped:
            shutil.copytree(shard, merger.root / "shards" / shard.name, symlinks=True)
    return merger


def merge_job(merger: Project) -> tuple[int, dict[str, Any]]:
    argv = ckdn_argv(job_step("merge", "Merge the shards")["run"])
    expanded = [hit for arg in argv
                for hit in (sorted(glob.glob(arg, root_dir=merger.root)) or [arg])]
    proc = merger.ckdn(*expanded, env=ENV)
    assert proc.stderr == "", proc.stderr
    return proc.returncode, merger.digest(proc)


def test_the_workflow_is_a_matrix_of_shards_and_a_merge_that_always_runs() -> None:
    jobs = WORKFLOW["jobs"]
    assert set(jobs) == {"shard", "merge"}
    assert jobs["merge"]["needs"] == "shard"
    assert jobs["merge"]["if"] == "always()"
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    assert job_step("shard", "Run this shard")["continue-on-error"] is True
    upload = job_step("shard", "Upload the shard")
    assert upload["if"] == "always()"
    assert upload["with"]["include-hidden-files"] is True
    merge = shlex.split(job_step("merge", "Merge the shards")["run"])
    assert merge[merge.index("--expect") + 1] == str(len(parts()))
    download = next(s for s in jobs["merge"]["steps"]
                    if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["pattern"] + "" == "shard-*"
    assert f"{download['with']['path']}/shard-*" in merge


def test_the_documented_matrix_merges_its_shards_into_one_passing_run(
        tmp_path: Path, uploads: Path) -> None:
    rc, digest = merge_job(run_matrix(tmp_path, uploads))
    assert (rc, digest["status"]) == (0, "pass"), json.dumps(digest)
    assert digest["summary"]["counts"]["tests"] == 3
    assert digest["summary"]["coverage"]["percent"] == 100.0


def test_the_documented_merge_is_red_when_one_shard_never_uploaded(
        tmp_path: Path, uploads: Path) -> None:
    rc, digest = merge_job(run_matrix(tmp_path, uploads, skip="e2e"))
    assert rc != 0
    assert digest["status"] != "pass"
    assert digest["status_reason"].endswith("2 shard(s) given, 3 expected (missing)")
