"""``full.log`` for a plugin session: a copy of everything pytest's terminal writer prints.

pytest funnels its whole terminal output (header, progress, failure sections,
captured output of failing tests, warnings summary, other plugins' sections
such as pytest-cov's table, ``INTERNALERROR>`` lines) through one
``TerminalWriter.write``. Teeing that method is how pytest's own ``pastebin``
plugin captures a session, and it copies the text before colour markup is
added, so the log holds the bytes a reader wants without escape codes.

What it cannot see: output that bypasses pytest, such as a test printing with
``-s`` (``--capture=no``) or a subprocess writing straight to the terminal
file descriptors. Under ``ckdn run`` the runner owns ``full.log`` at the file
descriptor level instead and this tee is not used.

The text goes into the run's :class:`ckdn.app.host.HostLog`, which writes it as the
session runs (never held in memory) and hashes it as it goes, so sealing needs
no second pass over a large log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ckdn.app.host import HostLog

__all__ = ["LogTee"]


class LogTee:
    """Copies a terminal writer's text into a run's log until :meth:`close`."""

    def __init__(self, log: HostLog, writer: Any | None) -> None:
        self._log: HostLog | None = log
        self._writer = writer
        self._previous: Any = None
        self._tee: Any = None
        if writer is not None:
            self._previous = vars(writer).get("write")
            original = writer.write

            def tee_write(msg: str, **kwargs: Any) -> None:
                original(msg, **kwargs)
                self.write(msg)

            self._tee = writer.write = tee_write

    def write(self, text: str) -> None:
        if self._log is not None and text:
            self._log.write(text)

    def close(self) -> None:
        """Stop copying; the run's seal closes the log itself."""
        writer, self._writer = self._writer, None
        # Unhook only if nobody wrapped the writer after us; otherwise our
        # wrapper stays in their chain and passes text through untouched.
        if writer is not None and vars(writer).get("write") is self._tee:
            if self._previous is None:
                del vars(writer)["write"]
            else:
                writer.write = self._previous
        self._log = None
