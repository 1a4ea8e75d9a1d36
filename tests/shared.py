"""Real runs that several tests read, made once a suite run, whichever xdist worker asks first.

A session-scoped fixture is made once a worker: three workers ran each real tool, pipeline
and download three times. :func:`shared_dir` makes it once for all of them (pytest-xdist's
own recipe: a directory beside the workers' basetemps, under a file lock), in place, so the
absolute paths a real run records stay true. A test reads it and copies what it changes.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["shared_dir", "shared_root"]


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """Where this suite run's shared directories go: the workers' common basetemp (removed
    with it at the end of a green run), or the basetemp itself without xdist."""
    basetemp = factory.getbasetemp()
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def shared_dir(factory: pytest.TempPathFactory, key: str, make: Callable[[Path], object]) -> Path:
    """The directory ``make`` filled for ``key``, made by the first caller of this run while
    the others wait. A ``make`` that raised leaves nothing: the next caller makes it again,
    so every test that reads it sees the failure."""
    root = shared_root(factory)
    made, done = root / f"shared-{key}", root / f"shared-{key}.done"
    with open(root / f"shared-{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(made, ignore_errors=True)  # a maker that failed halfway
            made.mkdir()
            try:
                make(made)
            except BaseException:
                shutil.rmtree(made, ignore_errors=True)
                raise
            done.touch()
    return made
