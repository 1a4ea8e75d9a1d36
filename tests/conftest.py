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


@pytest.fixture(autouse=True)
def _not_in_a_github_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite run inside a GitHub Actions job must not have its hosts (pytester, in-process
    tox) annotate that job: the tests that want it set the variables themselves."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "CKDN_GITHUB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A temporary project directory; write its ckdn.toml with ``project.config``."""
    return Project(tmp_path)
