"""The door for results that cross ckdn's edge: another tool's file imported as a stored run
(``ckdn import``, from :mod:`ckdn.app.importing`), and a stored run exported for a dashboard
(``ckdn export``)."""

from __future__ import annotations

from ckdn.app._annotating import build_report
from ckdn.app.importing import IMPORT_FORMATS, import_results
from ckdn.errors import UsageError, suggest
from ckdn.reports import render_report

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "export_run", "import_results"]

#: What ``ckdn export --format`` writes.
EXPORT_FORMATS = ("junit", "ctrf")


def export_run(config: Config, ref: str | None, fmt: str) -> str:
    """``ckdn export --format junit|ctrf RUN``: the stored run (native or imported, one check
    or an alias) as the document ``fmt`` names."""
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {fmt!r}{suggest(fmt, EXPORT_FORMATS)}; "
                         f"choose one of {', '.join(EXPORT_FORMATS)}")
    return render_report(build_report(config, ref), fmt)
