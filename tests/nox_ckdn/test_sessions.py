"""``nox_ckdn.sessions()``: one nox session per check and alias, run through ckdn (no venv)."""

from __future__ import annotations

import json

from tests.nox_ckdn.checks import ALL, ECHO, OK
from tests.nox_ckdn.noxproject import NoxProject, aborted_line, failed_line, logged_documents

NOXFILE = """\
import nox_ckdn

nox_ckdn.sessions(python=False)
"""


def test_nox_lists_a_session_per_check_and_alias_with_its_description_and_kind(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-l", "--json", "-t", "ckdn")
    assert proc.returncode == 0, proc.stderr
    listed = {s["session"]: (s["tags"], s["description"]) for s in json.loads(proc.stdout)}
    assert listed == {
        "ok": (["ckdn", "check"], "always green"),
        "bad": (["ckdn", "check"], "ckdn check, parser generic"),
        "echo": (["ckdn", "check"], "ckdn check, parser generic"),
        "both": (["ckdn", "alias"], "ok, then bad"),
    }


def test_the_plain_listing_shows_tags_and_descriptions(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-l")
    # "-": not run by a bare `nox` (default=False); `nox -t ckdn -l` marks them "*"
    assert "- ok [ckdn,check] -> always green" in proc.stdout.splitlines()
    assert "- both [ckdn,alias] -> ok, then bad" in proc.stdout.splitlines()
    selected = nox_project.nox("-l", "-t", "ckdn").stdout.splitlines()
    assert "* both [ckdn,alias] -> ok, then bad" in selected


def test_a_green_check_passes_the_session_and_logs_the_digest_it_stored(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "ok")
    assert proc.returncode == 0, proc.stderr
    stored = nox_project.digest_of("ok")
    assert stored["status"] == "pass"
    assert logged_documents(proc.stderr) == [stored]


def test_a_red_check_fails_nox_with_the_rendered_digest_and_one_line(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "bad")
    assert proc.returncode == 1
    stored = nox_project.digest_of("bad")
    assert stored["status"] == "fail"
    rendered = proc.stderr.split("nox > ckdn: digest of bad (fail):\n", 1)[1]
    assert json.loads(rendered[:rendered.index("\n}\n") + 2]) == stored
    assert failed_line(proc.stderr, "bad") == (
        f"ckdn: bad fail (rc 3): exit code 3; evidence in {stored['run_dir']}")


def test_a_red_check_is_a_failed_session_in_noxs_report_not_an_aborted_one(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "ok", "bad", "--report", "report.json")
    assert proc.returncode == 1
    report = json.loads((nox_project.root / "report.json").read_text())
    assert [(s["name"], s["result"]) for s in report["sessions"]] == [
        ("ok", "success"), ("bad", "failed")]
    assert "nox > * bad: failed" in proc.stderr.splitlines()


def test_an_alias_session_leaves_every_member_digest_and_the_aggregate(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "both")
    assert proc.returncode == 1
    aggregate = nox_project.aggregate_of("both")
    assert nox_project.digest_of("ok")["status"] == "pass"
    bad = nox_project.digest_of("bad")
    assert aggregate["members"] == [
        {"check": "ok", "status": "pass", "rc": 0},
        {"check": "bad", "status": "fail", "rc": 3, "run_dir": bad["run_dir"]},
    ]
    assert "nox > ckdn: aggregate of both (fail):" in proc.stderr
    assert "nox > ckdn: digest of bad (fail):" in proc.stderr
    assert "digest of ok" not in proc.stderr
    assert failed_line(proc.stderr, "both") == (
        f"ckdn: both fail (rc 3); first red member bad fail (rc 3), evidence in {bad['run_dir']}")


def test_posargs_reach_the_check_as_its_extra_arguments(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "echo", "--", "--fix", "two words")
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((nox_project.only_run_of("echo") / "seen.json").read_text())
    assert seen["args"] == ["--fix", "two words"]


def test_posargs_for_an_alias_fail_the_session_in_one_line(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "both", "--", "-x")
    assert proc.returncode == 1
    assert aborted_line(proc.stderr, "both").startswith(
        "ckdn: extra arguments after -- are not accepted for alias 'both'")
    assert nox_project.run_dirs() == []


def test_a_session_without_a_virtualenv_installs_nothing_and_says_what_it_expects(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile(NOXFILE)
    proc = nox_project.nox("-s", "echo")
    assert proc.returncode == 0, proc.stderr
    assert ("nox > ckdn: no virtualenv, not installing ruff==0.17.6 pip-audit>=2"
            " (they must already be on PATH or in this Python)") in proc.stderr.splitlines()
    assert "pip install" not in proc.stderr


def test_a_refused_config_registers_one_ckdn_session_that_fails_in_one_line(
        nox_project: NoxProject) -> None:
    nox_project.config(OK + "[check.typo]\ncommand = 'true'\nparser = 'nope'\n")
    nox_project.noxfile(NOXFILE)
    listing = nox_project.nox("-l", "--json", "-t", "ckdn")
    assert [s["session"] for s in json.loads(listing.stdout)] == ["ckdn"]
    proc = nox_project.nox("-s", "ckdn")
    assert proc.returncode == 1
    line = aborted_line(proc.stderr, "ckdn")
    assert line.startswith("ckdn: ckdn.toml: [check.typo] parser: unknown parser 'nope'")
    assert "Traceback" not in proc.stderr
    assert nox_project.run_dirs() == []


def test_an_unknown_name_in_only_is_refused_like_a_config_error(
        nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False, only=['okk'])\n")
    proc = nox_project.nox("-s", "ckdn")
    assert aborted_line(proc.stderr, "ckdn").startswith("ckdn: unknown check 'okk'")


def test_only_and_prefix_choose_and_name_the_sessions(nox_project: NoxProject) -> None:
    nox_project.config(ALL)
    nox_project.noxfile("import nox_ckdn\n"
                        "nox_ckdn.sessions(python=False, only=['both', 'ok'], prefix='ckdn-',"
                        " tags=['lint'], default=False)\n")
    listing = json.loads(nox_project.nox("-l", "--json", "-t", "ckdn").stdout)
    assert [(s["session"], s["tags"]) for s in listing] == [
        ("ckdn-both", ["ckdn", "alias", "lint"]), ("ckdn-ok", ["ckdn", "check", "lint"])]
    proc = nox_project.nox("-s", "ckdn-ok")
    assert proc.returncode == 0, proc.stderr
    assert nox_project.digest_of("ok")["status"] == "pass"


def test_a_bare_nox_runs_no_ckdn_session_unless_the_noxfile_asks(
        nox_project: NoxProject) -> None:
    nox_project.config(OK)
    nox_project.noxfile("import nox\nimport nox_ckdn\n"
                        "nox_ckdn.sessions(python=False)\n"
                        "@nox.session(python=False)\ndef mine(session):\n"
                        "    session.log('mine ran')\n")
    proc = nox_project.nox()
    assert proc.returncode == 0, proc.stderr
    assert "nox > mine ran" in proc.stderr.splitlines()
    assert nox_project.run_dirs() == []
    assert "- ok [ckdn,check] -> always green" in nox_project.nox("-l").stdout.splitlines()
    assert nox_project.nox("-t", "ckdn").returncode == 0
    assert nox_project.digest_of("ok")["status"] == "pass"


def test_default_true_puts_the_sessions_in_a_bare_nox_run(nox_project: NoxProject) -> None:
    nox_project.config(OK + "[check.broken]\ncommand = 'x'\nparser = 'nope'\n")
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False, default=True)\n")
    proc = nox_project.nox()
    assert proc.returncode == 1
    assert aborted_line(proc.stderr, "ckdn").startswith("ckdn: ckdn.toml: [check.broken]")
    nox_project.config(OK)
    assert nox_project.nox().returncode == 0
    assert nox_project.digest_of("ok")["status"] == "pass"


def test_default_false_keeps_the_sessions_out_of_a_bare_nox_run(
        nox_project: NoxProject) -> None:
    nox_project.config(OK)
    nox_project.noxfile("import nox\nimport nox_ckdn\n"
                        "nox_ckdn.sessions(python=False, default=False)\n"
                        "@nox.session(python=False)\ndef mine(session):\n    pass\n")
    proc = nox_project.nox()
    assert proc.returncode == 0, proc.stderr
    assert nox_project.run_dirs() == []


def test_a_session_the_noxfile_already_defines_is_left_to_the_noxfile(
        nox_project: NoxProject) -> None:
    nox_project.config(OK + ECHO)
    nox_project.noxfile("""\
        import nox
        import nox_ckdn

        @nox.session(python=False)
        def ok(session):
            session.log("hand-written ok")

        nox_ckdn.sessions(python=False)
        """)
    proc = nox_project.nox("-s", "ok")
    assert proc.returncode == 0, proc.stderr
    assert "nox > hand-written ok" in proc.stderr
    assert "nox session 'ok' is already defined in the noxfile" in proc.stderr
    assert nox_project.run_dirs() == []
    listing = json.loads(nox_project.nox("-l", "--json", "-t", "ckdn").stdout)
    assert "echo" in [s["session"] for s in listing]


def test_install_comes_before_the_checks_own_requires(nox_project: NoxProject) -> None:
    nox_project.config(ECHO)
    nox_project.noxfile("import nox_ckdn\n"
                        "nox_ckdn.sessions(python=False, install=['-e', '.', 'ruff==0.17.6'])\n")
    proc = nox_project.nox("-s", "echo")
    assert proc.returncode == 0, proc.stderr
    assert ("nox > ckdn: no virtualenv, not installing -e . ruff==0.17.6 pip-audit>=2"
            " (they must already be on PATH or in this Python)") in proc.stderr.splitlines()


def test_python_versions_parametrize_every_session_as_nox_does(
        nox_project: NoxProject) -> None:
    nox_project.config(OK)
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=['3.11', '3.12'])\n")
    listing = json.loads(nox_project.nox("-l", "--json", "-t", "ckdn").stdout)
    assert [(s["session"], s["python"], s["tags"]) for s in listing] == [
        ("ok-3.11", "3.11", ["ckdn", "check"]), ("ok-3.12", "3.12", ["ckdn", "check"])]


def test_a_refused_config_read_by_several_sessions_calls_is_one_session_logged_once(
        nox_project: NoxProject) -> None:
    # A noxfile calling sessions() per group or per Python: nox warned that `ckdn` was
    # registered again (an error in a future nox) and the line was logged each time.
    nox_project.config(OK + "[check.typo]\ncommand = 'true'\nparser = 'nope'\n")
    nox_project.noxfile("import nox_ckdn\n"
                        "nox_ckdn.sessions(python=False, only=['ok'])\n"
                        "nox_ckdn.sessions(python=False, prefix='again-')\n")
    proc = nox_project.nox("-l", "--json", "-t", "ckdn")
    assert [s["session"] for s in json.loads(proc.stdout)] == ["ckdn"]
    assert "FutureWarning" not in proc.stderr
    logged = [line for line in proc.stderr.splitlines() if "unknown parser 'nope'" in line]
    assert len(logged) == 1, proc.stderr
