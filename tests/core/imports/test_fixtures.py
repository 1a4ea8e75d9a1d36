"""Every import fixture, a real file from a real producer, reads with reconciled counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ckdn.imports import FORMATS, Imported, read_import
from ckdn.parsers.base import ParseContext

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
#: The project every producer ran in, which the files' paths are relative to (or inside).
PROJECTS = {"py": FIXTURES / "projects" / "py", "js": FIXTURES / "projects" / "js"}

#: fixture -> (variant, producer, findings, cases): what reading it must give
EXPECTED: dict[str, tuple[str, str, int, int]] = {
    "junit/pytest-xunit1.xml": ("pytest-xunit1", "pytest", 2, 5),
    "junit/pytest-xunit2.xml": ("pytest-xunit2", "pytest", 2, 5),
    "junit/ruff.xml": ("junit", "ruff", 3, 3),
    "junit/mypy.xml": ("junit", "mypy", 1, 1),
    "junit/bandit.xml": ("junit", "bandit", 4, 4),
    "junit/eslint.xml": ("eslint-junit", "eslint", 4, 4),
    "junit/jest-junit.xml": ("jest-junit", "jest-junit", 1, 3),
    "junit/mocha-xunit.xml": ("mocha-xunit", "mocha", 1, 3),
    "junit/node-test.xml": ("node-test", "node --test", 1, 4),
    "junit/surefire.xml": ("surefire", "maven-surefire", 1, 4),
    "junit/go-junit-report.xml": ("go-junit-report", "go-junit-report", 1, 2),
    "ctrf/jest-ctrf.json": ("ctrf-0.0.0", "jest", 1, 3),
    "ctrf/mocha-ctrf.json": ("ctrf-0.0.0", "mocha", 1, 3),
    "ctrf/pytest-json-ctrf.json": ("ctrf-1.0.0", "pytest", 2, 5),
    "tap/node-test.tap": ("tap13", "unknown", 1, 2),
    "tap/tape.tap": ("tap13", "unknown", 1, 2),
    "tap/mocha.tap": ("tap13", "unknown", 1, 3),
    "tap/node-tap.tap": ("tap14", "unknown", 1, 2),
    "tap/tap.py.tap": ("tap12", "unknown", 1, 3),
    "checkstyle/eslint.xml": ("checkstyle-4.3", "unknown", 4, 1),
    "checkstyle/jshint.xml": ("checkstyle-4.3", "unknown", 1, 1),
    "checkstyle/csslint.xml": ("checkstyle-unversioned", "unknown", 5, 1),
    "rdjson/ruff.json": ("rdjson", "ruff", 3, 3),
    "codequality/ruff.json": ("codequality", "unknown", 3, 3),
    "codequality/eslint.json": ("codequality", "unknown", 4, 4),
    "cobertura/coveragepy.xml": ("coverage-04", "unknown", 0, 5),
    "cobertura/c8.xml": ("coverage-04", "unknown", 0, 1),
    "lcov/coveragepy.info": ("lcov", "unknown", 0, 5),
    "lcov/c8.info": ("lcov", "unknown", 0, 1),
    "sarif/ruff.sarif": ("sarif-2.1.0", "ruff", 3, 1),
    "sarif/bandit.sarif": ("sarif-2.1.0", "Bandit", 0, 1),
    "sarif/eslint.sarif": ("sarif-2.1.0", "ESLint", 2, 1),
}


def fixture_files() -> list[str]:
    return sorted(str(path.relative_to(FIXTURES)) for path in FIXTURES.glob("*/*")
                  if path.is_file() and path.name != "sources.json"
                  and path.parent.name != "projects" and path.suffix != ".py")


def read(name: str, tmp_path: Path) -> Imported:
    fmt = name.split("/", 1)[0]
    project = PROJECTS["js" if name.split("/")[1].startswith(
        ("eslint", "jest", "mocha", "node", "tape", "jshint", "csslint", "c8")) else "py"]
    copy = tmp_path / Path(name).name
    copy.write_bytes((FIXTURES / name).read_bytes())
    ctx = ParseContext(fmt, tmp_path, project, 0, {}, 20)
    return read_import(fmt, ctx, str(copy))


def test_every_fixture_is_named_here_and_every_format_has_real_files() -> None:
    assert set(fixture_files()) == set(EXPECTED)
    assert {name.split("/")[0] for name in EXPECTED} == set(FORMATS) - {"rdjsonl"}


def test_every_fixture_records_its_producer_version_and_command() -> None:
    for fmt in {name.split("/")[0] for name in EXPECTED}:
        sources = json.loads((FIXTURES / fmt / "sources.json").read_text())
        named = {name.split("/")[1] for name in EXPECTED if name.startswith(f"{fmt}/")}
        assert set(sources) == named, fmt
        for entry in sources.values():
            assert all(entry[key] for key in ("producer", "version", "command"))


def test_junit_has_five_producers_and_every_other_format_three_where_they_exist() -> None:
    producers: dict[str, set[str]] = {}
    for fmt in {name.split("/")[0] for name in EXPECTED}:
        sources = json.loads((FIXTURES / fmt / "sources.json").read_text())
        producers[fmt] = {entry["producer"].split(" (")[0] for entry in sources.values()}
    assert len(producers["junit"]) >= 5
    for fmt in ("ctrf", "tap", "checkstyle", "sarif"):
        assert len(producers[fmt]) >= 3, fmt
    # rdjson (ruff only: reviewdog is a Go tool), codequality, cobertura and lcov (two each)
    # have fewer producers that run here; docs/import.md names them
    assert all(len(found) >= 1 for found in producers.values())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_fixture_reads_with_its_declared_totals_agreeing(name: str, tmp_path: Path) -> None:
    imported = read(name, tmp_path)
    variant, producer, findings, cases = EXPECTED[name]
    assert imported.mismatch is None
    assert imported.result.parser_ok
    assert (imported.variant, imported.producer) == (variant, producer)
    assert imported.result.total == findings
    assert imported.cases == cases
    summary = imported.tally.summary()
    assert summary["read"] == summary["attached"] + sum(summary["unattached_by_reason"].values())
    assert summary["read"] >= 1
