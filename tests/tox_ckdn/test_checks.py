"""Env key ``ckdn_checks``: the named checks run through ckdn inside the env."""

from __future__ import annotations

import os
from pathlib import Path

from ckdn.app._running.steps import store_for
from ckdn.config import load_config
from tests.tox_ckdn.toxproject import Project, json_lines

MARKER = """commands = [["python", "-c", "open('commands-ran', 'w').close()"]]"""


def test_a_listed_check_runs_with_the_envs_bin_first_on_path(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["where"]
    """)
    result = run("-e", "lint")
    result.assert_success()
    digest = run.digest("where@lint")
    assert digest["status"] == "pass"
    log = (run.path / digest["run_dir"] / "full.log").read_text()
    assert Path(log.strip()) == run.path / ".tox" / "lint"


def test_each_listed_check_prints_its_digest_and_keeps_its_own_run_dir(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["ok", "where"]
    """)
    result = run("-e", "lint")
    result.assert_success()
    shown = json_lines(result.out)
    assert run.digest("ok@lint") in shown
    assert run.digest("where@lint") in shown
    assert run.digest("ok@lint")["run_dir"] != run.digest("where@lint")["run_dir"]


def test_a_red_check_fails_the_env_with_its_digest_shown(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["bad"]
    """)
    result = run("-e", "lint")
    result.assert_failed(1)
    digest = run.digest("bad@lint")
    assert digest["status"] == "fail"
    assert digest["rc"] == 3
    assert '"status_reason": "exit code 3"' in result.out
    assert f"lint: failed with ckdn: bad@lint fail (rc 3): exit code 3; evidence in " \
           f"{digest['run_dir']}" in result.out
    assert "Traceback" not in result.out + result.err


def test_every_listed_check_runs_even_after_a_red_one(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["bad", "ok"]
    """)
    run("-e", "lint").assert_failed(1)
    assert run.digest("bad@lint")["status"] == "fail"
    assert run.digest("ok@lint")["status"] == "pass"


def test_checks_run_before_the_envs_own_commands(project: Project) -> None:
    run = project.make(f"""
        [env.lint]
        ckdn_checks = ["ok"]
        {MARKER}
    """)
    run("-e", "lint").assert_success()
    assert (run.path / "commands-ran").exists()


def test_a_red_check_stops_the_envs_own_commands(project: Project) -> None:
    run = project.make(f"""
        [env.lint]
        ckdn_checks = ["bad"]
        {MARKER}
    """)
    run("-e", "lint").assert_failed(1)
    assert not (run.path / "commands-ran").exists()


def test_requires_of_the_listed_checks_are_added_to_the_envs_deps(project: Project) -> None:
    run = project.make("""
        [env.lint]
        deps = ["pytest"]
        ckdn_checks = ["ruff"]
    """)
    result = run("c", "-e", "lint", "-k", "deps")
    result.assert_success()
    assert "deps =\n  pytest\n  ruff==0.17.6\n" in result.out


def test_requires_of_an_aliases_members_are_added_once_each(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["tools", "ruff"]
    """)
    result = run("c", "-e", "lint", "-k", "deps")
    assert "deps =\n  ruff==0.17.6\n  mypy==2.4.1\n" in result.out


def test_a_requirement_already_in_deps_is_not_added_twice(project: Project) -> None:
    run = project.make("""
        [env.lint]
        deps = ["ruff==0.17.6"]
        ckdn_checks = ["ruff"]
    """)
    result = run("c", "-e", "lint", "-k", "deps")
    assert result.out.count("ruff==0.17.6") == 1


def test_an_env_without_ckdn_checks_keeps_its_deps(project: Project) -> None:
    run = project.make("""
        [env.plain]
        deps = ["pytest"]
    """)
    result = run("c", "-e", "plain", "-k", "deps")
    assert "deps = pytest\n" in result.out
    assert "ruff" not in result.out


def test_tox_ini_lists_checks_on_lines_or_with_commas(project: Project) -> None:
    run = project.make(files={"tox.ini": """
        [testenv]
        skip_install = true

        [testenv:lines]
        ckdn_checks =
            ok
            where

        [testenv:commas]
        ckdn_checks = ok, where
    """})
    run("-e", "lines,commas").assert_success()
    assert {"ok@lines", "where@lines", "ok@commas", "where@commas"} <= set(run.run_names())


def test_posargs_are_the_extra_arguments_of_the_one_check(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["args"]
    """)
    run("-e", "lint", "--", "-x", "two words").assert_success()
    digest = run.digest("args@lint")
    log = (run.path / digest["run_dir"] / "full.log").read_text()
    assert log.strip() == "['-x', 'two words']"


