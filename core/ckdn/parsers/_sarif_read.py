"""Reading a SARIF log in bounded memory: what describes each run first, then its results."""

from __future__ import annotations

from ckdn.parsers._jsonstream import kind_of
from ckdn.parsers.base import cap_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ckdn.parsers._jsonstream import JsonStream

__all__ = ["MAX_RULES", "MAX_RUNS", "Log", "Refused", "RunFacts", "read_results", "read_runs"]

# A SARIF log can hold a million results, and how each one counts depends on
# parts of its run that producers write anywhere in it (ruff and semgrep put
# ``tool``, whose rules give a result its level, after ``results``). So the log is
# read twice, streamed both times (:class:`~ckdn.parsers._jsonstream.JsonStream`):
#
# 1. :func:`read_runs`: each run without its results, kept compact: the rules'
#    ids, levels and message texts (cut), the rule configuration overrides, the
#    artifact locations, the base URIs, and what the invocations say about the
#    run (``executionSuccessful``, error notifications: the first few quoted,
#    all counted). What a run may keep is bounded (:data:`MAX_RULES`,
#    :data:`MAX_RUNS`; artifacts up to :data:`ARTIFACT_BUDGET` characters), and a
#    log past a bound is refused rather than read in part.
# 2. :func:`read_results`: every result, one at a time, with its run's number.
#
# Time is two reads of the file; memory is the compact runs plus one result.

#: Rules (and rule configuration overrides) kept across all runs and tool components, and
#: the characters of JSON they may take, compact.
MAX_RULES = 20_000
RULE_BUDGET = 8 * 1024 * 1024
#: Runs a log may hold.
MAX_RUNS = 1_000
#: Characters of artifact locations kept; artifacts past it are not (a result naming its
#: file only by such an artifact's index then has no location).
ARTIFACT_BUDGET = 4 * 1024 * 1024
#: Error notifications quoted per run; the rest are counted.
NAMED_ERRORS = 2
_TEXT_CAP = 500
_MESSAGE_STRINGS = 16


class Refused(ValueError):
    """The log holds more runs, rules or overrides than ckdn keeps."""


class RunFacts:
    """One run without its results: ``run`` is a compact dict of the parts the parser
    reads (``tool``, ``invocations`` overrides, ``artifacts``, ``originalUriBaseIds``,
    ``results`` an empty list when the run has a results array)."""

    __slots__ = ("error_count", "errors", "run")

    def __init__(self) -> None:
        self.run: dict[str, Any] = {}
        self.errors: list[str] = []  # what the invocations say went wrong, the first few
        self.error_count = 0


class Log:
    """What the first pass found: the document's kind and version, and its runs."""

    __slots__ = ("kind", "runs", "runs_kind", "version")

    def __init__(self) -> None:
        self.kind = ""
        self.version: Any = None
        self.runs_kind = ""
        self.runs: list[RunFacts | None] = []  # None for a run that is not an object


class _Budget:
    __slots__ = ("artifact_room", "rule_room", "rules")

    def __init__(self) -> None:
        self.rules = 0
        self.rule_room = RULE_BUDGET
        self.artifact_room = ARTIFACT_BUDGET

    def rule(self, kept: dict[str, Any]) -> dict[str, Any]:
        """Count one kept rule or override against the bounds; refuse the log past them."""
        self.rules += 1
        self.rule_room -= len(str(kept))
        if self.rules > MAX_RULES or self.rule_room < 0:
            raise Refused(f"its rules and rule configuration overrides are more than ckdn keeps "
                          f"({MAX_RULES:,}, or {RULE_BUDGET:,} characters)")
        return kept


def read_runs(reader: JsonStream) -> Log:
    """Pass 1: the document's version and every run, results stepped over."""
    log = Log()
    log.kind = kind_of(reader)
    if log.kind != "dict":
        return log
    budget = _Budget()
    seen: set[str] = set()
    for key in reader.members():
        if key not in ("version", "runs"):
            continue
        if key in seen:
            raise Refused(f"its key {key!r} appears twice")
        seen.add(key)
        if key == "version":
            log.version = reader.value()
            continue
        log.runs_kind = kind_of(reader)
        if log.runs_kind != "list":
            continue
        for _ in reader.elements():
            if len(log.runs) >= MAX_RUNS:
                raise Refused(f"it holds more than {MAX_RUNS:,} runs")
            log.runs.append(_run(reader, budget) if reader.peek() == "{" else None)
    reader.finish()
    return log


def read_results(reader: JsonStream) -> Iterator[tuple[int, Any]]:
    """Pass 2: ``(run number from 0, result)`` for every result, in the log's order."""
    for key in reader.members():
        if key != "runs" or reader.peek() != "[":
            continue
        for number, _ in enumerate(reader.elements()):
            if reader.peek() != "{":
                continue
            for run_key in reader.members():
                if run_key == "results" and reader.peek() == "[":
                    for result in reader.items():
                        yield number, result
    reader.finish()


