"""Ctrl-C, SIGTERM and SIGHUP while a check runs: a request to stop its tree, never an abort.

The handler interrupts only the wait for the child; anywhere else (spawning,
stopping the tree, sealing the log) it just records the request, so a second
Ctrl-C can never abort the clean-up. A host's :class:`~ckdn.process.StopRequest`
counts as Ctrl-C, with the host's reason.
"""

from __future__ import annotations

import signal

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

    from ckdn.process._group import Child
    from ckdn.process._stop import StopRequest

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SIGNAL_WORDS: dict[int, str] = {
    signal.SIGINT: "interrupted by Ctrl-C (SIGINT)",
    signal.SIGTERM: "ckdn received SIGTERM",
    signal.SIGHUP: "ckdn received SIGHUP",
}


def stop_word(signum: int) -> str:
    return _SIGNAL_WORDS.get(signum, f"ckdn received signal {signum}")


class _StopRequested(Exception):
    """Raised by the signal handler, only while ckdn is blocked waiting for the child."""


class Stops:
    """Ctrl-C, SIGTERM and SIGHUP become a request to stop the tree.

    The handler interrupts only the wait for the child; anywhere else (spawning,
    stopping the tree, sealing the log) it just records the request, so a second
    Ctrl-C can never abort the clean-up. Signals someone ignores on purpose
    (``nohup``) stay ignored, and old handlers come back on exit. A host's
    :class:`~ckdn.process.StopRequest` counts as Ctrl-C, with the host's reason.
    """

    def __init__(self, request: StopRequest | None = None) -> None:
        self.signum: int | None = None
        self.request = request
        self._host_reason: str | None = None
        self._armed = False
        self._saved: dict[int, Callable[[int, FrameType | None], object] | int] = {}

    def __enter__(self) -> Stops:
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is None or previous == signal.SIG_IGN:
                continue
            try:
                signal.signal(signum, self._handle)
            except ValueError:
                break  # not the main thread: signals are delivered elsewhere
            self._saved[signum] = previous
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._saved.items():
            signal.signal(signum, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if self._armed:
            self._armed = False
            raise _StopRequested

    def host_stopped(self) -> bool:
        """True once the host asked to stop; from then on it is ``signum`` SIGINT."""
        request = self.request
        if self.signum is None and request is not None and request.reason is not None:
            self.signum = signal.SIGINT
            self._host_reason = request.reason
        return self._host_reason is not None

    def words(self) -> str:
        """Why the run was called off, for its note."""
        if self._host_reason is not None:
            return f"stopped at the host's request ({self._host_reason})"
        return stop_word(self.signum or signal.SIGINT)

    def wait(self, child: Child, timeout: float) -> bool:
        """Wait for the leader's exit; a stop request cuts the wait short (returns False)."""
        try:
            self._armed = True
            exited = self.signum is None and not self.host_stopped() and child.exited(timeout)
            self._armed = False
        except _StopRequested:
            return False
        if not exited and self.host_stopped():
            child.unwatch()
        return exited


