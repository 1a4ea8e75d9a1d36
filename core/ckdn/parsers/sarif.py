"""The ``sarif`` parser: any SARIF 2.1.0 log (semgrep, ruff, ty, gitleaks, trivy, ...)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Final, TypeGuard
from urllib.parse import unquote, urlsplit

from ckdn.parsers._jsonstream import JsonStream, find_report, unreadable
from ckdn.parsers._logtext import log_ends
from ckdn.parsers._rulecounts import RuleCounts
from ckdn.parsers._sarif_log import log_disagreements
from ckdn.parsers._sarif_read import Refused, RunFacts, read_results, read_runs
from ckdn.parsers.base import (
    BaseParser,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)

__all__ = ["SarifParser", "effective_level"]

# ``fail_levels`` is the project's policy: results at those levels are findings
# (``sarif_<level>``), every other result is counted in the summary. The level of
# a result is worked out the way SARIF 2.1.0 (section 3.27.10) says, because
# producers rely on it: semgrep writes no level on results at all, only
# ``defaultConfiguration.level`` on its rules. So: the result's own ``level``;
# else ``none`` for a result whose ``kind`` is not ``fail``; else the level a run
# invocation's ``ruleConfigurationOverrides`` gives its rule; else the rule's
# ``defaultConfiguration.level`` (the rule found by ``rule`` / ``ruleIndex`` /
# ``ruleId`` in ``tool.driver`` or ``tool.extensions``); else ``warning``.
#
# A nonzero exit code with no result at ``fail_levels`` (ty and ``semgrep
# --error`` fail on warnings) makes every result a finding: the exit code knows
# about them, and a parser never hides what the exit code knows.
#
# A log that is not SARIF 2.1.0, a run without a results array, and a tool that
# reports it did not execute successfully (``executionSuccessful: false`` or an
# ``error``-level execution notification, as semgrep writes for a broken rule
# file) are unreadable evidence: ``parser_ok=False``, as is a missing or
# undecodable log (the note quotes the tool's last log line). So is a SARIF log
# beside a tool log that says otherwise (a crash, the producer's own error line,
# a count that differs from the results): what that means per producer is
# :mod:`ckdn.parsers._sarif_log`'s.

LEVELS: Final = ("error", "warning", "note", "none")
VERSION = "2.1.0"
DEFAULT_FAIL_LEVELS: Final = ("error",)
#: Execution notifications quoted in a note; the rest are counted.
NAMED_NOTIFICATIONS = 2


class SarifParser(BaseParser):
    """Reads a SARIF 2.1.0 log from the run dir."""

    name = "sarif"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "report": Option("str", help="the SARIF log, relative to the run dir"),
        "fail_levels": Option("str_list", choices=LEVELS,
                              help="result levels that are findings (default: error)"),
    }

    def read(self, ctx: ParseContext) -> ParseResult:
        return _parse(ctx)


class _Rules:
    """Rule lookup for one run: by tool component, index and id, as SARIF allows."""

    __slots__ = ("by_id", "components", "ids", "names", "overrides")

    def __init__(self, run: dict[str, Any]) -> None:
        tool = _obj(run.get("tool"))
        driver = _obj(tool.get("driver"))
        extensions = [_obj(e) for e in _list(tool.get("extensions"))]
        self.components = [driver, *extensions]
        self.names = {str(c.get("name")): i for i, c in enumerate(self.components) if c.get("name")}
        self.by_id: dict[str, dict[str, Any]] = {}
        # Per component, each id's first rule: a result found by id costs one look-up,
        # not a scan of the rules (a million results, a thousand rules).
        self.ids: list[dict[str, dict[str, Any]]] = []
        for component in self.components:
            ids: dict[str, dict[str, Any]] = {}
            for rule in _list(component.get("rules")):
                if isinstance(rule, dict) and isinstance(rule.get("id"), str):
                    ids.setdefault(rule["id"], rule)
            self.ids.append(ids)
        for ids in reversed(self.ids):  # the driver wins a clash
            for rule_id, rule in ids.items():
                self.by_id.setdefault(rule_id, rule)
        self.overrides: dict[str, str] = {}
        for invocation in _list(run.get("invocations")):
            for override in _list(_obj(invocation).get("ruleConfigurationOverrides")):
                override = _obj(override)
                level = _obj(override.get("configuration")).get("level")
                rule = self._descriptor(_obj(override.get("descriptor")), None, None)
                if rule is not None and isinstance(rule.get("id"), str) and level in LEVELS:
                    self.overrides[rule["id"]] = level

    def _descriptor(self, ref: dict[str, Any], index: Any, rule_id: Any) -> dict[str, Any] | None:
        chosen = 0
        tool_component = _obj(ref.get("toolComponent"))
        position = tool_component.get("index")
        if _is_int(position) and 0 <= position < len(self.components) - 1:
            chosen = position + 1
        elif isinstance(tool_component.get("name"), str) and tool_component["name"] in self.names:
            chosen = self.names[tool_component["name"]]
        rules = _list(self.components[chosen].get("rules"))
        index = ref.get("index", index)
        if _is_int(index) and 0 <= index < len(rules) and isinstance(rules[index], dict):
            found: dict[str, Any] = rules[index]
            return found
        rule_id = ref.get("id", rule_id)
        if isinstance(rule_id, str):
            return self.ids[chosen].get(rule_id) or self.by_id.get(rule_id)
        return None

    def rule_for(self, result: dict[str, Any]) -> dict[str, Any] | None:
        return self._descriptor(_obj(result.get("rule")), result.get("ruleIndex"),
                                result.get("ruleId"))


def effective_level(result: dict[str, Any], rule: dict[str, Any] | None,
                    overrides: dict[str, str] | None = None) -> str | None:
    """The SARIF 2.1.0 level of ``result`` (section 3.27.10); None for a level SARIF has not."""
    level = result.get("level")
    if level is not None:
        return level if level in LEVELS else None
    if result.get("kind", "fail") != "fail":
        return "none"
    if rule is not None:
        rule_id = rule.get("id")
        if overrides and isinstance(rule_id, str) and rule_id in overrides:
            return overrides[rule_id]
        default = _obj(rule.get("defaultConfiguration")).get("level")
        if default in LEVELS:
            return str(default)
    return "warning"


def _parse(ctx: ParseContext) -> ParseResult:
    loaded = _load(ctx)
    if isinstance(loaded, str):
        return ParseResult(parser_ok=False, notes=[cap_line(loaded, 800)])
    path, name, runs = loaded
    fail_levels = set(ctx.options.get("fail_levels", DEFAULT_FAIL_LEVELS))
    graded = _Graded(ctx, runs)
    try:
        with JsonStream.open(path) as reader:
            for number, result in read_results(reader):
                graded.add(number, result)
    except (OSError, ValueError, RecursionError) as exc:
        return ParseResult(parser_ok=False, notes=[cap_line(
            unreadable("SARIF log", name, exc, lambda: log_ends(ctx)), 800)])
    counts = graded.counts
    problems: list[str] = []
    for number, facts in enumerate(runs, 1):
        problems.extend(_run_problems(number, facts))
        bad, first = graded.bad[number - 1]
        if bad:
            problems.append(f"run {number} has {bad} result(s) that are not an object "
                            f"with a SARIF level (first: {first})")
    total = sum(counts.values())
    promote = ctx.rc != 0 and not any(counts[level] for level in fail_levels)
    chosen = set(LEVELS) if promote else fail_levels
    tools = [str(_obj(_obj(facts.run.get("tool")).get("driver")).get("name") or "")
             for facts in runs]
    summary = {"counts": {**counts, "results": total, "runs": len(runs)},
               "by_level": dict(counts), **graded.by_rule.summary(),
               "tools": list(dict.fromkeys(tool for tool in tools if tool))}
    out = ParseResult(findings=graded.findings(chosen),
                      findings_total=sum(counts[level] for level in chosen), summary=summary)
    if Path(ctx.log_path).resolve() != ctx.artifact("report", "report.sarif"):
        problems.extend(log_disagreements(ctx, tools, total))
    if problems:
        out.parser_ok = False
        out.notes.extend(cap_line(p) for p in problems[:NAMED_NOTIFICATIONS + 1])
    if promote and total:
        out.notes.append(f"exit code {ctx.rc} with no result at fail_levels "
                         f"({', '.join(sorted(fail_levels)) or 'none'}): all {total} result(s) "
                         "are shown as findings")
    return out


class _Graded:
    """The results of the second pass, graded as they stream by.

    Which levels are findings is known only at the end (a red exit code with no
    result at ``fail_levels`` makes every result one), so the first ``top``
    findings of every level are kept, with their place in the log, and
    :meth:`findings` takes the first ``top`` of the levels chosen.
    """

    def __init__(self, ctx: ParseContext, runs: list[RunFacts]) -> None:
        self.ctx = ctx
        self.runs = runs
        self.rules = [_Rules(facts.run) for facts in runs]
        self.bases = [_bases(facts.run) for facts in runs]
        self.counts = dict.fromkeys(LEVELS, 0)
        self.by_rule = RuleCounts()  # results per rule, every level
        self.kept: dict[str, list[tuple[int, Finding]]] = {level: [] for level in LEVELS}
        self.bad = [(0, "")] * len(runs)  # per run: results without a level, the first named
        self.seen = 0

    def add(self, number: int, result: Any) -> None:
        self.seen += 1
        rules = self.rules[number]
        level = _level(result, rules) if isinstance(result, dict) else None
        if level is None:
            bad, first = self.bad[number]
            if not bad:
                first = (f"level {cap_line(repr(result.get('level')), 80)}"
                         if isinstance(result, dict) else f"a JSON {type(result).__name__}")
            self.bad[number] = (bad + 1, first)
            return
        self.counts[level] += 1
        self.by_rule.add(_rule_id(result, rules))
        kept = self.kept[level]
        if len(kept) < self.ctx.top:  # build only what the digest can show
            kept.append((self.seen, _finding(self.ctx, self.runs[number].run, result,
                                             rules=rules, level=level,
                                             bases=self.bases[number])))

    def findings(self, chosen: set[str]) -> list[Finding]:
        merged = sorted((pair for level in chosen for pair in self.kept[level]),
                        key=lambda pair: pair[0])
        return [finding for _, finding in merged[:self.ctx.top]]


def _load(ctx: ParseContext) -> tuple[Path, str, list[RunFacts]] | str:
    """The log's path and runs (without their results), or why it cannot be trusted."""
    found = find_report(ctx, default="report.sarif", label="SARIF log",
                        needs="write SARIF to {run_dir}/", log_tail=lambda: log_ends(ctx))
    if isinstance(found, str):
        return found
    name, path = found
    try:
        with JsonStream.open(path) as reader:
            log = read_runs(reader)
    except Refused as exc:
        return f"SARIF log {name} is refused: {exc}"
    except (OSError, ValueError, RecursionError) as exc:
        return unreadable("SARIF log", name, exc, lambda: log_ends(ctx))
    if log.kind != "dict":
        return f"{name} is not a SARIF log (a JSON {log.kind}, not an object)"
    if log.version != VERSION:
        return f"{name} is not a SARIF {VERSION} log (version {cap_line(repr(log.version), 80)})"
    runs = log.runs
    if log.runs_kind != "list" or not runs or any(facts is None for facts in runs):
        return f"SARIF log {name} has no runs: no tool's results to read"
    return path, name, [facts for facts in runs if facts is not None]


