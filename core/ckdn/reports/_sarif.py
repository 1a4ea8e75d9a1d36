"""SARIF 2.1.0 for code scanning: one run per check, within GitHub's ingestion limits."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from ckdn.reports._model import GREEN, headline, imported_label, level_of, rule_id, where

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.identity import FindingRow
    from ckdn.reports._model import Checked, Report
    from ckdn.reports._reporter import Rendering

__all__ = ["SARIF_LIMITS", "render", "sarif"]

# What GitHub's code scanning needs of a log, and how each is met here:
#
# * ``tool.driver`` names the tool (the parser that read it) and lists the rules
#   the results use; each result names its rule by ``ruleId`` and ``ruleIndex``;
# * every result has a place: ``artifactLocation.uri`` relative to the repository
#   (``uriBaseId`` ``%SRCROOT%``, percent-encoded) and a region when the finding
#   gives a line; a finding without a location is put on the project's ``ckdn.toml``;
# * ``partialFingerprints`` carries the finding's identity (:mod:`ckdn.identity`),
#   so an alert follows its code across runs as the baseline does;
# * ``baselineState`` (``new`` / ``unchanged``) when the baseline gate classified the run;
# * ``automationDetails.id`` is ``ckdn/CHECK/``, one category per check, so a green
#   run of a check closes that check's alerts and no other's;
# * at most :data:`SARIF_LIMITS` results per run (GitHub shows 5,000), runs per log,
#   and bytes in all (under the 10 MB GitHub accepts gzipped, even uncompressed):
#   what is left out is counted in the run's ``toolExecutionNotifications``.
#
# Levels are the tool's own where the parser knows them (:func:`level_of`).

#: Results a run, runs a log, bytes a log (uncompressed), and bytes kept aside for each
#: run's envelope (tool, notes, properties: each of their strings is cut to fit in it).
SARIF_LIMITS = {"results": 5000, "runs": 20, "bytes": 10_000_000, "envelope": 128 << 10}
SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: Characters of a message kept (a findings file keeps 1,000 already).
MESSAGE_CHARS = 1000
#: Characters of a note, a name or a path in a run's envelope, and notes a run carries.
NAME_CHARS = 300
NOTES = 10
#: Where each parser's tool documents what it reports, for ``informationUri``.
TOOL_URIS = {
    "ruff": "https://docs.astral.sh/ruff/rules/",
    "mypy": "https://mypy.readthedocs.io/en/stable/error_code_list.html",
    "pytest": "https://docs.pytest.org/",
    "pyright": "https://microsoft.github.io/pyright/#/configuration?id=type-check-diagnostics-settings",
    "pylint": "https://pylint.readthedocs.io/en/stable/user_guide/messages/messages_overview.html",
    "bandit": "https://bandit.readthedocs.io/en/latest/plugins/index.html",
    "pip_audit": "https://pypi.org/project/pip-audit/",
    "ty": "https://docs.astral.sh/ty/reference/rules/",
}
_KEY = "ckdn/v1"


def render(report: Report, rendering: Rendering) -> str:
    """The SARIF format's reporter."""
    return sarif(report)


