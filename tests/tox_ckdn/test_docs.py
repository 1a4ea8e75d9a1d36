"""docs/tox.md: its example project, run with the real tox, shows what the page says."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tox_ckdn.realtox import assert_shown, examples, run_tox

PAGE = examples("tox.md")


def write_example(root: Path) -> None:
    for name in ("ckdn.toml", "tox.toml", "app.py"):
        (root / name).write_text(PAGE[name])


def test_the_pages_example_runs_as_shown(tmp_path: Path, wheelhouse: Path) -> None:
    write_example(tmp_path)

    listed = run_tox(tmp_path, "l")
    assert listed.returncode == 0, listed.stderr
    assert_shown(PAGE["tox l"], listed.stdout)

    red = run_tox(tmp_path, "-e", "lint", wheels=wheelhouse)
    assert red.returncode == 1, red.stdout + red.stderr
    assert_shown(PAGE["tox -e lint"], red.stdout)

    (tmp_path / "app.py").write_text(PAGE["app.py"].replace("import sys\n", ""))
    green = run_tox(tmp_path, "-e", "ruff", wheels=wheelhouse)
    assert green.returncode == 0, green.stdout + green.stderr
    assert_shown(PAGE["tox -e ruff"], green.stdout)
    compact = next(x for x in green.stdout.splitlines() if x.startswith('{"check"'))
    stored = tmp_path / json.loads(compact)["run_dir"] / "digest.json"
    assert stored.read_text() == compact + "\n", "a green run shows the stored digest's bytes"

    observed = run_tox(tmp_path, "--ckdn", "-e", "style", wheels=wheelhouse)
    assert observed.returncode == 0, observed.stdout + observed.stderr
    assert_shown(PAGE["tox --ckdn -e style"], observed.stdout)


def test_the_pages_tox_ini_is_the_same_env(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PAGE["ckdn.toml"])
    (tmp_path / "tox.ini").write_text(PAGE["tox.ini"])
    proc = run_tox(tmp_path, "c", "-e", "style", "-k", "ckdn_checks", "deps", "commands")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[1:] == [
        "ckdn_checks = ruff",
        "deps = ruff==0.17.6",
        "commands = python -c 'print('\"'\"'style: own command'\"'\"')'",
    ]
