"""The real ``ckdn-mcp`` over stdio: driven by the SDK's client, and by hand for what a
client does not do (close stdin mid-call, SIGTERM)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_ckdn._server import TOOL_NAMES
from tests.mcp_ckdn.conftest import HANG, data, group_alive, sealed, wait_for_file
from tests.project import Project, clean_env

BIN = os.path.dirname(sys.executable)
SERVER = os.path.join(BIN, "ckdn-mcp")
RUFF = shutil.which("ruff", path=BIN) or "ruff"


@pytest.fixture
def root(project: Project) -> Path:
    project.config(f"""\
        [check.ruff]
        command = "{RUFF} check --no-cache --output-format json --output-file {{run_dir}}/ruff.json"
        parser = "ruff"

        [check.hang]
        command = "{HANG}"
        parser = "generic"
        """)
    (project.root / "good.py").write_text("print('hello')\n")
    return project.root


def _params(root: Path, *args: str) -> StdioServerParameters:
    env = clean_env()
    return StdioServerParameters(command=SERVER, args=["--cwd", str(root), *args], env=env)


def test_the_real_server_over_stdio_runs_real_checks_and_stops_a_cancelled_one(
        root: Path) -> None:
    async def go() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with Client(_params(root)) as client:
            found["tools"] = [t.name for t in (await client.list_tools()).tools]
            found["green"] = data(await client.call_tool("run_check", {"check": "ruff"}))
            (root / "bad.py").write_text("import os\nimport sys\n")
            found["red"] = data(await client.call_tool("run_check", {"check": "ruff"}))
            found["evidence"] = data(await client.call_tool(
                "get_evidence", {"run": found["red"]["run_id"], "artifact": "ruff.json",
                                 "limit": 5}))
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "run_check", {"check": "hang"})
                pgid = int(await wait_for_file(root / "hang.pid"))
                found["alive"] = group_alive(pgid)
                group.cancel_scope.cancel()
            with anyio.fail_after(20):
                while group_alive(pgid):
                    await anyio.sleep(0.05)
            await sealed(root, "hang")
            found["stopped"] = data(await client.call_tool("get_digest", {}))
        return found

    found = anyio.run(go)
    assert found["tools"] == list(TOOL_NAMES)
    assert (found["green"]["exit_code"], found["green"]["digest"]["status"]) == (0, "pass")
    red = found["red"]["digest"]
    assert (found["red"]["exit_code"], red["status"]) == (1, "fail")
    assert {f["id"] for f in red["findings"]} == {"bad.py:1:8:F401", "bad.py:2:8:F401"}
    assert "ruff.json" in red["artifacts"]
    assert found["evidence"]["findings"] == red["findings"]
    window = found["evidence"]["artifact"]
    assert window["name"] == "ruff.json"
    assert window["returned"] <= 5
    assert window["total_lines"] >= window["returned"]
    assert found["alive"] is True
    stopped = found["stopped"]
    assert (stopped["check"], stopped["interrupted"]) == ("hang", True)


def _raw(root: Path) -> subprocess.Popen[bytes]:
    """``ckdn-mcp`` with a call to ``hang`` in flight, by hand (the handshake of 2025-06-18)."""
    proc = subprocess.Popen([SERVER, "--cwd", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "test", "version": "0"}}})
    assert json.loads(proc.stdout.readline())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "run_check", "arguments": {"check": "hang"}}})
    return proc


def _pgid(root: Path) -> int:
    return int(anyio.run(wait_for_file, root / "hang.pid"))


def _stopped(root: Path, pgid: int) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not group_alive(pgid)
    (run,) = (root / ".agent-runs").glob("*-hang")
    digest: dict[str, Any] = json.loads((run / "digest.json").read_text())
    return digest


def test_closing_stdin_stops_a_running_check_and_leaves_its_evidence(root: Path) -> None:
    proc = _raw(root)
    pgid = _pgid(root)
    proc.communicate(timeout=20)  # closes stdin, reads to the end
    assert proc.returncode == 0
    digest = _stopped(root, pgid)
    assert (digest["status"], digest["rc"], digest["interrupted"]) == ("error", 130, True)


def test_sigterm_stops_a_running_check_and_answers_with_its_interrupted_digest(
        root: Path) -> None:
    proc = _raw(root)
    pgid = _pgid(root)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 128 + signal.SIGTERM  # stdin still open: the signal ended it
    out, _err = proc.communicate(timeout=20)
    answer = json.loads(out.decode().splitlines()[-1])
    assert answer["id"] == 2
    assert answer["result"]["structuredContent"]["digest"]["interrupted"] is True
    digest = _stopped(root, pgid)
    assert "SIGTERM or SIGHUP" in " ".join(digest["notes"])


def test_without_the_sdk_ckdn_mcp_says_in_one_line_how_to_install_it(tmp_path: Path) -> None:
    """No site-packages (``-S``): the SDK is not importable, as without the extra."""
    repo = Path(__file__).resolve().parents[2]
    code = (f"import sys; sys.path[:0] = [{str(repo / 'core')!r}, {str(repo)!r}]; "
            "import mcp_ckdn; sys.exit(mcp_ckdn.main([]))")
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == ("ckdn-mcp: the MCP SDK is not installed; install the extra:"
                           " pip install 'checkdown[mcp]'\n")
    assert proc.stderr.strip() in (repo / "docs" / "mcp.md").read_text()


@pytest.mark.parametrize("args", [["--cwd", "/no/such/dir"], ["--progress-seconds", "60"]])
def test_a_bad_option_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    proc = subprocess.run([SERVER, *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, check=False, stdin=subprocess.DEVNULL, env=clean_env())
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("ckdn-mcp: ")


def test_the_core_never_imports_the_sdk_or_what_it_brings() -> None:
    import ast

    core = Path(__file__).resolve().parents[2] / "core" / "ckdn"
    foreign = {"mcp", "mcp_types", "anyio", "pydantic", "mcp_ckdn"}
    found = []
    for path in core.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in foreign]
    assert found == []
