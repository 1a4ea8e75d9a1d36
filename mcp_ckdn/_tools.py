"""The tools: each a thin call into ``ckdn.app``, its answer data, its mistakes ``isError``.

Every call reads the project's config afresh (an edit to ``ckdn.toml`` is seen
at the next call, and a missing one is that call's error, not the server's), and
may name another (``config``, ``cwd``: the published arguments, as ``--config``
and ``--cwd`` read them). A
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
    locate_cwd,
    read_document,
    read_meta,
    read_window,
    run_id,
    shown_runs_dir,
    status,
)
from ckdn.errors import BusyError, CkdnError, UsageError, quote
from mcp_ckdn._running import run_watched

__all__ = ["PROGRESS_EVERY", "Tools", "result"]

#: Seconds between two progress notifications while a check runs.
PROGRESS_EVERY = 5.0

Gate = Annotated[bool, Field(
    description="exit_code follows the baseline gate, as `ckdn run --gate` does")]
RunRef = Annotated[str | None, Field(
    description="a run id from list_runs (a run dir's name, never a path); omitted: the latest")]
ConfigArg = Annotated[str | None, Field(
    description="the ckdn.toml to read, as `--config` (relative: to the server's working"
                " directory); omitted: the server's")]
CwdArg = Annotated[str | None, Field(
    description="the project's directory, as `--cwd`; omitted: the server's (a call naming"
                " only `cwd` reads that directory's ckdn.toml)")]

#: The published arguments every tool takes, beside its own.
COMMON_ARGUMENTS = ("config", "cwd")
#: Statuses of an aggregate's members that have no evidence to show.
_NOT_RED = ("pass", "skipped")
#: Keys of a digest that get_evidence repeats, when the digest has them.
_EVIDENCE_KEYS = ("status_reason", "timed_out", "interrupted", "findings_total",
                  "findings_truncated", "findings", "log_tail", "notes", "gate", "baseline")
#: Runs looked through for the latest run of an alias's member.
_MEMBER_SEARCH = 100


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


def _document(cfg: Config, ref: str | None) -> tuple[str, dict[str, Any]]:
    """``(run id, stored document)`` of ``ref``; UsageError for a run without one yet."""
    found = read_document(cfg, ref)
    name = str(found["run_id"])
    if "unfinished" in found:
        raise UsageError(f"run {quote(name)} has no document yet: {found['unfinished']}")
    return name, found["digest"] if "digest" in found else found["aggregate"]


def _member_run(cfg: Config, aggregate: dict[str, Any]) -> tuple[str, str]:
    """``(member check, its run id)``: an aggregate's first red member, else its last."""
    members = [m for m in aggregate.get("members", ()) if isinstance(m, dict)]
    red = next((m for m in members if m.get("status") not in _NOT_RED
                and isinstance(m.get("run_dir"), str)), None)
    if red is not None:
        return str(red["check"]), os.path.basename(str(red["run_dir"]).rstrip("/"))
    ran = [m for m in members if m.get("status") == "pass"]
    if not ran:
        raise UsageError(f"alias run of {quote(str(aggregate.get('alias')))} ran no member")
    check = str(ran[-1]["check"])
    latest = next((row["run_id"] for row in reversed(list_runs(cfg, _MEMBER_SEARCH))
                   if row["check"] == check and row.get("kind") == "digest"), None)
    if latest is None:
        raise UsageError(f"no stored run of {quote(check)}, the alias's last member")
    return check, str(latest)


