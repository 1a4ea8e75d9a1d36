"""The end of a tox run: one ``ckdn.aggregate/1`` over every env, printed last and stored."""

from __future__ import annotations

import jsonschema

from ckdn.schema import load_schema
from tests.tox_ckdn.toxproject import Project, last_json

ENVS = """
    [env.one]
    ckdn_checks = ["ok"]

    [env.two]
    ckdn_checks = ["where", "bad"]

    [env.plain]
    commands = [["python", "-c", "print('plain')"]]
"""


def test_one_aggregate_over_all_envs_is_printed_last_and_stored(project: Project) -> None:
    run = project.make(ENVS)
    result = run("-e", "one,two")
    result.assert_failed(1)
    printed = last_json(result.out)
    assert printed == run.stored_aggregate("tox")
    assert printed["alias"] == "tox"
    assert printed["status"] == "fail"
    assert printed["rc"] == 3
    assert [(m["check"], m["status"]) for m in printed["members"]] == [
        ("ok@one", "pass"), ("where@two", "pass"), ("bad@two", "fail")]
    for member in printed["members"]:
        if member["status"] == "pass":
            assert "run_dir" not in member  # the contract routes only to red evidence
        else:
            assert member["run_dir"] == run.digest(member["check"])["run_dir"]
    jsonschema.Draft202012Validator(load_schema("ckdn.aggregate/1")).validate(printed)


def test_a_green_run_has_a_green_aggregate(project: Project) -> None:
    run = project.make(ENVS)
    result = run("-e", "one")
    result.assert_success()
    assert last_json(result.out)["status"] == "pass"


def test_the_aggregate_lists_envs_in_the_order_they_were_asked_for(project: Project) -> None:
    run = project.make(ENVS)
    result = run("-e", "two,one")
    assert [m["check"] for m in last_json(result.out)["members"]] == [
        "where@two", "bad@two", "ok@one"]


def test_an_env_whose_checks_never_ran_is_a_skipped_member_and_never_green(
        project: Project) -> None:
    run = project.make(ENVS + """
    [env.nopython]
    base_python = ["python2.1"]
    ckdn_checks = ["ok"]
    """)
    result = run("-e", "one,nopython")
    aggregate = last_json(result.out)
    assert aggregate["members"] == [
        {"check": "ok@one", "status": "pass", "rc": 0},
        {"check": "ok@nopython", "status": "skipped"}]
    assert aggregate["status"] == "error"
    assert aggregate["rc"] == 1


def test_a_plain_tox_run_prints_and_stores_no_aggregate(project: Project) -> None:
    run = project.make(ENVS)
    result = run("-e", "plain")
    result.assert_success()
    assert not result.out.strip().splitlines()[-1].startswith("{")
    assert run.run_names() == []


def test_an_env_refused_before_any_check_ran_prints_no_aggregate(project: Project) -> None:
    run = project.make(ENVS)
    result = run("-e", "two", "--", "extra")
    result.assert_failed(1)
    assert not result.out.strip().splitlines()[-1].startswith("{")
    assert run.run_names() == []


def test_observed_envs_join_the_aggregate(project: Project) -> None:
    run = project.make(ENVS)
    result = run("--ckdn", "-e", "one,plain")
    result.assert_success()
    assert [m["check"] for m in last_json(result.out)["members"]] == ["ok@one", "tox-plain"]


FAILING = ENVS + """
    [env.broken]
    commands = [["python", "-c", "raise SystemExit(3)"]]

    [env.after]
    ckdn_checks = ["ok"]
    commands = [["python", "-c", "raise SystemExit(4)"]]
"""


def test_a_plain_env_tox_failed_makes_the_aggregate_red_with_its_evidence(
        project: Project) -> None:
    run = project.make(FAILING)
    result = run("-e", "broken,one")
    result.assert_failed(1)
    printed = last_json(result.out)
    assert printed["status"] == "fail"
    assert [(m["check"], m["status"], m.get("rc")) for m in printed["members"]] == [
        ("tox-broken", "fail", 3), ("ok@one", "pass", 0)]
    digest = run.digest("tox-broken")
    assert digest["status"] == "fail"
    assert printed["members"][0]["run_dir"] == digest["run_dir"]
    assert "[exit code 3]" in digest["log_tail"]
    jsonschema.Draft202012Validator(load_schema("ckdn.aggregate/1")).validate(printed)


def test_an_env_whose_own_command_fails_after_green_checks_is_never_green(
        project: Project) -> None:
    run = project.make(FAILING)
    result = run("-e", "after")
    result.assert_failed(4)
    printed = last_json(result.out)
    assert printed["status"] == "fail"
    assert [(m["check"], m["status"]) for m in printed["members"]] == [
        ("ok@after", "pass"), ("tox-after", "fail")]


def test_a_tox_run_without_ckdn_runs_writes_no_aggregate_for_its_failed_env(
        project: Project) -> None:
    run = project.make(FAILING)
    result = run("-e", "broken")
    result.assert_failed(3)
    assert '"ckdn.aggregate/1"' not in result.out
