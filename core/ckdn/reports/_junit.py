"""A stored run as JUnit XML, for dashboards that ingest test reports: every finding a
failing testcase that carries its id, kind, location and message exactly (``ckdn import
junit`` reads them back), and one testcase for the check itself."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from ckdn.reports._model import where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from ckdn.reports._model import Report
    from ckdn.reports._reporter import Rendering

__all__ = ["CHECK_CASE", "EXPORT_ROOT", "exported_checks", "junit", "render"]

#: The root's ``name``, which ``ckdn import junit`` reads as ckdn's own export.
EXPORT_ROOT = "ckdn"
#: The ``classname`` of the testcase that stands for the check itself.
CHECK_CASE = "ckdn.check"
#: What XML 1.0 cannot hold at all, shown escaped instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _inert(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def _attr(text: object) -> str:
    return quoteattr(_inert(text), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def exported_checks(report: Report) -> Iterable[tuple[Mapping[str, Any], Iterable[Any]]]:
    """(digest-like document, its finding rows) of every check the report holds; a member
    that passed (no digest read) is a document of its name and status alone."""
    read = {checked.check: checked for checked in report.checks}
    if report.is_aggregate:
        for member in report.members:
            name = str(member.get("check"))
            checked = read.get(name)
            if checked is not None:
                yield checked.digest, checked.each()
            else:
                yield {"check": name, "status": member.get("status", "?")}, ()
        return
    for checked in report.checks:
        yield checked.digest, checked.each()


def render(report: Report, rendering: Rendering) -> str:
    """The JUnit format's reporter."""
    return junit(report)


def junit(report: Report) -> str:
    suites: list[str] = []
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for digest, rows in exported_checks(report):
        cases: list[str] = []
        failures = errors = 0
        for row in rows:
            failures += 1
            _path, line, _ = where(row.location)
            place = (f" file={_attr(row.location)}" if row.location else "") + (
                f" line=\"{line}\"" if line else "")
            cases.append(f"    <testcase classname={_attr(row.kind)} name={_attr(row.id)}"
                         f"{place} time=\"0\">\n      <failure type={_attr(row.kind)} "
                         f"message={_attr(row.message)}>{escape(_inert(row.message))}"
                         "</failure>\n    </testcase>\n")
        status = str(digest.get("status", "?"))
        reason = str(digest.get("status_reason", status))
        check = f"    <testcase classname=\"{CHECK_CASE}\" name={_attr(digest['check'])} time=\"0\""
        if status == "pass":
            cases.append(check + "/>\n")
        elif status == "fail":
            failures += 1
            cases.append(f"{check}>\n      <failure type=\"fail\" message={_attr(reason)}/>\n"
                         "    </testcase>\n")
        else:
            errors += 1
            cases.append(f"{check}>\n      <error type={_attr(status)} message={_attr(reason)}"
                         "/>\n    </testcase>\n")
        totals["tests"] += len(cases)
        totals["failures"] += failures
        totals["errors"] += errors
        suites.append(f"  <testsuite name={_attr(digest['check'])} tests=\"{len(cases)}\" "
                      f"failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"0\">\n"
                      + "".join(cases) + "  </testsuite>\n")
    return (f"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites name=\"{EXPORT_ROOT}\" "
            f"tests=\"{totals['tests']}\" failures=\"{totals['failures']}\" "
            f"errors=\"{totals['errors']}\" time=\"0\">\n" + "".join(suites) + "</testsuites>\n")
