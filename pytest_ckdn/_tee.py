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

The file is written as the session runs (never held in memory) and hashed as
it goes, so sealing needs no second pass over a large log.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO, Any

__all__ = ["LogTee"]


class LogTee:
    """Copies a terminal writer's text into ``path`` until :meth:`close`."""

    def __init__(self, path: Path, writer: Any | None) -> None:
        self.path = path
        self._file: IO[bytes] | None = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._sha = hashlib.sha256()
        self.size = 0
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
        handle = self._file
        if handle is None or not text:
            return
        data = text.encode("utf-8", "backslashreplace")
        handle.write(data)
        self._sha.update(data)
        self.size += len(data)

    def close(self) -> str:
        """Stop copying, close the file and return its sha256 (hex)."""
        writer, self._writer = self._writer, None
        # Unhook only if nobody wrapped the writer after us; otherwise our
        # wrapper stays in their chain and passes text through untouched.
        if writer is not None and vars(writer).get("write") is self._tee:
            if self._previous is None:
                del vars(writer)["write"]
            else:
                writer.write = self._previous
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()
        return self._sha.hexdigest()
