"""The rule for every test of the process room: it runs once per way a child is started.

``ckdn._lite.spawn`` starts a check with ``posix_spawn`` where it can and with
``subprocess.Popen`` elsewhere, and the two must behave the same in every way the
runner relies on. So every test in this directory runs on both paths: the
``spawn_path`` fixture (tests/core/conftest.py) is used here automatically, and a
test needs no opt-in to be held to the rule.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def each_spawn_path(spawn_path: str) -> str:
    return spawn_path
