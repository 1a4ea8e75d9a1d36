"""The example in docs/nox.md is run as written, and its output blocks are what nox prints.

Blocks are found by the ``<!-- example: NAME -->`` comment before them. Output
is compared after scrubbing what differs between runs and machines: run dir
timestamps, the noxfile's absolute path, nox's "(took N seconds)" and its
"uv binary not found" notice (present only where uv is not installed).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.nox_ckdn.noxproject import NoxProject, logged_documents

PAGE = Path(__file__).resolve().parents[2] / "docs" / "nox.md"
#: ruff and python from the dev environment: the example's sessions have no virtualenv.
TOOLS = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}

_SCRUBS = (
    (re.compile(r"\d{8}T\d{6}Z(?:\.\d{3})?-"), "STAMP-"),
    (re.compile(r"^Sessions defined in .*:$", re.MULTILINE), "Sessions defined in NOXFILE:"),
    (re.compile(r" \(took [^)]*\)\.$", re.MULTILINE), "."),
    (re.compile(r"^nox > uv binary not found\.\n", re.MULTILINE), ""),
)


def example(name: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", text, re.DOTALL)
    assert found, f"no example {name!r} in {PAGE.name}"
    return found.group(1)


def scrub(text: str) -> str:
    for pattern, replacement in _SCRUBS:
        text = pattern.sub(replacement, text)
    return text


@pytest.fixture
def documented(nox_project: NoxProject) -> NoxProject:
    (nox_project.root / "ckdn.toml").write_text(example("ckdn.toml"))
    (nox_project.root / "noxfile.py").write_text(example("noxfile.py"))
    (nox_project.root / "app.py").write_text("import os\n")
    return nox_project


def test_nox_lists_the_example_sessions_as_documented(documented: NoxProject) -> None:
    proc = documented.nox("-l", env=TOOLS)
    assert proc.returncode == 0, proc.stderr
    assert scrub(proc.stdout) == scrub(example("nox -l"))


def test_the_example_lint_session_fails_with_the_documented_output(
        documented: NoxProject) -> None:
    proc = documented.nox("-s", "lint", env=TOOLS)
    assert proc.returncode == 1
    assert scrub(proc.stderr) == scrub(example("nox -s lint"))


def test_the_example_fix_session_turns_lint_green_and_logs_compact_digests(
        documented: NoxProject) -> None:
    proc = documented.nox("-s", "fix", env=TOOLS)
    assert proc.returncode == 0, proc.stderr
    assert (documented.root / "app.py").read_text() == ""
    assert "nox > ruff left 0 finding(s)" in proc.stderr.splitlines()
    ruff, lint = logged_documents(proc.stderr)
    assert lint["status"] == "pass"
    assert scrub(example("green")).strip() in scrub(proc.stderr).splitlines()
    first_ruff_run = documented.run_dirs_of("ruff")[0]
    assert ruff == json.loads((first_ruff_run / "digest.json").read_text())
