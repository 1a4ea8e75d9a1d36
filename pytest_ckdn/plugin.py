"""The ``pytest11`` entry point: options, hookspecs, and the switch that enables recording.

Inert unless enabled (``--ckdn-digest`` or ``ckdn_digest = true``): a disabled
session imports nothing from ckdn and registers no per-test hook, so installing
ckdn costs pytest nothing. The work lives in private modules, imported only
by an enabled session.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["pytest_addhooks", "pytest_addoption", "pytest_configure"]

RECORDER = "ckdn-recorder"
#: The session recorder of an enabled session (absent when inert).
recorder_key = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ckdn", "ckdn digest (checkdown)")
    group.addoption("--ckdn-digest", action="store_true", dest="ckdn_digest", default=None,
                    help="Record this session as a ckdn run: run dir, full.log, meta.json, "
                         "digest.json; the digest is also the last line printed.")
    group.addoption("--no-ckdn-digest", action="store_false", dest="ckdn_digest",
                    help="Do not record a digest, even when the ckdn_digest ini key is set.")
    group.addoption("--ckdn-check", action="store", dest="ckdn_check", default="pytest",
                    metavar="NAME",
                    help="Check name of the run (run dir, lock, ckdn.toml options). "
                         "Default: pytest.")
    group.addoption("--ckdn-fail-under", action="store", dest="ckdn_fail_under", type=float,
                    default=None, metavar="PERCENT",
                    help="Coverage gate: a total below PERCENT (pytest-cov) fails the digest.")
    group.addoption("--ckdn-config", action="store", dest="ckdn_config", default=None,
                    metavar="PATH",
                    help="ckdn.toml to read (default: $CKDN_CONFIG, else ./ckdn.toml).")
    parser.addini("ckdn_digest", type="bool", default=False,
                  help="Record every session as a ckdn run (as --ckdn-digest).")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_ckdn import hooks

    pluginmanager.add_hookspecs(hooks)


def _enabled(config: pytest.Config) -> bool:
    option = config.getoption("ckdn_digest")
    if option is not None:
        return bool(option)
    return bool(config.getini("ckdn_digest"))


#: Option dests of sessions that run no tests by design (listings, help, dry runs).
_NO_TESTS_BY_DESIGN = ("collectonly", "showfixtures", "show_fixtures_per_test", "markers",
                       "help", "version", "setupplan", "setuponly")


def _records_tests(config: pytest.Config) -> bool:
    """Worker processes of pytest-xdist and sessions that run no tests by design record nothing."""
    if hasattr(config, "workerinput"):
        return False
    option: Any = config.option
    return not any(getattr(option, name, False) for name in _NO_TESTS_BY_DESIGN)


def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config) or not _records_tests(config):
        return
    from pytest_ckdn._session import Recorder
    from pytest_ckdn._settings import resolve

    recorder = Recorder(config, resolve(config))
    config.stash[recorder_key] = recorder
    config.pluginmanager.register(recorder, RECORDER)
