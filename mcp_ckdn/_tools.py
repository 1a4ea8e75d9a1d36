"""The tools: each a thin call into ``ckdn.app``, its answer data, its mistakes ``isError``.

Every call reads the project's config afresh (an edit to ``ckdn.toml`` is seen
at the next call, and a missing one is that call's error, not the server's). A
run's status, red or green, is data: ``isError`` is kept for calls that cannot
be answered (no config, an unknown check, a check of the wrong kind, a run
reference that is a path or escapes the runs dir). The one refusal that is
data is a check already running: its lock is held, and the caller may wait.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from ckdn.app import ALL, Alias, ChangeRequest, Check, Config, Outcome, gate_exit_code, run, run_all
from ckdn.app.host import StopRequest
from ckdn.app.queries import (
    MAX_LIMIT,
    RunWatch,
    describe_checks,
    diff_runs,
    list_runs,
    locate_config,
    read_document,
    read_window,
    run_id,
    shown_runs_dir,
)
from ckdn.errors import BusyError, CkdnError
from mcp_ckdn._running import run_watched

__all__ = ["PROGRESS_EVERY", "Tools", "result"]

#: Seconds between two progress notifications while a check runs.
PROGRESS_EVERY = 5.0

Gate = Annotated[bool, Field(
    description="exit_code follows the baseline gate, as `ckdn run --gate` does")]
RunRef = Annotated[str | None, Field(
    description="a run id from list_runs (a run dir's name, never a path); omitted: the latest")]


def result(data: dict[str, Any]) -> CallToolResult:
    """``data`` as structured content, and the same JSON as text."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


class _Asked(ToolError):
    """A call that cannot be answered: ``isError``, with ckdn's one-line message."""


def _answer(ask: Callable[[], dict[str, Any]]) -> CallToolResult:
    try:
        return result(ask())
    except CkdnError as exc:
        raise _Asked(str(exc)) from None


def _relative(ref: str) -> bool:
    """``-N``: the N-th run before the other one (``ckdn diff``'s form)."""
    return ref.startswith("-") and ref[1:].isdigit()


