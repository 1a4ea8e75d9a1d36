"""An alias run's own run dir: made and published first, kept or dropped when refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ckdn import app
from ckdn.errors import RefusedError
from ckdn.store import Store

CONFIG = """\
[check.one]
command = "true"
parser = "generic"
[check.two]
command = "true"
parser = "generic"
[check.both]
members = ["one", "two"]
"""


def alias_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".agent-runs").iterdir()
                  if p.is_dir() and p.name.endswith("-both"))


def test_an_alias_refused_before_any_member_ran_leaves_no_run_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckdn.toml").write_text(CONFIG)
    config = app.load_config(tmp_path)
    with Store(config.run.runs_dir, tmp_path).begin("one"), \
            pytest.raises(RefusedError, match="already running"):
        app.run(config, "both")
    assert alias_dirs(tmp_path) == []


def test_an_alias_refused_after_a_member_ran_stays_as_an_unfinished_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckdn.toml").write_text(CONFIG)
    config = app.load_config(tmp_path)
    with Store(config.run.runs_dir, tmp_path).begin("two"), \
            pytest.raises(RefusedError, match="already running"):
        app.run(config, "both")
    (name,) = alias_dirs(tmp_path)
    assert os.listdir(tmp_path / ".agent-runs" / name) == []
    assert os.readlink(tmp_path / ".agent-runs" / "latest") == name
