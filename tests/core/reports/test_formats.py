"""The report formats are one family: one protocol, one table; a new format is one row."""

from __future__ import annotations

import pytest

from ckdn.app._annotating import annotate
from ckdn.app.queries import ANNOTATE_FORMATS, REPORT_FORMATS
from ckdn.config import load_config
from ckdn.errors import UsageError
from ckdn.reports import REPORTERS, Rendering, Report
from tests.core.reports.conftest import RealRun


def test_the_door_lists_the_tables_formats_in_their_order() -> None:
    assert REPORT_FORMATS == tuple(REPORTERS) == ANNOTATE_FORMATS
    assert REPORT_FORMATS == ("text", "github", "summary", "sarif", "codequality", "junit",
                              "ctrf")


def test_a_format_registered_in_the_table_is_one_annotate_knows(
        real_runs: dict[str, RealRun], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Rendering] = []

    def checks_only(report: Report, rendering: Rendering) -> str:
        seen.append(rendering)
        return " ".join(checked.check for checked in report.checks)

    monkeypatch.setitem(REPORTERS, "checks-only", checks_only)
    config = load_config(real_runs["ruff"].project.root)
    assert annotate(config, None, "checks-only", color=True, env={}) == "ruff"
    assert [rendering.color for rendering in seen] == [True]


def test_a_format_not_in_the_table_is_refused_by_name(real_runs: dict[str, RealRun]) -> None:
    config = load_config(real_runs["ruff"].project.root)
    with pytest.raises(UsageError, match="unknown format 'html'; choose one of text, github"):
        annotate(config, None, "html", env={})
