"""The door for results that cross ckdn's edge: another tool's file imported as a stored run
(``ckdn import``), and a stored run exported for a dashboard (``ckdn export``)."""

from __future__ import annotations

import os

from ckdn.app._annotating import build_report
from ckdn.app._running.steps import Outcome, run_check
from ckdn.config import IMPORT_FORMATS, Check, ImportSource
from ckdn.errors import UsageError, suggest
from ckdn.reports import render_report

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "export_run", "import_results"]

#: What ``ckdn export --format`` writes.
EXPORT_FORMATS = ("junit", "ctrf")


def import_results(config: Config, fmt: str, path: str, *, name: str,
                   top: int | None = None) -> Outcome:
    """``ckdn import FORMAT FILE --as NAME``: the file stored as a run of ``name``, sealed as
    every run is (:data:`~ckdn.app._running.steps.IMPORT_STEPS`); refused in one line when
    the file is not one ``fmt`` reads. ``path`` is taken from the process's cwd."""
    if fmt not in IMPORT_FORMATS:
        raise UsageError(f"unknown import format {fmt!r}{suggest(fmt, IMPORT_FORMATS)}; "
                         f"choose one of {', '.join(IMPORT_FORMATS)}")
    configured = config.checks.get(name) or config.aliases.get(name)
    if configured is not None and not (isinstance(configured, Check) and configured.imported):
        raise UsageError(f"--as {name!r} names a configured check that runs a command; an "
                         "import is stored under a name of its own")
    source = ImportSource(fmt, os.path.abspath(path))
    check = Check(name=name, command="", argv=(), parser=f"import:{fmt}", top=top,
                  imported=source)
    return run_check(config, check)


def export_run(config: Config, ref: str | None, fmt: str) -> str:
    """``ckdn export --format junit|ctrf RUN``: the stored run (native or imported, one check
    or an alias) as the document ``fmt`` names."""
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {fmt!r}{suggest(fmt, EXPORT_FORMATS)}; "
                         f"choose one of {', '.join(EXPORT_FORMATS)}")
    return render_report(build_report(config, ref), fmt)
