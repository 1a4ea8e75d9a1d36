"""The distribution is checkdown; ``ckdn doctor`` says when the unrelated ``ckdn`` shares it.

The other distribution is represented the way Python sees any installed
distribution: a ``.dist-info`` with its metadata on ``sys.path`` (never the
package itself, which this project does not install or read).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import ckdn
from ckdn.schema import load_schema
from tests.project import clean_env

PY = sys.executable


def ckdn_cli(*args: str, site: Path | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = clean_env()
    # the dev extra's tools on PATH, as an activated venv puts them (not only when it is)
    env["PATH"] = f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}"
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([PY, "-m", "ckdn", *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False, cwd=cwd)


def dist_info(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n")


def test_the_version_names_the_distribution() -> None:
    proc = ckdn_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"checkdown {ckdn.__version__}"


#: A project with one check doctor finds sound.
SOUND = '[check.ok]\ncommand = "true"\nparser = "generic"\n'


def test_a_sound_installation_is_ok(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(SOUND)
    proc = ckdn_cli("doctor", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ok: checkdown {ckdn.__version__} (ckdn package at ")
    assert proc.stderr == ""


def test_no_config_at_all_is_an_error_naming_where_it_looked_and_ckdn_init(
        tmp_path: Path) -> None:
    proc = ckdn_cli("doctor", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"ckdn: error: no ckdn.toml in {tmp_path} (looked for "
                           f"{tmp_path / 'ckdn.toml'}): no check is configured;")
    assert "run `ckdn init`" in line


def test_no_config_in_json_is_a_config_error_with_a_null_path(tmp_path: Path) -> None:
    proc = ckdn_cli("doctor", "--json", cwd=tmp_path)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, load_schema("ckdn.doctor/1"))
    assert doc["config"] is None
    assert [(p["level"], p["rule"]) for p in doc["problems"]] == [("error", "config")]
    assert "ckdn init" in doc["problems"][0]["message"]


def test_the_unrelated_ckdn_distribution_beside_it_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(SOUND)
    dist_info(tmp_path, "ckdn", "1.4.1")
    proc = ckdn_cli("doctor", site=tmp_path, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines == ["ckdn: the unrelated `ckdn` distribution 1.4.1 is installed too and owns the "
                     "same `ckdn` package; `pip uninstall ckdn`, then `pip install "
                     "--force-reinstall checkdown`"]


def test_files_overwritten_by_another_version_are_named(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(SOUND)
    dist_info(tmp_path, "checkdown", "9.9.9")  # first on sys.path: what Python finds
    proc = ckdn_cli("doctor", site=tmp_path, cwd=tmp_path)
    assert proc.returncode == 1
    assert f"the ckdn package says {ckdn.__version__} but the installed checkdown is 9.9.9" \
        in proc.stderr


def test_the_project_is_published_as_checkdown() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "checkdown"
    assert project["scripts"] == {"ckdn-mcp": "mcp_ckdn:main"}
    # `ckdn` is a shared script (no `import re` before the CLI), and it calls ckdn.cli:main
    wheel = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    assert wheel["targets"]["wheel"]["shared-scripts"] == {"core/scripts/ckdn": "ckdn"}
    launcher = (root / "core" / "scripts" / "ckdn").read_text()
    assert launcher.startswith("#!/usr/bin/env python3\n")
    assert "from ckdn.cli import main\n" in launcher
    assert "\nimport re" not in launcher
    docs = "\n".join(p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")])
    assert "pip install ckdn" not in docs.replace("Do not `pip install ckdn`", "")
    assert '"ckdn"]' not in docs
    assert ", ckdn\n" not in docs


# -- the configured checks, looked at statically ----------------------------------------

def doctor_in(root: Path, config: str, *args: str) -> subprocess.CompletedProcess[str]:
    (root / "ckdn.toml").write_text(config)
    return ckdn_cli("doctor", *args, cwd=root)


def test_the_projects_own_config_is_sound_under_doctor() -> None:
    root = Path(__file__).resolve().parents[2]
    env = clean_env()
    env["PATH"] = f"{Path(PY).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run([PY, "-m", "ckdn", "doctor", "--strict", "--json"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["problems"] == []
    jsonschema.Draft202012Validator(load_schema("ckdn.doctor/1")).validate(doc)
    assert {c["name"]: c["verdict"] for c in doc["checks"]} == {
        "ruff": "allowed", "mypy": "allowed", "layers": "allowed", "pytest": "allowed"}


@pytest.mark.parametrize(("table", "level", "rule", "fragment"), [
    ('command = "no-such-tool-xyz run"\nparser = "generic"', "error", "not-found",
     "program 'no-such-tool-xyz' is not found on the check's PATH"),
    ('command = "./bin/tool"\nparser = "generic"', "error", "not-found",
     "program './bin/tool' is not an executable file"),
    ('command = "true --junitxml {run_dir}/junit.xml"\nparser = "pytest"\njunit = "report.xml"',
     "warning", "artifact",
     "junit = 'report.xml', but no argument of the command names 'report.xml'"),
    ('command = "true --output-format json"\nparser = "ruff"', "warning", "artifact",
     "report = 'ruff.json' (the parser's default), but no argument"),
    ('command = "true ."\nparser = "mypy"\nformat = "json"', "warning", "flags",
     'format = "json" but the command lacks --output json'),
    ('command = "true --output json"\nparser = "mypy"', "warning", "flags",
     'the command prints JSON (--output json) but format is not "json"'),
    ('command = "true"\nparser = "pyright"', "warning", "flags",
     "reads --outputjson, which the command lacks"),
    ('command = "true format ."\nparser = "reformat"', "warning", "flags",
     'parser "reformat" needs --check'),
    ('command = "true -q"\nparser = "pytest"', "warning", "flags",
     "the command has neither --junitxml {run_dir}/junit.xml nor --ckdn-digest"),
    ('command = "true /etc/shadow"\nparser = "generic"', "error", "policy",
     "blocked by the command policy (workspace): argument '/etc/shadow' is under /etc"),
])
def test_each_static_problem_is_one_line_with_its_level_and_rule(
        tmp_path: Path, table: str, level: str, rule: str, fragment: str) -> None:
    proc = doctor_in(tmp_path, f"[check.c]\n{table}\n", "--json")
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(load_schema("ckdn.doctor/1")).validate(doc)
    assert [(p["level"], p["rule"], p["check"]) for p in doc["problems"]] == [(level, rule, "c")]
    assert fragment in doc["problems"][0]["message"]
    assert proc.returncode == (1 if level == "error" else 0)
    text = doctor_in(tmp_path, f"[check.c]\n{table}\n")
    assert text.stderr.splitlines() == [f"ckdn: {level}: [check.c] {doc['problems'][0]['message']}"]
    assert doctor_in(tmp_path, f"[check.c]\n{table}\n", "--strict").returncode == 1


def test_a_sound_check_has_no_problem_and_its_verdict(tmp_path: Path) -> None:
    proc = doctor_in(tmp_path, '[check.c]\ncommand = "ruff format --check ."\n'
                               'parser = "reformat"\n', "--strict", "--json")
    assert proc.returncode == 0, proc.stdout
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "ckdn.doctor/1"
    assert doc["errors"] == doc["warnings"] == 0
    assert doc["checks"] == [{"name": "c", "policy": "workspace", "verdict": "allowed"}]


def test_a_command_that_does_not_split_is_an_error_not_a_refusal(tmp_path: Path) -> None:
    proc = doctor_in(tmp_path, "[check.c]\ncommand = \"pytest 'unclosed\"\nparser = \"generic\"\n")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "ckdn: error: ckdn.toml: [check.c] command: cannot be split like a shell line: No closing"
        " quotation (no shell runs it; quote each argument)"]


def test_doctor_names_a_check_changed_since_the_lock(tmp_path: Path) -> None:
    doctor_in(tmp_path, '[run]\nrequire_lock = true\n[check.c]\ncommand = "true"\n'
                        'parser = "generic"\n')
    ckdn_cli("lock-config", cwd=tmp_path)
    proc = doctor_in(tmp_path, '[run]\nrequire_lock = true\n[check.c]\ncommand = "true x"\n'
                               'parser = "generic"\n')
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["ckdn: error: changed: [check.c] command"]
