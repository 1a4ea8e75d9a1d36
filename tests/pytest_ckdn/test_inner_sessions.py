"""The plugin tests' inner pytest sessions are apart from the suite running them."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

import ckdn
from tests.conftest import forget_stale_submodules


def test_a_submodule_an_inner_session_dropped_is_dropped_from_its_package_too() -> None:
    # What an in-process pytester session leaves when the plugin first imported a module
    # inside it: the package's attribute, and no sys.modules entry.
    ckdn._stale_probe = ModuleType("ckdn._stale_probe")  # type: ignore[attr-defined]
    try:
        assert "ckdn._stale_probe" not in sys.modules
        assert "ckdn._stale_probe" in forget_stale_submodules()
        assert not hasattr(ckdn, "_stale_probe")
    finally:
        vars(ckdn).pop("_stale_probe", None)


def test_a_submodule_still_imported_is_kept() -> None:
    import ckdn.errors

    forget_stale_submodules()
    assert ckdn.errors is sys.modules["ckdn.errors"]


def test_an_inner_session_does_not_inherit_the_suites_addopts(pytester: pytest.Pytester) -> None:
    # The suite's addopts (pyproject.toml) start xdist workers; an inner session reads the
    # pytester dir's configuration, which has none.
    pytester.makepyfile(test_sample="""
        def test_options(request):
            assert not request.config.getoption("numprocesses", None)
            assert not request.config.inipath
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
