"""A real pytest suite to split into shards: 12 modules of two tests each, some slower."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.project import UNUSED_PLUGINS, Project

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:xdist",
          "-p", "no:cacheprovider", *UNUSED_PLUGINS, "--junitxml", "{run_dir}/junit.xml"]
CKDN_TOML = f"""
[check.tests]
command = {json.dumps(PYTEST)}
parser = "pytest"

[check.lint]
command = ["{sys.executable}", "-c", "pass"]
parser = "generic"
"""
MODULES = 12


def write_suite(root: Path, modules: int = MODULES) -> list[str]:
    """The suite's files under ``root``; its node ids."""
    (root / "tests").mkdir(exist_ok=True)
    ids = []
    for i in range(modules):
        (root / "tests" / f"test_m{i:02}.py").write_text(
            "import time\n\n\n"
            f"def test_slow():\n    time.sleep({(i % 4) * 0.01:.2f})\n\n\n"
            "def test_quick():\n    pass\n")
        ids += [f"tests/test_m{i:02}.py::test_slow", f"tests/test_m{i:02}.py::test_quick"]
    return ids


def designed_durations(modules: int = MODULES) -> dict[str, float]:
    """Seconds for every test of the suite, all distinct: a plan made from them is the same
    on every machine and at any load (a plan from a measured run moves with the timing)."""
    durations = {}
    for i in range(modules):
        durations[f"tests/test_m{i:02}.py::test_slow"] = 0.5 + 0.01 * i
        durations[f"tests/test_m{i:02}.py::test_quick"] = 0.1 + 0.001 * i
    return durations


def write_ledger(root: Path, check: str = "tests", name: str = "ckdn.durations.json",
                 durations: dict[str, float] | None = None) -> Path:
    """A ``ckdn.durations/1`` ledger under ``root`` (default: the designed durations)."""
    path = root / name
    path.write_text(json.dumps({"schema": "ckdn.durations/1", "checks": {
        check: designed_durations() if durations is None else durations}}))
    return path


def sharded_project(root: Path) -> Project:
    root.mkdir(exist_ok=True)
    project = Project(root)
    project.config(CKDN_TOML)
    write_suite(root)
    return project


def json_out(proc: Any) -> dict[str, Any]:
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    value: dict[str, Any] = json.loads(lines[-1])
    return value
