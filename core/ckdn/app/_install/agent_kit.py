"""``ckdn init --agent CLIENT``: one coding agent's kit, written into the project.

A kit is the client's MCP config (the ``ckdn-mcp`` server), its hooks where it has
them (the edit hook's findings on red; the stop hook blocking while ``ckdn status``
is not green) and its skill or rules file. Every file is merged, never clobbered:
JSON keys are merged (ckdn's own entries replaced, everything else kept), a TOML
table is added or replaced as a block, and ckdn's part of a Markdown file lives
between two markers that a later run replaces. A second run changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import tomllib

from ckdn.errors import UsageError, quote
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["AGENTS", "BEGIN", "END", "KitFile", "agent_kit", "skill_text", "write_agent_kit"]

#: The clients ``ckdn init --agent`` knows, in the order ``--help`` lists them.
AGENTS = ("claude", "cursor", "codex", "copilot")
#: The markers around ckdn's section of a Markdown file.
BEGIN = "<!-- ckdn:begin (written by `ckdn init --agent`; edits inside are replaced) -->"
END = "<!-- ckdn:end -->"
_SECTION = re.compile(r"<!-- ckdn:begin\b[^\n]*-->\n.*?<!-- ckdn:end -->\n?", re.DOTALL)
#: The server's name in every MCP config.
SERVER = "ckdn"
#: The hooks' commands start so; an entry of an earlier kit is recognised by it.
HOOK_PREFIX = "ckdn hook "
#: The tools whose use edits files, as Claude Code names them (the edit hook's matcher).
EDIT_TOOLS = "Edit|MultiEdit|Write|NotebookEdit"
#: Seconds a hook may take (Claude Code's ``timeout``).
EDIT_TIMEOUT = 300
STOP_TIMEOUT = 120
_SKILL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "skills",
                      "verified-fix-loop", "SKILL.md")


class KitFile:
    """One file of a kit: where (relative to the project), and how its new text is made
    from the old (None: there is none yet)."""

    __slots__ = ("merge", "path")

    def __init__(self, path: str, merge: Callable[[str | None], str]) -> None:
        self.path = path
        self.merge = merge


def skill_text(name: str = "verified-fix-loop") -> str:
    """The packaged skill, its front matter naming it ``name``."""
    with open(_SKILL, encoding="utf-8") as handle:
        text = handle.read()
    return re.sub(r"^name: .*$", f"name: {name}", text, count=1, flags=re.MULTILINE)


def _body() -> str:
    """The skill without its front matter: the rules a client without skills reads."""
    return skill_text().split("---\n", 2)[2].lstrip("\n")


def _front_matter(name: str) -> str:
    """The skill's front matter, naming it ``name``."""
    return "---\n" + skill_text(name).split("---\n", 2)[1] + "---\n\n"


def _json_object(path: str, old: str | None) -> dict[str, Any]:
    if old is None or not old.strip():
        return {}
    try:
        value = json.loads(old)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON ({exc.msg}, line {exc.lineno}); fix it or move"
                         " it away, ckdn never overwrites it") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path} is not a JSON object; fix it or move it away")
    return value


def _table(doc: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    value = doc.setdefault(key, {})
    if not isinstance(value, dict):
        raise UsageError(f"{path}: {quote(key)} is not an object; fix it or move it away")
    return value


def _list(doc: dict[str, Any], key: str, path: str) -> list[Any]:
    value = doc.setdefault(key, [])
    if not isinstance(value, list):
        raise UsageError(f"{path}: {quote(key)} is not a list; fix it or move it away")
    return value


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _json_merge(path: str, change: Callable[[dict[str, Any]], None]) -> Callable[[str | None],
                                                                                 str]:
    """A merge that changes the parsed object; an old file whose value it leaves as it
    was keeps its text (its layout is the person's)."""
    def merge(old: str | None) -> str:
        doc = _json_object(path, old)
        before = json.loads(json.dumps(doc))
        change(doc)
        return old if old is not None and doc == before else _dump(doc)

    return merge


def _server_entry(key: str, entry: dict[str, Any], path: str) -> Callable[[dict[str, Any]],
                                                                          None]:
    def change(doc: dict[str, Any]) -> None:
        _table(doc, key, path)[SERVER] = entry

    return change


def _ours(command: object) -> bool:
    return isinstance(command, str) and command.startswith(HOOK_PREFIX)


def _claude_hooks(edit: str, stop: str, path: str) -> Callable[[dict[str, Any]], None]:
    """Claude Code's ``hooks``: each event a list of ``{matcher?, hooks: [...]}`` groups; an
    earlier kit's entries are taken out, then ckdn's group is added at the end."""
    groups = {
        "PostToolUse": {"matcher": EDIT_TOOLS, "hooks": [
            {"type": "command", "command": edit, "timeout": EDIT_TIMEOUT}]},
        "Stop": {"hooks": [{"type": "command", "command": stop, "timeout": STOP_TIMEOUT}]},
    }

    def change(doc: dict[str, Any]) -> None:
        hooks = _table(doc, "hooks", path)
        for event, group in groups.items():
            kept = []
            for old in _list(hooks, event, path):
                if isinstance(old, dict) and isinstance(old.get("hooks"), list):
                    inner = [h for h in old["hooks"]
                             if not (isinstance(h, dict) and _ours(h.get("command")))]
                    if not inner:
                        continue
                    old = {**old, "hooks": inner}
                kept.append(old)
            hooks[event] = [*kept, group]

    return change


def _cursor_hooks(stop: str, path: str) -> Callable[[dict[str, Any]], None]:
    """Cursor's ``hooks.json``: ``{version: 1, hooks: {event: [{command}]}}``."""
    def change(doc: dict[str, Any]) -> None:
        doc.setdefault("version", 1)
        hooks = _table(doc, "hooks", path)
        kept = [h for h in _list(hooks, "stop", path)
                if not (isinstance(h, dict) and _ours(h.get("command")))]
        hooks["stop"] = [*kept, {"command": stop}]

    return change


def _markdown(section: str, head: str = "") -> Callable[[str | None], str]:
    """ckdn's section between the markers: replaced where it is, else added at the end
    (a new file starts with ``head``, for a front matter)."""
    block = f"{BEGIN}\n{section.rstrip()}\n{END}\n"

    def merge(old: str | None) -> str:
        if old is None:
            return head + block
        if _SECTION.search(old):
            return _SECTION.sub(lambda _match: block, old, count=1)
        return old + ("\n" if old.endswith("\n") else "\n\n") + block if old else block

    return merge


def _toml_server(path: str, args: list[str]) -> Callable[[str | None], str]:
    """Codex's ``[mcp_servers.ckdn]`` table, added or replaced as a block of lines."""
    table = "[mcp_servers.ckdn]\n" + f"command = {json.dumps('ckdn-mcp')}\n" \
        + f"args = {json.dumps(args)}\n"
    want = tomllib.loads(table)["mcp_servers"][SERVER]

    def merge(old: str | None) -> str:
        if old is None:
            return table
        try:
            doc = tomllib.loads(old)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{path} is not TOML ({exc}); fix it or move it away") from None
        servers = doc.get("mcp_servers")
        if isinstance(servers, dict) and servers.get(SERVER) == want:
            return old
        lines = old.splitlines(keepends=True)
        start = next((i for i, line in enumerate(lines)
                      if line.strip() == "[mcp_servers.ckdn]"), None)
        if start is None:
            if isinstance(servers, dict) and SERVER in servers:
                raise UsageError(f"{path} defines mcp_servers.ckdn in a form ckdn cannot"
                                 " replace; make it a [mcp_servers.ckdn] table or remove it")
            return old + ("\n" if old.endswith("\n") or not old else "\n\n") + table
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i].lstrip().startswith("[")), len(lines))
        return "".join([*lines[:start], table, *(["\n"] if end < len(lines) else []),
                        *lines[end:]])

    return merge


