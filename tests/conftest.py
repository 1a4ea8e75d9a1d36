"""Shared fixtures for the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project import Project

#: Real pytest sessions for the plugin tests (tests/pytest_ckdn); only a root conftest may
#: declare plugins.
pytest_plugins = ["pytester"]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A temporary project directory; write its ckdn.toml with ``project.config``."""
    return Project(tmp_path)
