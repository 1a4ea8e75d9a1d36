"""What keeps `ckdn run` starting fast: its import diet, pinned in a real process.

A trivial check must cost little more than starting Python (DESIGN.md), so `ckdn run`
reads its command line without argparse, its config without tomllib, and builds its
values without dataclasses (the stand-ins in ckdn._lite, each held to its stdlib
piece by tests/core/lite/). These tests pin that diet by the modules a run loads
(never by timing). The figures are in bench/bench_startup.py and bench/bench_run.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ckdn
from ckdn.store import check_of
from tests.project import clean_env

#: Modules a plain `ckdn run` must not load: each cost start-up time once.
COSTLY = (
    "argparse", "gettext",  # the command line
    "dataclasses", "inspect", "ast", "dis", "tokenize",  # values
    "tomllib", "typing", "string", "datetime",  # the config file
    "hashlib", "shutil", "bz2", "lzma", "importlib.util",  # hashing, pruning, parsers
    "pathlib", "urllib.parse", "ipaddress", "fnmatch",  # paths (plain str on the run path)
    "subprocess", "threading", "selectors", "locale", "contextlib",  # the spawn (ckdn._lite.spawn)
    "json", "json.decoder", "json.scanner",  # the documents are written by ckdn._lite.canonical
    "re", "collections.abc", "shlex", "warnings",  # patterns compile on first use; no shlex split
    # signals through `_signal`, the C module `signal` only wraps in enums (issue 21)
    "signal", "enum", "functools", "collections",
    "ckdn.process._progress",  # the live line: only on a terminal
    # sharding (issue 28): only `ckdn run --shard`, `ckdn plan`, `ckdn merge --plan` load it
    "ckdn.app.shards", "ckdn.app._shards.selection", "ckdn.app._shards.plan",
    "ckdn.app._shards.ledger", "ckdn.identity.plan",
)

PLAIN_CONFIG = """\
# a plain config: headers, one-line values, an inline table, an array
[run]
keep = 3

[check.ok]
command = "true"
parser = "generic"
timeout = 60.5
env = { LANG = "C", HOME = '/tmp' }
description = 'passes'

[check.all-ok]
members = ["ok"]
"""

#: Runs ckdn's CLI in a process without site (so nothing else was imported first) and
#: prints the modules it loaded on stderr.
WRAPPER = """\
import sys
sys.path.insert(0, sys.argv[1])
from ckdn.cli import main
code = main(sys.argv[2:])
sys.stderr.write(" ".join(sorted(sys.modules)))
raise SystemExit(code)
"""


def loaded_by_ckdn(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = clean_env()
    core = str(Path(ckdn.__file__).parent.parent)
    proc = subprocess.run([sys.executable, "-S", "-c", WRAPPER, core, *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc, set(proc.stderr.split())


@pytest.mark.parametrize("args", [("run", "ok"), ("--config", "ckdn.toml", "run", "-q", "all-ok")])
def test_a_plain_ckdn_run_loads_none_of_the_costly_modules(tmp_path: Path,
                                                          args: tuple[str, ...]) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    for _ in range(5):  # the later runs prune, as every run does once `keep` is reached
        proc, loaded = loaded_by_ckdn(tmp_path, *args)
        assert proc.returncode == 0, proc.stderr
    assert {"ckdn.process", "ckdn.documents", "ckdn.store"} <= loaded  # it did run the check
    runs = [p.name for p in (tmp_path / ".agent-runs").glob("*T*Z*") if p.is_dir()]
    assert [check_of(name) for name in runs].count("ok") == 3  # and pruned
    assert sorted(loaded.intersection(COSTLY)) == []


#: Every ckdn module a green `ckdn run` of one check loads (the last runs prune too).
#: Each costs start-up time (about 50 us apiece, docs/performance.md): a module
#: joins this list on purpose, or is imported where it is needed.
RUN_PATH = frozenset({
    "ckdn", "ckdn.errors", "ckdn.reconcile",
    "ckdn.cli", "ckdn.cli.run", "ckdn.cli._verb_io",  # the run verb alone
    "ckdn._lite",  # the start-up stand-ins, one module
    "ckdn.app", "ckdn.app._running", "ckdn.app._running.steps",
    "ckdn.app._running.policy",  # the command policy (default workspace), the child's env
    "ckdn.app._running.parsing",  # the parse and its tap: idle (one object) until a finding comes
    # the tree the run saw (a git status beside the tool, only inside a repository) and a green
    # run's facts, compared with the last green run's (`ckdn status`, weakening; issue 25)
    "ckdn.app._running.run_facts",
    "ckdn.evidence_files",  # the one way evidence is opened (never through a symlink or a FIFO)
    "ckdn.config", "ckdn.config._load",
    "ckdn.documents", "ckdn.documents._digest",
    "ckdn.documents.textcap",
    "ckdn.parsers", "ckdn.parsers.base",  # base holds the generic parser (no module of its own)
    "ckdn.parsers._loglines",  # generic counts the log's lines (summary log_lines)
    # meta.json's command is screened for secrets on every run (string searches; the
    # redactor itself, and `re`, load only for a command or a text that may hold one)
    "ckdn.redact", "ckdn.redact._settings",  # what a secret is (names, settings): no `re`
    "ckdn.process", "ckdn.process._group", "ckdn.process._runner",
    "ckdn.store", "ckdn.store._store",
})
#: The standard library modules it may load beyond an empty interpreter's (`python -S`).
STDLIB_RUN_PATH = frozenset({
    "__future__", "_collections_abc", "_json", "_operator", "_sha256", "_sha2", "_signal",
    "_stat", "errno", "fcntl", "genericpath", "itertools", "os", "os.path", "posixpath",
    "select", "stat",  # no math, operator or types: their few names are had without them
    "gc",  # built in; ckdn.cli imports it to run without the cyclic collector
})


#: As WRAPPER, and the modules loaded when the check's command was spawned, on a line before.
WRAPPER_AT_SPAWN = """\
import os, sys
sys.path.insert(0, sys.argv[1])
spawn, at_spawn = os.posix_spawn, []
def spawning(*args, **options):
    at_spawn.append(" ".join(sorted(sys.modules)))
    return spawn(*args, **options)
