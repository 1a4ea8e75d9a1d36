"""The caches of repeated messages stay small on a hostile report of distinct long ones.

Measured on a ruff report of 20,000 distinct 4 KB messages (85 MB): the run peaked at
85 MiB while the fingerprint's and the redaction screen's caches kept every message;
bounded by length and by characters in all, it peaks at 36 MiB.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from ckdn.app._running.parsing import message_screen
from ckdn.identity._fingerprint import Hasher, SourceLines
from ckdn.redact import Redaction, RedactSettings

MiB = 1 << 20


def test_a_long_message_is_not_remembered_and_short_ones_only_within_a_budget(
        tmp_path: Path) -> None:
    hasher = Hasher(SourceLines(str(tmp_path)))
    for number in range(2_000):
        hasher.located("a.py", 1, "E501", f"{number} " + "x" * 1_000)
    assert hasher._messages == {}
    for number in range(30_000):
        hasher.located("a.py", 1, "E501", f"{number:06} " + "y" * 190)
    kept = sum(len(raw) + len(message) for raw, message in hasher._messages.items())
    assert 0 < kept <= (4 << 20) + 512
    assert len(hasher._messages) < 30_000


@pytest.mark.slow  # seconds: command 1's quick subset leaves it to the whole suite
def test_the_screens_memory_is_bounded_on_distinct_messages() -> None:
    shown = message_screen(Redaction(RedactSettings()))
    assert shown is not None
    tracemalloc.start()
    try:
        for number in range(20_000):
            shown(f"{number:06} " + "z" * 3_000)  # nothing to redact: once each, never kept
        long_held, _ = tracemalloc.get_traced_memory()
        for number in range(60_000):
            shown(f"{number:06} " + "w" * 240)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert long_held < 1 * MiB
    assert held < 12 * MiB  # 60,000 x 247 characters kept would be over 14 MiB
