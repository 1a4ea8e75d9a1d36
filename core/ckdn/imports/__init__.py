"""Importing another tool's results file into ckdn's facts: one module per format, a path
apart from the parsers (seed 004), each file read whole through the hardened readers or
refused, the producer sniffed and named, the residue counted."""

from __future__ import annotations

from ckdn.errors import UsageError, suggest
from ckdn.imports._model import Imported, ImportRefused, Tally
from ckdn.imports.checkstyle import read_checkstyle
from ckdn.imports.coverage import read_cobertura, read_lcov
from ckdn.imports.ctrf import read_ctrf
from ckdn.imports.diagnostics import read_codequality, read_rdjson, read_rdjsonl
from ckdn.imports.junit import read_junit
from ckdn.imports.sarif import read_sarif
from ckdn.imports.tap import read_tap

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

    from ckdn.parsers.base import ParseContext

__all__ = ["FORMATS", "ImportRefused", "Imported", "Tally", "read_import"]

#: format name -> its reader; a new format is one module and one row.
FORMATS: dict[str, Callable[[ParseContext, str], Imported]] = {
    "checkstyle": read_checkstyle,
    "cobertura": read_cobertura,
    "codequality": read_codequality,
    "ctrf": read_ctrf,
    "junit": read_junit,
    "lcov": read_lcov,
    "rdjson": read_rdjson,
    "rdjsonl": read_rdjsonl,
    "sarif": read_sarif,
    "tap": read_tap,
}


def read_import(fmt: str, ctx: ParseContext, path: str) -> Imported:
    """The file at ``path`` read as ``fmt``; ImportRefused (one line) when it is not one."""
    reader = FORMATS.get(fmt)
    if reader is None:
        raise UsageError(f"unknown import format {fmt!r}{suggest(fmt, FORMATS)}; known: "
                         f"{', '.join(FORMATS)}")
    return reader(ctx, path)
