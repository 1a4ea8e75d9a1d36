"""Tox projects for the plugin tests: tox.toml or tox.ini plus ckdn.toml, run by tox's harness."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tox.pytest import ToxProject, ToxProjectCreator, ToxRunOutcome

#: Checks that run the env's own ``python`` (found on the env's PATH, as tox commands are).
CHECKS = """\
[check.ok]
command = "python -c 'print(\\"all good\\")'"
parser = "generic"
description = "always passes"

[check.bad]
command = "python -c 'import sys; print(\\"boom\\"); sys.exit(3)'"
parser = "generic"

[check.where]
command = "python -c 'import sys; print(sys.prefix)'"
parser = "generic"

[check.args]
command = "python -c 'import sys; print(sys.argv[1:])'"
parser = "generic"

[check.meet]
command = "python meet.py"
parser = "generic"

[check.lint]
members = ["ok", "bad"]
fail_fast = false

[check.ruff]
command = "ruff check --output-format json --output-file {run_dir}/ruff.json ."
parser = "ruff"
requires = ["ruff==0.17.6"]

[check.typing]
command = "mypy ."
parser = "mypy"
requires = ["mypy==2.4.1", "ruff==0.17.6"]

[check.tools]
members = ["ruff", "typing"]
"""

#: Every env skips packaging: the tests are about ckdn, not about building this project.
BASE = """\
[env_run_base]
skip_install = true
"""


class Project:
    """Creates tox projects; :meth:`make` returns one ready to run."""

    def __init__(self, creator: ToxProjectCreator) -> None:
        self._creator = creator

    def make(self, tox_toml: str | None = None, *, core: str = "", checks: str = CHECKS,
             files: dict[str, Any] | None = None) -> Run:
        """A project; ``core`` holds top-level tox.toml keys (they must precede any table)."""
        content: dict[str, Any] = {"ckdn.toml": checks, **(files or {})}
        if tox_toml is not None:
            content["tox.toml"] = textwrap.dedent(core) + BASE + textwrap.dedent(tox_toml)
        return Run(self._creator(content))


class Run:
    """One tox project on disk: run tox in it and read the ckdn evidence it left."""

    def __init__(self, tox: ToxProject) -> None:
        self.tox = tox
        self.path: Path = tox.path

    def __call__(self, *args: str) -> ToxRunOutcome:
        return self.tox.run(*args)

    @property
    def runs_dir(self) -> Path:
        return self.path / ".agent-runs"

    def run_names(self) -> list[str]:
        """Names of the run dirs, without the timestamp, sorted."""
        if not self.runs_dir.exists():
            return []
        return sorted(p.name.split("-", 1)[1] for p in self.runs_dir.iterdir()
                      if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))

    def digest(self, name: str) -> dict[str, Any]:
        """The newest digest of run name ``name`` (``ok``, ``ok@lint``, ``tox-py``)."""
        found = sorted(p for p in self.runs_dir.glob(f"*-{name}") if (p / "digest.json").exists())
        assert found, f"no digest for {name}: {self.run_names()}"
        doc: dict[str, Any] = json.loads((found[-1] / "digest.json").read_text())
        return doc

    def stored_aggregate(self, name: str = "tox") -> dict[str, Any]:
        found = sorted(self.runs_dir.glob(f"*-{name}/aggregate.json"))
        assert found, f"no aggregate {name}: {self.run_names()}"
        doc: dict[str, Any] = json.loads(found[-1].read_text())
        return doc


def last_json(out: str) -> dict[str, Any]:
    """The last stdout line, which is the aggregate tox_ckdn prints at the end of a run."""
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return doc


def json_lines(out: str) -> list[dict[str, Any]]:
    """Every compact JSON document printed on a line of its own."""
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"')]
