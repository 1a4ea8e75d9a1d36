"""The ``pytest`` parser: its JUnit XML and the ckdn plugin's evidence, checked against each other.

Two records of one session that differ are never settled in favour of the greener one;
docs/parsers.md says which record wins when (evidence, JUnit, the progress line, the log).
"""

from __future__ import annotations

import os
import re
from collections import Counter

from ckdn.parsers._junit_xml import (
    DEFAULT_JUNIT,
    JUNIT_OPTIONS,
    MISSING,
    READ,
    UNREADABLE,
    read_report,
)
from ckdn.parsers._pytest_log import early_stop, usage_error, usage_note
from ckdn.parsers.base import BaseParser, ParseContext, ParseResult
from ckdn.parsers.gates import stopped_early
from ckdn.parsers.pytest_evidence import (
    EVIDENCE_FILE,
    PROGRESS_FILE,
    parse_evidence,
    read_progress,
)

__all__ = ["DEFAULT_JUNIT", "PytestParser", "parse_pytest_run"]


class PytestParser(BaseParser):
    """pytest via its JUnit XML (``--junitxml {run_dir}/junit.xml``), or the plugin's evidence."""

    name = "pytest"
    OPTIONS = JUNIT_OPTIONS

    def read(self, ctx: ParseContext) -> ParseResult:
        return parse_pytest_run(ctx)


#: pytest's ``ExitCode.USAGE_ERROR``.
_USAGE_STATUS = 4
#: The suffixes the JUnit reader adds to keep ids apart: not part of the node id.
_SUFFIX = re.compile(r"(?:@teardown)?(?:#\d+)?$")


def parse_pytest_run(ctx: ParseContext) -> ParseResult:
    """The facts of one pytest run, from whichever of its records are there."""
    evidence = parse_evidence(ctx)
    state, junit = read_report(ctx)
    if evidence is not None:
        return evidence if state == MISSING else _cross_checked(ctx, evidence, state, junit)
    result = junit
    if ctx.rc == _USAGE_STATUS:
        message = usage_error(ctx.log_path)
        if message is not None and state == MISSING:
            # pytest said why there is no report (its command line), not the report advice
            result.parser_ok = True
            result.notes[:] = [usage_note(message)]
        elif message is not None:
            result.notes.insert(0, usage_note(message))
    progress = _progress_note(ctx)
    if progress is not None:
        result.notes.append(progress)
    if state != UNREADABLE:
        reason = early_stop(ctx.log_path)
        if reason is not None:
            _stopped_early(result, reason)
    return result


def _stopped_early(result: ParseResult, reason: str) -> None:
    note = stopped_early(reason)
    result.notes.append(note)
    if result.total == 0:  # nothing else stops it from reading as a pass
        result.gate_failures.append(note)


def _progress_note(ctx: ParseContext) -> str | None:
    """Where the session was when it ended without evidence, from the plugin's progress line."""
    path = os.path.join(ctx.run_dir, PROGRESS_FILE)
    if not os.path.lexists(path):
        return None
    try:
        progress = read_progress(path)
    except (OSError, ValueError) as exc:
        return f"{PROGRESS_FILE} is not a readable progress line of the ckdn pytest plugin: {exc}"
    return f"{progress.describe()}; the plugin's {EVIDENCE_FILE} was never written"


# -- two records of one session ---------------------------------------------------------------


def _count(result: ParseResult, key: str) -> int | None:
    counts = result.summary.get("counts")
    value = counts.get(key) if isinstance(counts, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _failing_ids(result: ParseResult) -> Counter[str]:
    return Counter(_SUFFIX.sub("", finding.id, count=1) for finding in result.findings)


def _differences(evidence: ParseResult, junit: ParseResult) -> list[str]:
    """What the two records state differently about the session's failures."""
    found: list[str] = []
    for key in ("failures", "errors"):
        ours, theirs = _count(evidence, key), _count(junit, key)
        if ours != theirs:
            found.append(f"{key} {'?' if ours is None else ours} vs {theirs}")
    if evidence.total != junit.total:
        found.append(f"findings {evidence.total} vs {junit.total}")
    elif evidence.total == len(evidence.findings) and junit.total == len(junit.findings):
        only_ours = _failing_ids(evidence) - _failing_ids(junit)
        only_theirs = _failing_ids(junit) - _failing_ids(evidence)
        if only_ours or only_theirs:
            found.append("failing tests differ: " + "; ".join(
                f"only in {where}: {', '.join(sorted(ids)[:3])}"
                + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
                for where, ids in ((EVIDENCE_FILE, only_ours), ("the JUnit report", only_theirs))
                if ids))
    return found


def _cross_checked(ctx: ParseContext, evidence: ParseResult, state: str,
                   junit: ParseResult) -> ParseResult:
    """The evidence, unless the JUnit report of the same session says otherwise."""
    name = str(ctx.options.get("junit", DEFAULT_JUNIT))
    if state == UNREADABLE:
        evidence.parser_ok = False
        evidence.notes.extend(junit.notes)
        evidence.notes.append(f"{EVIDENCE_FILE} could not be checked against {name}: "
                              "the two records of one session must both be readable")
        return evidence
    if not evidence.parser_ok and state == READ:
        # the plugin's record is unusable; pytest's own report of the session is not
        junit.parser_ok = False
        junit.notes[:0] = evidence.notes
        return junit
    differences = _differences(evidence, junit) if evidence.parser_ok else []
    if not differences:
        return evidence
    redder = junit if junit.total > evidence.total else evidence
    other = evidence if redder is junit else junit
    redder.parser_ok = False
    redder.notes.append(
        f"{EVIDENCE_FILE} and {name} disagree about this session ({'; '.join(differences)}): "
        f"neither is trusted; the findings shown are those of "
        f"{name if redder is junit else EVIDENCE_FILE}, which reports more")
    redder.notes.extend(note for note in other.notes if note not in redder.notes)
    return redder
