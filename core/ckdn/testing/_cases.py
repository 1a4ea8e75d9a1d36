"""Recorded real outputs: a tool's run directory, kept with the facts of how it ran."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ckdn.parsers.base import Parser, ParseResult
from ckdn.reconcile import STATUSES
from ckdn.testing._rules import describe, verdict
from ckdn.testing._run import LOG, run_parser

__all__ = ["CASE_FILE", "RecordedCase", "assert_replays", "load_case", "load_cases",
           "project_cases", "replay"]

# A recorded case is a directory holding what the tool left behind (``full.log``,
# its stdout and stderr interleaved, and the reports it wrote) and ``case.json``::
#
#     {"tool": "mytool", "version": "mytool 1.2", "argv": ["mytool", "--json", "..."],
#      "rc": 1, "cwd": "/where/it/ran",
#      "expect": {"status": "fail", "findings_total": 3, "options": {}}}
#
# ``rc`` is required; ``cwd`` (where locations are relative to), ``tool``,
# ``version`` and ``argv`` are provenance. ``expect`` is what ckdn must make of the
# case: the status (and, optionally, the number of findings) with the parser
# options it names. ckdn's own fixtures (``tests/fixtures/<family>/<case>/``) are
# in this format; in a checkout of ckdn they are the kit's corpus of other tools'
# real outputs (:func:`project_cases`).

CASE_FILE = "case.json"


@dataclass(frozen=True, repr=False)
class RecordedCase:
    """One recorded run: what the tool wrote, how it exited, and what ckdn must make of it.

    ``name`` is ``family/case`` (the directory and its parent); ``family`` groups
    the cases of one parser. ``files`` holds every file of the case but the log
    and ``case.json``.
    """

    name: str
    family: str
    rc: int
    log: bytes
    files: Mapping[str, bytes] = field(default_factory=dict)
    cwd: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    status: str | None = None
    findings_total: int | None = None
    tool: str = ""
    version: str = ""

    def __repr__(self) -> str:  # a failing example names the case, not its megabytes
        return f"RecordedCase({self.name!r})"

    def outputs(self) -> dict[str, bytes]:
        """Every file the tool left, the log included, by name."""
        return {LOG: self.log, **self.files}


def load_case(directory: str | os.PathLike[str]) -> RecordedCase:
    """The case recorded in ``directory``; ValueError naming the file when case.json is wrong."""
    path = Path(directory)
    meta_path = path / CASE_FILE
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{meta_path}: unreadable case: {exc}") from exc
    if not isinstance(meta, dict) or not isinstance(meta.get("rc"), int):
        raise ValueError(f"{meta_path}: a case needs an integer 'rc'")
    expect = meta.get("expect", {})
    if not isinstance(expect, dict) or not isinstance(expect.get("options", {}), dict):
        raise ValueError(f"{meta_path}: 'expect' must be a table with an 'options' table")
    status = expect.get("status")
    if status is not None and status not in STATUSES:
        raise ValueError(f"{meta_path}: expect.status must be one of {', '.join(STATUSES)}, "
                         f"not {status!r}")
    files = {entry.name: entry.read_bytes() for entry in sorted(path.iterdir())
             if entry.is_file() and entry.name not in (CASE_FILE, LOG)}
    log = path / LOG
    return RecordedCase(
        name=f"{path.parent.name}/{path.name}", family=path.parent.name, rc=meta["rc"],
        log=log.read_bytes() if log.is_file() else b"", files=files, cwd=meta.get("cwd"),
        options=expect.get("options", {}), status=status,
        findings_total=expect.get("findings_total"), tool=str(meta.get("tool", "")),
        version=str(meta.get("version", "")))


def load_cases(directory: str | os.PathLike[str]) -> list[RecordedCase]:
    """Every case directly under ``directory`` (each a directory with a case.json), by name."""
    return [load_case(meta.parent) for meta in sorted(Path(directory).glob(f"*/{CASE_FILE}"))]


def project_cases(exclude: Iterable[str] = ()) -> list[RecordedCase]:
    """ckdn's own recorded fixtures, in a checkout of ckdn; none in an installed copy.

    ``exclude`` names families to leave out (a parser's own, and those of the
    tools whose output it also reads).
    """
    fixtures = _checkout_fixtures()
    if fixtures is None:
        return []
    skip = set(exclude)
    return [load_case(meta.parent) for meta in sorted(fixtures.glob(f"*/*/{CASE_FILE}"))
            if meta.parent.parent.name not in skip]


def _checkout_fixtures() -> Path | None:
    root = Path(__file__).resolve().parents[3]  # core/ckdn/testing/_cases.py -> the checkout
    fixtures = root / "tests" / "fixtures"
    return fixtures if (fixtures / "recording.py").is_file() else None


def replay(parser: Parser, case: RecordedCase) -> ParseResult:
    """``parser``'s facts about ``case``, with the options and cwd it was recorded for."""
    return run_parser(parser, case.rc, log=case.log, files=case.files, options=case.options,
                      cwd=case.cwd)


def assert_replays(parser: Parser, case: RecordedCase) -> None:
    """``case`` reconciles to its recorded status (and finding count, when recorded)."""
    if case.status is None:
        raise AssertionError(f"{case.name}: {CASE_FILE} records no expected status "
                             '(add "expect": {"status": ...})')
    result = replay(parser, case)
    status = verdict(result, case.rc)
    if status != case.status:
        raise AssertionError(f"{case.name}: recorded as {case.status}, replays as {status} "
                             f"({describe(result)})")
    if case.findings_total is not None and result.total != case.findings_total:
        raise AssertionError(f"{case.name}: recorded with {case.findings_total} finding(s), "
                             f"replays with {result.total}")
