"""Every host gives the same diff-scoped gate as `ckdn run --diff-base` on the same change:
the MCP server's `run_check{diff_base}`, nox and tox under `CKDN_DIFF_BASE`, and
`ckdn annotate --diff-base` annotates only the lines the change added.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.diffgate_repo import break_a_caller_and_add_an_error, gate_facts, make_repo
from tests.mcp_ckdn.conftest import call, data
from tests.nox_ckdn.noxproject import NoxProject
from tests.project import Project

NOX = shutil.which("nox")


@pytest.fixture
def changed(project: Project) -> Project:
    make_repo(project.root)
    break_a_caller_and_add_an_error(project.root)
    return project


def reference(project: Project) -> tuple[object, object, object]:
    proc = project.ckdn("run", "lint", "--gate", "--diff-base", "HEAD")
    assert proc.returncode == 1, proc.stderr
    facts = gate_facts(project.digest(proc))
    assert facts[:2] == ("fail", 2)
    return facts


def test_the_mcp_server_gives_the_same_gate(changed: Project,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    expected = reference(changed)
    monkeypatch.chdir(changed.root)
    answer = data(call(changed.root, "run_check", {"check": "lint", "diff_base": "HEAD",
                                                   "gate": True}))
    assert gate_facts(answer["digest"]) == expected
    assert answer["exit_code"] == 1


@pytest.mark.skipif(NOX is None, reason="nox is the dev extra's")
def test_nox_under_ckdn_diff_base_gives_the_same_gate(tmp_path: Path) -> None:
    nox_project = NoxProject(tmp_path / "nox")
    make_repo(nox_project.root, files={"noxfile.py": "import nox_ckdn\n\n"
                                                     "nox_ckdn.sessions(python=False)\n"})
    break_a_caller_and_add_an_error(nox_project.root)
    expected = reference(Project(nox_project.root))
    proc = nox_project.nox("-s", "lint", env={"CKDN_DIFF_BASE": "HEAD"})
    assert proc.returncode == 1, proc.stderr
    newest = nox_project.run_dirs_of("lint")[-1]
    assert gate_facts(json.loads((newest / "digest.json").read_text())) == expected
    # the same change once its errors are fixed: the session passes by the gate
    (nox_project.root / "lib.py").write_text("def surface():\n    pass\ndef area():\n    pass\n")
    proc = nox_project.nox("-s", "lint", env={"CKDN_DIFF_BASE": "HEAD"})
    assert proc.returncode == 0, proc.stderr
    assert "its diff-scoped gate passes" in proc.stderr


@pytest.fixture
def green_repo(project: Project) -> Project:
    """A repository whose check passes: only the gate can make a host red."""
    make_repo(project.root, files={"app.py": "x = 1\nuse area\n"})
    return project


def test_the_mcp_server_reads_a_base_failure_as_red(green_repo: Project,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(green_repo.root)
    answer = data(call(green_repo.root, "run_check", {"check": "lint", "gate": True,
                                                      "diff_base": "no-such-ref"}))
    digest = answer["digest"]
    assert (digest["status"], digest["gate"]["status"]) == ("pass", "unavailable")
    assert "no such commit" in digest["gate"]["reason"]
    assert answer["exit_code"] == 1


@pytest.mark.skipif(NOX is None, reason="nox is the dev extra's")
def test_nox_reads_a_base_failure_as_red(tmp_path: Path) -> None:
    nox_project = NoxProject(tmp_path / "nox")
    make_repo(nox_project.root, files={"app.py": "x = 1\nuse area\n",
                                       "noxfile.py": "import nox_ckdn\n\n"
                                                     "nox_ckdn.sessions(python=False)\n"})
    proc = nox_project.nox("-s", "lint", env={"CKDN_DIFF_BASE": "no-such-ref"})
    assert proc.returncode == 1, proc.stderr
    newest = nox_project.run_dirs_of("lint")[-1]
    digest = json.loads((newest / "digest.json").read_text())
    assert (digest["status"], digest["gate"]["status"]) == ("pass", "unavailable")


def test_annotate_with_a_diff_base_annotates_only_lines_the_change_added(
        changed: Project) -> None:
    changed.ckdn("run", "lint")
    every = changed.ckdn("annotate", "--format", "github").stdout
    assert "file=app.py,line=2" in every
    assert "file=lib.py,line=3" in every
    scoped = changed.ckdn("annotate", "--format", "github", "--diff-base", "HEAD")
    assert scoped.returncode == 0, scoped.stderr
    assert "file=lib.py,line=3" in scoped.stdout
    assert "file=app.py" not in scoped.stdout


def test_annotate_with_a_base_it_cannot_trust_is_refused_in_one_line(changed: Project) -> None:
    changed.ckdn("run", "lint")
    proc = changed.ckdn("annotate", "--diff-base", "no-such-ref")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "no such commit" in proc.stderr
