"""A check that runs ckdn's pytest plugin (``--ckdn-digest``) gets this checkdown in its env.

Without it pytest in the env exits 4 (``unrecognized arguments: --ckdn-digest``),
an error no tox config hinted at. The plugin adds the requirement that installs
the checkdown that is running (:func:`ckdn.app.queries.this_checkdown`) to the
env's deps, unless the deps already name checkdown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ckdn.app.queries import this_checkdown
from tests.tox_ckdn.realtox import run_tox
from tests.tox_ckdn.toxproject import Project

PLUGIN_CHECK = """\
[check.tests]
command = "pytest -q -p no:cacheprovider --ckdn-digest"
parser = "pytest"
requires = ["pytest==9.2.0"]

[check.plain]
command = "pytest -q -p no:cacheprovider"
parser = "pytest"
requires = ["pytest==9.2.0"]
"""


def ours() -> str:
    requirement = this_checkdown()
    assert requirement is not None, "the suite runs from an installed checkdown"
    return requirement


def test_a_ckdn_digest_check_adds_this_checkdown_to_the_envs_deps(project: Project) -> None:
    run = project.make("""
        [env.unit]
        ckdn_checks = ["tests"]
    """, checks=PLUGIN_CHECK)
    result = run("c", "-e", "unit,tests,plain", "-k", "deps")
    result.assert_success()
    shown = {section.split("]", 1)[0]: section.split("]\n", 1)[1].strip()
             for section in result.out.split("[testenv:")[1:]}
    assert shown == {"unit": f"deps =\n  pytest==9.2.0\n  {ours()}",
                     "tests": f"deps =\n  pytest==9.2.0\n  {ours()}",
                     "plain": "deps = pytest==9.2.0"}


def test_deps_that_already_name_checkdown_keep_their_own(project: Project) -> None:
    run = project.make("""
        [env.unit]
        deps = ["checkdown>=0.1"]
        ckdn_checks = ["tests"]
    """, checks=PLUGIN_CHECK)
    result = run("c", "-e", "unit", "-k", "deps")
    result.assert_success()
    assert "deps =\n  checkdown>=0.1\n  pytest==9.2.0\n" in result.out


@pytest.mark.usefixtures("enable_pip_pypi_access")
def test_real_tox_runs_a_ckdn_digest_check_in_a_new_env_and_the_plugin_records_it(
        tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(PLUGIN_CHECK)
    (tmp_path / "tox.toml").write_text("[env_run_base]\nskip_install = true\n")
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    proc = run_tox(tmp_path, "-e", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ours() in proc.stdout  # tox's install_deps line
    (run_dir,) = (tmp_path / ".agent-runs").glob("*-tests")
    digest = json.loads((run_dir / "digest.json").read_text())
    assert (digest["status"], digest["rc"]) == ("pass", 0)
    assert (run_dir / "ckdn-pytest.json").is_file()  # the plugin's evidence, from the env
