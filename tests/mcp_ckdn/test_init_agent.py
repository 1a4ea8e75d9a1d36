"""``ckdn init --agent CLIENT``: each generated file held to its client's documented format,
merged into what is there, and a second run changes nothing."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ckdn.app.queries import AGENTS
from ckdn.cli import build_parser
from mcp_ckdn._main import _parser
from mcp_ckdn._server import TOOL_NAMES
from tests.project import Project, clean_env

BIN = os.path.dirname(sys.executable)
#: agent -> the files its kit writes, in the order `ckdn init` prints them.
KITS = {
    "claude": [".mcp.json", ".claude/settings.json", ".claude/skills/ckdn/SKILL.md"],
    "cursor": [".cursor/mcp.json", ".cursor/hooks.json", ".cursor/rules/ckdn.mdc"],
    "codex": [".codex/config.toml", "AGENTS.md"],
    "copilot": [".vscode/mcp.json", ".github/copilot-instructions.md"],
}
BEGIN = "<!-- ckdn:begin"
END = "<!-- ckdn:end -->"
LINT = '[check.ok]\ncommand = "true"\nparser = "generic"\n\n[check.lint]\nmembers = ["ok"]\n'


def _init(project: Project, *agents: str) -> list[str]:
    args = [a for agent in agents for a in ("--agent", agent)]
    done = project.ckdn("init", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _json(project: Project, path: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((project.root / path).read_text())
    return value


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".agent-runs" not in p.parts}


def test_the_kits_cover_the_four_clients() -> None:
    assert set(KITS) == set(AGENTS)


@pytest.mark.parametrize("agent", AGENTS)
def test_init_agent_writes_the_kit_and_a_second_run_changes_nothing(
        project: Project, agent: str) -> None:
    project.config(LINT)
    first = _init(project, agent)
    assert first == [f"wrote {path}" for path in KITS[agent]]
    before = _snapshot(project.root)
    second = _init(project, agent)
    assert second == [f"unchanged {path}" for path in KITS[agent]]
    assert _snapshot(project.root) == before


def test_init_agent_in_a_project_without_config_writes_the_starter_first(
        project: Project) -> None:
    lines = _init(project, "codex")
    assert lines[0] == f"wrote {project.root / 'ckdn.toml'}"
    assert (project.root / "ckdn.toml").is_file()
    assert _init(project, "codex") == ["unchanged .codex/config.toml", "unchanged AGENTS.md"]


# --- each file against its client's documentation -----------------------------------


def _starts_and_lists_tools(project: Project, entry: dict[str, Any]) -> None:
    """The server a client starts from ``entry`` answers (``${workspaceFolder}`` expanded,
    as Cursor and VS Code do)."""
    args = [a.replace("${workspaceFolder}", str(project.root)) for a in entry.get("args", [])]
    _parser().parse_args(args)  # options ckdn-mcp takes
    params = StdioServerParameters(command=os.path.join(BIN, entry["command"]), args=args,
                                   env={**clean_env(), **entry.get("env", {})},
                                   cwd=project.root)

    async def go() -> tuple[list[str], Any]:
        async with Client(params) as session:
            tools = [t.name for t in (await session.list_tools()).tools]
            return tools, (await session.call_tool("list_checks", {})).structured_content

    tools, checks = anyio.run(go)
    assert tools == list(TOOL_NAMES)
    assert {c["name"] for c in checks["checks"]} == {"ok", "lint"}


def _hook_argv(command: str) -> Any:
    """A hook's command read as ckdn's own command line (a bad flag is exit 2)."""
    words = shlex.split(command)
    assert words[:2] == ["ckdn", "hook"], command
    return build_parser().parse_args(words[1:])


def test_claude_codes_files_follow_its_documented_shapes(project: Project) -> None:
    """https://code.claude.com/docs/en/mcp (project scope: `.mcp.json`, `mcpServers`),
    https://code.claude.com/docs/en/hooks (`hooks` -> event -> [{matcher?, hooks: [{type:
    "command", command, timeout}]}]; `Stop` takes no matcher), https://code.claude.com/docs/
    en/skills (`.claude/skills/<name>/SKILL.md`, front matter `name`, `description`)."""
    project.config(LINT)
    _init(project, "claude")
    server = _json(project, ".mcp.json")["mcpServers"]["ckdn"]
    assert set(server) <= {"command", "args", "env"}
    assert isinstance(server["args"], list)
    assert isinstance(server["env"], dict)
    _starts_and_lists_tools(project, server)

    hooks = _json(project, ".claude/settings.json")["hooks"]
    assert set(hooks) == {"PostToolUse", "Stop"}
    (edit,) = hooks["PostToolUse"]
    for tool in ("Edit", "MultiEdit", "Write"):
        assert re.fullmatch(edit["matcher"], tool)
    assert not re.fullmatch(edit["matcher"], "Read")
    (stop,) = hooks["Stop"]
    assert "matcher" not in stop
    for group, event in ((edit, "edit"), (stop, "stop")):
        (hook,) = group["hooks"]
        assert set(hook) == {"type", "command", "timeout"}
        assert hook["type"] == "command"
        assert type(hook["timeout"]) is int
        assert hook["timeout"] > 0
        assert _hook_argv(hook["command"]).event == event
    assert _hook_argv(edit["hooks"][0]["command"]).names == ["lint"]

    skill = (project.root / ".claude/skills/ckdn/SKILL.md").read_text()
    front, body = skill.split("---\n")[1:3]
    assert re.search(r"^name: ckdn$", front, re.MULTILINE)
    description = re.search(r"^description: (.+)$", front, re.MULTILINE)
    assert description
    assert 40 <= len(description[1]) <= 1024
    assert body.count(BEGIN) == 1
    assert body.count(END) == 1


def test_cursors_files_follow_its_documented_shapes(project: Project) -> None:
    """https://cursor.com/docs/context/mcp (`.cursor/mcp.json`, `mcpServers`, `${workspaceFolder}`),
    https://cursor.com/docs/agent/hooks (`.cursor/hooks.json`: `version: 1`, `hooks` ->
    event -> [{command}]; `stop` answers `{followup_message?}` on stdout),
    https://cursor.com/docs/context/rules (`.cursor/rules/*.mdc`, front matter
    `description`, `alwaysApply`)."""
    project.config(LINT)
    _init(project, "cursor")
    server = _json(project, ".cursor/mcp.json")["mcpServers"]["ckdn"]
    assert set(server) <= {"command", "args", "env"}
    _starts_and_lists_tools(project, server)
    hooks = _json(project, ".cursor/hooks.json")
    assert hooks["version"] == 1
    (stop,) = hooks["hooks"]["stop"]
    assert set(stop) == {"command"}
    argv = _hook_argv(stop["command"])
    assert (argv.event, argv.client) == ("stop", "cursor")
    rule = (project.root / ".cursor/rules/ckdn.mdc").read_text()
    assert rule.startswith("---\n")
    front = rule.split("---\n")[1]
    assert re.search(r"^description: \S.+$", front, re.MULTILINE)
    assert re.search(r"^alwaysApply: true$", front, re.MULTILINE)
    assert BEGIN in rule


def test_codexs_files_follow_its_documented_shapes(project: Project) -> None:
    """https://developers.openai.com/codex/mcp (`[mcp_servers.<name>]` with `command`,
    `args`, in `~/.codex/config.toml` or a trusted project's `.codex/config.toml`),
    https://developers.openai.com/codex/guides/agents-md (`AGENTS.md` at the root)."""
    project.config(LINT)
    _init(project, "codex")
    server = tomllib.loads((project.root / ".codex/config.toml").read_text()
                           )["mcp_servers"]["ckdn"]
    assert set(server) <= {"command", "args", "env", "cwd"}
    _starts_and_lists_tools(project, server)
    assert BEGIN in (project.root / "AGENTS.md").read_text()


