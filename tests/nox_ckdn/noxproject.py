"""A temporary project with a ckdn.toml and a noxfile, and the real ``nox`` run in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from ckdn.schema import load_schema
from tests.project import UNUSED_ADDOPTS, Project

#: The ``nox`` console script installed next to this interpreter (the dev extra pins it).
NOX = str(Path(sys.executable).parent / "nox")

#: Variables that would change what an inner nox or ckdn does: an outer ckdn run's
#: markers, nox's session/python/parallel selection.
_HOST_VARIABLES = ("CKDN_", "NOX")

#: virtualenv links each new env to its precompiled seed packages (pip, setuptools), as
#: tox's test harness makes every tox run do: a copied pip has no bytecode (the sandbox
#: sets PYTHONDONTWRITEBYTECODE), so each pip run in a new env compiled pip again first.
_VIRTUALENV = {"VIRTUALENV_SYMLINK_APP_DATA": "1", "VIRTUALENV_SYMLINKS": "1"}

SCHEMAS = {name: Draft202012Validator(load_schema(name))
           for name in ("ckdn.digest/2", "ckdn.aggregate/1")}


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(SCHEMAS[doc["schema"]].iter_errors(doc), key=str)
    assert not errors, [e.message for e in errors]
    return doc


class NoxProject(Project):
    """``config`` writes ckdn.toml, ``noxfile`` the noxfile, ``nox`` runs nox there."""

    def noxfile(self, text: str) -> Path:
        path = self.root / "noxfile.py"
        path.write_text(textwrap.dedent(text))
        return path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """nox's environment: the host's variables out, a pytest a session starts without
        the suite's unused plugins (as ``Project.ckdn``'s), ``extra`` over both."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_HOST_VARIABLES)}
        env["PYTEST_ADDOPTS"] = UNUSED_ADDOPTS
        env.update(_VIRTUALENV)
        env.update(extra or {})
        return env

    def nox(self, *args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([NOX, *args], cwd=self.root, env=self.env(env),
                              capture_output=True, text=True, timeout=timeout, check=False)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([NOX, *args], cwd=self.root, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run_dirs_of(self, name: str) -> list[Path]:
        return [p for p in self.run_dirs() if p.name.endswith(f"-{name}")]

    def only_run_of(self, name: str) -> Path:
        found = self.run_dirs_of(name)
        assert len(found) == 1, [p.name for p in self.run_dirs()]
        return found[0]

    def digest_of(self, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.only_run_of(name) / "digest.json").read_text())
        return valid(doc)

    def aggregate_of(self, name: str) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads((self.only_run_of(name) / "aggregate.json").read_text())
        return valid(doc)


def logged_documents(output: str) -> list[dict[str, Any]]:
    """The compact digests nox logged as ``nox > {...}`` lines, in order."""
    docs: list[dict[str, Any]] = []
    for line in output.splitlines():
        if line.startswith("nox > {"):
            docs.append(json.loads(line.removeprefix("nox > ")))
    return docs


def aborted_line(output: str, session: str) -> str:
    """The one line nox prints for a session that failed through ``session.error``."""
    found = [line for line in output.splitlines()
             if line.startswith(f"nox > Session {session} aborted: ")]
    assert len(found) == 1, output
    return found[0].removeprefix(f"nox > Session {session} aborted: ")


def failed_line(output: str, session: str) -> str:
    """The error line ckdn logs for a red session, which nox then reports as failed.

    nox prints ``Session NAME failed.`` right after the session ends, so the line
    before it is the session's last word.
    """
    lines = output.splitlines()
    end = f"nox > Session {session} failed."
    assert lines.count(end) == 1, output
    assert f"Session {session} aborted" not in output, output
    last = lines[lines.index(end) - 1]
    assert last.startswith("nox > ckdn: "), output
    return last.removeprefix("nox > ")
