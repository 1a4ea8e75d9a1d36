"""What the kit needs to know about a parser to hold it to ckdn's rules.

Only the parser's author knows where its evidence lives (which report files it
reads under which options) and which recorded runs are its tool's own; the kit
knows the rules. :class:`Conformance` carries the first to the second, and
answers the one question every rule needs: is this input the tool's own
complete clean run (then ``pass`` at exit code 0 is right), or not (then it is a
false green).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ckdn.parsers.base import Parser
from ckdn.reconcile import PASS
from ckdn.testing._cases import RecordedCase, project_cases
from ckdn.testing._run import LOG

__all__ = ["Conformance", "Setup"]


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
    ``strict_reports`` says the reports are JSON or XML documents, where any NUL
    byte makes the document ill-formed.
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

    def _evidence(self, outputs: Mapping[str, bytes]) -> tuple[tuple[str, bytes], ...]:
        names = sorted(name for name in outputs if name in self.reports) or [LOG]
        return tuple((name, outputs.get(name, b"").rstrip()) for name in names)


def _key(options: Mapping[str, Any], evidence: tuple[tuple[str, bytes], ...]) -> tuple[str, Any]:
    return json.dumps(dict(options), sort_keys=True, default=str), evidence
