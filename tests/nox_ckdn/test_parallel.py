"""``nox -j``: every session is its own nox process, and ckdn's per-check lock keeps them apart.

The checks below wait for each other through marker files instead of sleeping,
so the tests prove overlap rather than hope for it: a pair that nox ran one
after the other would never finish (and would time out as ckdn checks do).
"""

from __future__ import annotations

import re
import sys

from tests.nox_ckdn.checks import check
from tests.nox_ckdn.noxproject import NoxProject, aborted_line


def waits_for(mine: str, theirs: str) -> str:
    """Code that marks ``mine`` then waits (at most 20 s) until ``theirs`` is marked."""
    return (f"import pathlib, sys, time; pathlib.Path({mine!r}).touch(); "
            f"deadline = time.monotonic() + 20\n"
            f"while not pathlib.Path({theirs!r}).exists():\n"
            f"    time.sleep(0.02)\n"
            f"    if time.monotonic() > deadline: sys.exit('no overlap')")


def test_different_checks_in_parallel_sessions_run_at_once_each_in_its_own_run_dir(
        nox_project: NoxProject) -> None:
    nox_project.config(check("left", waits_for("left-up", "right-up"), extra="timeout = 30")
                       + check("right", waits_for("right-up", "left-up"), extra="timeout = 30"))
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False, allow_parallel=True)\n")
    proc = nox_project.nox("-j", "2", "-s", "left", "right")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    left, right = nox_project.digest_of("left"), nox_project.digest_of("right")
    assert (left["status"], right["status"]) == ("pass", "pass")
    assert left["run_dir"] != right["run_dir"]


def test_the_same_check_in_two_parallel_sessions_is_refused_once_in_one_line(
        nox_project: NoxProject) -> None:
    # Whichever session takes the lock waits until the other one has been refused.
    nox_project.config(check("hold", waits_for("held", "refused"), extra="timeout = 30"))
    nox_project.noxfile("""\
        from pathlib import Path

        import nox
        import nox_ckdn


        def hold(session):
            try:
                nox_ckdn.run(session, "hold")
            finally:
                Path("refused").touch()


        # two sessions, not one parametrized: each parametrization has its own lock
        @nox.session(python=False, allow_parallel=True)
        def one(session):
            hold(session)


        @nox.session(python=False, allow_parallel=True)
        def two(session):
            hold(session)
        """)
    proc = nox_project.nox("-j", "2", "-s", "one", "two")
    assert proc.returncode == 1
    refusals = [line for line in proc.stdout.splitlines() if " aborted: " in line]
    assert len(refusals) == 1, proc.stdout
    session = refusals[0].split("Session ", 1)[1].split(" aborted: ")[0]
    winner = nox_project.digest_of("hold")
    assert winner["status"] == "pass"
    where = re.escape(winner["run_dir"])
    assert re.fullmatch(
        rf"ckdn: check 'hold' is already running \(pid \d+, run dir {where}\);"
        r" wait for it to finish or stop that process\.", aborted_line(proc.stdout, session))


def test_a_check_parametrized_over_two_pythons_runs_at_once_as_two_histories(
        nox_project: NoxProject) -> None:
    # Two spellings of this interpreter: two sessions, two virtualenvs, no other Python needed.
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    nox_project.config(check("hold", (
        "import os, pathlib, sys, time; pathlib.Path(f'up-{os.getpid()}').touch();"
        " deadline = time.monotonic() + 20\n"
        "while len(list(pathlib.Path().glob('up-*'))) < 2:\n"
        "    time.sleep(0.02)\n"
        "    if time.monotonic() > deadline: sys.exit('no overlap')"), extra="timeout = 30"))
    nox_project.noxfile("import nox_ckdn\n"
                        f"nox_ckdn.sessions(python=[{version!r}, 'python{version}'],"
                        " allow_parallel=True)\n")
    proc = nox_project.nox("-j", "2", "-t", "ckdn", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for label in (version, f"python{version}"):
        digest = nox_project.digest_of(f"hold@{label}")
        assert (digest["check"], digest["status"]) == (f"hold@{label}", "pass")
    assert nox_project.run_dirs_of("hold") == []
