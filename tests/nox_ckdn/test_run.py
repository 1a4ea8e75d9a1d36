"""``nox_ckdn.run`` and ``nox_ckdn.install`` inside hand-written sessions."""

from __future__ import annotations

import json
import os
import signal
import time
from typing import TYPE_CHECKING, cast

import pytest

from nox_ckdn._session import parametrized_label
from tests.nox_ckdn.checks import ALL, ECHO, check
from tests.nox_ckdn.noxproject import NoxProject, aborted_line, failed_line, valid

if TYPE_CHECKING:
    import nox

#: A hand-written session that stores what ``run`` returned, for the test to compare.
RECORDING = """\
import json
from pathlib import Path

import nox
import nox_ckdn


@nox.session(python=False)
def record(session):
    doc = nox_ckdn.run(session, session.posargs[0], args=session.posargs[1:], fail=False)
    Path("returned.json").write_text(json.dumps(doc))
    session.log(f"returned {doc['status']}")
"""


def returned(project: NoxProject) -> dict[str, object]:
    doc: dict[str, object] = json.loads((project.root / "returned.json").read_text())
    return valid(doc)


def test_run_returns_the_digest_it_stored(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(RECORDING)
    proc = nox_project.nox("-s", "record", "--", "ok")
    assert proc.returncode == 0, proc.stderr
    assert returned(nox_project) == nox_project.digest_of("ok")


def test_run_with_fail_false_returns_a_red_digest_and_the_session_goes_on(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(RECORDING)
    proc = nox_project.nox("-s", "record", "--", "bad")
    assert proc.returncode == 0, proc.stderr
    assert returned(nox_project) == nox_project.digest_of("bad")
    assert "nox > returned fail" in proc.stderr
    assert "nox > ckdn: digest of bad (fail):" in proc.stderr


def test_run_returns_the_aggregate_of_an_alias(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(RECORDING)
    nox_project.nox("-s", "record", "--", "both")
    assert returned(nox_project) == nox_project.aggregate_of("both")


def test_run_fails_the_session_on_a_red_check_by_default(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def strict(session):
            nox_ckdn.run(session, "bad")
            session.log("not reached")
        """)
    proc = nox_project.nox("-s", "strict")
    assert proc.returncode == 1
    assert failed_line(proc.stderr, "strict").startswith("ckdn: bad fail (rc 3)")
    assert "not reached" not in proc.stderr


def test_run_passes_session_posargs_unless_given_args(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def both_ways(session):
            first = nox_ckdn.run(session, "echo")
            second = nox_ckdn.run(session, "echo", args=["given"])
            session.log(first["run_dir"] + " " + second["run_dir"])
        """)
    proc = nox_project.nox("-s", "both_ways", "--", "from", "cli")
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads((d / "seen.json").read_text())["args"]
                     for d in nox_project.run_dirs_of("echo"))
    assert (first, second) == (["from", "cli"], ["given"])


def test_the_check_sees_the_session_env_and_its_virtualenv_first_on_path(
        nox_project: NoxProject) -> None:
    nox_project.config(ECHO)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(venv_backend="venv", venv_params=["--without-pip"])
        def inside(session):
            session.env["FOO"] = "from the session"
            nox_ckdn.run(session, "echo")
        """)
    proc = nox_project.nox("-s", "inside", env={"FOO": "from outside"})
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((nox_project.only_run_of("echo") / "seen.json").read_text())
    assert seen["foo"] == "from the session"
    path = seen["path"].split(os.pathsep)
    assert path[0] == str(nox_project.root / ".nox" / "inside" / "bin")
    assert path[1:] == nox_project.env()["PATH"].split(os.pathsep)


def test_variables_nox_removes_from_a_session_are_removed_for_the_check(
        nox_project: NoxProject) -> None:
    nox_project.config(ECHO)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def unset(session):
            session.env["FOO"] = None
            nox_ckdn.run(session, "echo")
        """)
    proc = nox_project.nox("-s", "unset", env={"FOO": "from outside"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads((nox_project.only_run_of("echo") / "seen.json").read_text())["foo"] is None


def test_a_broken_config_fails_the_hand_written_session_in_one_line(
        nox_project: NoxProject) -> None:
    nox_project.config("[run]\nkep = 3\n")
    nox_project.noxfile(RECORDING)
    proc = nox_project.nox("-s", "record", "--", "ok")
    assert proc.returncode == 1
    cli = nox_project.ckdn("run", "ok")
    assert cli.returncode == 2
    assert aborted_line(proc.stderr, "record") == cli.stderr.strip() + "."  # nox adds the stop
    assert "Traceback" not in proc.stderr


def test_an_unknown_check_fails_the_session_naming_the_configured_ones(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(RECORDING)
    proc = nox_project.nox("-s", "record", "--", "okk")
    assert aborted_line(proc.stderr, "record").startswith("ckdn: unknown check 'okk'")


def test_config_names_another_file(nox_project: NoxProject) -> None:
    (nox_project.root / "checks.toml").write_text(ALL)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def elsewhere(session):
            nox_ckdn.run(session, "ok", config="checks.toml")
        """)
    proc = nox_project.nox("-s", "elsewhere")
    assert proc.returncode == 0, proc.stderr
    assert nox_project.digest_of("ok")["status"] == "pass"


def test_install_without_a_virtualenv_names_the_requirements_and_installs_nothing(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def deps(session):
            session.log(repr(nox_ckdn.install(session, "echo", "both")))
        """)
    proc = nox_project.nox("-s", "deps")
    assert proc.returncode == 0, proc.stderr
    assert "nox > ['ruff==0.17.6', 'pip-audit>=2']" in proc.stderr


def test_install_of_an_unknown_name_fails_the_session_in_one_line(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def deps(session):
            nox_ckdn.install(session, "nope")
        """)
    proc = nox_project.nox("-s", "deps")
    assert aborted_line(proc.stderr, "deps").startswith("ckdn: unknown check 'nope'")


def test_ctrl_c_during_a_check_leaves_its_digest_and_stops_nox(
        nox_project: NoxProject) -> None:
    nox_project.config(check("sleepy", "import pathlib, time; pathlib.Path('started').touch();"
                                       " time.sleep(60)"))
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False)\n")
    proc = nox_project.start("-s", "sleepy")
    deadline = time.monotonic() + 30
    while not (nox_project.root / "started").exists():
        assert time.monotonic() < deadline
        assert proc.poll() is None
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130, output
    assert "nox > Session sleepy interrupted." in output
    digest = nox_project.digest_of("sleepy")
    assert digest["interrupted"] is True
    assert digest["status"] == "error"


PARAMETRIZED = """\
import nox
import nox_ckdn


@nox.session(python=False)
@nox.parametrize("django", ["4", nox.param("5/x", id="new")])
def tests(session, django):
    nox_ckdn.run(session, "ok")


@nox.session(python=False)
def plain(session):
    nox_ckdn.run(session, "ok")
"""


def test_each_parametrized_session_stores_its_runs_as_its_own_history(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(PARAMETRIZED)
    proc = nox_project.nox("-s", "tests", "plain")
    assert proc.returncode == 0, proc.stderr
    assert [nox_project.digest_of(name)["check"] for name in ("ok@django=4", "ok@new", "ok")
            ] == ["ok@django=4", "ok@new", "ok"]
    assert sorted(p.name.split("-", 1)[1] for p in nox_project.run_dirs()) == [
        "ok", "ok@django=4", "ok@new"]


class _Session:
    def __init__(self, name: str, python: object) -> None:
        self.name, self.python = name, python


@pytest.mark.parametrize(("name", "python", "label"), [
    ("tests", None, None),
    ("tests", "3.12", None),  # one Python: the check's own history
    ("tests-3.12", "3.12", "3.12"),
    ("tests(django='5')", False, "django=5"),
    ("tests-3.12(django='5', db='pg')", "3.12", "3.12,django=5,db=pg"),
    ("tests(old)", None, "old"),
    ("tests(path='a/b c')", None, "path=a_b_c"),
])
def test_a_parametrized_sessions_label_is_what_its_name_adds(
        name: str, python: object, label: str | None) -> None:
    assert parametrized_label(cast("nox.Session", _Session(name, python))) == label
