"""Where a long-lived host finds its project, in the order it says it does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ckdn.app import CONFIG_ENV
from ckdn.app.queries import CWD_ENV, locate_config, locate_cwd
from ckdn.errors import CkdnError, UsageError

CONFIG_ORDER = ("--config", f"${CONFIG_ENV}", "./ckdn.toml")
CWD_ORDER = ("--cwd", f"${CWD_ENV}", "the process's cwd")


def _write(path: Path, check: str) -> Path:
    path.write_text(f'[check.{check}]\ncommand = "true"\nparser = "generic"\n')
    return path


def test_the_config_is_the_flag_then_the_environment_then_the_cwds_ckdn_toml(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "ckdn.toml", "default")
    flag = _write(tmp_path / "flag.toml", "flag")
    env = _write(tmp_path / "env.toml", "env")
    monkeypatch.setenv(CONFIG_ENV, str(env))
    assert list(locate_config(str(tmp_path), str(flag)).checks) == ["flag"]
    assert list(locate_config(str(tmp_path)).checks) == ["env"]
    monkeypatch.delenv(CONFIG_ENV)
    assert list(locate_config(str(tmp_path)).checks) == ["default"]
    (tmp_path / "ckdn.toml").unlink()
    with pytest.raises(CkdnError, match=r"no ckdn\.toml"):
        locate_config(str(tmp_path))


def test_the_cwd_is_the_flag_then_the_environment_then_the_process_cwd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path)
    environ = {CWD_ENV: str(tmp_path / "b")}
    assert locate_cwd("a", environ) == str(tmp_path / "a")
    assert locate_cwd(None, environ) == str(tmp_path / "b")
    assert locate_cwd(None, {}) == os.getcwd()
    with pytest.raises(UsageError, match=rf"^\${CWD_ENV} nowhere: not a directory"):
        locate_cwd(None, {CWD_ENV: "nowhere"})