class Tools:
    """The tools of one server: its project's directory, config flag and progress pace."""

    def __init__(self, cwd: str, config_flag: str | None, progress_every: float) -> None:
        self.cwd = cwd
        self.config_flag = config_flag
        self.progress_every = progress_every

    def _config(self, config: str | None = None, cwd: str | None = None) -> Config:
        """The call's config: its ``config`` / ``cwd``, else the server's."""
        try:
            where = locate_cwd(cwd) if cwd else self.cwd
            flag = config if config else (self.config_flag if not cwd else None)
            return locate_config(where, flag)
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

    def list_checks(self, config: ConfigArg = None, cwd: CwdArg = None) -> CallToolResult:
        """The configured atomic checks and aliases: the only things this server runs."""
        cfg = self._config(config, cwd)
        return _answer(lambda: {"config": cfg.path or "", "cwd": cfg.cwd,
                                "runs_dir": shown_runs_dir(cfg), "checks": describe_checks(cfg)})

    async def run_check(
        self, ctx: Context,
        check: Annotated[str, Field(description="an atomic check's name from list_checks")],
        *, extra_args: Annotated[list[str] | None, Field(
            description="extra arguments appended to the check's command (as after `--`)")] = None,
        gate: Gate = False,
        diff_base: Annotated[str | None, Field(
            description="gate by the change since `git merge-base REF HEAD`, as `ckdn run "
                        "--diff-base REF` does (docs/diff-gate.md)")] = None,
        config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """Run one configured atomic check: {run_id, exit_code, digest}. A red run is a
        result; read its digest, then get_evidence for more."""
        cfg = self._config(config, cwd)
        target = self._target(cfg, check)
        if isinstance(target, Alias):
            raise _Asked(f"{check!r} is an alias ({', '.join(target.members)}); call run_group")
        extra = tuple(extra_args or ())
        if any("\0" in arg for arg in extra):
            raise _Asked("an argument in extra_args holds a NUL character; no program can"
                         " receive it")
        change = ChangeRequest(base=diff_base) if diff_base is not None else None
        return await self._run(ctx, cfg, check, key="digest", gate=gate,
                               work=lambda stop: run(cfg, check, extra_args=extra, stop=stop,
                                                     change=change))

    async def run_group(
        self, ctx: Context,
        alias: Annotated[str, Field(description="an alias's name from list_checks")],
        *, fail_fast: Annotated[bool | None, Field(
            description="stop at the first red member (default: the alias's own setting)")] = None,
        gate: Gate = False, config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """Run an alias's members in order: {run_id, exit_code, aggregate}. get_evidence
        without a run then answers for its first red member."""
        cfg = self._config(config, cwd)
        if not isinstance(self._target(cfg, alias), Alias):
            raise _Asked(f"{alias!r} is an atomic check, not an alias; call run_check")
        return await self._run(ctx, cfg, alias, key="aggregate", gate=gate,
                               work=lambda stop: run(cfg, alias, fail_fast=fail_fast, stop=stop))

    async def run_all(
        self, ctx: Context,
        fail_fast: Annotated[bool, Field(description="stop at the first red check")] = False,
        gate: Gate = False, config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """Run every configured atomic check in config order: {run_id, exit_code, aggregate}."""
        cfg = self._config(config, cwd)
        if not cfg.checks:
            raise _Asked("the configuration defines no checks; add a [check.NAME] table")
        return await self._run(ctx, cfg, ALL, key="aggregate", gate=gate,
                               work=lambda stop: run_all(cfg, fail_fast=fail_fast, stop=stop))

    def get_digest(self, run: RunRef = None, config: ConfigArg = None,
                   cwd: CwdArg = None) -> CallToolResult:
        """A stored run's document itself: its ckdn.digest/2, or its ckdn.aggregate/1 for
        an alias run (a run still going has none yet: an error naming why)."""
        cfg = self._config(config, cwd)
        return _answer(lambda: _document(cfg, run)[1])

    def list_runs(
        self, limit: Annotated[int, Field(ge=1, le=100, description="how many")] = 10,
        config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """The newest stored runs: run_id, check, status, rc, kind, run_dir."""
        cfg = self._config(config, cwd)
        return _answer(lambda: {"runs": list_runs(cfg, limit)})

    def get_evidence(
        self, run: RunRef = None, *,
        artifact: Annotated[str | None, Field(
            description="a window of this file: full.log or a name the answer's artifacts"
                        " list")] = None,
        offset: Annotated[int, Field(
            description="the window's first line (0-based); negative counts from the end")] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT,
                                    description="the window's lines at most")] = MAX_LIMIT,
        include_meta: Annotated[bool, Field(
            description="add the run's provenance (ckdn.meta/1)")] = False,
        config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """A run's evidence: {run_id, check, status, rc, run_dir, artifacts, findings?,
        log_tail?}; with `artifact` a bounded window of that file; after an alias, its
        first red member's run (or its last member's), named in `alias_run`."""
        cfg = self._config(config, cwd)

        def ask() -> dict[str, Any]:
            name, doc = _document(cfg, run)
            routed: dict[str, Any] | None = None
            if "alias" in doc:
                routed = {"run_id": name, "alias": doc["alias"]}
                routed["member"], name = _member_run(cfg, doc)
                _, doc = _document(cfg, name)
            listed = ["full.log", *(a for a in doc.get("artifacts", ()) if isinstance(a, str))]
            out: dict[str, Any] = {"run_id": name, "check": doc["check"],
                                   "status": doc["status"], "rc": doc["rc"],
                                   "run_dir": doc["run_dir"],
                                   "artifacts": list(dict.fromkeys(listed))}
            out.update({key: doc[key] for key in _EVIDENCE_KEYS if key in doc})
            if routed is not None:
                out["alias_run"] = routed
            if artifact is not None:
                window = read_window(cfg, name, artifact, offset, limit)
                del window["run_id"], window["file"]
                out["artifact"] = {"name": artifact, **window}
            if include_meta:
                out["meta"] = read_meta(cfg, name)
            return out

        return _answer(ask)

    def diff(
        self,
        a: Annotated[str, Field(description="the earlier run id, or -N: the N-th run before b")],
        b: Annotated[str, Field(description="the later run id (of the same check)")],
        config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """What changed between two runs of one check: ckdn.diff/1 (fixed, new, unchanged)."""
        cfg = self._config(config, cwd)

        def ask() -> dict[str, Any]:
            later = run_id(cfg, b)
            earlier = a if _relative(a) else run_id(cfg, a)
            return {"diff": diff_runs(cfg, earlier, later)}

        return _answer(ask)

    def status(
        self,
        checks: Annotated[list[str] | None, Field(
            description="check or alias names; omitted: [run].required, else every atomic"
                        " check")] = None,
        accept_weakened: Annotated[bool, Field(
            description="a weakened green counts as green (as --accept-weakened)")] = False,
        config: ConfigArg = None, cwd: CwdArg = None,
    ) -> CallToolResult:
        """May I say it is done? ckdn.status/1: each check's latest run and whether it still
        holds for the tree now (fresh, stale, missing, unknown); green only if all fresh pass."""
        cfg = self._config(config, cwd)
        return _answer(lambda: status(cfg, checks, accept_weakened=accept_weakened))
