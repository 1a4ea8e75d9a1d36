"""A throwaway project with a ckdn.toml and the real `ckdn` CLI run in it, plus the
process helpers tests share (a clean environment, "is this pid still running")."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

#: Variables by which tools tell a CI job (pytest prints whole assertion diffs when
#: ``CI`` or ``BUILD_NUMBER`` is set): a tool a test starts behaves the same in either.
CI_MARKERS = ("CI", "BUILD_NUMBER")

#: ``-p no:NAME`` for the suite's own pytest plugins that an inner suite of plain tests
#: started with this interpreter never uses: pytest imports every installed plugin, and
#: these are about half of such an inner run's CPU (hypothesis's imports hypothesis for its
#: summary, a second a session; anyio's a quarter of one).
UNUSED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:pytest_mock",
                  "-p", "no:platformdirs")


def clean_env() -> dict[str, str]:
    """This process's environment without ``CKDN_*``: a ckdn started by a test must not
    believe it runs inside the ckdn that may be running this suite; nor in the GitHub job
    the suite may run in (``GITHUB_*``: the hosts would annotate it), nor in a CI job at
    all (:data:`CI_MARKERS`: a real tool's output, compared with a golden file, would
    differ between a developer's machine and CI)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CKDN_", "GITHUB_")) and k not in CI_MARKERS}


def running(pid: int) -> bool:
    """Alive and able to run; a zombie nobody reaps (PID 1 in many containers) is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    except NotADirectoryError:  # no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


class Project:
    """A temporary project directory and a way to run the real ckdn CLI in it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def config(self, text: str) -> Path:
        path = self.root / "ckdn.toml"
        path.write_text(textwrap.dedent(text))
        return path

    def ckdn(self, *args: str, env: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
        full_env = clean_env()
        full_env.update(env or {})
        return subprocess.run([sys.executable, "-m", "ckdn", *args], cwd=self.root,
                              env=full_env, capture_output=True, text=True, timeout=timeout,
                              check=False)

    def digest(self, proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1, proc.stdout + proc.stderr
        doc: dict[str, Any] = json.loads(lines[0])
        return doc

    @property
    def runs(self) -> Path:
        return self.root / ".agent-runs"

    def run_dirs(self) -> list[Path]:
        if not self.runs.exists():
            return []
        return sorted(p for p in self.runs.iterdir()
                      if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


PY = sys.executable


def py(code: str) -> str:
    """A check command running ``code`` with this interpreter (quoted for shlex)."""
    return f"{shlex.quote(PY)} -c {shlex.quote(code)}"


def parse_reads(monkeypatch: Any) -> list[int | None]:
    """The ``top`` of each parse of a run's evidence from now on, in order (the run's own,
    a re-read for the gate or the file, a gate's pick by position): a test pins how many
    times the evidence is read."""
    from ckdn.app._running import parsing, steps

    reads: list[int | None] = []
    real = parsing.parse_run

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs.get("top"))
        return real(*args, **kwargs)

    monkeypatch.setattr(parsing, "parse_run", counting)
    monkeypatch.setattr(steps, "parse_run", counting)
    return reads
