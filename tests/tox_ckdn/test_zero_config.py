"""Zero config: every check and alias of ckdn.toml is a tox env, even where tox defines none."""

from __future__ import annotations

from tests.tox_ckdn.toxproject import CHECKS, Project, json_lines


def test_tox_lists_an_env_for_every_check_and_alias_with_its_description(
        project: Project) -> None:
    run = project.make("")
    result = run("l")
    result.assert_success()
    assert "ok     -> ckdn check ok: always passes" in result.out
    assert "bad    -> ckdn check bad\n" in result.out
    assert "lint   -> ckdn alias lint (ok, bad)" in result.out


def test_tox_e_runs_a_check_that_tox_config_does_not_define(project: Project) -> None:
    run = project.make("")
    result = run("-e", "where")
    result.assert_success()
    digest = run.digest("where")
    assert digest["check"] == "where"
    assert digest["status"] == "pass"
    assert digest in json_lines(result.out)


def test_a_check_env_works_without_any_tox_config(project: Project) -> None:
    run = project.make()
    run("-e", "ok").assert_success()
    assert run.digest("ok")["status"] == "pass"


def test_a_red_zero_config_check_fails_tox_with_exit_code_1(project: Project) -> None:
    run = project.make("")
    result = run("-e", "bad")
    result.assert_failed(1)
    assert run.digest("bad")["rc"] == 3


def test_a_zero_config_alias_runs_every_member_in_its_own_run_dir(project: Project) -> None:
    run = project.make("")
    run("-e", "lint").assert_failed(1)
    aggregate = run.stored_aggregate("lint")
    assert [(m["check"], m["status"]) for m in aggregate["members"]] == [
        ("ok@lint", "pass"), ("bad@lint", "fail")]
    assert {"ok@lint", "bad@lint", "lint"} <= set(run.run_names())


def test_commands_inherited_from_env_run_base_do_not_run_in_a_check_env(
        project: Project) -> None:
    run = project.make("""
        commands = [["python", "-c", "open('base-ran', 'w').close()"]]
    """)
    run("-e", "ok").assert_success()
    assert not (run.path / "base-ran").exists()


def test_an_env_tox_config_defines_keeps_its_own_meaning(project: Project) -> None:
    run = project.make("""
        [env.ok]
        commands = [["python", "-c", "print('tox own ok')"]]
    """)
    result = run("-e", "ok")
    result.assert_success()
    assert "tox own ok" in result.out
    assert run.run_names() == []


def test_a_check_envs_deps_are_its_requires(project: Project) -> None:
    run = project.make("")
    result = run("c", "-e", "tools", "-k", "deps")
    assert "deps =\n  ruff==0.17.6\n  mypy==2.4.1\n" in result.out


def test_posargs_go_to_a_zero_config_check(project: Project) -> None:
    run = project.make("")
    run("-e", "args", "--", "one").assert_success()
    log = (run.path / run.digest("args")["run_dir"] / "full.log").read_text()
    assert log.strip() == "['one']"


def test_a_broken_ckdn_toml_adds_no_env_and_says_why(project: Project) -> None:
    run = project.make("", checks="[check.x]\nparser = 'generic'\n")
    result = run("l")
    assert "ckdn: ckdn.toml" in result.out
    assert "no tox env added from it" in result.out


def test_a_check_env_of_a_broken_ckdn_toml_is_not_found_after_ckdns_line_saying_why(
        project: Project) -> None:
    run = project.make("", checks=CHECKS + "[check.x]\nparser = 'generic'\n")
    result = run("-e", "ok")
    assert result.code != 0
    lines = result.out.splitlines()
    ours = [i for i, line in enumerate(lines)
            if line.startswith("ROOT: ckdn: ckdn.toml: [check.x] needs 'command'")]
    toxs = [i for i, line in enumerate(lines)
            if "provided environments not found in configuration file" in line]
    assert len(ours) == 1, result.out
    assert len(toxs) == 1, result.out
    assert ours[0] < toxs[0]
    assert lines[ours[0]].endswith("; no tox env added from it")
    assert run.run_names() == []


def test_with_a_broken_ckdn_toml_tox_says_so_once_and_runs_its_own_envs(
        project: Project) -> None:
    run = project.make("""
        [env.own]
        commands = [["python", "-c", "print('tox own')"]]
    """, checks="[check.x]\nparser = 'generic'\n")
    result = run("-e", "own")
    result.assert_success()
    assert "tox own" in result.out
    assert [line for line in result.out.splitlines() if "ckdn" in line] == [
        "ROOT: ckdn: ckdn.toml: [check.x] needs 'command' (an atomic check) or 'members' "
        "(an alias); no tox env added from it"]
    assert run.run_names() == []
