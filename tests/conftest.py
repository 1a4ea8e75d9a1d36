"""Shared fixtures for the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckdn.testing.profiles import load_profile
from tests.project import Project

#: The hypothesis profile of this run: ``ci`` (a fixed budget, the same examples every
#: run) when CI is set or HYPOTHESIS_PROFILE=ci, else ``dev`` (quick). One place for
#: every property in the suite; a test that sets its own max_examples keeps it.
HYPOTHESIS_PROFILE = load_profile()

#: Real pytest sessions for the plugin tests (tests/pytest_ckdn); only a root conftest may
#: declare plugins.
pytest_plugins = ["pytester"]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A temporary project directory; write its ckdn.toml with ``project.config``."""
    return Project(tmp_path)
