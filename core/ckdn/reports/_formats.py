"""The one table of report formats: a format's name, its reporter; a new format is one row."""

from __future__ import annotations

from ckdn.reports import _codequality, _ctrf, _github, _junit, _sarif, _summary, _text
from ckdn.reports._reporter import Rendering, Reporter

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.reports._model import Report

__all__ = ["REPORTERS", "REPORT_FORMATS", "render_report"]

#: name -> reporter, in the order ``ckdn annotate --format`` lists them.
REPORTERS: dict[str, Reporter] = {
    "text": _text.render,
    "github": _github.render,
    "summary": _summary.render,
    "sarif": _sarif.render,
    "codequality": _codequality.render,
    "junit": _junit.render,
    "ctrf": _ctrf.render,
}
#: The formats' names, as the table had them when ckdn started.
REPORT_FORMATS: tuple[str, ...] = tuple(REPORTERS)


def render_report(report: Report, fmt: str, rendering: Rendering | None = None) -> str:
    """``report`` in the format ``fmt`` (a name of :data:`REPORTERS`; KeyError otherwise)."""
    return REPORTERS[fmt](report, Rendering() if rendering is None else rendering)
