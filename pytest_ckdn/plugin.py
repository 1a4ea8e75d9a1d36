"""The ``pytest11`` entry point: options, hookspecs, and the switch that enables recording.

Inert unless enabled (``--ckdn-digest``, ``CKDN_DIGEST=1`` in the environment,
or ``ckdn_digest = true``): a disabled session imports nothing from ckdn and
registers no per-test hook, so installing ckdn costs pytest nothing. The work
lives in private modules, imported only by an enabled session.

The environment switch exists because the ini key is not harmless: in an
environment without this plugin pytest does not know the key, and
``--strict-config`` turns that into exit 4 and ``filterwarnings = error`` into
an INTERNALERROR. An unknown environment variable costs pytest nothing. It
switches on the session it is given to only: an enabled session removes it
from its environment, so pytest sessions its tests start (pytester,
subprocesses) do not record too.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_ckdn import hooks

__all__ = ["pytest_addhooks", "pytest_addoption", "pytest_configure"]

RECORDER = "ckdn-recorder"
#: The environment switch: 1/true/yes/on records, 0/false/no/off does not.
DIGEST_ENV = "CKDN_DIGEST"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")
#: The session recorder of an enabled session (absent when inert).
recorder_key = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ckdn", "ckdn digest (checkdown)")
    group.addoption("--ckdn-digest", action="store_true", dest="ckdn_digest", default=None,
                    help="Record this session as a ckdn run: run dir, full.log, meta.json, "
                         "digest.json; the digest is also the last line printed.")
    group.addoption("--no-ckdn-digest", action="store_false", dest="ckdn_digest",
                    help="Do not record a digest, even when CKDN_DIGEST or the ckdn_digest "
                         "ini key says so.")
    group.addoption("--ckdn-check", action="store", dest="ckdn_check", default=None,
                    metavar="NAME",
                    help="Check name of the run (run dir, lock, ckdn.toml options). "
                         "Default: pytest.")
    group.addoption("--ckdn-fail-under", action="store", dest="ckdn_fail_under", type=float,
                    default=None, metavar="PERCENT",
                    help="Coverage gate: a total below PERCENT (pytest-cov) fails the digest.")
    group.addoption("--ckdn-gate", action="store_true", dest="ckdn_gate", default=False,
                    help="Exit status follows the baseline gate ([run].baseline): 0 pass, "
                         "1 fail, else pytest's own (as ckdn run --gate).")
    group.addoption("--ckdn-diff-base", action="store", dest="ckdn_diff_base", default=None,
                    metavar="REF",
                    help="Gate the session by the change since `git merge-base REF HEAD` (the "
                         "tests run again on the base in a git worktree, unless [run].baseline "
                         "is set); the exit status follows that gate (docs/diff-gate.md).")
    group.addoption("--ckdn-github", action="store_true", dest="ckdn_github", default=None,
                    help="In a GitHub Actions job, annotate the digest's findings and add its "
                         "step summary (the default there, unless CKDN_GITHUB=0).")
    group.addoption("--no-ckdn-github", action="store_false", dest="ckdn_github",
                    help="No GitHub annotations or step summary, even in a GitHub job.")
    group.addoption("--ckdn-config", action="store", dest="ckdn_config", default=None,
                    metavar="PATH",
                    help="ckdn.toml to read (default: $CKDN_CONFIG, else ckdn.toml in the "
                         "rootdir, else in the invocation directory).")
    group.addoption("--ckdn-shard", action="store", dest="ckdn_shard", default=None,
                    metavar="auto|K/N",
                    help="Run shard K of N of the collected tests (auto: from the CI's shard "
                         "variables; none set is an error, never the whole suite).")
    group.addoption("--ckdn-plan", action="store", dest="ckdn_plan", default=None,
                    metavar="FILE",
                    help="With --ckdn-shard: the ckdn.plan/1 file (ckdn plan) assigning the "
                         "tests; a test it does not know is placed by a hash of its node id.")
    group.addoption("--ckdn-rerun", action="store_true", dest="ckdn_rerun", default=False,
                    help="With --ckdn-shard: this session reruns its shard; at ckdn merge "
                         "--plan it replaces the shard's earlier run.")
    parser.addini("ckdn_digest", type="bool", default=False,
                  help="Record every session as a ckdn run (as --ckdn-digest).")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def _from_environment() -> bool | None:
    """What ``CKDN_DIGEST`` says: on, off, or nothing (unset or empty)."""
    raw = os.environ.get(DIGEST_ENV, "").strip()
    if not raw:
        return None
    if raw.lower() in _ON:
        return True
    if raw.lower() in _OFF:
        return False
    raise pytest.UsageError(f"ckdn: {DIGEST_ENV} must be 1 or 0 (or true/false, yes/no, "
                            f"on/off), not {raw[:40]!r}")


def _enabled(config: pytest.Config) -> bool:
    """``--ckdn-digest`` / ``--no-ckdn-digest``, else ``CKDN_DIGEST``, else the ini key."""
    option = config.getoption("ckdn_digest")
    if option is not None:
        return bool(option)
    environment = _from_environment()
    if environment is not None:
        return environment
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
    if config.getoption("ckdn_shard") is not None or config.getoption("ckdn_plan") is not None \
            or config.getoption("ckdn_rerun"):
        # lazy: only a sharded session loads sharding (and with it ckdn)
        from pytest_ckdn._shard import start_sharding

        start_sharding(config, lambda: config.stash.get(recorder_key, None))
    if not _enabled(config) or not _records_tests(config):
        return
    # lazy: the documented boundary; a session without --ckdn-digest imports nothing from ckdn
    from pytest_ckdn._session import Recorder
    from pytest_ckdn._settings import resolve

    os.environ.pop(DIGEST_ENV, None)  # this session's switch, not its child sessions'
    recorder = Recorder(config, resolve(config))
    config.stash[recorder_key] = recorder
    config.pluginmanager.register(recorder, RECORDER)
