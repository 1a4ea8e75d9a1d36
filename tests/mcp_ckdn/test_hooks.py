"""``ckdn hook edit|stop``: what the kit's hooks print, run as the clients run them (a shell
line, the hook's JSON on stdin), and the stop's decisions."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ckdn.app.queries import BRIEF_BYTES
from ckdn.cli.hook import stop_decision
from tests.project import Project, clean_env

BIN = os.path.dirname(sys.executable)
RUFF = shutil.which("ruff", path=BIN) or "ruff"
CONFIG = f"""\
[check.ruff]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
parser = "ruff"

[check.missing]
command = "no-such-program-ckdn-test"
parser = "generic"

[check.lint]
members = ["ruff"]

[check.both]
members = ["ruff", "missing"]
fail_fast = false
"""


def hook(project: Project, command: str, payload: dict[str, Any] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` as Claude Code runs a hook: a shell line, its JSON on stdin."""
    env = {**clean_env(), "PATH": BIN + os.pathsep + os.environ["PATH"]}
    body = {"hook_event_name": "PostToolUse", "cwd": str(project.root), **(payload or {})}
    return subprocess.run(["sh", "-c", command], cwd=cwd or project.root, env=env,
                          input=json.dumps(body), capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture
def root(project: Project) -> Path:
    project.config(CONFIG)
    (project.root / "ok.py").write_text("print(1)\n")
    return project.root


def test_the_edit_hook_is_silent_on_green(project: Project, root: Path) -> None:
    done = hook(project, "ckdn hook edit lint")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_on_red_the_edit_hook_hands_the_model_200_findings_of_one_rule_in_2_kib(
        project: Project, root: Path) -> None:
    for i in range(200):
        (root / f"mod{i:03}.py").write_text("import os\n")
    done = hook(project, "ckdn hook edit lint")
    assert (done.returncode, done.stdout) == (2, "")  # Claude Code: exit 2, stderr to the model
    brief = done.stderr
    assert len(brief.encode()) <= BRIEF_BYTES == 2048
    lines = brief.splitlines()
    assert lines[0] == "lint fail: 1 of 1 members red (ruff)"
    assert lines[1].startswith("ruff fail (rc 1); 200 findings in 200 files; run ")
    run_id = lines[1].rsplit("run ", 1)[1]
    assert (root / ".agent-runs" / run_id / "digest.json").is_file()
    assert lines[2] == "  F401 x200 in 200 files: F401 `os` imported but unused"
    assert lines[3].startswith("    mod000.py:1:8, mod001.py:1:8, ")
    assert lines[3].endswith(" more")
    assert len(lines) == 4


def test_the_brief_groups_by_rule_most_findings_first_and_shows_a_differing_message(
        project: Project, root: Path) -> None:
    (root / "a.py").write_text("import os\nimport sys\nprint(undefined_one)\n")
    done = hook(project, "ckdn hook edit ruff")
    lines = done.stderr.splitlines()
    assert lines[1] == "  F401 x2: F401 `os` imported but unused"
    assert lines[2] == "    a.py:1:8, a.py:2:8 F401 `sys` imported but unused"
    assert lines[3] == "  F821 x1: F821 Undefined name `undefined_one`"


def test_many_rules_in_many_checks_stay_in_the_budget_and_say_what_was_left_out(
        project: Project, root: Path) -> None:
    rules = ["F401", "F811", "F841", "E711", "E712", "E721", "E741", "F632", "F821", "E701"]
    project.config(CONFIG + "".join(f"""
[check.r{i}]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "E,F",
           "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
parser = "ruff"
""" for i in range(4)) + '\n[check.many]\nmembers = ["r0", "r1", "r2", "r3"]\nfail_fast = false\n')
    body = "".join(
        f"import os\nimport os\ndef f{i}(x):\n    y = 1\n    if x == None: pass\n"
        f"    if x == True: pass\n    if type(x) == type(1): pass\n    l = 1\n"
        f"    if x is 'a': pass\n    return undefined_{i}\n" for i in range(30))
    for n in range(20):
        (root / f"long_module_name_number_{n:02}.py").write_text(body)
    done = hook(project, "ckdn hook edit many")
    assert done.returncode == 2
    size = len(done.stderr.encode())
    assert size <= BRIEF_BYTES, size
    lines = done.stderr.splitlines()
    assert lines[0] == "many fail: 4 of 4 members red (r0, r1, r2, r3)"
    for i in range(4):  # every red check has its line, whatever the others took
        assert any(line.startswith(f"r{i} fail (rc 1); ") for line in lines)
    assert re.fullmatch(r"\(\d+ more lines left out; .*\)", lines[-1])
    assert sum(1 for rule in rules if rule in done.stderr) >= 3


def test_a_red_member_that_did_not_run_shows_why_and_the_logs_end(project: Project,
                                                                    root: Path) -> None:
    (root / "a.py").write_text("import os\n")
    done = hook(project, "ckdn hook edit both")
    assert done.returncode == 2
    text = done.stderr
    assert "both fail: 2 of 2 members red (ruff, missing)" in text
    assert "missing error (rc 127): command never started" in text
    assert "  | " in text  # the log's last lines, for a check without findings


def test_the_hooks_project_is_the_one_the_client_names(project: Project, root: Path,
                                                       tmp_path: Path) -> None:
    """Cursor and Claude Code say where the project is in the hook's input."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "a.py").write_text("import os\n")
    done = hook(project, "ckdn hook edit lint", cwd=elsewhere)
    assert done.returncode == 2, done.stderr
    cursor = hook(project, "ckdn hook edit lint", cwd=elsewhere,
                  payload={"cwd": None, "workspace_roots": [str(root)]})
    assert "F401" in cursor.stderr


def test_a_large_hook_input_is_read_whole(project: Project, root: Path,
                                          tmp_path: Path) -> None:
    """Claude Code's PostToolUse input for a Write holds the whole file it wrote."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "a.py").write_text("import os\n")
    big = {"tool_name": "Write", "tool_input": {"file_path": "a.py", "content": "x" * 300_000}}
    done = hook(project, "ckdn hook edit lint", payload=big, cwd=elsewhere)
    assert done.returncode == 2, done.stderr
    assert "F401" in done.stderr


def test_a_mistake_in_the_edit_hook_is_one_line_and_blocks(project: Project,
                                                           root: Path) -> None:
    done = hook(project, "ckdn hook edit nope")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "unknown check 'nope'" in done.stderr
    assert hook(project, "ckdn hook edit").returncode == 2


def test_a_stop_without_an_answer_from_ckdn_status_is_blocked_once_then_let_through(
        project: Project, root: Path) -> None:
    first = hook(project, "ckdn hook stop --config nowhere.toml", {"stop_hook_active": False})
    assert first.returncode == 2
    assert first.stderr.startswith("ckdn status could not answer: ")
    again = hook(project, "ckdn hook stop --config nowhere.toml", {"stop_hook_active": True})
    assert again.returncode == 0
    assert json.loads(again.stdout)["systemMessage"].startswith("ckdn status could not")
    cursor = hook(project, "ckdn hook stop --client cursor --config nowhere.toml")
    assert cursor.returncode == 0
    assert "could not answer" in json.loads(cursor.stdout)["followup_message"]


# --- the stop's decisions, on ckdn.status/1 documents --------------------------------


def _status(*rows: dict[str, Any]) -> dict[str, Any]:
    """A ``ckdn.status/1`` document as docs/freshness.md shows it."""
    rows = tuple({**r, "green": r["state"] == "fresh" and r.get("status") == "pass"
                  and not r.get("weakened")} for r in rows)
    return {"schema": "ckdn.status/1",
            "verdict": "green" if all(r["green"] for r in rows) else "not_green",
            "checks": list(rows)}


FRESH_PASS = {"check": "ruff", "state": "fresh", "status": "pass", "run_id": "r1"}
STALE = {"check": "mypy", "state": "stale", "status": "pass", "run_id": "r2",
         "changed": ["a.py", "b.py"], "changed_total": 2}
MISSING = {"check": "pytest", "state": "missing"}
RED = {"check": "bandit", "state": "fresh", "status": "error", "run_id": "r3"}


def test_a_green_status_lets_the_stop_through_silently() -> None:
    decision = stop_decision(_status(FRESH_PASS), again=False)
    assert (decision.block, decision.reason, decision.message) == (False, "", "")


def test_a_stop_is_blocked_naming_what_is_stale_missing_or_red() -> None:
    decision = stop_decision(_status(FRESH_PASS, STALE, MISSING, RED), again=False)
    assert decision.block
    lines = decision.reason.splitlines()
    assert lines[1:4] == ["mypy: stale (2 files changed since its run: a.py, b.py)",
                          "pytest: missing", "bandit: error on the tree as it is now"]
    assert "ruff" not in decision.reason
    assert "run what is stale or missing" in lines[4]
    assert "is for the person" in lines[4]


def test_a_second_stop_with_only_red_left_is_let_through_with_a_message_for_the_person(
        ) -> None:
    decision = stop_decision(_status(FRESH_PASS, RED), again=True)
    assert not decision.block
    assert decision.message == ("ckdn: stopped with checks not green:"
                                " bandit: error on the tree as it is now")


def test_a_second_stop_with_something_stale_is_blocked_again() -> None:
    assert stop_decision(_status(STALE, RED), again=True).block
    assert stop_decision(_status(MISSING), again=True).block


def test_a_weakened_or_unknown_check_is_not_green() -> None:
    weakened = {"check": "pytest", "state": "fresh", "status": "pass", "run_id": "r",
                "weakened": ["2 tests fewer collected (40, was 42)"]}
    decision = stop_decision(_status(weakened), again=False)
    assert decision.block
    assert "pytest: weakened (2 tests fewer collected (40, was 42))" in decision.reason
    unknown = {"check": "pytest", "state": "unknown", "reason": "not a git work tree"}
    decision = stop_decision(_status(unknown), again=False)
    assert "pytest: unknown (not a git work tree)" in decision.reason


# --- the kit's whole loop, through the real `ckdn status` -------------------------------


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**clean_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def test_the_kits_loop_end_to_end(project: Project) -> None:
    """edit, stale, run, red with findings in the hook's output, fix, fresh green, stop
    allowed: with the hooks `ckdn init --agent claude` wrote, as Claude Code runs them."""
    root = project.root
    head = CONFIG.split("[check.missing]", maxsplit=1)[0]
    project.config(head + '[check.lint]\nmembers = ["ruff"]\n')
    (root / "ok.py").write_text("print(1)\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    assert project.ckdn("init", "--agent", "claude").returncode == 0
    settings = json.loads((root / ".claude/settings.json").read_text())["hooks"]
    edit = settings["PostToolUse"][0]["hooks"][0]["command"]
    stop = settings["Stop"][0]["hooks"][0]["command"]

    assert hook(project, edit).returncode == 0  # green
    assert hook(project, stop, {"hook_event_name": "Stop"}).returncode == 0
    (root / "ok.py").write_text("import os\nprint(1)\n")  # an edit no hook ran after
    stale = hook(project, stop, {"hook_event_name": "Stop"})
    assert stale.returncode == 2
    assert "ruff: stale (1 file changed since its run: ok.py)" in stale.stderr
    red = hook(project, edit)  # the edit hook runs, red: findings in its output
    assert red.returncode == 2
    assert "ok.py:1:8" in red.stderr
    assert "F401" in red.stderr
    blocked = hook(project, stop, {"hook_event_name": "Stop"})
    assert blocked.returncode == 2
    assert "ruff: fail" in blocked.stderr
    (root / "ok.py").write_text("print(1)\n")  # the fix
    assert hook(project, edit).returncode == 0
    allowed = hook(project, stop, {"hook_event_name": "Stop"})
    assert (allowed.returncode, allowed.stderr) == (0, "")
