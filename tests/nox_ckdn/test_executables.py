"""A check whose program is not the session's own says which file ran: a note in its digest.

A nox session puts its virtualenv's bin directories first on ``PATH``; a check
with no ``requires`` still finds its tool further along (here: the ruff of
this suite's venv, put on ``PATH`` after nox's). One real virtualenv.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.nox_ckdn.noxproject import NoxProject

CONFIG = """\
[check.outer]
command = "ruff --version"
parser = "generic"

[check.inner]
command = "python -c pass"
parser = "generic"

[check.both]
members = ["inner", "outer"]
fail_fast = false
"""


def test_a_program_found_outside_the_sessions_virtualenv_is_named_in_a_note(
        nox_project: NoxProject) -> None:
    nox_project.config(CONFIG)
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions()\n")
    ours = str(Path(sys.executable).parent)
    proc = nox_project.nox("-s", "both", timeout=300,
                           env={"PATH": os.pathsep.join([ours, os.environ["PATH"]])})
    assert proc.returncode == 0, proc.stderr
    assert "notes" not in nox_project.digest_of("inner")
    outer = shutil.which("ruff", path=ours)
    assert nox_project.digest_of("outer")["notes"] == [
        f"ruff ran from {outer}, found on PATH outside the env (its bin directory "
        f"{nox_project.root / '.nox' / 'both' / 'bin'}): the env has no ruff of its own"]


def test_a_session_without_a_virtualenv_has_no_env_to_be_outside_of(
        nox_project: NoxProject) -> None:
    nox_project.config(CONFIG)
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False)\n")
    ours = str(Path(sys.executable).parent)
    proc = nox_project.nox("-s", "outer",
                           env={"PATH": os.pathsep.join([ours, os.environ["PATH"]])})
    assert proc.returncode == 0, proc.stderr
    assert "notes" not in nox_project.digest_of("outer")


def test_a_command_the_policy_blocks_is_blocked_in_a_nox_session_too(
        nox_project: NoxProject) -> None:
    nox_project.config('[check.leak]\ncommand = "cat /etc/hostname"\nparser = "generic"\n')
    nox_project.noxfile("import nox_ckdn\nnox_ckdn.sessions(python=False)\n")
    proc = nox_project.nox("-s", "leak")
    assert proc.returncode != 0
    doc = nox_project.digest_of("leak")
    assert doc["status"] == "error"
    assert doc["rc"] == 126
    assert doc["notes"] == ["blocked by the command policy (workspace): argument '/etc/hostname'"
                            " is under /etc, which no check may name"]