os.posix_spawn = spawning
from ckdn.cli import main
code = main(sys.argv[2:])
sys.stderr.write(at_spawn[0] + "\\n" + " ".join(sorted(sys.modules)))
raise SystemExit(code)
"""


def test_what_only_the_finish_needs_loads_while_the_command_runs(tmp_path: Path) -> None:
    """The builtin SHA-256 (the log's hash) and ``_json`` (the last green run's facts.json)
    load after the spawn, beside the child on a second core, never before it."""
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    core = str(Path(ckdn.__file__).parent.parent)
    for _ in range(2):  # the second run reads the first one's facts.json
        proc = subprocess.run([sys.executable, "-S", "-c", WRAPPER_AT_SPAWN, core, "run", "ok"],
                              cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
    before, after = (set(line.split()) for line in proc.stderr.splitlines()[-2:])
    later = {"_json", "_sha256"}
    assert sorted(later & before) == []
    assert later <= after


def test_a_green_run_loads_exactly_the_pinned_run_path(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    bare = subprocess.run([sys.executable, "-S", "-c", "import sys; print(*sys.modules)"],
                          capture_output=True, text=True, check=True).stdout.split()
    for _ in range(5):  # the last runs prune
        proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
        assert proc.returncode == 0, proc.stderr
    ours = {name for name in loaded if name == "ckdn" or name.startswith("ckdn.")}
    assert ours == RUN_PATH
    assert sorted(loaded - ours - set(bare) - STDLIB_RUN_PATH) == []


def test_an_alias_adds_only_the_aggregate(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "all-ok")
    assert proc.returncode == 0, proc.stderr
    assert {name for name in loaded if name.startswith("ckdn")} - RUN_PATH \
        <= {"ckdn.documents.aggregate"}


def test_a_config_beyond_plain_toml_is_read_by_tomllib(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text('[check.ok]\ncommand = """true"""\nparser = "generic"\n')
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "pass"
    assert "tomllib" in loaded


GUARDED_CONFIG = """\
[run]
keep = 3
inherit_env = false

