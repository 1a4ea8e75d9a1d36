"""The door for ``ckdn import`` alone: another tool's file stored as a run. Apart from
:mod:`ckdn.app.exchange` because an import needs no report format (export's JUnit writer
alone loads ``xml.sax.saxutils`` and through it ``urllib`` and ``http``)."""

from __future__ import annotations

import os

from ckdn.app._running.steps import Outcome, run_check
from ckdn.config import IMPORT_FORMATS, Check, ImportSource
from ckdn.errors import UsageError, suggest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config

__all__ = ["IMPORT_FORMATS", "import_results"]


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
