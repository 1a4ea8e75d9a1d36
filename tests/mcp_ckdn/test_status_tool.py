"""The MCP `status` tool: the same ckdn.status/1 answer as `ckdn status --json`, through
the SDK's own client, on a real git repository edited between two calls."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ckdn.app.queries import load_schema
from tests.mcp_ckdn.conftest import call, data, error_text
from tests.project import Project

CONFIG = """\
[check.ok]
command = "true"
parser = "generic"

[check.bad]
command = "false"
parser = "generic"
"""
_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=_GIT_ENV)


def _repository(project: Project) -> Path:
    project.config(CONFIG)
    root = project.root
    (root / "app.py").write_text("x = 1\n")
    (root / ".gitignore").write_text(".ckdn/\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    return root


def test_status_answers_fresh_then_stale_after_an_edit_and_matches_the_cli(
        project: Project) -> None:
    root = _repository(project)
    assert data(call(root, "run_check", {"check": "ok"}))["exit_code"] == 0
    fresh = data(call(root, "status", {"checks": ["ok"]}))
    assert fresh["schema"] == "ckdn.status/1"
    assert [(c["check"], c["state"]) for c in fresh["checks"]] == [("ok", "fresh")]
    (root / "app.py").write_text("x = 2\n")
    stale = data(call(root, "status", {"checks": ["ok"]}))
    entry = stale["checks"][0]
    assert entry["state"] == "stale"
    assert "app.py" in entry["changed"]
    cli = subprocess.run(["ckdn", "status", "--json", "ok"], cwd=root, capture_output=True,
                         text=True, check=False)
    assert cli.returncode == 1
    assert json.loads(cli.stdout)["checks"] == stale["checks"]
    schema = load_schema("ckdn.status/1")
    assert schema["$id"]


def test_status_names_a_missing_check_and_a_red_one_never_green(project: Project) -> None:
    root = _repository(project)
    data(call(root, "run_check", {"check": "bad"}))
    answer = data(call(root, "status"))
    states = {c["check"]: (c["state"], c.get("status")) for c in answer["checks"]}
    assert states["ok"][0] == "missing"
    assert states["bad"] == ("fresh", "fail")
    assert answer["verdict"] != "green"


def test_status_of_an_unknown_check_is_an_error_in_one_line(project: Project) -> None:
    root = _repository(project)
    text = error_text(call(root, "status", {"checks": ["nope"]}))
    assert "nope" in text
    assert "\n" not in text
