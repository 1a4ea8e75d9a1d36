"""The rule for every test of the process room: it runs once per way a child is started.

``ckdn._lite.spawn`` starts a check with ``posix_spawn`` where it can and with
``subprocess.Popen`` elsewhere, and the two must behave the same in every way the
runner relies on. So every test in this directory runs on both paths: the
``spawn_path`` fixture (tests/core/conftest.py) is used here automatically, and a
test needs no opt-in to be held to the rule.
"""

from __future__ import annotations

import pytest

from ckdn.process import _cgroup


def cgroup_available() -> bool:
    """Whether ckdn can make a cgroup of its own here (the probe the runner makes)."""
    saved = _cgroup._cgroup_home
    try:
        _cgroup._cgroup_home = None
        made = _cgroup.Cgroup.make()
        if made is None:
            return False
        made.remove()
        return True
    finally:
        _cgroup._cgroup_home = saved


@pytest.fixture(autouse=True)
def each_spawn_path(spawn_path: str) -> str:
    return spawn_path
