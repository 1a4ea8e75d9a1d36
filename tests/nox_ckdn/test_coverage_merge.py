"""Coverage measured in two nox sessions of one check (one per Python) and combined.

Each session is red alone (its half of the tests covers half of the code, under
``fail_under = 100``); ``ckdn merge`` of the two runs, named ``tests@PYTHON`` by the
sessions, combines their coverage.py data and is green. Both sessions use this
interpreter under two spellings, so no other Python is needed; the tools come from
it too (the command names it), so the virtualenvs install nothing.
"""

from __future__ import annotations

import json
import shlex
import sys

from tests.nox_ckdn.noxproject import NoxProject, failed_line
from tests.project import PY

VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
LABELS = (VERSION, f"python{VERSION}")

PYTEST = (f"{shlex.quote(PY)} -m pytest -q -p no:cacheprovider -p no:randomly -p no:xdist"
          " --junitxml {run_dir}/junit.xml --cov=calc --cov-report=json:{run_dir}/coverage.json")

CONFIG = f"""\
[check.tests]
command = "{PYTEST}"
parser = "coverage"
fail_under = 100
env = {{ COVERAGE_FILE = "{{run_dir}}/.coverage", PYTHONPATH = "src" }}
"""

NOXFILE = f"""\
import nox_ckdn

nox_ckdn.sessions(python={list(LABELS)!r}, install_project=False)
"""


def test_two_python_sessions_red_alone_merge_into_one_green_whole(
        nox_project: NoxProject) -> None:
    nox_project.config(CONFIG)
    nox_project.noxfile(NOXFILE)
    (nox_project.root / "pyproject.toml").write_text(
        '[tool.coverage.run]\nrelative_files = true\nbranch = true\n')
    package = nox_project.root / "src" / "calc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    tests = nox_project.root / "tests"
    tests.mkdir()
    (tests / "test_add.py").write_text("from calc import add\n\n\n"
                                       "def test_add():\n    assert add(1, 2) == 3\n")
    (tests / "test_sub.py").write_text("from calc import sub\n\n\n"
                                       "def test_sub():\n    assert sub(3, 2) == 1\n")
    for label, part in zip(LABELS, ("tests/test_add.py", "tests/test_sub.py"), strict=True):
        proc = nox_project.nox("-s", f"tests-{label}", "--", part, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert failed_line(proc.stderr, f"tests-{label}").startswith(
            f"ckdn: tests@{label} fail (rc 0)")
        alone = nox_project.digest_of(f"tests@{label}")
        assert alone["summary"]["coverage"]["display"] == "75"
        assert alone["summary"]["top_uncovered_files"][0]["file"] == "src/calc/__init__.py"
    merged = nox_project.ckdn("merge", "--check", "tests", "--expect", "2",
                              *(f"tests@{label}" for label in LABELS))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    whole = json.loads(merged.stdout)
    assert (whole["status"], whole["summary"]["coverage"]["display"]) == ("pass", "100")
    assert whole["summary"]["counts"]["tests"] == 2
