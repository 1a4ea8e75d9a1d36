"""The one live status line ``ckdn run`` draws on a terminal's stderr while a check runs."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import TextIO

# Check name, elapsed time and log size, redrawn in place a few times a second and
# erased before the digest is printed. Imported only when stderr is a terminal:
# agents and CI never load it.


_PROGRESS_EVERY = 0.25


class Progress:
    """One live status line on a terminal's stderr; never created for anything else."""

    def __init__(self, stream: TextIO, label: str, start: float) -> None:
        self._stream = stream
        self._label = "".join(c if c.isprintable() else "?" for c in label)
        self._start = start
        self.due = start + _PROGRESS_EVERY
        self._shown = False

    def tick(self, now: float, size: int) -> None:
        if now < self.due:
            return
        self.due = now + _PROGRESS_EVERY
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (OSError, ValueError):
            columns = 0
        width = columns - 1 if columns > 1 else 79  # 0: the terminal does not say
        figures = f"  {now - self._start:.1f}s  {_human(size)}"
        room = width - len("ckdn: ") - len(figures)
        label = self._label if len(self._label) <= room else self._label[: max(room - 1, 1)] + "~"
        self._shown = self._write(f"\rckdn: {label}{figures}"[: width + 1] + "\x1b[K")

    def clear(self) -> None:
        if self._shown:
            self._shown = False
            self._write("\r\x1b[K")

    def _write(self, text: str) -> bool:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, UnicodeError):  # terminal gone, or cannot show the name: carry on
            self.due = float("inf")
            return False
        return True


def _human(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in ("kB", "MB", "GB"):
        value /= 1000
        if value < 1000:
            return f"{value:.1f} {unit}"
    return f"{value:.1f} GB"
