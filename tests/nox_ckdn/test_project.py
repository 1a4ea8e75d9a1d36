"""A ckdn session installs the project into its virtualenv, as a tox env does.

Without it, a check ran against whatever the virtualenv happened to hold: for
a library that its own test tools depend on (packaging, pulled in by pytest),
the release from the index instead of the code in the checkout. Real virtualenvs
and real pip installs, so these are slow tests; the project builds with its own
in-tree backend (:mod:`tests.nox_ckdn.inplace_backend`), so building it takes
nothing from an index.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.nox_ckdn import inplace_backend
from tests.nox_ckdn.noxproject import NoxProject, failed_line

#: A src-layout project: importable only once installed, and only as the checkout's code.
PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "mypkg"
version = "1.0"
"""

#: Prints where ``mypkg`` was imported from; fails when it cannot be imported.
CONFIG = """\
[check.imports]
command = "python -c 'import mypkg; print(mypkg.__file__); print(mypkg.VERSION)'"
parser = "generic"
"""


def project(nox_project: NoxProject, noxfile: str) -> None:
    nox_project.config(CONFIG)
    nox_project.noxfile(noxfile)
    (nox_project.root / "pyproject.toml").write_text(PYPROJECT)
    shutil.copyfile(Path(inplace_backend.__file__), nox_project.root / "backend.py")
    package = nox_project.root / "src" / "mypkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('VERSION = "from the checkout"\n')


def logs(nox_project: NoxProject) -> list[str]:
    """Each ``imports`` run's full.log, oldest first."""
    return [(run / "full.log").read_text() for run in nox_project.run_dirs_of("imports")]


def test_a_check_session_installs_the_project_and_install_project_chooses_how(
        nox_project: NoxProject) -> None:
    project(nox_project, """\
        import nox_ckdn

        nox_ckdn.sessions()
        nox_ckdn.sessions(prefix="editable-", install_project="editable")
        nox_ckdn.sessions(prefix="bare-", install_project=False)
        nox_ckdn.sessions(prefix="own-", install=["-e", "."])
        """)
    proc = nox_project.nox("-s", "imports", "editable-imports", "bare-imports", "own-imports",
                           "--report", "report.json", timeout=600,
                           env={"PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 1, proc.stderr
    results = {s["name"]: s["result"]
               for s in json.loads((nox_project.root / "report.json").read_text())["sessions"]}
    assert results == {"imports": "success", "editable-imports": "success",
                       "bare-imports": "failed", "own-imports": "success"}
    lines = proc.stderr.splitlines()
    assert lines.count("nox > python -m pip install .") == 1
    # install_project="editable", and install=["-e", "."] (which it does not repeat)
    assert lines.count("nox > python -m pip install -e .") == 2
    installed, editable, bare, own = logs(nox_project)
    assert own.splitlines()[0] == str(nox_project.root / "src" / "mypkg" / "__init__.py")
    assert "/.nox/imports/" in installed.splitlines()[0]
    assert "site-packages/mypkg/__init__.py" in installed.splitlines()[0]
    assert installed.splitlines()[1] == "from the checkout"
    assert editable.splitlines()[0] == str(nox_project.root / "src" / "mypkg" / "__init__.py")
    assert "ModuleNotFoundError: No module named 'mypkg'" in bare
    assert failed_line(proc.stderr, "bare-imports").startswith("ckdn: imports fail (rc 1)")


def test_a_session_without_a_virtualenv_installs_no_project(nox_project: NoxProject) -> None:
    project(nox_project, "import nox_ckdn\nnox_ckdn.sessions(python=False)\n")
    proc = nox_project.nox("-s", "imports")
    assert "pip install" not in proc.stderr
    assert "the project is not installed" not in proc.stderr
    assert "ModuleNotFoundError: No module named 'mypkg'" in logs(nox_project)[0]


#: A check that runs ckdn's pytest plugin inside the session (``--ckdn-digest``).
PLUGIN_CONFIG = """\
[check.tests]
command = "pytest -q -p no:cacheprovider --ckdn-digest"
parser = "pytest"
requires = ["pytest==9.2.0"]
"""


def test_a_ckdn_digest_check_gets_this_checkdown_installed_beside_its_requires(
        nox_project: NoxProject) -> None:
    """Without it pytest exits 4 (``unrecognized arguments: --ckdn-digest``) in the venv."""
    nox_project.config(PLUGIN_CONFIG)
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions()\n")
    (nox_project.root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    proc = nox_project.nox("-s", "tests", timeout=600,
                           env={"PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 0, proc.stderr
    from ckdn.app.queries import this_checkdown

    ours = this_checkdown()
    assert ours is not None
    assert f"nox > python -m pip install pytest==9.2.0 '{ours}'" in proc.stderr.splitlines()
    digest = nox_project.digest_of("tests")
    assert (digest["status"], digest["rc"]) == ("pass", 0)
    assert (nox_project.only_run_of("tests") / "ckdn-pytest.json").is_file()
