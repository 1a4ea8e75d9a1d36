"""A red run screens each finding's message for secrets once, not once per use.

A replayed ruff report through a whole run (digest and findings.jsonl): the
redaction screen (``Redaction.may_hold``) is counted. Each message is screened
once for findings.jsonl, plus once for each finding the digest shows (``top``);
a message the report repeats is screened once in all (issue 22).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.project import Project

TOP = 3


def replayed(project: Project, messages: list[str]) -> dict[str, Any]:
    from ckdn import app

    report = [{"code": "F821", "filename": f"m{n // 10}.py", "message": message,
               "location": {"row": n % 10 + 1, "column": 1}, "fix": None,
               "url": "https://docs.astral.sh/ruff/rules/undefined-name"}
              for n, message in enumerate(messages)]
    (project.root / "report.json").write_text(json.dumps(report))
    project.config(f'[run]\ntop = {TOP}\n[check.ruff]\n'
                   'command = "sh -c \'cp report.json {run_dir}/ruff.json; exit 1\'"\n'
                   'parser = "ruff"\n')
    return dict(app.run(app.load_config(str(project.root)), "ruff").digest)


def screened(project: Project, monkeypatch: pytest.MonkeyPatch,
             messages: list[str]) -> Counter[str]:
    from ckdn.redact import Redaction

    calls: Counter[str] = Counter()
    real = Redaction.may_hold

    def counting(self: Redaction, text: str, encoded: bool = True, edge: bool = True) -> bool:
        calls[text] += 1
        return real(self, text, encoded, edge)

    monkeypatch.setattr(Redaction, "may_hold", counting)
    digest = replayed(project, messages)
    assert digest["findings_total"] == len(messages)
    assert (project.root / digest["run_dir"] / "findings.jsonl").is_file()
    return Counter({text: n for text, n in calls.items() if text.startswith("F821 ")})


def test_each_finding_is_screened_once(project: Project, monkeypatch: pytest.MonkeyPatch,
                                       ) -> None:
    messages = [f"Undefined name `name{n}`" for n in range(300)]
    calls = screened(project, monkeypatch, messages)
    assert len(calls) == 300
    assert sum(calls.values()) <= 300 + TOP, calls.most_common(5)


def test_a_repeated_message_is_screened_once(project: Project,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls = screened(project, monkeypatch, ["Undefined name `missing`"] * 300)
    assert sum(calls.values()) <= 1 + TOP, calls