def _run_problems(number: int, facts: RunFacts) -> Iterable[str]:
    """Why a run's results cannot be trusted: none recorded, or the tool says it failed."""
    run = facts.run
    tool = str(_obj(_obj(run.get("tool")).get("driver")).get("name") or "unnamed tool")
    if not isinstance(run.get("results"), list):
        yield f"run {number} ({tool}) has no results array: the tool did not produce results"
    if facts.error_count:
        shown = "; ".join(facts.errors)
        more = (f" (+{facts.error_count - NAMED_NOTIFICATIONS} more)"
                if facts.error_count > NAMED_NOTIFICATIONS else "")
        yield f"run {number} ({tool}) reports execution errors: {shown}{more}"


def _rule_id(result: dict[str, Any], rules: _Rules) -> str:
    """The result's rule: ``ruleId``, else ``rule.id``, else the id of the rule its index
    names (SARIF 3.27.5-7); ``?`` for a result that names none."""
    rule_id = result.get("ruleId")
    if isinstance(rule_id, str) and rule_id:
        return rule_id
    rule_id = _obj(result.get("rule")).get("id")
    if isinstance(rule_id, str) and rule_id:
        return rule_id
    rule_id = _obj(rules.rule_for(result)).get("id")
    return rule_id if isinstance(rule_id, str) and rule_id else "?"