def _run(reader: JsonStream, budget: _Budget) -> RunFacts:
    facts = RunFacts()
    run = facts.run
    for key in reader.members():
        if key in run:
            raise Refused(f"a run's key {key!r} appears twice")
        if key == "tool":
            run[key] = _tool(reader, budget)
        elif key == "invocations":
            run[key] = _invocations(reader, budget, facts)
        elif key == "artifacts":
            run[key] = _artifacts(reader, budget)
        elif key == "originalUriBaseIds":
            run[key] = reader.value()
        elif key == "results":
            run[key] = [] if reader.peek() == "[" else None  # read in the second pass
    return facts


def _tool(reader: JsonStream, budget: _Budget) -> dict[str, Any]:
    tool: dict[str, Any] = {}
    if reader.peek() != "{":
        return tool
    for key in reader.members():
        if key == "driver":
            tool[key] = _component(reader, budget)
        elif key == "extensions" and reader.peek() == "[":
            tool[key] = [_component(reader, budget) for _ in reader.elements()]
    return tool


def _component(reader: JsonStream, budget: _Budget) -> dict[str, Any]:
    """A tool component: its name and its rules, each kept compact."""
    component: dict[str, Any] = {}
    if reader.peek() != "{":
        return component
    for key in reader.members():
        if key == "name":
            component[key] = reader.value()
        elif key == "rules" and reader.peek() == "[":
            rules = component[key] = []
            for rule in reader.items():
                rules.append(budget.rule(_rule(rule)) if isinstance(rule, dict) else None)
    return component


def _rule(rule: dict[str, Any]) -> dict[str, Any]:
    """What a result's level and message need of a rule: id, default level, texts (cut)."""
    kept: dict[str, Any] = {}
    if "id" in rule:
        kept["id"] = rule["id"]
    configuration = rule.get("defaultConfiguration")
    if isinstance(configuration, dict) and "level" in configuration:
        kept["defaultConfiguration"] = {"level": configuration["level"]}
    for key in ("shortDescription", "fullDescription"):
        text = _message_text(rule.get(key))
        if text is not None:
            kept[key] = text
    strings = rule.get("messageStrings")
    if isinstance(strings, dict):
        texts = {}
        for name, value in list(strings.items())[:_MESSAGE_STRINGS]:
            text = _message_text(value)
            if text is not None:
                texts[name] = text
        kept["messageStrings"] = texts
    return kept


def _message_text(value: Any) -> dict[str, str] | None:
    """A SARIF message object's text (or markdown), cut, as the parser reads it."""
    if not isinstance(value, dict):
        return None
    for key in ("text", "markdown"):
        if isinstance(value.get(key), str):
            return {key: cap_line(value[key], _TEXT_CAP)}
    return None


def _invocations(reader: JsonStream, budget: _Budget, facts: RunFacts) -> list[dict[str, Any]]:
    """The invocations, reduced to their overrides; what they say went wrong, to ``facts``."""
    kept: list[dict[str, Any]] = []
    if reader.peek() != "[":
        return kept
    for _ in reader.elements():
        if reader.peek() != "{":
            continue
        overrides: list[Any] = []
        kept.append({"ruleConfigurationOverrides": overrides})
        for key in reader.members():
            if key == "executionSuccessful":
                if reader.value() is False:
                    facts.error_count += 1
                    if len(facts.errors) < NAMED_ERRORS:
                        facts.errors.append("executionSuccessful is false")
            elif key in ("toolExecutionNotifications", "toolConfigurationNotifications") \
                    and reader.peek() == "[":
                for notification in reader.items():
                    _notification(notification, facts)
            elif key == "ruleConfigurationOverrides" and reader.peek() == "[":
                for override in reader.items():
                    overrides.append(budget.rule(_override(override)))
    return kept


def _notification(notification: Any, facts: RunFacts) -> None:
    if not isinstance(notification, dict) or notification.get("level") != "error":
        return
    facts.error_count += 1
    if len(facts.errors) < NAMED_ERRORS:
        text = _message_text(notification.get("message"))
        shown = next(iter(text.values()), "") if text else ""
        facts.errors.append(shown or "error notification")


def _override(override: Any) -> dict[str, Any]:
    if not isinstance(override, dict):
        return {}
    descriptor = override.get("descriptor")
    configuration = override.get("configuration")
    kept: dict[str, Any] = {}
    if isinstance(descriptor, dict):
        kept["descriptor"] = {key: descriptor[key] for key in ("id", "index", "toolComponent")
                              if key in descriptor}
    if isinstance(configuration, dict) and "level" in configuration:
        kept["configuration"] = {"level": configuration["level"]}
    return kept


def _artifacts(reader: JsonStream, budget: _Budget) -> list[dict[str, Any]]:
    """Each artifact's location (its URI and base), while the budget lasts."""
    kept: list[dict[str, Any]] = []
    if reader.peek() != "[":
        return kept
    for artifact in reader.items():
        location = artifact.get("location") if isinstance(artifact, dict) else None
        entry: dict[str, Any] = {}
        if isinstance(location, dict):
            entry["location"] = {key: location[key] for key in ("uri", "uriBaseId")
                                 if key in location}
        cost = len(str(entry)) + 100
        if cost > budget.artifact_room:
            budget.artifact_room = 0
            continue  # past the budget: not kept (results name their file by URI anyway)
        budget.artifact_room -= cost
        kept.append(entry)
    return kept
