"""SIGTERM as a stop pytest knows how to finish, so a recorded session always seals.

By default SIGTERM kills Python on the spot: a ``pytest --ckdn-digest`` session
stopped by a CI job's cancel, a process manager, or ckdn's own timeout (which
sends SIGTERM to the whole process group first) left no digest and no
evidence. While a session records, the plugin turns the first SIGTERM into
:class:`Terminated`, a ``KeyboardInterrupt``: pytest stops the way it stops on
Ctrl-C (the running test is abandoned, fixtures are torn down, the summary is
printed, every ``pytest_unconfigure`` runs), and the plugin seals its record
with exit code 143 and ``interrupted``, as ``ckdn run`` reports a SIGTERM.

Only the first SIGTERM raises: a second one while pytest winds down is recorded
and otherwise ignored, so it cannot break the sealing (SIGKILL remains for a
session that will not stop). A handler someone else installed, and a SIGTERM
that is ignored on purpose, are left alone; so is any thread but the main one.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on the first SIGTERM of a recorded session."""


class SigtermStop:
    """Installs the SIGTERM handler for one session; :meth:`restore` puts the old one back."""

    def __init__(self) -> None:
        self.received = False
        self._armed = False
        self._previous: Any = None
        self._installed = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        if previous is not signal.SIG_DFL:  # someone else's handler, or ignored on purpose
            return
        signal.signal(signal.SIGTERM, self._handle)
        self._previous = previous
        self._installed = True
        self._armed = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        if self._armed:
            self._armed = False
            raise Terminated("SIGTERM")

    def disarm(self) -> None:
        """From now on a SIGTERM is only recorded: the record is being sealed."""
        self._armed = False

    def restore(self) -> None:
        if self._installed:
            self._installed = False
            signal.signal(signal.SIGTERM, self._previous)