def _level(result: Any, rules: _Rules) -> str | None:
    result = _obj(result)
    return effective_level(result, rules.rule_for(result), rules.overrides)


def _bases(run: dict[str, Any]) -> dict[str, str]:
    """``originalUriBaseIds`` resolved to file paths (a base may chain to another)."""
    raw = _obj(run.get("originalUriBaseIds"))
    resolved: dict[str, str] = {}
    for name in raw:
        seen: set[str] = set()
        parts: list[str] = []
        current: Any = name
        while isinstance(current, str) and current in raw and current not in seen:
            seen.add(current)
            entry = _obj(raw[current])
            parts.append(str(entry.get("uri") or ""))
            current = entry.get("uriBaseId")
        path = ""
        for part in reversed(parts):
            path = _join(path, part)
        resolved[name] = path
    return resolved


def _join(base: str, uri: str) -> str:
    if not uri:
        return base
    split = urlsplit(uri)
    if split.scheme == "file":
        return unquote(split.path)
    if split.scheme:  # http(s) and the like: keep as written
        return uri
    path = unquote(uri)
    if not base or path.startswith("/"):
        return path
    return str(PurePosixPath(base) / path)


def _path(run: dict[str, Any], physical: dict[str, Any], bases: dict[str, str]) -> str | None:
    artifact = _obj(physical.get("artifactLocation"))
    index = artifact.get("index")
    artifacts = _list(run.get("artifacts"))
    if "uri" not in artifact and _is_int(index) and 0 <= index < len(artifacts):
        artifact = {**_obj(_obj(artifacts[index]).get("location")), **artifact}
    uri = artifact.get("uri")
    if not isinstance(uri, str) or not uri:
        return None
    base = bases.get(str(artifact.get("uriBaseId")), "")
    path = _join(base, uri)
    return path.replace("/", os.sep) if os.sep != "/" else path


