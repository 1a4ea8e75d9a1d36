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
