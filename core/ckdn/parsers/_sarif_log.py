"""What a SARIF producer's log says beside its SARIF file, per producer."""

from __future__ import annotations

import re
from typing import Final

from ckdn.parsers._logtext import LongLines, crashed, plain_lines, quote
from ckdn.parsers.base import ParseContext

__all__ = ["log_disagreements"]

# A SARIF file can be clean while the run was not: a rerun wrote the log, the
# producer failed after writing the file, or the file came from elsewhere. So the
# ``sarif`` parser reads the log too and holds it against the file. What "the
# log says failures" means depends on the producer, named by each run's
# ``tool.driver.name``:
#
# * every producer: a Python traceback or fatal-error report at column 0 (the
#   producer, or the Python program around it, crashed);
# * semgrep: its stated count ("Ran 3 rules on 1 file: 5 findings.", "• Findings:
#   5 (5 blocking)") must equal the file's results, and an ``[ERROR]`` or
#   ``semgrep error:`` line is a failure;
# * ruff: an ``error: ...`` line or ``ruff failed``; "Found N errors." must equal
#   the file's results;
# * ty: ``ty failed``; "Found N diagnostics" must equal the file's results.
#
# When the SARIF file *is* the log (``report = "full.log"``, ty printing SARIF to
# stdout), there is nothing beside it to compare.

_SEMGREP_RAN: Final = re.compile(r"^Ran \d+ rules? on \d+ files?: (\d+) findings?\.")
_SEMGREP_FINDINGS: Final = re.compile(r"^\s*\u2022 Findings: (\d+)\b")
_SEMGREP_ERRORS: Final = ("[ERROR] ", "semgrep error: ")
_RUFF_FOUND: Final = re.compile(r"^Found (\d+) errors?(?: \((\d+) fixed, (\d+) remaining\))?\.$")
_TY_FOUND: Final = re.compile(r"^Found (\d+) diagnostics?$")


def _family(name: str) -> str:
    lowered = name.lower()
    for family in ("semgrep", "ruff", "ty"):
        if lowered == family or lowered.startswith(family + " "):
            return family
    return ""


def _stated(family: str, line: str) -> int | None:
    """The result count ``line`` states for a producer of ``family``, if it states one."""
    if family == "semgrep":
        match = _SEMGREP_RAN.match(line) or _SEMGREP_FINDINGS.match(line)
        return int(match.group(1)) if match else None
    if family == "ruff":
        match = _RUFF_FOUND.match(line)
        return int(match.group(3) or match.group(1)) if match else None
    if family == "ty":
        match = _TY_FOUND.match(line)
        return int(match.group(1)) if match else None
    return None


def _failure(family: str, line: str) -> bool:
    if crashed(line):
        return True
    if family == "semgrep":
        return line.startswith(_SEMGREP_ERRORS)
    if family == "ruff":
        return line.startswith("error: ") or line == "ruff failed"
    if family == "ty":
        return line == "ty failed"
    return False


def log_disagreements(ctx: ParseContext, tools: list[str], results: int) -> list[str]:
    """Why the log beside the SARIF file says the run was not what the file says.

    ``tools`` are the runs' driver names, ``results`` the file's result count.
    Only a producer that is the file's only one is held to a count it states.
    """
    families = {_family(name) for name in tools}
    family = families.pop() if len(families) == 1 else ""
    stated: int | None = None
    failures = 0
    first = ""
    long = LongLines()
    for line in plain_lines(ctx, long):
        count = _stated(family, line)
        if count is not None:
            stated = count
        elif _failure(family, line):
            failures += 1
            if not first:
                first = quote(line, 200)
    problems = []
    if failures:
        problems.append(f"the log reports {failures} failure(s) beside the SARIF log "
                        f"(first: {first})")
    if stated is not None and stated != results:
        problems.append(f"the log says {family} found {stated} result(s) but the SARIF log "
                        f"holds {results}")
    if long.count:
        problems.append(long.note(family or "the SARIF producer"))
    return problems
