"""``ckdn annotate``, ``ckdn show`` on a terminal and ``ckdn run --format text``, for real."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ckdn.cli import main
from tests.core.reports.conftest import RUNS, RealRun, make_run
from tests.core.reports.test_sarif import many_findings, schema_errors


def test_annotate_refuses_an_unknown_format_in_one_line(real_runs: dict[str, RealRun]) -> None:
    proc = real_runs["ruff"].project.ckdn("annotate", "--format", "html")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert "invalid choice: 'html'" in proc.stderr


def test_annotate_without_runs_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from tests.project import Project

    proc = Project(tmp_path).ckdn("annotate", "--format", "github")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1


def test_annotate_without_a_format_gives_the_github_view(real_runs: dict[str, RealRun]) -> None:
    project = real_runs["ruff"].project
    plain = project.ckdn("annotate")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == project.ckdn("annotate", "--format", "github").stdout
    assert plain.stdout.startswith("::")


def test_annotate_names_a_run_dir_and_runs_nothing(real_runs: dict[str, RealRun]) -> None:
    run = real_runs["mypy"]
    (run_dir,) = run.project.run_dirs()
    before = sorted(p.name for p in run.project.runs.iterdir())
    out = run.annotate("text", run_dir.name)
    assert out.startswith("mypy fail (rc 1)")
    assert sorted(p.name for p in run.project.runs.iterdir()) == before


def test_the_verbs_formats_are_the_views_formats() -> None:
    from ckdn.app.queries import ANNOTATE_FORMATS
    from ckdn.cli.annotate import ANNOTATE_FORMATS as CHOICES

    assert CHOICES == ANNOTATE_FORMATS


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def shown(monkeypatch: pytest.MonkeyPatch, root: Path, *argv: str, tty: bool) -> str:
    out = Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert main(["--cwd", str(root), *argv]) in (0, 1)
    return out.getvalue()


def test_show_is_text_on_a_terminal_and_json_when_piped(
        real_runs: dict[str, RealRun], monkeypatch: pytest.MonkeyPatch) -> None:
    root = real_runs["ruff"].project.root
    piped = shown(monkeypatch, root, "show", tty=False)
    assert json.loads(piped)["check"] == "ruff"
    stored = shown(monkeypatch, root, "show", "--json", tty=True)
    assert json.loads(stored)["check"] == "ruff"
    text = shown(monkeypatch, root, "show", tty=True)
    assert "\x1b[31mfail\x1b[0m" in text
    assert "evidence: .agent-runs/" in text
    monkeypatch.setenv("NO_COLOR", "1")
    plain = io.StringIO()
    plain.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdout", plain)
    main(["--cwd", str(root), "show"])
    assert "\x1b" not in plain.getvalue()
    assert plain.getvalue().startswith("ruff fail (rc 1)")


def test_run_format_text_prints_the_text_view_and_keeps_the_exit_code(tmp_path: Path) -> None:
    run = make_run(tmp_path, "ruff")
    proc = run.project.ckdn("run", "ruff", "--format", "text")
    assert proc.returncode == 1
    assert proc.stdout.startswith("ruff fail (rc 1): exit code 1 with 19 finding(s)\n")
    assert "\x1b" not in proc.stdout
    default = run.project.ckdn("run", "ruff")
    assert json.loads(default.stdout)["check"] == "ruff"


def test_an_aggregate_is_projected_with_all_its_members(tmp_path: Path) -> None:
    ruff = RUNS["ruff"][1]
    mypy = RUNS["mypy"][1]
    run = make_run(tmp_path, "ruff")
    run.project.config(f"{ruff}\n{mypy}\n[check.lint]\nmembers = ['ruff', 'mypy']\n"
                       "fail_fast = false\n")
    (tmp_path / "shapes.py").write_text("def area(w: int) -> str:\n    return w\n")
    assert run.project.ckdn("run", "lint").returncode == 1
    log = json.loads(run.annotate("sarif"))
    assert schema_errors(log) == []
    assert [r["automationDetails"]["id"] for r in log["runs"]] == ["ckdn/ruff/", "ckdn/mypy/"]
    assert all(r["results"] for r in log["runs"])
    text = run.annotate("text")
    assert text.startswith("lint fail (rc 1): 2 member(s)\n")
    assert "\nruff fail" in text
    assert "\nmypy fail" in text
    summary = run.annotate("summary")
    assert "| ruff | ❌ fail | 1 | 19 |" in summary
    assert "| mypy | ❌ fail | 1 |" in summary


def test_a_github_job_shares_one_annotation_budget_across_steps(tmp_path: Path) -> None:
    project = many_findings(tmp_path / "p", 300)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    job = {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(temp), "GITHUB_JOB": "checks"}
    counts = []
    for step in range(1, 5):
        env = {**job, "GITHUB_ACTION": f"__run_{step}"}
        proc = project.ckdn("annotate", "--format", "github", env=env)
        assert proc.returncode == 0, proc.stderr
        counts.append(len(proc.stdout.splitlines()))
        assert proc.stdout.splitlines()[-1].startswith("::notice title=ckdn::")
    assert counts == [11, 11, 11, 11]
    proc = project.ckdn("annotate", "--format", "github", env={**job, "GITHUB_ACTION": "__x"})
    lines = proc.stdout.splitlines()
    assert len(lines) == 50 - 44  # five errors and the notice
    assert lines[-1].startswith("::notice title=ckdn::295 more finding(s)")
    proc = project.ckdn("annotate", "--format", "github", env={**job, "GITHUB_ACTION": "__y"})
    assert proc.stdout == ""
    outside = project.ckdn("annotate", "--format", "github")
    assert len(outside.stdout.splitlines()) == 11


def test_two_reports_in_one_step_share_its_ten_errors(tmp_path: Path) -> None:
    project = many_findings(tmp_path / "p", 300)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(temp), "GITHUB_JOB": "checks",
           "GITHUB_ACTION": "__run"}
    first = project.ckdn("annotate", "--format", "github", env=env).stdout.splitlines()
    second = project.ckdn("annotate", "--format", "github", env=env).stdout.splitlines()
    assert [line[:8] for line in first] == ["::error "] * 10 + ["::notice"]
    assert [line[:8] for line in second] == ["::notice"]  # no error left in the step
    assert "300 more finding(s) not annotated" in second[0]
    third = project.ckdn("annotate", "--format", "github",
                         env={**env, "GITHUB_ACTION": "__run_2"}).stdout.splitlines()
    assert len(third) == 11
