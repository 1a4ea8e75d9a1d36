"""A stored run as CTRF JSON (Common Test Report Format), for dashboards: every finding a
failed test whose ``extra.ckdn`` carries its id, kind and location exactly (``ckdn import
ctrf`` reads them back), and one test for the check itself."""

from __future__ import annotations

import json

from ckdn.reports._junit import exported_checks
from ckdn.reports._model import where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.reports._model import Report
    from ckdn.reports._reporter import Rendering

__all__ = ["ctrf", "render"]


def render(report: Report, rendering: Rendering) -> str:
    """The CTRF format's reporter."""
    return ctrf(report)


def ctrf(report: Report) -> str:
    tests: list[dict[str, Any]] = []
    for digest, rows in exported_checks(report):
        for row in rows:
            path, line, _ = where(row.location)
            test: dict[str, Any] = {"name": row.id, "status": "failed", "duration": 0,
                                    "message": row.message, "suite": str(digest["check"]),
                                    "extra": {"ckdn": {"id": row.id, "kind": row.kind,
                                                       "location": row.location}}}
            if path:
                test["filePath"] = path
            if line:
                test["line"] = line
            tests.append(test)
        status = str(digest.get("status", "?"))
        check: dict[str, Any] = {
            "name": str(digest["check"]), "duration": 0, "suite": str(digest["check"]),
            "status": {"pass": "passed", "fail": "failed"}.get(status, "other"),
            "extra": {"ckdn": {"check": True, "status": status}}}
        if status != "pass":
            check["message"] = str(digest.get("status_reason", status))
        tests.append(check)
    summary = {"tests": len(tests), "passed": 0, "failed": 0, "skipped": 0, "pending": 0,
               "other": 0, "start": 0, "stop": 0}
    for test in tests:
        summary[test["status"]] += 1
    document = {"reportFormat": "CTRF", "specVersion": "0.0.0",
                "results": {"tool": {"name": "ckdn"}, "summary": summary, "tests": tests}}
    return json.dumps(document, ensure_ascii=True, indent=1, sort_keys=True) + "\n"
