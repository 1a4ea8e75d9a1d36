"""The verb table is the CLI: one module per verb, each imported only when its verb runs."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ckdn
import ckdn.cli
from ckdn.cli import VERBS, load_verb
from tests.project import clean_env

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """\
[check.ok]
command = "true"
parser = "generic"

[check.all-ok]
members = ["ok"]
"""

#: Runs ckdn's CLI in a process without site and prints the ckdn.cli modules it loaded.
WRAPPER = """\
import sys
sys.path.insert(0, sys.argv[1])
from ckdn.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
verbs = sorted(m for m in sys.modules if m.startswith("ckdn.cli."))
sys.stderr.write("\\nLOADED " + " ".join(verbs))
"""


def verb_modules_loaded(cwd: Path, *args: str) -> set[str]:
    core = str(Path(ckdn.__file__).parent.parent)
    proc = subprocess.run([sys.executable, "-S", "-c", WRAPPER, core, *args], cwd=cwd,
                          env=clean_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    line = proc.stderr.rpartition("\nLOADED ")[2]
    loaded = {name.rpartition(".")[2] for name in line.split()}
    return {name for name in loaded if not name.startswith("_")}


def test_the_packages_verb_modules_are_the_tables() -> None:
    modules = {info.name for info in pkgutil.iter_modules(ckdn.cli.__path__)}
    assert {name for name in modules if not name.startswith("_")} \
        == {module for module, _summary in VERBS.values()}


@pytest.mark.parametrize("verb", list(VERBS))
def test_each_verb_module_declares_its_options_and_its_handler(verb: str) -> None:
    module = load_verb(verb)
    assert callable(module.add_options)
    assert callable(module.handle)


#: A command line of each verb (its success or refusal does not matter here).
COMMAND_LINES = {
    "run": ["run", "ok"], "baseline": ["baseline", "ok"], "show": ["show", "--json"],
    "annotate": ["annotate", "--format", "text"], "diff": ["diff", "latest", "latest"],
    "merge": ["merge", "--check", "ok"], "status": ["status"],
    "plan": ["plan", "ok", "--shards", "2"],
    "durations": ["durations", "update", "ok"], "list": ["list"], "checks": ["checks"],
    "gc": ["gc", "--dry-run"], "init": ["init"], "hook": ["hook", "edit", "ok"],
    "doctor": ["doctor", "--json"],
    "lock-config": ["lock-config", "-o", "lock.toml"], "verify-config": ["verify-config"],
    "schema": ["schema"], "import": ["import", "tap", "nosuch.tap", "--as", "tap"],
    "export": ["export", "--format", "junit"],
}


def test_every_verb_has_a_command_line_here() -> None:
    assert set(COMMAND_LINES) == set(VERBS)


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_verb_imports_its_own_module_and_no_other_verbs(tmp_path: Path, verb: str) -> None:
    (tmp_path / "ckdn.toml").write_text(CONFIG)
    assert verb_modules_loaded(tmp_path, *COMMAND_LINES[verb]) == {VERBS[verb][0]}


@pytest.mark.parametrize("argv", [["run", "--all"], ["run", "-q", "all-ok", "--fail-fast"],
                                  ["run", "--help"]])
def test_a_run_read_by_argparse_still_imports_only_the_run_verb(tmp_path: Path,
                                                                argv: list[str]) -> None:
    (tmp_path / "ckdn.toml").write_text(CONFIG)
    assert verb_modules_loaded(tmp_path, *argv) == {"run"}


@pytest.mark.parametrize("argv", [["--help"], ["--version"], [], ["nosuch"]])
def test_the_top_level_help_and_refusals_import_no_verb(tmp_path: Path,
                                                        argv: list[str]) -> None:
    assert verb_modules_loaded(tmp_path, *argv) == set()


def test_the_design_page_lists_the_verb_table() -> None:
    page = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = page.split("### The verb table", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| `ckdn\.cli\.([a-z_]+)` \|", section, re.MULTILINE)
    assert dict(rows) == {verb: module for verb, (module, _summary) in VERBS.items()}


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["nosuch"]])
def test_the_command_line_without_a_verb_loads_no_door(tmp_path: Path, argv: list[str]) -> None:
    probe = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom ckdn.cli import main\n"
             "try:\n    main(sys.argv[2:])\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write('\\nLOADED ' + ' '.join(sorted(m for m in sys.modules"
             " if m.startswith('ckdn.'))))\n")
    core = str(Path(ckdn.__file__).parent.parent)
    proc = subprocess.run([sys.executable, "-S", "-c", probe, core, *argv], cwd=tmp_path,
                          env=clean_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    loaded = set(proc.stderr.rpartition("\nLOADED ")[2].split())
    assert "ckdn.cli" in loaded
    assert not {name for name in loaded if name.startswith("ckdn.app")}
