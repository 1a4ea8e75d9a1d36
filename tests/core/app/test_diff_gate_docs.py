"""docs/diff-gate.md's worked example, run as written: its files, its commands, its gate."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project import clean_env

DOC = (Path(__file__).parents[3] / "docs" / "diff-gate.md").read_text()
BLOCK = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.M | re.S)
MYPY = shutil.which("mypy", path=str(Path(sys.executable).parent))


def blocks() -> dict[str, str]:
    return {title: body for _, title, body in BLOCK.findall(DOC)}


def run_lines(root: Path, text: str) -> subprocess.CompletedProcess[str]:
    proc = None
    env = {**clean_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": f"{Path(sys.executable).parent}:{clean_env().get('PATH', '')}"}
    for line in text.splitlines():
        words = shlex.split(line)
        if words[0] == "ckdn":
            words = [sys.executable, "-m", "ckdn", *words[1:]]
        proc = subprocess.run(words, cwd=root, env=env, capture_output=True, text=True,
                              check=False, timeout=120)
        assert words[0] == sys.executable or proc.returncode == 0, proc.stderr
    assert proc is not None
    return proc


@pytest.mark.skipif(MYPY is None, reason="mypy is the dev extra's")
def test_the_worked_example_gives_the_gate_the_page_shows(tmp_path: Path) -> None:
    found = blocks()
    for title, body in found.items():
        if " " not in title:  # a file of the base commit
            (tmp_path / title).write_text(body)
    run_lines(tmp_path, found["record the base"])
    (tmp_path / "geometry.py").write_text(found["geometry.py, changed"])
    proc = run_lines(tmp_path, found["gate the change"])
    assert proc.returncode == 1, proc.stderr
    digest = json.loads(proc.stdout)
    assert digest["gate"] == json.loads(found["the gate"])
    facts = digest["summary"]["diff_scope"]
    del facts["base"], facts["head"]
    assert facts == json.loads(found["summary.diff_scope"])
    added = subprocess.run([sys.executable, "-m", "ckdn", "run", "types", "--gate",
                            "--diff-base", "main", "--scope", "added"], cwd=tmp_path,
                           env=clean_env(), capture_output=True, text=True, check=False)
    shown = json.loads(added.stdout)
    scope = shown["summary"]["diff_scope"]
    assert (shown["gate"]["policy"], scope["policy"], scope["gated"]) == (
        "diff:added", "added", 1)
