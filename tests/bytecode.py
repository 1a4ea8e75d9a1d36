"""The suite's bytecode, written once a run by the controller where nothing else writes it.

Under ``PYTHONDONTWRITEBYTECODE`` an editable install is compiled by no one: each of the
suite's ~2,000 ckdn and pytest processes compiled ckdn again (about 12 % of the suite's
CPU), and each xdist worker compiled the suite's helpers and rewrote the asserts of every
test module again (about 6 s CPU a worker), and every pytest that imported hypothesis (a
plugin's package: pytest rewrites all of it) rewrote hypothesis (about 0.6 s). What pip
does for an installed copy.
"""

from __future__ import annotations

import compileall
import importlib.util
import re
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

#: The suite itself; its fixtures are the inner sessions' projects, copied as they are.
SUITE_DIR = Path(__file__).parent
#: The checkout's packages.
PACKAGE_DIRS = [SUITE_DIR.parent / where
                for where in ("core/ckdn", "pytest_ckdn", "nox_ckdn", "tox_ckdn", "mcp_ckdn")]
#: What compileall leaves alone in the suite: the fixtures and the modules pytest rewrites.
NOT_PLAIN_MODULES = re.compile(r"/fixtures/|/test_[^/]*\.py$|/conftest\.py$")
#: The private parts of pytest's rewriter this uses (pytest is pinned in the dev extra):
#: where one is gone, each worker rewrites the modules itself, as it does without this. The
#: plugins' modules also read the hook's ``_must_rewrite`` (without it: none are written).
REWRITER_PARTS = ("assertstate_key", "get_cache_dir", "PYC_TAIL", "try_makedirs", "_read_pyc",
                  "_rewrite_test", "_write_pyc")


def compile_checkout(config: pytest.Config) -> None:
    """Byte-compile the packages and the suite's helpers, and write the rewritten test
    modules and plugins; what is fresh already is left alone."""
    for package in PACKAGE_DIRS:
        compileall.compile_dir(package, quiet=2)
    compileall.compile_dir(SUITE_DIR, quiet=2, rx=NOT_PLAIN_MODULES)
    write_rewritten(config, [*rewritten_modules(SUITE_DIR), *plugin_modules(config)])


def rewritten_modules(suite: Path) -> list[Path]:
    """The modules of ``suite`` pytest rewrites the asserts of: test modules and conftests
    (its fixtures are other sessions' projects, rewritten by those sessions)."""
    return [source for source in sorted(suite.rglob("*.py"))
            if "fixtures" not in source.relative_to(suite).parts
            and (source.name == "conftest.py" or source.name.startswith("test_"))]


def rewritten_pyc(source: Path) -> Path:
    """Where pytest keeps the assertion-rewritten bytecode of ``source``."""
    return rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)


def plugin_modules(config: pytest.Config) -> list[Path]:
    """The installed plugins' modules pytest rewrites the asserts of: every module of the
    top-level packages it marked (each distribution with a ``pytest11`` entry point)."""
    state = config.stash.get(rewrite.assertstate_key, None)
    marked = getattr(state.hook, "_must_rewrite", None) if state is not None else None
    found: dict[Path, None] = {}
    for name in sorted(marked or ()):
        try:  # a dotted name imports its parents: pytest's own (pytester_assertions)
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        if spec.submodule_search_locations:
            found.update(dict.fromkeys(sorted(origin.parent.rglob("*.py"))))
        elif origin.suffix == ".py":
            found[origin] = None
    return list(found)


def write_rewritten_tests(config: pytest.Config, suite: Path) -> int:
    """Write pytest's rewritten pycs of ``suite``'s test modules and conftests."""
    return write_rewritten(config, rewritten_modules(suite))


def write_rewritten(config: pytest.Config, sources: list[Path]) -> int:
    """Write pytest's own rewritten pycs (checked by source hash) of those of ``sources`` that
    have none or a stale one; how many were written. ``--assert=plain`` rewrites nothing, and
    then neither does this, nor a pytest without :data:`REWRITER_PARTS`."""
    if not all(hasattr(rewrite, part) for part in REWRITER_PARTS):
        return 0
    state = config.stash.get(rewrite.assertstate_key, None)
    if state is None or state.hook is None:
        return 0
    written = 0
    for source in sources:
        pyc = rewritten_pyc(source)
        if rewrite._read_pyc(source, pyc) is None and rewrite.try_makedirs(pyc.parent):
            try:
                source_hash, code = rewrite._rewrite_test(source, config)
            except SyntaxError:
                continue  # not a module Python imports (a template): pytest never rewrites it
            written += rewrite._write_pyc(state, code, source_hash, pyc)
    return written
