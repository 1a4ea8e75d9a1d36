"""docs/reports.md: its examples are the golden files of a real mypy run, unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "core" / "reports" / "golden"
PAGE = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
EXAMPLES = dict(re.findall(r"<!-- example: (.+?) -->\n```\w*\n(.*?)```", PAGE, re.DOTALL))


@pytest.mark.parametrize(("name", "golden"), [("mypy.text", "mypy.text.txt"),
                                              ("mypy.github", "mypy.github.txt"),
                                              ("mypy.summary", "mypy.summary.md")])
def test_a_text_example_is_the_golden_file(name: str, golden: str) -> None:
    assert EXAMPLES[name] == (GOLDEN / golden).read_text(encoding="utf-8")


def test_the_sarif_examples_are_the_golden_runs_first_result_and_rule() -> None:
    run = json.loads((GOLDEN / "mypy.sarif.sarif").read_text(encoding="utf-8"))["runs"][0]
    assert json.loads(EXAMPLES["mypy.sarif result"]) == run["results"][0]
    assert json.loads(EXAMPLES["mypy.sarif rule"]) == run["tool"]["driver"]["rules"][0]


def test_the_code_quality_example_is_the_golden_reports_first_issue() -> None:
    issues = json.loads((GOLDEN / "mypy.codequality.json").read_text(encoding="utf-8"))
    assert json.loads(EXAMPLES["mypy.codequality"]) == issues[0]
