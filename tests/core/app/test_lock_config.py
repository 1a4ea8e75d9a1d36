"""``ckdn lock-config``, ``ckdn verify-config`` and ``[run].require_lock``, through the real CLI."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ckdn.app import load_config
from ckdn.errors import RefusedError
from tests.project import Project, clean_env

CONFIG = """\
[run]
{run}

[check.unit]
command = {unit}
parser = "pytest"
timeout = 60
env = {{ MODE = "strict", API_TOKEN = "t0ps3cr3t" }}
junit = "junit.xml"

[check.lint]
command = "ruff check ."
parser = "generic"

[check.all]
members = ["unit", "lint"]
"""


UNIT = "pytest -q --junitxml {run_dir}/junit.xml"


def write(project: Project, *, run: str = "", unit: str = UNIT, after: str = "") -> None:
    text = CONFIG.format(run=run, unit=json.dumps(unit)) + after
    (project.root / "ckdn.toml").write_text(text)


def test_the_lock_file_is_deterministic_sorted_and_holds_no_values(project: Project) -> None:
    write(project)
    proc = project.ckdn("lock-config")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote ")
    assert "2 checks, 1 aliases" in proc.stdout
    first = (project.root / "ckdn.lock.toml").read_text()
    project.ckdn("lock-config")
    assert (project.root / "ckdn.lock.toml").read_text() == first
    assert "t0ps3cr3t" not in first
    assert "strict" not in first
    assert "pytest -q" not in first
    headers = [line for line in first.splitlines() if line.startswith("[")]
    assert headers == ["[run]", "[alias.all]", "[check.lint]", "[check.unit]"]
    unit = first.split("[check.unit]\n")[1].split("\n\n")[0].splitlines()
    assert [line.split(" = ")[0] for line in unit] == sorted(
        ["command", "parser", "timeout", "top", "env_keys", "env_values", "env_allow", "options"])


def test_verify_config_reports_changed_missing_and_extra_entries_and_exits_1(
        project: Project) -> None:
    write(project)
    project.ckdn("lock-config")
    ok = project.ckdn("verify-config")
    assert ok.returncode == 0
    assert ok.stdout.startswith("ok: the config matches ckdn.lock.toml")
    text = (project.root / "ckdn.toml").read_text()
    text = text.replace("timeout = 60", "timeout = 61").replace(
        '[check.lint]\ncommand = "ruff check ."\nparser = "generic"\n',
        '[check.fmt]\ncommand = "ruff format --check ."\nparser = "reformat"\n').replace(
        '"unit", "lint"', '"unit", "fmt"')
    (project.root / "ckdn.toml").write_text(text)
    proc = project.ckdn("verify-config")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "changed: [alias.all] members",
        "changed: [check.unit] timeout",
        "missing: [check.lint] is locked but no longer configured",
        "extra: [check.fmt] is configured but not locked",
    ]
    doc = json.loads(project.ckdn("verify-config", "--json").stdout)
    assert doc == {"ok": False, "lock": "ckdn.lock.toml",
                   "changed": [{"entry": "alias.all", "fields": ["members"]},
                               {"entry": "check.unit", "fields": ["timeout"]}],
                   "missing": ["check.lint"], "extra": ["check.fmt"], "blocked": []}


def test_a_secret_looking_env_value_is_not_locked_but_any_other_is(project: Project) -> None:
    write(project)
    project.ckdn("lock-config")
    path = project.root / "ckdn.toml"
    path.write_text(path.read_text().replace("t0ps3cr3t", "rotated"))
    assert project.ckdn("verify-config").returncode == 0
    path.write_text(path.read_text().replace('"strict"', '"lenient"'))
    proc = project.ckdn("verify-config")
    assert proc.stdout.splitlines() == ["changed: [check.unit] env_values"]


def test_without_a_lock_file_verify_is_ok_unless_locked_asks_for_one(project: Project) -> None:
    write(project)
    proc = project.ckdn("verify-config")
    assert proc.returncode == 0
    assert "no lock file ckdn.lock.toml" in proc.stdout
    assert project.ckdn("verify-config", "--locked").returncode == 1


def test_lock_config_writes_where_o_says(project: Project) -> None:
    write(project)
    proc = project.ckdn("lock-config", "-o", "pinned.toml")
    assert proc.returncode == 0
    assert (project.root / "pinned.toml").read_text().startswith("# ckdn.lock.toml")
    assert not (project.root / "ckdn.lock.toml").exists()


def test_verify_config_reads_the_lock_file_lock_file_names(project: Project) -> None:
    write(project)
    assert project.ckdn("lock-config", "-o", "pinned.toml").returncode == 0
    proc = project.ckdn("verify-config", "--lock-file", "pinned.toml")
    assert (proc.returncode, proc.stdout) == (0, "ok: the config matches pinned.toml\n")
    write(project, unit=UNIT + " -x")
    proc = project.ckdn("verify-config", "--lock-file", "pinned.toml")
    assert (proc.returncode, proc.stdout) == (1, "changed: [check.unit] command\n")


def test_verify_config_fails_on_a_check_the_command_policy_would_block(project: Project) -> None:
    write(project, after='\n[check.peek]\ncommand = "cat /etc/hostname"\nparser = "generic"\n')
    assert project.ckdn("lock-config").returncode == 0
    proc = project.ckdn("verify-config")
    assert proc.returncode == 1
    (line,) = proc.stdout.splitlines()
    assert line.startswith("[check.peek] blocked by the command policy (workspace): ")
    assert line.endswith("(ckdn run would exit 126)")
    doc = json.loads(project.ckdn("verify-config", "--json").stdout)
    assert (doc["ok"], [b["check"] for b in doc["blocked"]]) == (False, ["peek"])


def marker_command(root: Path) -> str:
    return shlex.join([sys.executable, "-c", f"open({str(root / 'ran')!r}, 'w')"])


def test_require_lock_refuses_a_check_changed_since_the_lock_and_runs_nothing(
        project: Project) -> None:
    def mark(extra: str) -> str:
        command = json.dumps(marker_command(project.root) + extra)
        return f'\n[check.mark]\ncommand = {command}\nparser = "generic"\n'

    write(project, run="require_lock = true", after=mark(""))
    project.ckdn("lock-config")
    write(project, run="require_lock = true", after=mark(" --weaker"))
    proc = project.ckdn("run", "mark")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "ckdn: the config is not as ckdn.lock.toml locked it (changed: [check.mark] command);"
        " nothing ran: review the change, then `ckdn lock-config`"]
    assert not (project.root / "ran").exists()
    assert not project.runs.exists() or not any(project.runs.glob("*-mark"))
    # an unchanged check still runs; an alias is refused when one member changed
    assert project.ckdn("run", "lint").returncode != 2


def test_removing_require_lock_is_itself_a_change_the_lock_refuses(project: Project) -> None:
    write(project, run="require_lock = true")
    project.ckdn("lock-config")
    write(project)
    proc = project.ckdn("run", "lint")
    assert proc.returncode == 2
    assert "changed: [run] require_lock" in proc.stderr


def test_require_lock_without_a_lock_file_is_refused_in_one_line(project: Project) -> None:
    write(project, run="require_lock = true")
    proc = project.ckdn("run", "lint")
    assert proc.returncode == 2
    assert proc.stderr == ("ckdn: [run].require_lock is set but there is no ckdn.lock.toml;"
                           " review ckdn.toml and run `ckdn lock-config`\n")


def test_a_host_running_through_the_door_is_refused_the_same(project: Project) -> None:
    from ckdn import app

    write(project, run="require_lock = true")
    project.ckdn("lock-config")
    path = project.root / "ckdn.toml"
    path.write_text(path.read_text().replace("ruff check .", "ruff check --exit-zero ."))
    config = load_config(project.root)
    with pytest.raises(RefusedError, match=r"changed: \[check\.lint\] command"):
        app.run(config, "lint", env={"PATH": "/usr/bin"}, host_bins=["/usr/bin"])
    with pytest.raises(RefusedError, match=r"changed: \[check\.lint\] command"):
        app.run(config, "all")
    with pytest.raises(RefusedError):
        app.run_all(config)


def test_the_run_path_recognises_a_required_lock_by_the_line_the_lock_writes(
        project: Project) -> None:
    from ckdn.app._project.lock import render
    from ckdn.app._running.policy import LOCK_REQUIRED

    write(project, run="require_lock = true")
    assert LOCK_REQUIRED.decode() in render(load_config(project.root)).splitlines()
    write(project)
    assert LOCK_REQUIRED.decode() not in render(load_config(project.root))


def test_a_lock_that_requires_nothing_costs_a_run_no_lock_module(project: Project) -> None:
    write(project)
    project.ckdn("lock-config")
    code = ("import sys; from ckdn.cli import main; main(['run', 'lint']);"
            " print('ckdn.app._project.lock' in sys.modules, 'hashlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True,
                          text=True, check=False, env=clean_env())
    assert proc.stdout.splitlines()[-1] == "False False"