def _finding(ctx: ParseContext, run: dict[str, Any], result: Any, *, rules: _Rules, level: str,
             bases: dict[str, str]) -> Finding:
    result = _obj(result)
    rule = rules.rule_for(result)
    rule_id = result.get("ruleId") or _obj(result.get("rule")).get("id") or (rule or {}).get("id")
    rule_id = str(rule_id) if rule_id else "result"
    location = None
    snippet: list[str] = []
    for loc in _list(result.get("locations"))[:1]:
        physical = _obj(_obj(loc).get("physicalLocation"))
        region = _obj(physical.get("region"))
        path = _path(run, physical, bases)
        line, column = region.get("startLine"), region.get("startColumn")
        if path is not None:
            location = ctx.location(path, line if _is_int(line) else None,
                                    column if _is_int(column) else None)
        snippet = _text(region.get("snippet")).splitlines()
    text = _message(result, rule)
    head, *rest = text.splitlines() or [""]
    ident = f"{location}:{rule_id}" if location else rule_id
    return Finding(ident, f"sarif_{level}", cap_line(f"{rule_id}: {head}"), location,
                   ctx.snippet([*snippet, *rest]))


def _message(result: dict[str, Any], rule: dict[str, Any] | None) -> str:
    """The result's message: its text, else the rule's message string with arguments filled."""
    message = _obj(result.get("message"))
    text = _text(message)
    if text:
        return text
    message_id = message.get("id")
    if rule is not None and isinstance(message_id, str):
        template = _text(_obj(rule.get("messageStrings")).get(message_id))
        if template:
            for position, argument in enumerate(_list(message.get("arguments"))):
                template = template.replace("{" + str(position) + "}", str(argument))
            return template
    if rule is not None:
        return _text(rule.get("shortDescription")) or _text(rule.get("fullDescription"))
    return ""


def _text(value: Any) -> str:
    value = _obj(value)
    text = value.get("text")
    if isinstance(text, str):
        return text
    markdown = value.get("markdown")
    return markdown if isinstance(markdown, str) else ""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
