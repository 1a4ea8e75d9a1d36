"""The MCP server's tests: in-process through the SDK's client over its memory transport
(``Client(server, mode="legacy")`` runs the JSON-RPC stream loop on in-memory streams),
and the real ``ckdn-mcp`` over stdio (test_stdio.py)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp_types import CallToolResult

from ckdn.app.queries import load_schema
from mcp_ckdn._server import build_server
from tests.project import running

#: A check that records its pid (its process group: ckdn gives it its own session) and
#: keeps two processes alive until it is stopped.
HANG = "sh -c 'echo $$ > hang.pid; sleep 300 & sleep 300; wait'"


@pytest.fixture(autouse=True)
def _no_outer_project(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server under test finds the test's project, not one the shell names."""
    monkeypatch.delenv("CKDN_CONFIG", raising=False)
    monkeypatch.delenv("CKDN_CWD", raising=False)


@asynccontextmanager
async def connected(root: Path, *, progress_every: float = 5.0,
                    config: str | None = None) -> AsyncIterator[Client]:
    """A client of a fresh in-process server for the project in ``root``."""
    server = build_server(str(root), config, progress_every=progress_every)
    async with Client(server, mode="legacy") as client:
        yield client


def call(root: Path, tool: str, arguments: dict[str, Any] | None = None,
         **server: Any) -> CallToolResult:
    """One tool call on a fresh server, from synchronous test code."""
    async def go() -> CallToolResult:
        async with connected(root, **server) as client:
            return await client.call_tool(tool, arguments or {})

    result: CallToolResult = anyio.run(go)
    return result


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured result, after checking it is a result and its text is the same JSON."""
    assert not result.is_error, result.content
    structured = result.structured_content
    assert isinstance(structured, dict)
    (text,) = result.content
    assert json.loads(text.text) == structured  # type: ignore[union-attr]
    return structured


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    (text,) = result.content
    return str(text.text)  # type: ignore[union-attr]


def valid(doc: dict[str, Any], schema_id: str) -> None:
    jsonschema.Draft202012Validator(load_schema(schema_id)).validate(doc)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (zombies nobody reaps don't count)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if int(fields[2]) == pgid and running(int(entry)):
                return True
    return False


async def eventually(predicate: Callable[[], bool], timeout: float = 20) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


async def wait_for_file(path: Path, timeout: float = 20) -> str:
    await eventually(lambda: path.exists() and path.read_text().strip() != "", timeout)
    return path.read_text().strip()


async def sealed(root: Path, check: str, timeout: float = 20) -> None:
    """Until every run of ``check`` has its digest: a stopped tree is gone before its
    evidence is written."""
    runs = root / ".agent-runs"
    await eventually(lambda: all((run / "digest.json").exists()
                                 for run in runs.glob(f"*-{check}")), timeout)


Report = Callable[[float, float | None, str | None], Awaitable[None]]