def test_posargs_are_refused_when_the_env_runs_several_checks(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["ok", "args"]
    """)
    result = run("-e", "lint", "--", "-x")
    result.assert_failed(1)
    assert "positional arguments (after --) go to exactly one check" in result.out
    assert "`tox -e ok -- -x`" in result.out
    assert run.run_names() == []


def test_posargs_are_refused_for_an_alias(project: Project) -> None:
    run = project.make("""
        [env.ci]
        ckdn_checks = ["lint"]
    """)
    result = run("-e", "ci", "--", "-x")
    result.assert_failed(1)
    assert "'lint' is an alias" in result.out
    assert run.run_names() == []


def test_an_alias_runs_its_members_and_shows_its_aggregate_and_red_members(
        project: Project) -> None:
    run = project.make("""
        [env.ci]
        ckdn_checks = ["lint"]
    """)
    result = run("-e", "ci")
    result.assert_failed(1)
    aggregate = run.stored_aggregate("lint@ci")
    assert [(m["check"], m["status"]) for m in aggregate["members"]] == [
        ("ok@ci", "pass"), ("bad@ci", "fail")]
    assert '"alias": "lint@ci"' in result.out
    assert '"check": "bad@ci"' in result.out
    assert "first red member bad@ci fail (rc 3)" in result.out


def test_an_unknown_check_fails_the_env_in_one_line_before_anything_runs(
        project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["ok", "rufff"]
    """)
    result = run("-e", "lint")
    result.assert_failed(1)
    assert "lint: failed with ckdn: ckdn_checks: unknown check 'rufff'" in result.out
    assert "Traceback" not in result.out + result.err
    assert run.run_names() == []


def test_a_broken_ckdn_toml_fails_only_the_envs_that_need_it(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["ok"]

        [env.plain]
        commands = [["python", "-c", "print(1)"]]
    """, checks="[check.ok]\ncommand = 'true'\n")
    broken = run("-e", "lint")
    broken.assert_failed(1)
    assert "lint: failed with ckdn: ckdn.toml: [check.ok]" in broken.out
    assert "Traceback" not in broken.out + broken.err
    run("-e", "plain").assert_success()


def test_a_check_already_running_elsewhere_fails_the_env_cleanly(project: Project) -> None:
    run = project.make("""
        [env.ok]
        ckdn_checks = ["ok"]
    """)
    store = store_for(load_config(run.path))
    with store.begin("ok"):
        result = run("-e", "ok")
    result.assert_failed(1)
    assert f"check 'ok' is already running (pid {os.getpid()}" in result.out
    assert "Traceback" not in result.out + result.err


def test_the_core_key_ckdn_config_names_another_ckdn_toml(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["only"]
    """, core='ckdn_config = "ci/checks.toml"\n', checks="", files={"ci": {"checks.toml": (
        "[check.only]\ncommand = \"python -c 'print(2)'\"\nparser = \"generic\"\n")}})
    run("-e", "lint").assert_success()
    assert run.digest("only@lint")["status"] == "pass"


def test_ckdn_config_is_relative_to_the_tox_root_wherever_tox_starts(project: Project) -> None:
    """tox.toml's paths are the tox root's, even when ``tox -c`` is run from elsewhere
    (a bare ``--config`` of the ckdn CLI is the process cwd's instead)."""
    run = project.make("""
        [env.lint]
        ckdn_checks = ["only"]
    """, core='ckdn_config = "ci/checks.toml"\n', checks="", files={"ci": {"checks.toml": (
        "[check.only]\ncommand = \"python -c 'print(2)'\"\nparser = \"generic\"\n")},
        "elsewhere": {"ci": {"checks.toml": "[check.wrong]\ncommand = \"x\"\n"}}})
    result = run.tox.run("-c", str(run.path / "tox.toml"), "-e", "lint",
                         from_cwd=run.path / "elsewhere")
    result.assert_success()
    assert run.digest("only@lint")["status"] == "pass"


def test_tox_exec_runs_only_the_given_command(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["bad"]
    """)
    result = run("exec", "-e", "lint", "--", "python", "-c", "print('only me')")
    result.assert_success()
    assert "only me" in result.out
    assert run.run_names() == []


def test_a_check_the_command_policy_blocks_is_blocked_in_a_tox_env_too(project: Project) -> None:
    run = project.make("""
        [env.lint]
        ckdn_checks = ["leak"]
    """, checks='[check.leak]\ncommand = "python -c pass /etc/hostname"\nparser = "generic"\n')
    result = run("-e", "lint")
    result.assert_failed()
    digest = run.digest("leak@lint")
    assert digest["rc"] == 126
    assert digest["status"] == "error"
    assert digest["notes"] == ["blocked by the command policy (workspace): argument"
                               " '/etc/hostname' is under /etc, which no check may name"]
