"""``tox p``: envs run ckdn checks at the same time in separate run dirs, without lock clashes."""

from __future__ import annotations

from tests.tox_ckdn.toxproject import Project, last_json

SAME_CHECK = """
    [env.a]
    ckdn_checks = ["meet"]

    [env.b]
    ckdn_checks = ["meet"]

    [env.c]
    ckdn_checks = ["meet"]
"""

#: The check ``meet``: each run marks its arrival, then waits (at most 60 s) until three
#: have arrived. Three envs that tox ran one after the other would never all meet, so the
#: test proves overlap instead of timing it.
MEET = """\
import os, pathlib, sys, time
arrived = pathlib.Path("arrived")
arrived.mkdir(exist_ok=True)
(arrived / str(os.getpid())).touch()
deadline = time.monotonic() + 60
while len(list(arrived.iterdir())) < 3:
    if time.monotonic() > deadline:
        sys.exit("no overlap")
    time.sleep(0.02)
"""


def test_the_same_check_in_parallel_envs_runs_at_once_without_lock_clashes(
        project: Project) -> None:
    run = project.make(SAME_CHECK, files={"meet.py": MEET})
    result = run("p", "-p", "3", "-e", "a,b,c")
    result.assert_success()
    members = last_json(result.out)["members"]
    assert [(m["check"], m["status"]) for m in members] == [
        ("meet@a", "pass"), ("meet@b", "pass"), ("meet@c", "pass")]
    assert len({run.digest(m["check"])["run_dir"] for m in members}) == 3
    assert len(list((run.path / "arrived").iterdir())) == 3
    locks = sorted(p.name for p in (run.runs_dir / ".locks").iterdir())
    assert locks == ["meet@a.lock", "meet@b.lock", "meet@c.lock"]


def test_a_parallel_run_shows_a_failing_envs_digest_and_fails(project: Project) -> None:
    run = project.make("""
        [env.good]
        ckdn_checks = ["ok"]

        [env.red]
        ckdn_checks = ["bad"]
    """)
    result = run("p", "-e", "good,red")
    result.assert_failed(1)
    assert '"check": "bad@red"' in result.out
    aggregate = last_json(result.out)
    assert aggregate["status"] == "fail"
    assert [m["check"] for m in aggregate["members"]] == ["ok@good", "bad@red"]


def test_parallel_zero_config_envs_of_a_check_and_its_alias_do_not_clash(
        project: Project) -> None:
    run = project.make("")
    result = run("p", "-e", "ok,lint")
    assert [m["check"] for m in last_json(result.out)["members"]] == [
        "ok", "ok@lint", "bad@lint"]


def test_observe_mode_works_with_tox_p(project: Project) -> None:
    run = project.make("""
        [env.first]
        commands = [["python", "-c", "print(1)"]]

        [env.second]
        commands = [["python", "-c", "raise SystemExit(2)"]]
    """)
    result = run("p", "--ckdn", "-e", "first,second")
    result.assert_failed(1)
    members = last_json(result.out)["members"]
    assert [(m["check"], m["status"], m["rc"]) for m in members] == [
        ("tox-first", "pass", 0), ("tox-second", "fail", 2)]
