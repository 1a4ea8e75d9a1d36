"""Every test here runs the real ``nox`` on a noxfile written into a temporary project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nox_ckdn.noxproject import NoxProject


@pytest.fixture
def nox_project(tmp_path: Path) -> NoxProject:
    return NoxProject(tmp_path)