def sarif(report: Report) -> str:
    """The SARIF log of ``report`` (its JSON text, one run per check that ran)."""

    dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), sort_keys=True).encode
    checks = list(report.checks)
    left_out = [c.check for c in checks[SARIF_LIMITS["runs"]:]]
    checks = checks[:SARIF_LIMITS["runs"]]
    room = SARIF_LIMITS["bytes"] - SARIF_LIMITS["envelope"] * (len(checks) + 1)
    per_run = max(0, room // max(1, len(checks)))
    categories: dict[str, int] = {}
    runs = []
    for checked in checks:
        seen = categories[checked.check] = categories.get(checked.check, 0) + 1
        category = f"ckdn/{checked.check[:NAME_CHARS]}/" + (f"{seen}/" if seen > 1 else "")
        runs.append(_run(checked, report, dumps, per_run, category))
    head = {"$schema": SCHEMA_URI, "version": "2.1.0"}
    props = {"ckdn": {"run": report.name, "status": report.status,
                      "runs_left_out": left_out[:100], "runs_left_out_count": len(left_out)}} \
        if left_out else {"ckdn": {"run": report.name, "status": report.status}}
    return (dumps(head)[:-1] + ',"properties":' + dumps(props) + ',"runs":['
            + ",".join(runs) + "]}\n")


def _run(checked: Checked, report: Report, dumps: Any, room: int, category: str) -> str:
    """One run: its results encoded one by one while they fit, new ones first."""
    limit = SARIF_LIMITS["results"]
    new: list[FindingRow] = []
    known: list[FindingRow] = []
    seen = 0
    if checked.status != GREEN:
        for row in checked.each():
            seen += 1
            bucket = known if row.baselined else new
            if len(bucket) < limit:
                bucket.append(row)
    chosen = (new + known)[:limit]
    rules: dict[str, int] = {}
    rule_docs: list[dict[str, Any]] = []
    results: list[str] = []
    used = 0
    for row in chosen:
        known_rules = len(rule_docs)
        result = _result(row, checked, report, rules, rule_docs)
        encoded = dumps(result)
        size = len(encoded) + 1 + sum(len(dumps(doc)) + 1 for doc in rule_docs[known_rules:])
        if used + size > room:  # neither the result nor the rule it brought fits
            for doc in rule_docs[known_rules:]:
                del rules[doc["id"]]
            del rule_docs[known_rules:]
            break
        results.append(encoded)
        used += size
    total = max(seen, checked.total)
    label = imported_label(checked.digest)
    notes = [label[:NAME_CHARS]] if label else []
    notes += [str(note)[:NAME_CHARS] for note in (checked.digest.get("notes") or [])][:NOTES]
    notes += [problem[:NAME_CHARS] for problem in checked.problems[:2]]
    if total > len(results):
        notes.append(f"{total - len(results):,} of {total:,} findings not in this log "
                     f"(at most {limit:,} results a run, {SARIF_LIMITS['bytes']:,} bytes a "
                     f"log{'' if checked.complete else '; the digest kept only its top'}); "
                     f"every finding is in {checked.run_dir}")
    driver: dict[str, Any] = {"name": checked.tool[:NAME_CHARS] or "ckdn", "rules": rule_docs}
    uri = TOOL_URIS.get(checked.tool)
    if uri:
        driver["informationUri"] = uri
    invocation: dict[str, Any] = {
        "executionSuccessful": checked.status in (GREEN, "fail"),
        "exitCode": int(checked.digest.get("rc") or 0),
        "toolExecutionNotifications": [{"level": "note", "message": {"text": note}}
                                       for note in notes],
    }
    if not notes:
        del invocation["toolExecutionNotifications"]
    if checked.digest.get("rc") is None:  # an import: no exit code was observed
        del invocation["exitCode"]
    envelope = {
        "automationDetails": {"id": category},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "properties": {"ckdn": {"check": checked.check, "status": checked.status,
                                "run_dir": checked.run_dir[:NAME_CHARS],
                                "findings_total": total,
                                **({"imported": label[:NAME_CHARS]} if label else {})}},
        "tool": {"driver": driver},
    }
    text: str = dumps(envelope)
    return text[:-1] + ',"results":[' + ",".join(results) + "]}"


def _result(row: FindingRow, checked: Checked, report: Report, rules: dict[str, int],
            rule_docs: list[dict[str, Any]]) -> dict[str, Any]:
    path, line, column = where(row.location)
    level = level_of(row.kind)
    rule = rule_id(row, path)
    index = rules.get(rule)
    if index is None:
        index = rules[rule] = len(rule_docs)
        doc: dict[str, Any] = {
            "id": rule,
            "shortDescription": {"text": f"{checked.tool[:NAME_CHARS]} {rule}"},
            "help": {"text": f"{checked.tool[:NAME_CHARS]} reports {rule} "
                             f"({row.kind[:NAME_CHARS]}); for example: "
                             f"{row.message[:NAME_CHARS] or row.kind[:NAME_CHARS]}"},
            "defaultConfiguration": {"level": level},
        }
        uri = _help_uris(checked).get(rule) or TOOL_URIS.get(checked.tool)
        if uri:
            doc["helpUri"] = uri
        rule_docs.append(doc)
    inside = _inside(path, report.root) if path else None
    message = headline(row)
    if path and inside is None:  # outside the repository: GitHub could not show it there
        message = f"{message} (at {row.location})"
    physical: dict[str, Any] = {"artifactLocation": {
        "uri": _uri(inside or report.anchor), "uriBaseId": "%SRCROOT%"}}
    if inside is not None and line > 0:
        region = {"startLine": line}
        if column > 0:
            region["startColumn"] = column
        physical["region"] = region
    result: dict[str, Any] = {
        "ruleId": rule,
        "ruleIndex": index,
        "level": level,
        "message": {"text": message[:MESSAGE_CHARS]},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {_KEY: row.fingerprint},
    }
    if checked.classified:
        result["baselineState"] = "unchanged" if row.baselined else "new"
    return result


def _help_uris(checked: Checked) -> dict[str, str]:
    """Each rule's page where the digest's findings name one (ruff's detail does), once."""
    cached = checked.help_uris
    if cached is not None:
        return cached
    found: dict[str, str] = {}
    for finding in checked.digest.get("findings") or []:
        if not isinstance(finding, dict):
            continue
        path, _, _ = where(finding.get("location") if isinstance(finding.get("location"), str)
                           else None)
        row = _Shown(finding)
        for line in finding.get("detail") or []:
            if isinstance(line, str) and line.startswith("https://") and " " not in line:
                found.setdefault(rule_id(row, path), line[:500])
                break
    checked.help_uris = found
    return found


class _Shown:
    """A digest finding as :func:`rule_id` reads one."""

    __slots__ = ("id", "kind", "location", "message")

    def __init__(self, finding: dict[str, Any]) -> None:
        self.id = str(finding.get("id", "?"))
        self.kind = str(finding.get("kind", "?"))
        self.location = finding.get("location") if isinstance(finding.get("location"), str) \
            else None
        self.message = str(finding.get("message", ""))


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to the repository root (the check's cwd); None when outside it."""

    if os.path.isabs(path):
        if not root:
            return None
        path = os.path.relpath(path, root)
    path = os.path.normpath(path).replace(os.sep, "/")
    if path in (".", "..") or path.startswith(("../", "/")):
        return None
    return path


def _uri(path: str) -> str:
    """A relative URI reference for ``path``: percent-encoded, so ``:`` or a space in a
    file name never reads as a scheme or ends the URI."""

    return quote(path, safe="/")
