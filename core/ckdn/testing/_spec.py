"""What the kit needs to know about a parser to hold it to ckdn's rules."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from ckdn.parsers.base import Parser, ParseResult
from ckdn.reconcile import PASS
from ckdn.testing._cases import RecordedCase, project_cases
from ckdn.testing._rules import assert_never_green, describe, verdict
from ckdn.testing._run import LOG, run_parser

__all__ = ["Conformance", "Setup", "ill_formed"]

# Only the parser's author knows where its evidence lives (which report files it
# reads under which options) and which recorded runs are its tool's own; the kit
# knows the rules. :class:`Conformance` carries the first to the second, and
# answers the one question every rule needs: is this input the tool's own
# complete clean run (then ``pass`` at exit code 0 is right), or not (then it is a
# false green).


@dataclass(frozen=True)
class Setup:
    """One way a check configures the parser: its options, and the report files it reads.

    ``reports`` are names in the run dir; empty when the log itself is the
    evidence (a text-reading parser, or a report option pointing at the log).
    """

    options: Mapping[str, Any] = field(default_factory=dict)
    reports: tuple[str, ...] = ()


class Conformance:
    """A parser and what the rules need to know about it.

    ``reports`` and ``options`` describe the usual setup; ``setups`` replaces them
    when the parser is used in several ways (mypy's text and JSON formats).
    ``cases`` are recorded real runs of the parser's tool; ``foreign`` recorded
    runs of other tools (default: ckdn's own fixtures, in a checkout of ckdn).
    ``exit_code_only`` marks a parser that reads no evidence at all (``generic``):
    its status is the exit code's. ``verdict_at_end`` is false for a tool whose
    log has no closing verdict, so that a log cut at a line end reads as a
    shorter complete run (pre-commit prints one line per hook and no summary).
    ``strict_reports`` says a report named ``*.json``, ``*.sarif`` or ``*.xml`` is
    such a document: damaged until json or expat refuses it, it must be loud.
    """

    def __init__(self, parser: Parser, *, reports: Sequence[str] = (),
                 options: Mapping[str, Any] | None = None, setups: Iterable[Setup] = (),
                 cases: Iterable[RecordedCase] = (),
                 foreign: Iterable[RecordedCase] | None = None, exit_code_only: bool = False,
                 verdict_at_end: bool = True, strict_reports: bool = True) -> None:
        self.parser = parser
        self.setups = tuple(setups) or (Setup(dict(options or {}), tuple(reports)),)
        self.cases = tuple(cases)
        own = {case.family for case in self.cases}
        self.foreign = tuple(project_cases(exclude=own) if foreign is None else foreign)
        self.exit_code_only = exit_code_only
        self.verdict_at_end = verdict_at_end
        self.strict_reports = strict_reports
        self.reports = frozenset(name for setup in self.setups for name in setup.reports)
        self._clean = {_key(case.options, self._evidence(case.outputs()))
                       for case in self.cases if case.status == PASS}

    @property
    def name(self) -> str:
        return self.parser.name

    def evidence(self, case: RecordedCase) -> list[str]:
        """The files of ``case`` its verdict rests on: its reports, else its log."""
        return sorted(name for name in case.files if name in self.reports) or [LOG]

    def clean_logs(self, setup: Setup) -> list[bytes]:
        """Logs of recorded clean runs under ``setup``'s options (beside which a report is read)."""
        logs = [case.log for case in self.cases
                if case.status == PASS and dict(case.options) == dict(setup.options)]
        return logs or [b""]

    def is_clean_run(self, options: Mapping[str, Any], outputs: Mapping[str, bytes]) -> bool:
        """``outputs`` are, but for trailing whitespace, the evidence of a recorded clean run."""
        return _key(options, self._evidence(outputs)) in self._clean

    def run(self, rc: int, outputs: Mapping[str, bytes], options: Mapping[str, Any],
            cwd: str | None = None) -> ParseResult:
        """The parser's facts about a run that left ``outputs`` (the log among them)."""
        files = {name: data for name, data in outputs.items() if name != LOG}
        return run_parser(self.parser, rc, log=outputs.get(LOG, b""), files=files,
                          options=options, cwd=cwd)

    def judge(self, result: ParseResult, rc: int, *, options: Mapping[str, Any],
              outputs: Mapping[str, bytes], what: str) -> None:
        """The verdict rule: never green, unless ``outputs`` are the tool's own clean run."""
        if self.exit_code_only:
            status = verdict(result, rc)
            if (status == PASS) != (rc == 0):
                raise AssertionError(f"{what}: an exit-code-only parser gave {status} at exit "
                                     f"code {rc} ({describe(result)})")
        elif rc != 0 or not self.is_clean_run(options, outputs):
            assert_never_green(result, rc, what=what)

    def exit_code_rule(self, result: ParseResult, rc: int, *, what: str) -> None:
        """The rule that holds whatever the input: never green at a nonzero exit code."""
        if self.exit_code_only:
            self.judge(result, rc, options={}, outputs={}, what=what)
        elif rc != 0:
            assert_never_green(result, rc, what=what)

    def _evidence(self, outputs: Mapping[str, bytes]) -> tuple[tuple[str, bytes], ...]:
        names = sorted(name for name in outputs if name in self.reports) or [LOG]
        return tuple((name, outputs.get(name, b"").rstrip()) for name in names)


def ill_formed(name: str, data: bytes) -> bool:
    """A ``.json`` / ``.sarif`` report json refuses, or an ``.xml`` one expat refuses.

    Other names are not judged (False): the kit knows these formats, not yours.
    """
    suffix = name.rpartition(".")[2].lower()
    if suffix in ("json", "sarif"):
        try:
            json.loads(data)
        except (ValueError, RecursionError):
            return True
        return False
    if suffix == "xml":
        parser = expat.ParserCreate()
        try:
            parser.Parse(data, True)
        except (expat.ExpatError, ValueError, LookupError):  # LookupError: unknown encoding
            return True
    return False


def _key(options: Mapping[str, Any], evidence: tuple[tuple[str, bytes], ...]) -> tuple[str, Any]:
    return json.dumps(dict(options), sort_keys=True, default=str), evidence
