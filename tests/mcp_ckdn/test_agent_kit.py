"""The agent integration kit: client configurations, the post-edit hook, the skill."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ckdn.app import CONFIG_ENV
from ckdn.app.queries import CWD_ENV, SKILLS
from mcp_ckdn._main import _parser
from mcp_ckdn._server import TOOL_NAMES
from tests.project import Project, clean_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = os.path.dirname(sys.executable)
RUFF = shutil.which("ruff", path=BIN) or "ruff"
PLACEHOLDER = "/absolute/path/to/project"
#: client -> its example file (where the client reads it: docs/mcp.md)
CLIENTS = {
    "claude-code": EXAMPLES / "mcp" / "claude-code.mcp.json",
    "cursor": EXAMPLES / "mcp" / "cursor.mcp.json",
    "claude-desktop": EXAMPLES / "mcp" / "claude_desktop_config.json",
    "codex": EXAMPLES / "mcp" / "codex.config.toml",
}
LINT = f"""\
[check.ruff]
command = ["{RUFF}", "check", "--no-cache", "--isolated", "--select", "F",
           "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
parser = "ruff"

[check.lint]
members = ["ruff"]
"""


def _server(client: str) -> dict[str, Any]:
    path = CLIENTS[client]
    if path.suffix == ".toml":
        entry: dict[str, Any] = tomllib.loads(path.read_text())["mcp_servers"]["ckdn"]
    else:
        entry = json.loads(path.read_text())["mcpServers"]["ckdn"]
    return entry


def _expanded(value: str, root: Path) -> str:
    """What the client hands the server: the placeholder is the project; Claude Code
    expands ``${VAR:-default}`` (here: the default)."""
    value = value.replace(PLACEHOLDER, str(root))
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_example_parses_and_names_the_server_with_valid_options(
        client: str) -> None:
    entry = _server(client)
    assert set(entry) == {"command", "args", "env"}
    assert entry["command"] == "ckdn-mcp"
    assert all(isinstance(arg, str) for arg in entry["args"])
    _parser().parse_args(entry["args"])  # options ckdn-mcp takes (exit 2 otherwise)
    assert set(entry["env"]) <= {CONFIG_ENV, CWD_ENV}


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_example_starts_a_server_that_finds_the_project(
        client: str, project: Project) -> None:
    project.config(LINT)
    entry = _server(client)
    env = {**clean_env(), **{k: _expanded(v, project.root) for k, v in entry["env"].items()}}
    params = StdioServerParameters(command=os.path.join(BIN, entry["command"]),
                                   args=[_expanded(a, project.root) for a in entry["args"]],
                                   env=env, cwd=project.root)

    async def go() -> tuple[list[str], Any]:
        async with Client(params) as session:
            tools = [t.name for t in (await session.list_tools()).tools]
            return tools, (await session.call_tool("list_checks", {})).structured_content

    tools, checks = anyio.run(go)
    assert tools == list(TOOL_NAMES)
    assert [c["name"] for c in checks["checks"]] == ["lint", "ruff"]
    assert checks["cwd"] == str(project.root)


def _hook_commands() -> tuple[str, str]:
    settings = json.loads((EXAMPLES / "hooks" / "claude-code.settings.json").read_text())
    (entry,) = settings["hooks"]["PostToolUse"]
    assert re.fullmatch(entry["matcher"], "Edit")
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    ((stop,),) = [group["hooks"] for group in settings["hooks"]["Stop"]]
    return str(hook["command"]), str(stop["command"])


def test_the_example_hooks_are_what_init_agent_claude_writes(project: Project) -> None:
    project.config(LINT)
    assert project.ckdn("init", "--agent", "claude").returncode == 0
    written = project.root / ".claude" / "settings.json"
    assert written.read_text() == (EXAMPLES / "hooks" / "claude-code.settings.json").read_text()


def test_the_post_edit_hook_is_silent_on_green_and_blocks_with_the_findings_on_red(
        project: Project) -> None:
    """Claude Code runs a hook's command with a shell; exit 2 hands its stderr to the model."""
    project.config(LINT)
    command, _stop = _hook_commands()
    assert command == "ckdn hook edit lint"
    env = {**clean_env(), "PATH": BIN + os.pathsep + os.environ["PATH"]}

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", command], cwd=project.root, env=env, input="{}",
                              capture_output=True, text=True, timeout=120, check=False)

    (project.root / "ok.py").write_text("print(1)\n")
    green = hook()
    assert (green.returncode, green.stdout, green.stderr) == (0, "", "")
    (project.root / "bad.py").write_text("import os\n")
    red = hook()
    assert (red.returncode, red.stdout) == (2, "")
    lines = red.stderr.splitlines()
    assert lines[0] == "lint fail: 1 of 1 members red (ruff)"
    assert lines[2:4] == ["  F401 x1: F401 `os` imported but unused", "    bad.py:1:8"]


def test_init_skill_installs_the_shipped_skill_and_refuses_to_overwrite_it(
        project: Project) -> None:
    shipped = EXAMPLES / "skills" / "verified-fix-loop" / "SKILL.md"
    assert SKILLS == ("verified-fix-loop",)
    done = project.ckdn("init", "--skill", ".claude/skills")
    assert done.returncode == 0, done.stderr
    target = project.root / ".claude" / "skills" / "verified-fix-loop" / "SKILL.md"
    assert done.stdout == "wrote .claude/skills/verified-fix-loop/SKILL.md\n"
    assert target.read_bytes() == shipped.read_bytes()
    assert not (project.root / "ckdn.toml").exists()  # the skill instead of the starter
    again = project.ckdn("init", "--skill", ".claude/skills")
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1
    assert "already exists; pass --force" in again.stderr
    target.write_text("old")
    assert project.ckdn("init", "--skill", ".claude/skills", "--force").returncode == 0
    assert target.read_bytes() == shipped.read_bytes()


def test_the_packaged_skill_is_the_shipped_one_with_its_front_matter() -> None:
    import ckdn

    packaged = Path(ckdn.__file__).parent / "skills" / "verified-fix-loop" / "SKILL.md"
    shipped = EXAMPLES / "skills" / "verified-fix-loop" / "SKILL.md"
    assert packaged.read_bytes() == shipped.read_bytes()
    head = shipped.read_text().split("---\n")[1]
    assert "name: verified-fix-loop\n" in head
    assert re.search(r"^description: .{40,}$", head, re.MULTILINE)
    body = shipped.read_text()
    for needle in ("pass` is the only green", "get_evidence", ".agent-runs/", "Forbidden"):
        assert needle in body


EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def test_the_docs_show_the_example_files_as_they_are() -> None:
    shown = {}
    for page in ("docs/mcp.md", "docs/agents.md"):
        for path, body in EXAMPLE.findall((ROOT / page).read_text()):
            shown[path] = body
    expected = {str(p.relative_to(ROOT)) for p in CLIENTS.values()}
    expected.add("examples/hooks/claude-code.settings.json")
    assert set(shown) >= expected
    for path, body in shown.items():
        assert (ROOT / path).read_text() == body, path


def test_the_sdist_ships_every_package_of_the_wheel_and_the_examples_the_skill_links_to(
        ) -> None:
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    shipped = set(build["targets"]["sdist"]["include"])
    packages = {path.split("/")[0] for path in build["targets"]["wheel"]["packages"]}
    assert packages <= shipped
    assert "examples" in shipped
    link = ROOT / "core" / "ckdn" / "skills" / "verified-fix-loop" / "SKILL.md"
    assert link.is_symlink()
    assert link.resolve() == (EXAMPLES / "skills" / "verified-fix-loop" / "SKILL.md").resolve()
