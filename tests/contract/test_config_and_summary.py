"""CONTRACT.md's configuration keys load here, and its summary keys are in our digests.

The keys are read from CONTRACT.md's own table, so a key added there fails this
test until it loads. Each parser option is tried on the parser that takes it,
with a value of the documented type; the keys whose feature comes with a later
issue are checked to be refused by name ("not available yet"), never ignored.
The summary keys are read from digests of real runs (ruff, live; generic) and
from the recorded coverage fixture.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ckdn.config import load_config
from ckdn.errors import ConfigError
from tests.contract import published
from tests.project import Project

#: parser option -> (a parser that takes it, a value of the type CONTRACT.md gives it).
OPTION_HOMES: dict[str, list[tuple[str, str]]] = {
    "junit": [("pytest", '"junit.xml"'), ("coverage", '"junit.xml"')],
    "coverage_xml": [("coverage", '"coverage.xml"')],
    "report": [("ruff", '"ruff.json"'), ("bandit", '"bandit.json"'),
               ("pip_audit", '"pip-audit.json"'), ("pylint", '"pylint.json"'),
               ("sarif", '"report.sarif"')],
    "fail_under": [("coverage", "85.5")],
    "missing_lines_preview": [("coverage", "5")],
    "format": [("mypy", '"json"'), ("mypy", '"text"')],
    "score_fail_under": [("pylint", "9.5")],
    "fail_levels": [("sarif", '["error", "warning"]')],
    "allow_skipped": [("pip_audit", "true"), ("pip_audit", '["Requests", "zope.interface"]'),
                      ("bandit", "true"), ("pylint", "true")],
    "allow_all_skipped": [("pip_audit", "true"), ("pre_commit", "true")],
    "legacy_location": [("ruff", "true")],
}
#: The check keys that are not parser options, with a value each.
CHECK_KEYS = {"command": '"true"', "parser": '"generic"', "timeout": "30",
              "env": '{ A = "1" }', "top": "5"}
#: [run] keys with a value that loads, or (for a feature of a later issue) the refusal.
RUN_KEYS: dict[str, tuple[str, str | None]] = {
    "runs_dir": ('".runs"', None), "keep": ("0", None), "top": ("3", None),
    "max_snippet_lines": ("0", None), "log_tail_lines": ("10", None),
    "command_policy": ('"off"', None),
    "baseline": ('"ckdn.baseline.json"', None),
}


def _keys(table: str) -> list[str]:
    text = published.CONTRACT.read_text(encoding="utf-8")
    start = text.index("## Configuration keys consumers already have")
    rows = published.table(text[start:text.index("\n## ", start + 1)])
    cell = next(keys for name, keys in rows if name == table)
    return re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", cell))  # not the values


def _load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "ckdn.toml"
    path.write_text(text)
    return load_config(tmp_path)


def test_every_atomic_check_key_of_the_contract_has_a_home_here() -> None:
    keys = _keys("`[check.NAME]` atomic")
    assert "legacy_location" in keys  # the table was read, not an empty match
    assert set(keys) == set(CHECK_KEYS) | set(OPTION_HOMES)


@pytest.mark.parametrize(("key", "parser", "value"),
                         [(key, parser, value) for key, homes in OPTION_HOMES.items()
                          for parser, value in homes])
def test_every_parser_option_of_the_contract_loads_on_its_parser(
        tmp_path: Path, key: str, parser: str, value: str) -> None:
    config = _load(tmp_path, f'[check.x]\ncommand = "true"\nparser = "{parser}"\n'
                             f"{key} = {value}\n")
    assert key in config.checks["x"].options


def test_the_check_keys_that_are_not_options_load(tmp_path: Path) -> None:
    body = "".join(f"{key} = {value}\n" for key, value in CHECK_KEYS.items())
    check = _load(tmp_path, "[check.x]\n" + body).checks["x"]
    assert (check.timeout, check.top, dict(check.env)) == (30, 5, {"A": "1"})
    alias = _load(tmp_path, '[check.x]\ncommand = "true"\nparser = "generic"\n'
                            '[check.all]\nmembers = ["x"]\nfail_fast = false\n')
    assert _keys("`[check.NAME]` alias") == ["members", "fail_fast"]
    assert alias.aliases["all"].fail_fast is False


def test_every_run_key_of_the_contract_loads_and_each_policy_means_what_it_says(
        tmp_path: Path) -> None:
    assert set(_keys("`[run]`")) == set(RUN_KEYS)
    for key, (value, refusal) in RUN_KEYS.items():
        text = f"[run]\n{key} = {value}\n"
        if refusal is None:
            _load(tmp_path, text)
        else:
            with pytest.raises(ConfigError, match=rf"{key}.*{refusal}"):
                _load(tmp_path, text)
    assert _load(tmp_path, "").run.command_policy == "workspace"  # the contract's default
    assert _load(tmp_path, '[run]\ncommand_policy = "workspace"\n').run.command_policy \
        == "workspace"
    assert _keys("`[run.command_allowlist]`") == ["prefixes"]
    allowlist = _load(tmp_path, '[run]\ncommand_policy = "allowlist"\n'
                                '[run.command_allowlist]\nprefixes = ["uv run"]\n').run
    assert (allowlist.command_policy, allowlist.allowlist) == ("allowlist", ("uv run",))
    with pytest.raises(ConfigError, match=r"allowlist.*is read only with command_policy"):
        _load(tmp_path, '[run]\ncommand_policy = "off"\n'
                        '[run.command_allowlist]\nprefixes = ["uv run"]\n')


def test_generic_digests_carry_log_lines(project: Project) -> None:
    project.config(f"""
        [check.talk]
        command = ["{sys.executable}", "-c", "print(1); print(2); print(3)"]
        parser = "generic"
    """)
    digest = project.digest(project.ckdn("run", "talk"))
    assert digest["status"] == "pass"
    assert digest["summary"]["log_lines"] == 3


def test_ruff_digests_carry_violation_count_and_per_rule_counts_and_sarif_its_three(
        project: Project) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))  # the dev extra's
    assert ruff is not None
    (project.root / "bad.py").write_text(
        "import os\nimport sys\n\nx = 1\nif x == None:\n    pass\n")
    project.config(f"""
        [check.lint]
        command = ["{ruff}", "check", "--no-cache", "--isolated", "--select", "F,E",
                   "--output-format", "json", "--output-file", "{{run_dir}}/ruff.json", "."]
        parser = "ruff"

        [check.sarif]
        command = ["{ruff}", "check", "--no-cache", "--isolated", "--select", "F,E",
                   "--output-format", "sarif", "--output-file", "{{run_dir}}/report.sarif",
                   "."]
        parser = "sarif"
        fail_levels = ["error", "warning"]
    """)
    lint = project.digest(project.ckdn("run", "lint"))
    assert lint["status"] == "fail"
    assert lint["summary"]["violation_count"] == 3
    assert lint["summary"]["by_rule"] == {"F401": 2, "E711": 1}
    sarif = project.digest(project.ckdn("run", "sarif"))
    assert sarif["status"] == "fail"
    assert sum(sarif["summary"]["by_level"].values()) == 3
    assert sarif["summary"]["by_rule"] == {"F401": 2, "E711": 1}
    assert sarif["summary"]["tools"] == ["ruff"]


def test_coverage_facts_carry_the_published_keys() -> None:
    from ckdn.parsers import get_parser
    from ckdn.testing import run_parser
    from tests.core.parsers.conftest import FIXTURES

    case = FIXTURES / "coverage" / "below"
    files = {p.name: p.read_bytes() for p in case.iterdir()
             if p.is_file() and p.name not in ("case.json", "full.log")}
    result = run_parser(get_parser("coverage"), 0, log=(case / "full.log").read_bytes(),
                        files=files, options={"fail_under": 99})
    summary = result.summary
    assert isinstance(summary["overall"]["line_percent"], int | float)
    assert summary["uncovered_files_total"] >= 1
    assert summary["top_uncovered_files"]
    assert summary["counts"]["tests"] >= 1
