"""README's promises to a newcomer: the two commands CI runs, and installing from a checkout."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CKDN_TOML = tomllib.loads((ROOT / "ckdn.toml").read_text(encoding="utf-8"))


def section(title: str) -> str:
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_ci_stops_at_the_first_command_that_fails_pytests_no_tests_exit_5_included() -> None:
    lines = [line for line in CI_RUN.splitlines() if line and not line.startswith("#")]
    assert lines[0] == "set -euo pipefail"
    for line in lines:
        assert not re.search(r"\|\||;\s*true|\bset \+e", line), line


def test_command_1_runs_a_subset_of_the_suite_and_command_2_the_suite_once() -> None:
    checks = CKDN_TOML["check"]
    pytest_argv = shlex.split(checks["pytest"]["command"])
    assert pytest_argv[0] == "pytest"
    paths = [arg for arg in pytest_argv if arg.startswith("tests/")]
    assert paths, "the pytest check of command 1 names its subset"
    for path in paths:
        assert (ROOT / path).exists(), path  # a path that is gone would select no test
    assert "--suppress-no-test-exit-code" not in pytest_argv
    assert {"ruff", "mypy", "layers", "pytest"} <= set(checks)


def test_each_command_says_how_long_it_takes_on_two_cores() -> None:
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    comments = first_block.split("\npython3")
    assert len(comments) == 3
    for comment in comments[:2]:
        assert "two busy cores" in comment
        assert re.search(r"about \d+(\.\d+)? (s|min)", comment), comment


def test_use_it_in_your_project_installs_from_this_checkout_not_the_registry() -> None:
    """The forms README shows are the ones the live tests install this checkout with
    (tests/nox_ckdn/test_project.py, tests/tox_ckdn/test_plugin_env.py)."""
    text = section("Use it in your project")
    assert "pip install checkdown" not in text
    assert "pip install path/to/checkout" in text
    assert PROJECT["project"]["name"] == "checkdown"
    # the `ckdn` command is a shared script (core/scripts/ckdn), not a console script
    assert "ckdn" in PROJECT["tool"]["hatch"]["build"]["targets"]["wheel"][
        "shared-scripts"].values()
    (tox_requires,) = re.findall(r"^requires = (\[.*\])$", text, re.MULTILINE)
    requirement = Requirement(tomllib.loads(f"r = {tox_requires}")["r"][1])
    assert (requirement.name, requirement.url) == ("checkdown", "file:///abs/path/to/checkout")
    assert 'session.install("/abs/path/to/checkout")' in text
