"""The /proc files the run reads about its child are read raw: each is read whole once, and
a buffered file would cost an isatty ioctl per open (on every run)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from ckdn.process import _group

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


def test_the_proc_files_are_opened_unbuffered(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[str, int]] = []
    real_open = open

    def counted(file: Any, mode: str = "r", buffering: int = -1, **kwargs: Any) -> Any:
        opened.append((str(file), buffering))
        return real_open(file, mode, buffering, **kwargs)

    monkeypatch.setattr(_group, "open", counted, raising=False)
    found = _group.identity(os.getpid(), None)
    _group.has_children(os.getpid())
    assert found["start"] == int(_group.stat_fields(os.getpid())[19])  # type: ignore[index]
    assert isinstance(found["boot"], str)
    assert len(found["boot"]) == 36
    assert {path.rsplit("/", 1)[-1] for path, _ in opened} >= {"stat", "boot_id", "children"}
    assert all(buffering == 0 for _, buffering in opened), opened
