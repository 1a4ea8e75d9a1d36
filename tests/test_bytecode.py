"""The suite's rewritten test modules are written once, by pytest's rules, and then used."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from tests.bytecode import (
    REWRITER_PARTS,
    plugin_modules,
    rewritten_modules,
    rewritten_pyc,
    write_rewritten_tests,
)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A suite with a test module, a conftest, a helper and a fixture project's test."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "test_sums.py").write_text(
        "def test_sum():\n    total = 1 + 1\n    assert total == 3\n")
    (tmp_path / "conftest.py").write_text("VALUE = 1\n")
    (tmp_path / "project.py").write_text("VALUE = 2\n")
    (tmp_path / "fixtures" / "inner").mkdir(parents=True)
    (tmp_path / "fixtures" / "inner" / "test_inner.py").write_text("def test(): pass\n")
    return tmp_path


def rewriting(config: pytest.Config) -> None:
    """Skip where this session rewrites no asserts (``--assert=plain``)."""
    state = config.stash.get(rewrite.assertstate_key, None)
    if state is None or state.hook is None:
        pytest.skip("this session rewrites no asserts (--assert=plain)")


def test_only_test_modules_and_conftests_are_rewritten(suite: Path) -> None:
    assert rewritten_modules(suite) == [suite / "conftest.py", suite / "core" / "test_sums.py"]


def test_the_installed_plugins_pytest_rewrites_are_every_module_of_their_packages(
        pytestconfig: pytest.Config) -> None:
    """pytest rewrites every module of a plugin's distribution (hypothesis's 100 among them,
    and this checkout's pytest_ckdn): each Python it starts did so again without its pyc."""
    rewriting(pytestconfig)
    modules = plugin_modules(pytestconfig)
    by_package = {path.parent.name for path in modules if path.name == "__init__.py"}
    assert {"hypothesis", "xdist", "pytest_ckdn"} <= by_package
    strategies = [path for path in modules if path.parent.name == "_internal"
                  and path.parent.parent.name == "strategies"]
    assert len(strategies) > 10, "a package's submodules are rewritten too"


def test_the_written_pyc_is_pytests_rewritten_module(
        suite: Path, pytestconfig: pytest.Config) -> None:
    rewriting(pytestconfig)
    assert write_rewritten_tests(pytestconfig, suite) == 2
    source = suite / "core" / "test_sums.py"
    code = rewrite._read_pyc(source, rewritten_pyc(source))
    assert code is not None, "pytest refuses the pyc it would read at import"
    namespace: dict[str, object] = {"__name__": "test_sums"}
    exec(code, namespace)
    test = namespace["test_sum"]
    assert callable(test)
    with pytest.raises(AssertionError) as failure:
        test()
    assert "assert 2 == 3" in str(failure.value), "the asserts are not rewritten"
    assert not rewritten_pyc(suite / "fixtures" / "inner" / "test_inner.py").exists()
    assert not rewritten_pyc(suite / "project.py").exists()


def test_a_fresh_pyc_is_not_written_again_and_a_stale_one_is(
        suite: Path, pytestconfig: pytest.Config) -> None:
    rewriting(pytestconfig)
    write_rewritten_tests(pytestconfig, suite)
    assert write_rewritten_tests(pytestconfig, suite) == 0
    (suite / "conftest.py").write_text("VALUE = 3\n")
    assert write_rewritten_tests(pytestconfig, suite) == 1


@pytest.mark.parametrize("part", REWRITER_PARTS)
def test_a_pytest_without_a_rewriter_part_writes_nothing(
        suite: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch,
        part: str) -> None:
    """A pytest whose private rewriter changed leaves the rewriting to its workers."""
    rewriting(pytestconfig)
    monkeypatch.delattr(rewrite, part)
    assert write_rewritten_tests(pytestconfig, suite) == 0
    assert not list(suite.rglob("*.pyc"))


@pytest.mark.skipif(not sys.dont_write_bytecode, reason="pytest writes its own pycs here")
def test_every_suite_module_has_its_rewritten_pyc(pytestconfig: pytest.Config) -> None:
    """Where no bytecode is written, the controller wrote them all (the plugins' too) before
    the workers."""
    rewriting(pytestconfig)
    suite = Path(__file__).parent
    stale = [str(source) for source in [*rewritten_modules(suite), *plugin_modules(pytestconfig)]
             if rewrite._read_pyc(source, rewritten_pyc(source)) is None]
    assert stale == []
