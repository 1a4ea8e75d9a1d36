"""One run inside a tool call: in a worker thread, with progress, stopped when the call is.

A check may run for minutes while its caller waits on one request. The run goes
to a worker thread (the event loop keeps serving other requests), and beside it
a task reports progress every few seconds (elapsed time, member i of n, the
log's size; clients with request timeouts reset them on progress). When the
request is cancelled (``notifications/cancelled``) or the server is shutting
down (stdin closed), that task's cancellation asks the run to stop through its
:class:`~ckdn.app.host.StopRequest`: the check's whole tree is stopped exactly
as at a timeout or Ctrl-C, the evidence is sealed (``interrupted``), and only
then does the call end. The worker thread is never abandoned.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from ckdn.app.host import StopRequest
from ckdn.app.queries import RunWatch

__all__ = ["STOP_REASON", "TERMINATED", "run_watched", "stop_all"]

#: The notes an interrupted run's digest carries.
STOP_REASON = "the MCP request was cancelled or the client went away"
TERMINATED = "ckdn-mcp was asked to end (SIGTERM or SIGHUP)"

#: The stop requests of the runs in flight, for :func:`stop_all`.
_ACTIVE: set[StopRequest] = set()

Report = Callable[[float, str], Awaitable[None]]


def _message(watch: RunWatch, elapsed: float) -> str:
    now = watch.now()
    where = "starting" if now.check is None else now.check
    if now.members > 1:
        where = f"member {now.member} of {now.members} ({where})"
    return f"{where}: {elapsed:.0f} s, log {now.log_bytes} bytes"


async def run_watched(work: Callable[[StopRequest], Any], watch: RunWatch, report: Report,
                      every: float) -> Any:
    """``work(stop)`` in a worker thread; ``report(elapsed, message)`` every ``every`` seconds.

    Cancelling the calling task requests the stop and waits for ``work`` to return
    (its evidence written), then lets the cancellation through.
    """
    started = time.monotonic()
    finished = False
    with StopRequest() as stop:
        _ACTIVE.add(stop)

        async def progress() -> None:
            try:
                while True:
                    await anyio.sleep(every)
                    elapsed = time.monotonic() - started
                    try:
                        await report(elapsed, _message(watch, elapsed))
                    except Exception:  # a notification that cannot be sent ends the reports,
                        return  # never the run: a client that went away cancels the call
            except anyio.get_cancelled_exc_class():
                if not finished:
                    stop.request(STOP_REASON)
                raise

        failed: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(progress)
            try:
                # not abandoned on cancel: the thread's run ends first, evidence written
                done = await anyio.to_thread.run_sync(work, stop)
            except Exception as exc:  # raised below as itself, not inside an ExceptionGroup
                failed = exc
            finally:
                finished = True
                _ACTIVE.discard(stop)
                group.cancel_scope.cancel()
        if failed is not None:
            raise failed
        return done


async def stop_all(reason: str = TERMINATED) -> None:
    """Stop every run in flight and wait until each has written its evidence."""
    for stop in list(_ACTIVE):
        stop.request(reason)
    while _ACTIVE:
        await anyio.sleep(0.02)
