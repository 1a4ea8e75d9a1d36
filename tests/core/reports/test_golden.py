"""Golden files: every view of a real ruff, mypy and pytest run, byte for byte.

The runs are real (conftest.py). A view that changes on purpose is re-recorded
with ``CKDN_UPDATE_GOLDEN=1 pytest tests/core/reports/test_golden.py`` and the
difference reviewed in the commit.
"""

from __future__ import annotations

import os

import pytest

from tests.core.reports.conftest import GOLDEN, RUNS, RealRun

FORMATS = {"text": "txt", "github": "txt", "summary": "md", "sarif": "sarif",
           "codequality": "json"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_view_of_a_real_run_matches_its_golden_file(
        real_runs: dict[str, RealRun], name: str, fmt: str) -> None:
    run = real_runs[name]
    got = run.normalised(run.annotate(fmt))
    path = GOLDEN / f"{name}.{fmt}.{FORMATS[fmt]}"
    if os.environ.get("CKDN_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert got == path.read_text(encoding="utf-8")
