"""The ``pip_audit`` parser: ``pip-audit -f json -o {run_dir}/pip-audit.json``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ckdn.parsers._jsonstream import JsonStream, NameSet, find_report, kind_of, unreadable
from ckdn.parsers._logtext import LongLines, crashed, plain_lines, quote
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["PipAuditParser"]

# Each known vulnerability of an audited dependency is a ``vulnerability``
# finding, except those ``--fix`` already upgraded away (pip-audit then exits 0;
# they are counted as ``fixed``).
#
# pip-audit exits 0 and says "No known vulnerabilities found" when it could not
# audit a dependency at all (not on PyPI, service answered 404): such a
# dependency lands in the report with a ``skip_reason``. Skipped dependencies,
# and a run that audited none, are unverified, not clean: a gate failure.
# ``allow_skipped = true`` accepts every skipped dependency (and a run that audited
# none); ``allow_skipped = ["name", ...]`` accepts only those packages being
# skipped, names compared as PEP 503 normalises them (``Foo_Bar`` is ``foo-bar``);
# ``allow_all_skipped = true`` accepts a run that audited no dependency (all
# skipped, or none listed) without accepting a skip otherwise.
#
# Guards: the count pip-audit prints ("Found N known vulnerabilities", "No known
# vulnerabilities found") must match the report; exit code 1 needs an unfixed
# vulnerability in the report, and any other code but 0 is not a pip-audit
# result. When the vulnerability service is unreachable, pip-audit exits 1 with a
# traceback and writes no report; the note quotes the log's last line, which
# names the cause.
#
# pip-audit prints its summary ("No known vulnerabilities found", "Found N known
# vulnerabilities ...") whenever it gets as far as writing the report, so exit
# code 0 needs that line: the audit's own completion evidence. An ``ERROR:`` or
# ``CRITICAL:`` log line, or a Python traceback, beside the report makes it
# untrusted.

_SEPARATOR_RUNS: Final = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    """A package name as PEP 503 compares it: runs of ``-_.`` are one ``-``, lower case."""
    return _SEPARATOR_RUNS.sub("-", name).lower()


KIND = "vulnerability"
#: pip-audit's summary on stderr: "Found 2 known vulnerabilities, ignored 1 in 1 package".
_FOUND: Final = re.compile(r"^Found (\d+) known vulnerabilit(?:y|ies)\b")
_NONE: Final = "No known vulnerabilities found"
NAMED_SKIPS = 3


class PipAuditParser(BaseParser):
    """Reads pip-audit's JSON report."""

    name = "pip_audit"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "report": Option("str", help="pip-audit's JSON report, relative to the run dir"),
        "allow_skipped": Option("bool_or_names",
                                help="accept dependencies pip-audit could not audit: true for "
                                     "all, or a list of package names"),
        "allow_all_skipped": Option("bool", help="accept a run that audited no dependency"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


class _Log:
    """What pip-audit's log states: its own vulnerability count and its last words."""

    __slots__ = ("errors", "first_error", "found", "last", "long")

    def __init__(self, ctx: ParseContext) -> None:
        self.found: int | None = None
        self.last = ""
        self.errors = 0  # "ERROR:pip_audit...", "CRITICAL:...", a traceback
        self.first_error = ""
        self.long = LongLines()
        for line in plain_lines(ctx, self.long):
            if crashed(line) or line.startswith(("ERROR:", "CRITICAL:")):
                self.errors += 1
                if not self.first_error:
                    self.first_error = cap_line(line, 200)
            if not line.strip():
                continue
            self.last = line
            line = line.strip()
            match = _FOUND.match(line)
            if match:
                self.found = int(match.group(1))
            elif line.startswith(_NONE):
                self.found = 0

    def tail(self) -> str:
        return f"; log ends: {quote(self.last, 300)}" if self.last else ""


def _parse(ctx: ParseContext) -> ParseResult:
    log = _Log(ctx)
    report = _load(ctx, log)
    if isinstance(report, str):
        return ParseResult(parser_ok=False, notes=[cap_line(report, 800)])
    sink, total = report.sink, report.total
    counts = {"dependencies": report.audited, "vulnerabilities": total,
              "vulnerable": report.vulnerable, "fixed": report.fixed,
              "skipped": report.skips + report.accepted, "skipped_accepted": report.accepted}
    result = sink.result(summary={"counts": counts})
    if log.found is not None and log.found != total:
        result.parser_ok = False
        result.notes.append(f"pip-audit's log says {log.found} known vulnerabilities but its "
                            f"report lists {total}")
    if ctx.rc == 1 and not sink.total:
        result.parser_ok = False
        result.notes.append("pip-audit exited 1 but its report lists no unfixed vulnerability"
                            + log.tail())
    elif ctx.rc not in (0, 1):
        result.parser_ok = False
        result.notes.append(f"exit code {ctx.rc} is not a pip-audit result" + log.tail())
    if log.found is None and ctx.rc == 0:
        result.parser_ok = False
        result.notes.append("exit code 0 but no pip-audit summary line (\"No known "
                            "vulnerabilities found\", \"Found N known vulnerabilities\") in the "
                            "log: cannot confirm the audit finished" + log.tail())
    if log.errors:
        result.parser_ok = False
        result.notes.append(f"pip-audit's log reports {log.errors} error(s) beside its report "
                            f"(first: {log.first_error})")
    _unverified(ctx, result, report)
    log.long.refuse(result, "pip-audit")
    return result


class _Audit:
    """What the streamed report holds: the kept findings and the counts."""

    __slots__ = ("accepted", "allowed", "audited", "fixed", "sink", "skipped", "skips", "total",
                 "vulnerable")

    def __init__(self, ctx: ParseContext) -> None:
        self.sink = ctx.sink()
        self.audited = self.vulnerable = self.fixed = self.total = self.skips = 0
        self.accepted = 0  # skips of a package allow_skipped names
        allow = ctx.options.get("allow_skipped", False)
        self.allowed = ({normalise(name) for name in allow} if isinstance(allow, list)
                        else None)
        self.skipped: list[str] = []  # the first few, named in a note

    def dependency(self, ctx: ParseContext, dep: dict[str, Any], fixed: NameSet) -> None:
        if "skip_reason" in dep:
            if self.allowed is not None and normalise(dep["name"]) in self.allowed:
                self.accepted += 1
                return
            self.skips += 1
            if len(self.skipped) < NAMED_SKIPS:
                self.skipped.append(cap_line(f"{dep.get('name', '?')}: {dep['skip_reason']}",
                                             300))
            return
        self.audited += 1
        vulns = dep["vulns"]
        self.total += len(vulns)
        if vulns:
            self.vulnerable += 1
        if (dep["name"], dep["version"]) in fixed:
            self.fixed += len(vulns)
            return
        sink = self.sink
        for vuln in vulns:
            if sink.wants():  # build only what the digest (or the tap) takes
                sink.add(_finding(ctx, dep, vuln))
            else:
                sink.total += 1


def _load(ctx: ParseContext, log: _Log) -> _Audit | str:
    """The report's facts, read as it streams, or why they cannot be trusted."""
    found = find_report(ctx, default="pip-audit.json", label="pip-audit report",
                        needs="include -f json -o {run_dir}/", log_tail=log.tail)
    if isinstance(found, str):
        return found
    name, path = found
    drift = f"pip-audit report {name} is not pip-audit's JSON format"
    try:
        fixed = NameSet()
        with JsonStream.open(path) as reader:
            # ``fixes`` follows ``dependencies`` in pip-audit's report, and which vulnerabilities
            # count depends on it: read first, the dependencies then in a second pass.
            audit = _read(ctx, reader, drift, fixed, first=True)
        if audit is None:
            with JsonStream.open(path) as reader:
                audit = _read(ctx, reader, drift, fixed, first=False)
    except (OSError, ValueError, RecursionError) as exc:
        return unreadable("pip-audit report", name, exc, log.tail)
    assert audit is not None
    return audit


def _read(ctx: ParseContext, reader: JsonStream, drift: str, fixed: NameSet, *,
          first: bool) -> _Audit | str | None:
    """One pass over the report; the first reads ``fixes`` (and the dependencies, when they
    come after it), and returns None when the dependencies need a second pass."""
    kind = kind_of(reader)
    if kind != "dict":
        return f"{drift} (a JSON {kind}, not an object)"
    audit = _Audit(ctx)
    seen: dict[str, str] = {}
    later = False
    for key in reader.members():
        if key not in ("dependencies", "fixes"):
            continue
        if key in seen:
            return f"{drift} (its key {key!r} appears twice)"
        seen[key] = kind_of(reader)
        if key == "fixes" and first and seen[key] == "list":
            for fix in reader.items():
                if isinstance(fix, dict) and "new_version" in fix:
                    fixed.add((fix.get("name"), fix.get("old_version")))
            if not fixed.complete:
                return f"{drift} (more fixes than ckdn reads: {fixed.count:,})"
        elif key == "dependencies" and seen[key] == "list":
            if first and "fixes" not in seen:
                later = True  # ``fixes`` may still come: read these in the second pass
                continue
            for index, dep in enumerate(reader.items()):
                problem = _malformed(dep)
                if problem:
                    return f"{drift} (dependency {index} has no {problem})"
                audit.dependency(ctx, dep, fixed)
    reader.finish()
    if seen.get("dependencies") != "list" or seen.get("fixes", "list") != "list":
        return f"{drift} (no 'dependencies' list)"
    return None if later else audit


def _malformed(dep: Any) -> str:
    """What a dependency entry lacks, or ``""``."""
    if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
        return "name"
    if "skip_reason" in dep:
        return ""
    vulns = dep.get("vulns")
    if not (isinstance(dep.get("version"), str) and isinstance(vulns, list)
            and all(isinstance(v, dict) and isinstance(v.get("id"), str) for v in vulns)):
        return "version and vulns with ids"
    return ""


def _unverified(ctx: ParseContext, result: ParseResult, report: _Audit) -> None:
    if ctx.options.get("allow_skipped", False) is True:
        return
    skips = report.skips
    if report.accepted:
        result.notes.append(f"{report.accepted} skipped dependenc"
                            + ("y" if report.accepted == 1 else "ies")
                            + " accepted by allow_skipped")
    if skips:
        more = f" (+{skips - NAMED_SKIPS} more)" if skips > NAMED_SKIPS else ""
        result.gate_failures.append(f"pip-audit could not audit {skips} dependenc"
                                    + ("y" if skips == 1 else "ies"))
        result.notes.append(cap_line("skipped: " + "; ".join(report.skipped) + more
                                     + "; to accept them, set allow_skipped = true or list "
                                     "their names in allow_skipped", 800))
    elif not report.audited and not ctx.options.get("allow_all_skipped", False):
        result.gate_failures.append("pip-audit audited no dependency")
        what = "every dependency was skipped" if report.accepted else "it lists no dependency"
        result.notes.append(f"pip-audit's report audits nothing ({what}); set "
                            "allow_all_skipped = true if that is expected")


def _finding(ctx: ParseContext, dep: dict[str, Any], vuln: dict[str, Any]) -> Finding:
    pin = f"{dep['name']}=={dep['version']}"
    fixes = [str(v) for v in vuln.get("fix_versions") or ()]
    fix = f"fix: {', '.join(fixes)}" if fixes else "no fix version"
    detail: list[str] = []
    aliases = vuln.get("aliases")
    if isinstance(aliases, list) and aliases:
        # pip-audit emits aliases in set order, which varies between runs.
        detail.append("aliases: " + ", ".join(sorted(str(a) for a in aliases)))
    description = vuln.get("description")
    if isinstance(description, str) and description:
        detail.append(description)
    return Finding(f"{pin}:{vuln['id']}", KIND, cap_line(f"{pin}: {vuln['id']} ({fix})"),
                   None, ctx.snippet(detail))
