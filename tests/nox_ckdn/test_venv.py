"""One session in a real virtualenv: the alias's ``requires`` are pip-installed from PyPI.

``PATH`` outside nox is an empty directory, so the only ``ruff`` the checks can
find is the one nox installed into the session's virtualenv. This is the suite's
one slow nox test (virtualenv creation plus one pip install, a few seconds).
"""

from __future__ import annotations

from tests.nox_ckdn.noxproject import NoxProject, failed_line

CONFIG = """\
[check.ruff]
command = "ruff check --output-format json --output-file {run_dir}/ruff.json ."
parser = "ruff"
requires = ["ruff==0.17.6"]

[check.format]
command = "ruff format --check ."
parser = "reformat"
requires = ["ruff==0.17.6"]

[check.lint]
members = ["ruff", "format"]
fail_fast = false
"""

#: nox's defaults: a virtualenv (backend ``virtualenv``) of nox's own interpreter.
NOXFILE = """\
import nox_ckdn

nox_ckdn.sessions()
"""


def test_an_alias_session_installs_its_members_requires_once_and_runs_them_in_the_venv(
        nox_project: NoxProject) -> None:
    nox_project.config(CONFIG)
    nox_project.noxfile(NOXFILE)
    (nox_project.root / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    (nox_project.root / "unused.py").write_text("import os\n")
    empty = nox_project.root / "empty-path"
    empty.mkdir()
    proc = nox_project.nox("-s", "lint", timeout=300,
                           env={"PATH": str(empty), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "nox > python -m pip install ruff==0.17.6" in proc.stderr.splitlines()
    assert (nox_project.root / ".nox" / "lint" / "bin" / "ruff").is_file()
    ruff, fmt = nox_project.digest_of("ruff"), nox_project.digest_of("format")
    assert [f["id"] for f in ruff["findings"]] == ["unused.py:1:8:F401"]
    assert fmt["status"] == "pass"
    aggregate = nox_project.aggregate_of("lint")
    assert [(m["check"], m["status"]) for m in aggregate["members"]] == [
        ("ruff", "fail"), ("format", "pass")]
    assert failed_line(proc.stderr, "lint").startswith("ckdn: lint fail (rc 1); first red"
                                                       " member ruff fail (rc 1)")
    # no pyproject.toml or setup.py here: nothing to install as the project, and it says so
    assert (f"nox > ckdn: no pyproject.toml or setup.py in {nox_project.root}: the project is "
            "not installed") in proc.stderr.splitlines()