class Tools:
    """The tools of one server: its project's directory, config flag and progress pace."""

    def __init__(self, cwd: str, config_flag: str | None, progress_every: float) -> None:
        self.cwd = cwd
        self.config_flag = config_flag
        self.progress_every = progress_every

    def _config(self) -> Config:
        try:
            return locate_config(self.cwd, self.config_flag)
        except CkdnError as exc:
            raise _Asked(str(exc)) from None

    def _target(self, cfg: Config, name: str) -> Check | Alias:
        try:
            return cfg.get(name)
        except CkdnError as exc:
            raise _Asked(str(exc)) from None

    async def _run(self, ctx: Context, cfg: Config, name: str, *, key: str, gate: bool,
                   work: Callable[[StopRequest], Outcome]) -> CallToolResult:
        async def report(elapsed: float, message: str) -> None:
            await ctx.report_progress(elapsed, None, message)

        try:
            outcome: Outcome = await run_watched(work, RunWatch(cfg, name), report,
                                                 self.progress_every)
        except BusyError as exc:  # another run holds the check's lock: an answer, not a mistake
            return result({"refused": str(exc), "exit_code": exc.exit_code})
        except CkdnError as exc:
            raise _Asked(str(exc)) from None
        code = gate_exit_code(outcome) if gate else outcome.exit_code
        return result({"run_id": os.path.basename(outcome.run_dir or ""), "exit_code": code,
                       key: outcome.document})

    def list_checks(self) -> CallToolResult:
        """The configured atomic checks and aliases: the only things this server runs."""
        cfg = self._config()
        return _answer(lambda: {"config": cfg.path or "", "cwd": cfg.cwd,
                                "runs_dir": shown_runs_dir(cfg), "checks": describe_checks(cfg)})

    async def run_check(
        self, ctx: Context,
        check: Annotated[str, Field(description="an atomic check's name from list_checks")],
        args: Annotated[list[str] | None, Field(
            description="extra arguments appended to the check's command (as after `--`)")] = None,
        gate: Gate = False,
        diff_base: Annotated[str | None, Field(
            description="gate by the change since `git merge-base REF HEAD`, as `ckdn run "
                        "--diff-base REF` does (docs/diff-gate.md)")] = None,
    ) -> CallToolResult:
        """Run one configured atomic check: {run_id, exit_code, digest}. A red run is a
        result; read its digest, then get_evidence for more."""
        cfg = self._config()
        target = self._target(cfg, check)
        if isinstance(target, Alias):
            raise _Asked(f"{check!r} is an alias ({', '.join(target.members)}); call run_group")
        extra = tuple(args or ())
        if any("\0" in arg for arg in extra):
            raise _Asked("an argument in args holds a NUL character; no program can receive it")
        change = ChangeRequest(base=diff_base) if diff_base is not None else None
        return await self._run(ctx, cfg, check, key="digest", gate=gate,
                               work=lambda stop: run(cfg, check, extra_args=extra, stop=stop,
                                                     change=change))

    async def run_group(
        self, ctx: Context,
        alias: Annotated[str, Field(description="an alias's name from list_checks")],
        fail_fast: Annotated[bool | None, Field(
            description="stop at the first red member (default: the alias's own setting)")] = None,
        gate: Gate = False,
    ) -> CallToolResult:
        """Run an alias's members in order: {run_id, exit_code, aggregate}. A member's digest
        is get_digest of the run id at the end of its run_dir."""
        cfg = self._config()
        if not isinstance(self._target(cfg, alias), Alias):
            raise _Asked(f"{alias!r} is an atomic check, not an alias; call run_check")
        return await self._run(ctx, cfg, alias, key="aggregate", gate=gate,
                               work=lambda stop: run(cfg, alias, fail_fast=fail_fast, stop=stop))

    async def run_all(
        self, ctx: Context,
        fail_fast: Annotated[bool, Field(description="stop at the first red check")] = False,
        gate: Gate = False,
    ) -> CallToolResult:
        """Run every configured atomic check in config order: {run_id, exit_code, aggregate}."""
        cfg = self._config()
        if not cfg.checks:
            raise _Asked("the configuration defines no checks; add a [check.NAME] table")
        return await self._run(ctx, cfg, ALL, key="aggregate", gate=gate,
                               work=lambda stop: run_all(cfg, fail_fast=fail_fast, stop=stop))

    def get_digest(self, run: RunRef = None) -> CallToolResult:
        """A stored run's document: {run_id, digest}, or {run_id, aggregate} for an alias
        run, or {run_id, unfinished} for a run that is still going (or was killed)."""
        cfg = self._config()
        return _answer(lambda: read_document(cfg, run))

    def list_runs(
        self, limit: Annotated[int, Field(ge=1, le=100, description="how many")] = 10,
    ) -> CallToolResult:
        """The newest stored runs: run_id, check, status, rc, kind, run_dir."""
        cfg = self._config()
        return _answer(lambda: {"runs": list_runs(cfg, limit)})

    def get_evidence(
        self, run: RunRef = None,
        file: Annotated[str, Field(
            description="full.log or an artifact the run's digest lists")] = "full.log",
        offset: Annotated[int, Field(
            description="first line (0-based); negative counts from the end")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="lines at most")] = 50,
    ) -> CallToolResult:
        """A bounded window of a run's full.log or of an artifact, never the whole file:
        lines, offset, limit, returned, total_lines, lines_cut, truncated, next_offset."""
        cfg = self._config()
        return _answer(lambda: read_window(cfg, run, file, offset, limit))

    def diff(
        self,
        a: Annotated[str, Field(description="the earlier run id, or -N: the N-th run before b")],
        b: Annotated[str, Field(description="the later run id (of the same check)")],
    ) -> CallToolResult:
        """What changed between two runs of one check: ckdn.diff/1 (fixed, new, unchanged)."""
        cfg = self._config()

        def ask() -> dict[str, Any]:
            later = run_id(cfg, b)
            earlier = a if _relative(a) else run_id(cfg, a)
            return {"diff": diff_runs(cfg, earlier, later)}

        return _answer(ask)
