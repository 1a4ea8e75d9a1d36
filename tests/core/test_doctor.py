"""The distribution is checkdown; ``ckdn doctor`` says when the unrelated ``ckdn`` shares it.

The other distribution is represented the way Python sees any installed
distribution: a ``.dist-info`` with its metadata on ``sys.path`` (never the
package itself, which this project does not install or read).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ckdn
from tests.project import clean_env

PY = sys.executable


def ckdn_cli(*args: str, site: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = clean_env()
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([PY, "-m", "ckdn", *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def dist_info(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n")


def test_the_version_names_the_distribution() -> None:
    proc = ckdn_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"checkdown {ckdn.__version__}"


def test_a_sound_installation_is_ok() -> None:
    proc = ckdn_cli("doctor")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ok: checkdown {ckdn.__version__} (ckdn package at ")
    assert proc.stderr == ""


def test_the_unrelated_ckdn_distribution_beside_it_is_one_clear_line(tmp_path: Path) -> None:
    dist_info(tmp_path, "ckdn", "1.4.1")
    proc = ckdn_cli("doctor", site=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines == ["ckdn: the unrelated `ckdn` distribution 1.4.1 is installed too and owns the "
                     "same `ckdn` package; `pip uninstall ckdn`, then `pip install "
                     "--force-reinstall checkdown`"]


def test_files_overwritten_by_another_version_are_named(tmp_path: Path) -> None:
    dist_info(tmp_path, "checkdown", "9.9.9")  # first on sys.path: what Python finds
    proc = ckdn_cli("doctor", site=tmp_path)
    assert proc.returncode == 1
    assert f"the ckdn package says {ckdn.__version__} but the installed checkdown is 9.9.9" \
        in proc.stderr


def test_the_project_is_published_as_checkdown() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "checkdown"
    assert project["scripts"] == {"ckdn": "ckdn.cli:main", "ckdn-mcp": "mcp_ckdn:main"}
    docs = "\n".join(p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")])
    assert "pip install ckdn" not in docs.replace("Do not `pip install ckdn`", "")
    assert '"ckdn"]' not in docs
    assert ", ckdn\n" not in docs
