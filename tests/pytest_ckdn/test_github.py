"""In a GitHub Actions job a standalone ``pytest --ckdn-digest`` session annotates its
failures and adds its step summary (pytester runs the real pytest in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.project import UNUSED_PLUGINS

TESTS = """
def test_fine():
    pass

def test_breaks():
    assert 1 + 1 == 3, "100%: a, b\\nand more"
"""


def github_job(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    summary = tmp_path / "step-summary.md"
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("RUNNER_TEMP", str(temp))
    return summary


def test_a_session_in_a_github_job_annotates_and_summarises_its_failures(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    summary = github_job(monkeypatch, tmp_path)
    pytester.makepyfile(test_sample_github=TESTS)
    result = pytester.runpytest_subprocess("--ckdn-digest", "-p", "no:randomly", *UNUSED_PLUGINS)
    assert result.ret == 1
    lines = result.outlines
    annotations = [line for line in lines if line.startswith("::")]
    assert len(annotations) == 1
    assert annotations[0].startswith(
        "::error file=test_sample_github.py,line=5,endLine=5,title=pytest%3A test_failure::"
        "test_sample_github.py::test_breaks: AssertionError: 100%25: a, b")
    assert json.loads(lines[-1])["status"] == "fail"  # the digest is still the last line
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## ❌ ckdn: pytest fail (rc 1)")
    assert "| pytest | ❌ fail | 1 | 1 |" in text


@pytest.mark.parametrize("switch", ["--no-ckdn-github", "CKDN_GITHUB=0", "not-github"])
def test_the_github_report_can_be_switched_off(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        switch: str) -> None:
    summary = github_job(monkeypatch, tmp_path)
    args = ["--ckdn-digest", "-p", "no:randomly", *UNUSED_PLUGINS]
    if switch.startswith("--"):
        args.append(switch)
    elif switch == "CKDN_GITHUB=0":
        monkeypatch.setenv("CKDN_GITHUB", "0")
    else:
        monkeypatch.delenv("GITHUB_ACTIONS")
    pytester.makepyfile(test_sample_github=TESTS)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 1
    assert not [line for line in result.outlines if line.startswith("::")]
    assert not summary.exists()
