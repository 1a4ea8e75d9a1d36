"""Runs real pytest sessions (pytester) with the ckdn plugin.

pytester comes from the root conftest. Every test runs with the ``CKDN_*``
variables removed: when this suite itself runs under ``ckdn run``, an inner
session must not mistake the outer run dir for its own.
"""

from __future__ import annotations

import pytest

from tests.pytest_ckdn.sessions import Runner


@pytest.fixture(autouse=True)
def _no_outer_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CKDN_RUN_DIR", "CKDN_CHECK", "CKDN_CONFIG", "CKDN_CWD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def session(pytester: pytest.Pytester) -> Runner:
    """``session(*args, subprocess=False)``: a ``--ckdn-digest`` run in the pytester dir."""
    return Runner(pytester)
