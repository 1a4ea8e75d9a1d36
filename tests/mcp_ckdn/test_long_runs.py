"""Long checks: progress while they run, a cancelled call stops the tree and leaves its
evidence, a second call for a running check is refused as a result."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_ckdn._running import STOP_REASON
from tests.mcp_ckdn.conftest import (
    HANG,
    connected,
    data,
    error_text,
    eventually,
    group_alive,
    sealed,
    wait_for_file,
)
from tests.project import Project

SLOW = "sh -c 'for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.25; done'"


@pytest.fixture
def root(project: Project) -> Path:
    project.config(f"""\
        [check.slow]
        command = "{SLOW}"
        parser = "generic"

        [check.slow2]
        command = "{SLOW}"
        parser = "generic"

        [check.hang]
        command = "{HANG}"
        parser = "generic"

        [check.pair]
        members = ["slow", "slow2"]
        """)
    return project.root


def test_progress_names_the_member_the_elapsed_time_and_the_log_size(root: Path) -> None:
    seen: list[tuple[float, str]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message or ""))

    async def go() -> Any:
        async with connected(root, progress_every=0.2) as client:
            return await client.call_tool("run_group", {"alias": "pair"},
                                          progress_callback=progress)

    result = anyio.run(go)
    assert data(result)["aggregate"]["status"] == "pass"
    values = [value for value, _ in seen]
    assert values == sorted(values)  # progress only grows
    assert len(seen) >= 10  # about 3 s of running, one every 0.2 s
    messages = [message for _, message in seen]
    assert any(m.startswith("member 1 of 2 (slow)") for m in messages)
    assert any(m.startswith("member 2 of 2 (slow2)") for m in messages)
    sizes = [int(m.split("log ")[1].split()[0]) for m in messages if "member 2" in m]
    assert max(sizes) > 0


def test_the_default_progress_pace_keeps_a_client_timeout_of_15_s_alive() -> None:
    from mcp_ckdn._main import _parser
    from mcp_ckdn._tools import PROGRESS_EVERY

    assert PROGRESS_EVERY <= 15
    assert _parser().parse_args([]).progress_seconds == PROGRESS_EVERY


def test_a_cancelled_call_stops_the_whole_tree_and_leaves_interrupted_evidence(
        root: Path) -> None:
    async def go() -> dict[str, Any]:
        async with connected(root) as client:
            with anyio.move_on_after(30) as scope:
                async with anyio.create_task_group() as group:
                    async def run_it() -> None:
                        await client.call_tool("run_check", {"check": "hang"})

                    group.start_soon(run_it)
                    pgid = int(await wait_for_file(root / "hang.pid"))
                    assert group_alive(pgid)
                    group.cancel_scope.cancel()  # the client sends notifications/cancelled
            assert not scope.cancelled_caught
            with anyio.fail_after(20):
                while group_alive(pgid):
                    await anyio.sleep(0.05)
            await sealed(root, "hang")
            return data(await client.call_tool("get_digest", {}))

    digest = anyio.run(go)
    assert digest["check"] == "hang"
    assert digest["interrupted"] is True
    assert (digest["status"], digest["rc"]) == ("error", 130)
    assert any(STOP_REASON in note for note in digest["notes"])


def test_a_second_call_for_a_running_check_is_refused_and_its_digest_is_unfinished(
        root: Path) -> None:
    async def go() -> dict[str, Any]:
        async with connected(root) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "run_check", {"check": "hang"})
                await wait_for_file(root / "hang.pid")
                second = await client.call_tool("run_check", {"check": "hang"})
                meanwhile = await client.call_tool("get_digest", {})
                group.cancel_scope.cancel()
            return {"second": data(second), "meanwhile": error_text(meanwhile)}

    found = anyio.run(go)
    second = found["second"]
    # no document yet: get_digest answers only with one, so this is an error naming why
    assert "has no document yet" in found["meanwhile"]
    assert "is unfinished: no digest yet" in found["meanwhile"]
    assert "-hang" in found["meanwhile"]
    assert second["exit_code"] == 2
    assert "is already running" in second["refused"]
    assert "digest" not in second


def test_a_cancelled_run_all_stops_its_running_member_and_skips_the_rest(
        project: Project) -> None:
    project.config(f"""\
        [check.hang]
        command = "{HANG}"
        parser = "generic"

        [check.after]
        command = "true"
        parser = "generic"
        """)
    root = project.root

    async def go() -> dict[str, Any]:
        async with connected(root) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "run_all", {})
                pgid = int(await wait_for_file(root / "hang.pid"))
                group.cancel_scope.cancel()
            with anyio.fail_after(20):
                while group_alive(pgid):
                    await anyio.sleep(0.05)
            await eventually(lambda: any((root / ".agent-runs").glob("*/aggregate.json")))
            return data(await client.call_tool("get_digest", {}))

    aggregate = anyio.run(go)
    assert aggregate["alias"] == "*"
    assert [m["status"] for m in aggregate["members"]] == ["error", "skipped"]
    assert aggregate["interrupted"] is True


def test_a_progress_report_that_fails_ends_the_reports_not_the_run(project: Project) -> None:
    from ckdn.app import load_config
    from ckdn.app.host import StopRequest
    from ckdn.app.queries import RunWatch
    from mcp_ckdn._running import run_watched

    project.config('[check.x]\ncommand = "true"\nparser = "generic"\n')
    watch = RunWatch(load_config(str(project.root)), "x")
    reports = []

    async def report(elapsed: float, message: str) -> None:
        reports.append(message)
        raise BrokenPipeError("the client went away")

    def work(stop: StopRequest) -> str:
        time.sleep(0.5)
        return "ran to its end"

    assert anyio.run(run_watched, work, watch, report, 0.05) == "ran to its end"
    assert len(reports) == 1
