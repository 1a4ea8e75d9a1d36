"""The server: ckdn's tools on the SDK's high-level server (``MCPServer``), stdio only.

The tools themselves are :class:`mcp_ckdn._tools.Tools`; here they are named,
annotated, and given their output schemas (the packaged document schemas,
:mod:`mcp_ckdn._schemas`), and the server says how it finds its project.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult, Tool, ToolAnnotations
from pydantic import ValidationError

from ckdn import __version__
from ckdn.app.queries import resolution_order
from ckdn.errors import one_line, quote
from mcp_ckdn._running import stop_all
from mcp_ckdn._schemas import OUTPUT_SCHEMAS
from mcp_ckdn._tools import PROGRESS_EVERY, Tools

__all__ = ["TOOL_NAMES", "argument_problem", "build_server", "instructions", "serve_stdio",
           "unknown_arguments"]

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_RUNS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                        open_world_hint=False)
#: tool name -> (method of Tools, whether it runs checks).
_TOOLS = {
    "list_checks": ("list_checks", False),
    "run_check": ("run_check", True),
    "run_group": ("run_group", True),
    "run_all": ("run_all", True),
    "get_digest": ("get_digest", False),
    "list_runs": ("list_runs", False),
    "get_evidence": ("get_evidence", False),
    "diff": ("diff", False),
    "status": ("status", False),
}
TOOL_NAMES = tuple(_TOOLS)


def instructions(cwd: str) -> str:
    """What the server tells a client about itself: the rules, and where it looks."""
    return (
        "ckdn runs this project's configured checks (never arbitrary commands) and answers "
        "with bounded digests; status `pass` is the only green. A failing check is a normal "
        "result, not a tool error. Read the digest first; use get_evidence for a window of a "
        "run's full.log instead of reading log files. `run` arguments are run ids from "
        f"list_runs, never paths. Project lookup order: {resolution_order()}. "
        f"Working directory: {cwd}."
    )


class CkdnServer(MCPServer):
    """An MCPServer whose tools publish ckdn's packaged document schemas as output schemas
    (the SDK would derive them from Python annotations; these are the documents' own)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: tool name -> the argument names it takes (anything else is refused).
        self.accepted: dict[str, frozenset[str]] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        """The SDK's call, with an argument that fails the tool's input schema answered in
        ckdn's one line (:func:`argument_problem`), not pydantic's report and its URL, and
        an argument the tool does not take refused (the SDK would drop it silently)."""
        accepted = self.accepted.get(name)
        if accepted is not None and arguments:
            problem = unknown_arguments(name, arguments, accepted)
            if problem:
                raise ToolError(problem)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__,
                                                                       ValidationError):
                raise
            raise ToolError(argument_problem(name, exc.__cause__)) from exc.__cause__

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [tool.model_copy(update={"output_schema": OUTPUT_SCHEMAS[tool.name]})
                for tool in tools]


#: The most characters of a rejected value an answer quotes.
_SHOWN_VALUE = 40


def argument_problem(tool: str, error: ValidationError) -> str:
    """One line: ``get_evidence: invalid arguments: limit: input should be less than or
    equal to 200 (got 500)``, every rejected field, its value quoted short and inert."""
    problems = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item.get("loc", ())) or "arguments"
        message = str(item.get("msg", "invalid"))
        message = message[:1].lower() + message[1:]
        if item.get("type") == "missing":
            problems.append(f"{field}: required, and missing")
            continue
        shown = repr(item.get("input"))
        if len(shown) > _SHOWN_VALUE:
            shown = shown[:_SHOWN_VALUE] + "..."
        problems.append(f"{field}: {message} (got {shown})")
    return one_line(f"{tool}: invalid arguments: " + "; ".join(problems))


def unknown_arguments(tool: str, arguments: dict[str, Any], accepted: frozenset[str]) -> str:
    """One line naming the arguments ``tool`` does not take, and those it does; "" if none."""
    unknown = sorted(set(arguments) - accepted)
    if not unknown:
        return ""
    shown = ", ".join(quote(name[:_SHOWN_VALUE]) for name in unknown[:5])
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    return one_line(f"{tool}: unknown argument{'s' if len(unknown) > 1 else ''} {shown}{more};"
                    f" it takes: {', '.join(sorted(accepted))}")


def _parameters(method: Any) -> frozenset[str]:
    """The argument names a tool method takes (its context is the SDK's, never a client's)."""
    return frozenset(name for name in inspect.signature(method).parameters if name != "ctx")


def build_server(cwd: str, config_flag: str | None = None, *,
                 progress_every: float = PROGRESS_EVERY) -> MCPServer:
    """The ``ckdn`` MCP server for the project in ``cwd`` (config: ``config_flag`` or the
    usual lookup, read again at every call)."""
    server = CkdnServer("ckdn", version=__version__, instructions=instructions(cwd),
                        log_level="WARNING")
    tools = Tools(cwd, config_flag, progress_every)
    for name, (method, runs) in _TOOLS.items():
        server.add_tool(getattr(tools, method), name=name,
                        annotations=_RUNS if runs else _READ_ONLY)
        server.accepted[name] = _parameters(getattr(tools, method))
    return server


def serve_stdio(server: MCPServer) -> None:
    """Serve stdio until stdin closes, or until SIGTERM or SIGHUP (:func:`_serve`)."""
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> None:
    """Serve stdio until stdin closes (every call in flight is cancelled: its run stops
    its check's tree and writes its evidence before the call ends,
    :mod:`mcp_ckdn._running`), or until SIGTERM or SIGHUP.

    On a signal the runs in flight are stopped the same way and their answers (the
    interrupted digests) are sent; then the process ends at once: the SDK's stdin
    reader cannot be woken from its blocking read, and the default SIGTERM would
    have ended the server and left the checks running.
    """
    async def on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
            async for signum in signals:
                await stop_all()
                await anyio.sleep(0.2)  # the answers reach the writer task and stdout
                sys.stderr.flush()
                os._exit(128 + signum)

    async with anyio.create_task_group() as group:
        group.start_soon(on_signal)
        await server.run_stdio_async()
        group.cancel_scope.cancel()
