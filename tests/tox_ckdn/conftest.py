"""tox plugin tests run tox itself through tox's own harness (``tox.pytest``).

``pytest_plugins`` is refused in a non-root conftest and registering
``tox.pytest`` globally would put its autouse fixtures (a dead pip index, a
check that no test changes ``os.environ``) on the whole suite, so the fixtures
are imported here and apply to this directory only. Every run is isolated from
the user's tox config (``TOX_USER_CONFIG_FILE=os.devnull``) and from an outer
``ckdn run`` (the ``CKDN_*`` variables are removed).

The harness needs pytest-mock; devpi-process, which it imports for a fixture these tests
do not use, is stood in for (:mod:`tests.tox_ckdn.devpi_stand_in`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.shared import shared_dir
from tests.tox_ckdn import devpi_stand_in  # noqa: F401 - tox.pytest imports devpi_process
from tests.tox_ckdn.toxproject import Project

try:
    from tox.pytest import (
        _disable_root_tox_py,
        _invalid_index_fake_port,
        check_os_environ_stable,
        disable_pip_pypi_access,
        enable_pip_pypi_access_fixture,
        ensure_logging_framework_not_altered,
        init_fixture,
        no_color,
    )
except ImportError as exc:  # pragma: no cover - a dev environment without tox's test extra
    raise ImportError(
        f"tests/tox_ckdn need tox's test harness ({exc}); install 'tox[testing]' "
        "(pytest-mock) with the dev extra") from exc

if TYPE_CHECKING:
    from tox.pytest import ToxProjectCreator

__all__ = [
    "_disable_root_tox_py",
    "_invalid_index_fake_port",
    "check_os_environ_stable",
    "disable_pip_pypi_access",
    "enable_pip_pypi_access_fixture",
    "ensure_logging_framework_not_altered",
    "init_fixture",
    "no_color",
]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, check_os_environ_stable: None) -> None:
    monkeypatch.setenv("TOX_USER_CONFIG_FILE", os.devnull)
    for name in ("CKDN_RUN_DIR", "CKDN_CHECK", "CKDN_CONFIG", "CKDN_CWD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tox_project: ToxProjectCreator) -> Project:
    """``project(files)``: a tox project on disk, with helpers to read its ckdn runs."""
    return Project(tox_project)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real ruff wheel of the docs' examples, downloaded once a suite run for every real
    tox run of every worker."""
    def download(where: Path) -> None:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "-d", str(where), "ruff==0.17.6"],
                       check=True, capture_output=True, timeout=600)

    return shared_dir(tmp_path_factory, "tox-wheelhouse", download)
