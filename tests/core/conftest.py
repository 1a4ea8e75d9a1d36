"""Fixtures shared by the core tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckdn import _lite


@pytest.fixture(params=["posix_spawn", "popen"])
def spawn_path(request: pytest.FixtureRequest, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way the runner starts a child (ckdn._lite.spawn) in turn, working in ``tmp_path``:
    posix_spawn where the child runs in ckdn's own directory, Popen anywhere else."""
    monkeypatch.chdir(tmp_path)
    if request.param == "popen":
        monkeypatch.setattr(_lite, "_use_posix_spawn", False)
    return str(request.param)