[check.ok]
command = "true ./src {run_dir}/report.json --out={run_dir}/x -Iinclude xml:cov.xml"
parser = "generic"
"""


def test_the_command_policy_and_a_minimal_env_load_nothing_costly(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(GUARDED_CONFIG)
    (tmp_path / "src").mkdir()
    for _ in range(5):
        proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
        assert proc.returncode == 0, proc.stderr
    assert {name for name in loaded if name.startswith("ckdn")} == RUN_PATH
    assert sorted(loaded.intersection(COSTLY)) == []


#: The ceilings of issue 21: ckdn modules a green generic run and a red ruff run load.
GREEN_CEILING = 30
RED_CEILING = 40
#: What they load today (2026-12-03): pinned so that neither can grow (the green run's exact
#: set is RUN_PATH).
GREEN_REACHED = 29
RED_REACHED = 40
#: The app's own share of them (the door and the running room; a red run adds the findings
#: file's writer), which this room pins exactly: the other rooms own the rest.
APP_GREEN = {"ckdn.app", "ckdn.app._running", "ckdn.app._running.parsing",
             "ckdn.app._running.policy", "ckdn.app._running.run_facts",
             "ckdn.app._running.steps"}
APP_RED = APP_GREEN | {"ckdn.app._running.findings"}
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))  # the dev extra's ruff


def ckdn_modules(loaded: set[str]) -> set[str]:
    return {name for name in loaded if name == "ckdn" or name.startswith("ckdn.")}


def red_ruff_run(tmp_path: Path) -> set[str]:
    (tmp_path / "a.py").write_text("import os\nimport sys\n")
    (tmp_path / "ckdn.toml").write_text(
        f'[check.ruff]\ncommand = ["{RUFF}", "check", "--no-cache", "--isolated", '
        '"--output-format", "json", "--output-file", "{run_dir}/ruff.json", "."]\n'
        'parser = "ruff"\n')
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ruff")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["findings_total"] == 2
    return ckdn_modules(loaded)


def test_the_run_path_loads_only_the_running_room_of_the_app(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert {name for name in loaded if name.startswith("ckdn.app")} == APP_GREEN


@pytest.mark.skipif(RUFF is None, reason="the dev extra's ruff is not installed")
def test_a_red_ruff_run_adds_only_the_findings_writer_to_the_app(tmp_path: Path) -> None:
    loaded = red_ruff_run(tmp_path)
    assert {name for name in loaded if name.startswith("ckdn.app")} == APP_RED


def test_a_green_generic_run_loads_no_more_modules_than_today(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert len(ckdn_modules(loaded)) <= GREEN_REACHED == len(RUN_PATH)


@pytest.mark.skipif(RUFF is None, reason="the dev extra's ruff is not installed")
def test_a_red_ruff_run_loads_no_more_modules_than_today(tmp_path: Path) -> None:
    assert len(red_ruff_run(tmp_path)) <= RED_REACHED


def test_a_green_generic_run_loads_at_most_the_ceiling(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLAIN_CONFIG)
    proc, loaded = loaded_by_ckdn(tmp_path, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert len(ckdn_modules(loaded)) <= GREEN_CEILING


@pytest.mark.skipif(RUFF is None, reason="the dev extra's ruff is not installed")
def test_a_red_ruff_run_loads_at_most_the_ceiling(tmp_path: Path) -> None:
    loaded = red_ruff_run(tmp_path)
    assert len(loaded) <= RED_CEILING
    # ruff's rule links hold "://" and no "@": the redactor and `re` are not loaded for them
    assert "ckdn.redact._text" not in loaded


def test_the_host_door_loads_the_report_formats_only_for_a_github_report() -> None:
    # every pytest, tox and nox session imports ckdn.app.host; annotations are for GitHub jobs
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import ckdn.app.host; "
            "print(' '.join(sorted(sys.modules)))")
    core = str(Path(ckdn.__file__).parent.parent)
    loaded = set(subprocess.run([sys.executable, "-S", "-c", code, core], env=clean_env(),
                                capture_output=True, text=True, timeout=60,
                                check=True).stdout.split())
    assert "ckdn.app.host" in loaded
    assert sorted(name for name in loaded if name.startswith(
        ("ckdn.reports", "ckdn.app._annotating", "ckdn.identity"))) == []
