"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from ckdn.testing.profiles import DEV, load_profile
from tests.bytecode import compile_checkout
from tests.project import Project
from tests.scheduling import heavy_first_per_share

# A suite started as a shell's background job (`nohup pytest &`, a script's `cmd &`)
# inherits Ctrl-C ignored, and so would every ckdn it starts: ckdn keeps an ignored
# signal ignored (as nohup asks), and the Ctrl-C tests would wait out their checks.
# Python's own handler is reset to the default in every child the suite starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: The suite's own profiles, one place for every property in it (a test sets its own
#: max_examples only below the budget, with a comment saying what one example costs).
SUITE_DEV = "suite-dev"
SUITE_CI = "suite-ci"


def load_suite_profile(environ: Mapping[str, str] | None = None) -> str:
    """Load the suite's hypothesis profile; its name.

    ``suite-dev``: hypothesis's 100 examples, new ones every run. ``suite-ci`` (when CI is
    set): the same budget, derandomized and without a database, so a CI run is reproducible
    and costs the same every time. HYPOTHESIS_PROFILE names one of the kit's profiles
    instead (``ci``: its fixed 750 examples a property, loaded as ``suite-kit-ci``). In
    all of them a busy machine is no failure: no deadline, no too-slow health check (speed
    is tests/timing's and bench/'s), and the properties that use a function-scoped
    fixture reset what they use.
    """
    env = os.environ if environ is None else environ
    kit = load_profile(env)  # registers the kit's ci and dev; ci under CI
    calm = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow,
                                                       HealthCheck.function_scoped_fixture]}
    settings.register_profile(SUITE_DEV, parent=settings.get_profile(DEV), **calm)
    settings.register_profile(SUITE_CI, parent=settings.get_profile(DEV), derandomize=True,
                              database=None, print_blob=True, **calm)
    if env.get("HYPOTHESIS_PROFILE"):
        name = f"suite-kit-{kit}"
        settings.register_profile(name, parent=settings.get_profile(kit), **calm)
    else:
        name = SUITE_DEV if kit == DEV else SUITE_CI
    settings.load_profile(name)
    return name


#: The hypothesis profile of this run (:func:`load_suite_profile`).
HYPOTHESIS_PROFILE = load_suite_profile()

#: Real pytest sessions for the plugin tests (tests/pytest_ckdn); only a root conftest may
#: declare plugins.
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _not_in_a_github_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite run inside a GitHub Actions job must not have its hosts (pytester, in-process
    tox) annotate that job: the tests that want it set the variables themselves."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "CKDN_GITHUB"):
        monkeypatch.delenv(name, raising=False)


#: The packages whose lazily imported submodules an in-process pytester session can leave
#: half-forgotten (below).
OWN_PACKAGES = ("ckdn", "pytest_ckdn", "nox_ckdn", "tox_ckdn", "mcp_ckdn")


def forget_stale_submodules() -> list[str]:
    """Drop every package attribute naming a submodule that is no longer in sys.modules.

    An in-process pytester session puts sys.modules back as it found it, but a submodule
    first imported inside it (the plugin imports ckdn.app lazily) stays an attribute of its
    package: a later ``from ckdn import app`` got that stale module while ``from ckdn.app
    import ...`` loaded a fresh one, so a test's monkeypatch of one missed the other.
    """
    forgotten = []
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".", 1)[0] not in OWN_PACKAGES:
            continue
        for attr, value in list(vars(module).items()):
            if (isinstance(value, ModuleType) and value.__name__ == f"{name}.{attr}"
                    and sys.modules.get(value.__name__) is not value):
                delattr(module, attr)
                forgotten.append(value.__name__)
    return forgotten


@pytest.fixture(autouse=True)
def _no_stale_submodules(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test with in-process pytester sessions, the next test imports consistently."""
    yield
    if "pytester" in request.fixturenames:
        forget_stale_submodules()


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the checkout once, in the controller, when the interpreter writes no
    bytecode (``PYTHONDONTWRITEBYTECODE``); see tests/bytecode.py."""
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        compile_checkout(config)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker more than the CPUs this process may use. The suite's tests wait
    on the processes they start (spawns, fsyncs, pipes) about a sixth of the time, which a
    third worker fills on two cores; beside other busy processes the suite keeps its share.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides where it is set (xdist reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers, each worker's share starts with its heavy tests (tests/scheduling):
    after pytest-randomly's shuffle (its hook wraps this one), the same order in every
    worker, as xdist requires. A run without workers keeps the shuffled order as it is."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    items[:] = heavy_first_per_share(items, workers)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A temporary project directory; write its ckdn.toml with ``project.config``."""
    return Project(tmp_path)
