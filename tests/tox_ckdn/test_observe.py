"""Observe mode: ``tox --ckdn`` records every env's own commands as a ``generic`` digest."""

from __future__ import annotations

import json

import jsonschema

from ckdn.schema import load_schema
from tests.tox_ckdn.toxproject import Project, json_lines

PRINTS = """
    [env.plain]
    commands = [
        ["python", "-c", "print('to stdout')"],
        ["python", "-c", "import sys; print('to stderr', file=sys.stderr)"],
    ]
"""
EXITS_4 = """
    [env.plain]
    commands_pre = [["python", "-c", "print('pre')"]]
    commands = [["python", "-c", "import sys; print('about to fail'); sys.exit(4)"]]
    commands_post = [["python", "-c", "print('post')"]]
"""


def test_tox_ckdn_turns_an_envs_commands_into_a_digest_named_after_the_env(
        project: Project) -> None:
    run = project.make(PRINTS)
    result = run("--ckdn", "-e", "plain")
    result.assert_success()
    digest = run.digest("tox-plain")
    assert digest == {"schema": "ckdn.digest/2", "check": "tox-plain", "status": "pass",
                      "rc": 0, "run_dir": digest["run_dir"],
                      "summary": {"log_lines": digest["summary"]["log_lines"]}}
    assert digest["summary"]["log_lines"] == len(
        (run.path / digest["run_dir"] / "full.log").read_bytes().splitlines())
    assert digest in json_lines(result.out)


def test_full_log_holds_each_command_with_its_output_and_exit_code(project: Project) -> None:
    run = project.make(PRINTS)
    run("--ckdn", "-e", "plain").assert_success()
    log = (run.path / run.digest("tox-plain")["run_dir"] / "full.log").read_text()
    assert log.splitlines() == [
        """$ python -c 'print('"'"'to stdout'"'"')'""",
        "to stdout",
        "[exit code 0]",
        """$ python -c 'import sys; print('"'"'to stderr'"'"', file=sys.stderr)'""",
        "to stderr",
        "[exit code 0]",
    ]


def test_a_failing_command_gives_a_fail_digest_with_its_exit_code_and_every_commands_log(
        project: Project) -> None:
    run = project.make(EXITS_4)
    result = run("--ckdn", "-e", "plain")
    result.assert_failed(4)
    digest = run.digest("tox-plain")
    assert digest["status"] == "fail"
    assert digest["rc"] == 4
    assert digest["status_reason"] == "exit code 4"
    assert digest["log_tail"] == [
        """$ python -c 'print('"'"'pre'"'"')'""", "pre", "[exit code 0]",
        """$ python -c 'import sys; print('"'"'about to fail'"'"'); sys.exit(4)'""",
        "about to fail", "[exit code 4]",
        """$ python -c 'print('"'"'post'"'"')'""", "post", "[exit code 0]",
    ]
    assert '"check": "tox-plain"' in result.out


def test_observed_documents_validate_against_their_schemas(project: Project) -> None:
    run = project.make(EXITS_4)
    run("--ckdn", "-e", "plain")
    digest = run.digest("tox-plain")
    meta = json.loads((run.path / digest["run_dir"] / "meta.json").read_text())
    jsonschema.Draft202012Validator(load_schema("ckdn.digest/2")).validate(digest)
    jsonschema.Draft202012Validator(load_schema("ckdn.meta/1")).validate(meta)
    assert meta["command"] == ["tox", "--ckdn", "-e", "plain"]
    assert meta["parser"] == "generic"


def test_the_same_commands_give_the_same_digest_bytes(project: Project) -> None:
    run = project.make(EXITS_4)
    run("--ckdn", "-e", "plain")
    run("--ckdn", "-e", "plain")
    dirs = sorted(run.runs_dir.glob("*-tox-plain"))
    first, second = ((d / "digest.json").read_text().replace(d.name, "RUN") for d in dirs)
    assert first == second


def test_the_core_key_ckdn_observe_turns_observe_mode_on(project: Project) -> None:
    run = project.make(PRINTS, core="ckdn_observe = true\n")
    run("-e", "plain").assert_success()
    assert run.digest("tox-plain")["status"] == "pass"


def test_an_untouched_tox_config_without_ckdn_toml_is_observed_too(project: Project) -> None:
    run = project.make(PRINTS, checks="")
    (run.path / "ckdn.toml").unlink()
    run("--ckdn", "-e", "plain").assert_success()
    assert run.digest("tox-plain")["status"] == "pass"


def test_without_observe_mode_a_plain_env_leaves_no_evidence(project: Project) -> None:
    run = project.make(PRINTS)
    result = run("-e", "plain")
    result.assert_success()
    assert run.run_names() == []
    assert json_lines(result.out) == []


def test_an_env_without_commands_is_not_observed(project: Project) -> None:
    run = project.make("""
        [env.empty]
        description = "nothing to run"
    """)
    run("--ckdn", "-e", "empty").assert_success()
    assert run.run_names() == []


def test_an_env_with_checks_and_commands_records_both(project: Project) -> None:
    run = project.make("""
        [env.both]
        ckdn_checks = ["ok"]
        commands = [["python", "-c", "print('own')"]]
    """)
    run("--ckdn", "-e", "both").assert_success()
    assert {"ok@both", "tox-both"} <= set(run.run_names())


#: A ckdn.toml that does not load (a typo'd key).
BROKEN = "[run]\nkep = 3\n"
BROKEN_LINE = ("ckdn: ckdn.toml: [run] unknown key 'kep'; did you mean 'keep'?; no tox env "
               "added from it, and observe mode records nothing")


def test_an_invalid_ckdn_toml_leaves_an_observed_envs_outcome_to_tox(project: Project) -> None:
    run = project.make("""
        [env.plain]
        commands = [["python", "-c", "open('commands-ran', 'w').close()"]]
    """, checks=BROKEN)
    result = run("--ckdn", "-e", "plain")
    result.assert_success()
    assert (run.path / "commands-ran").exists()
    assert run.run_names() == []
    assert [line for line in result.out.splitlines() if BROKEN_LINE in line] == [
        f"ROOT: {BROKEN_LINE}"]
    assert "failed with ckdn" not in result.out


def test_an_invalid_ckdn_toml_keeps_toxs_own_exit_code_for_an_observed_env(
        project: Project) -> None:
    run = project.make(EXITS_4, checks=BROKEN)
    result = run("--ckdn", "-e", "plain")
    result.assert_failed(4)
    assert "about to fail" in result.out
    assert "post" in result.out
    assert run.run_names() == []
