"""A host's way to stop a check that runs in one of its worker threads."""

from __future__ import annotations

import os
import threading

__all__ = ["StopRequest"]

# Ctrl-C reaches ``ckdn run`` as a signal, and the runner stops the check's
# process group. A host that runs checks in worker threads (tox runs each env in
# one) gets the signal in its main thread, where ckdn's handler is not: it hands
# the run a :class:`StopRequest` and calls :meth:`~StopRequest.request` when it is
# interrupted. The run then ends exactly as after Ctrl-C: the tree stopped, rc 130,
# ``interrupted``, the evidence written, with a note giving the host's reason.
#
# The request wakes the waiting runner at once: it is a pipe the runner polls
# beside the child's exit, not a flag it would have to look at on a timer.


class StopRequest:
    """A stop another thread can ask for; use it as a context manager (it holds a pipe)."""

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self.reason: str | None = None

        # request() may race close() from another thread: never write to a closed fd,
        # whose number may belong to another file by then.
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self.reason is not None

    def request(self, reason: str = "the host asked to stop") -> None:
        """Ask the run to stop (from any thread); the first reason given is the one noted."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self._write_fd < 0:
                return  # closed: the run is over
            try:  # noqa: SIM105 - `ckdn run` does not import contextlib
                os.write(self._write_fd, b"x")
            except BlockingIOError:  # woken already
                pass

    def fileno(self) -> int:
        """Readable once a stop was requested: what the runner polls."""
        return self._read_fd

    def close(self) -> None:
        with self._lock:
            fds, self._read_fd, self._write_fd = (self._read_fd, self._write_fd), -1, -1
        for fd in fds:
            if fd >= 0:
                os.close(fd)

    def __enter__(self) -> StopRequest:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