def test_copilots_files_follow_its_documented_shapes(project: Project) -> None:
    """https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
    (`.vscode/mcp.json`: `servers` -> name -> {type: "stdio", command, args}),
    https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/add-repository-instructions
    (`.github/copilot-instructions.md`, Markdown)."""
    project.config(LINT)
    _init(project, "copilot")
    server = _json(project, ".vscode/mcp.json")["servers"]["ckdn"]
    assert server["type"] == "stdio"
    assert set(server) <= {"type", "command", "args", "env"}
    _starts_and_lists_tools(project, server)
    assert BEGIN in (project.root / ".github/copilot-instructions.md").read_text()


# --- merged, never clobbered ------------------------------------------------------------


def test_existing_json_is_merged_keeping_every_other_key(project: Project) -> None:
    project.config(LINT)
    (project.root / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"other": {"command": "other-mcp"}}, "x-note": 1}))
    claude = project.root / ".claude"
    claude.mkdir()
    mine = {"type": "command", "command": "prettier --write ."}
    (claude / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [mine]}]}}))
    lines = _init(project, "claude")
    assert lines[:2] == ["merged .mcp.json", "merged .claude/settings.json"]
    servers = _json(project, ".mcp.json")
    assert servers["mcpServers"]["other"] == {"command": "other-mcp"}
    assert servers["x-note"] == 1
    assert "ckdn" in servers["mcpServers"]
    settings = _json(project, ".claude/settings.json")
    assert settings["permissions"] == {"allow": ["Bash(ls)"]}
    post = settings["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "Write", "hooks": [mine]}
    assert [h["command"] for g in post for h in g["hooks"]] == [
        "prettier --write .", "ckdn hook edit lint"]
    assert _init(project, "claude")[:2] == ["unchanged .mcp.json",
                                            "unchanged .claude/settings.json"]


def test_an_earlier_kits_hook_is_replaced_not_repeated(project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    _init(project, "claude")  # no lint alias: the edit hook runs every check
    first = _json(project, ".claude/settings.json")["hooks"]["PostToolUse"]
    assert first[0]["hooks"][0]["command"] == "ckdn hook edit --all"
    project.config(LINT)
    assert "merged .claude/settings.json" in _init(project, "claude")
    (group,) = _json(project, ".claude/settings.json")["hooks"]["PostToolUse"]
    assert group["hooks"][0]["command"] == "ckdn hook edit lint"


def test_markdown_gets_a_marked_section_that_a_later_run_replaces(project: Project) -> None:
    project.config(LINT)
    agents = project.root / "AGENTS.md"
    agents.write_text("# Our project\n\nUse tabs.\n")
    assert "merged AGENTS.md" in _init(project, "codex")
    text = agents.read_text()
    assert text.startswith("# Our project\n\nUse tabs.\n\n" + BEGIN)
    assert text.endswith(END + "\n")
    tampered = text.replace("Forbidden moves", "Allowed moves")
    agents.write_text(tampered + "\nMore of ours.\n")
    assert "merged AGENTS.md" in _init(project, "codex")
    again = agents.read_text()
    assert again == text + "\nMore of ours.\n"
    assert again.count(BEGIN) == 1


def test_codex_toml_keeps_other_tables_and_replaces_an_older_ckdn_table(
        project: Project) -> None:
    project.config(LINT)
    codex = project.root / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        'model = "o3"\n\n[mcp_servers.ckdn]\ncommand = "old-ckdn"\nargs = ["x"]\n\n'
        '[mcp_servers.other]\ncommand = "other"\n')
    assert "merged .codex/config.toml" in _init(project, "codex")
    doc = tomllib.loads((codex / "config.toml").read_text())
    assert doc["model"] == "o3"
    assert doc["mcp_servers"]["other"] == {"command": "other"}
    assert doc["mcp_servers"]["ckdn"] == {"command": "ckdn-mcp", "args": []}
    assert "unchanged .codex/config.toml" in _init(project, "codex")


def test_a_file_ckdn_cannot_read_stops_the_kit_before_anything_is_written(
        project: Project) -> None:
    project.config(LINT)
    claude = project.root / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text("{ not json")
    done = project.ckdn("init", "--agent", "claude")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert ".claude/settings.json is not JSON" in done.stderr
    assert not (project.root / ".mcp.json").exists()  # all or nothing
    assert (claude / "settings.json").read_text() == "{ not json"