def agent_kit(agent: str, edit_names: str) -> list[KitFile]:
    """The files of ``agent``'s kit; the edit hook runs ``edit_names`` (``lint``, ``--all``)."""
    edit = f"{HOOK_PREFIX}edit {edit_names}"
    stop = f"{HOOK_PREFIX}stop"
    rules = _body()
    if agent == "claude":
        return [
            KitFile(".mcp.json", _json_merge(".mcp.json", _server_entry(
                "mcpServers", {"command": "ckdn-mcp", "args": [], "env": {}}, ".mcp.json"))),
            KitFile(".claude/settings.json", _json_merge(
                ".claude/settings.json", _claude_hooks(edit, stop, ".claude/settings.json"))),
            KitFile(".claude/skills/ckdn/SKILL.md", _markdown(rules, head=_front_matter("ckdn"))),
        ]
    if agent == "cursor":
        return [
            KitFile(".cursor/mcp.json", _json_merge(".cursor/mcp.json", _server_entry(
                "mcpServers", {"command": "ckdn-mcp", "args": ["--cwd", "${workspaceFolder}"]},
                ".cursor/mcp.json"))),
            KitFile(".cursor/hooks.json", _json_merge(
                ".cursor/hooks.json", _cursor_hooks(f"{stop} --client cursor",
                                                    ".cursor/hooks.json"))),
            KitFile(".cursor/rules/ckdn.mdc", _markdown(rules, head=(
                "---\ndescription: Run and fix this project's checks through ckdn\n"
                "alwaysApply: true\n---\n\n"))),
        ]
    if agent == "codex":
        return [
            KitFile(".codex/config.toml", _toml_server(".codex/config.toml", [])),
            KitFile("AGENTS.md", _markdown(rules)),
        ]
    if agent == "copilot":
        return [
            KitFile(".vscode/mcp.json", _json_merge(".vscode/mcp.json", _server_entry(
                "servers", {"type": "stdio", "command": "ckdn-mcp",
                            "args": ["--cwd", "${workspaceFolder}"]}, ".vscode/mcp.json"))),
            KitFile(".github/copilot-instructions.md", _markdown(rules)),
        ]
    raise UsageError(f"unknown agent {quote(agent)}; choose one of: {', '.join(AGENTS)}")


def write_agent_kit(cwd: str, agent: str, edit_names: str) -> list[tuple[str, str]]:
    """Write ``agent``'s kit into the project ``cwd``: ``(path, what happened)`` for each
    file, ``wrote`` (new), ``merged`` (changed) or ``unchanged``.

    All or nothing as far as reading goes: every file is read and merged before any
    is written, so a file ckdn cannot merge stops the kit before it starts.
    """
    planned: list[tuple[str, str, str]] = []
    for item in agent_kit(agent, edit_names):
        target = os.path.join(cwd, item.path)
        if os.path.lexists(target) and not os.path.isfile(target):
            raise UsageError(f"{item.path} exists and is not a regular file; remove it first")
        try:
            with open(target, encoding="utf-8") as handle:
                old: str | None = handle.read()
        except FileNotFoundError:
            old = None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {item.path}: {exc}") from None
        new = item.merge(old)
        done = "wrote" if old is None else "unchanged" if new == old else "merged"
        planned.append((item.path, done, new))
    for path, done, new in planned:
        if done == "unchanged":
            continue
        target = os.path.join(cwd, path)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            write_atomic(os.path.realpath(target), new.encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return [(path, done) for path, done, _new in planned]
