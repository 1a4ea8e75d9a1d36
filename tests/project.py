"""A throwaway project with a ckdn.toml and the real `ckdn` CLI run in it, plus the
process helpers tests share (a clean environment, "is this pid still running")."""

from __future__ import annotations

import faulthandler
import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
import traceback
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
#: The same as ``PYTEST_ADDOPTS`` gives them: for a pytest a test starts through another tool.
UNUSED_ADDOPTS = " ".join(UNUSED_PLUGINS)


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

    def ckdn(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60,
             own_process: bool = False) -> subprocess.CompletedProcess[str]:
        """The real CLI run in this project: in this process (``ckdn.cli.main``, which a
        host calls the same way) unless ``own_process`` or ``env`` sets a ``PYTHON*``
        variable, which only a new interpreter reads. A ``python -m ckdn`` costs ~90 ms
        of CPU a call, and the suite makes hundreds (docs/testing.md). A pytest the run
        starts skips :data:`UNUSED_PLUGINS` (``PYTEST_ADDOPTS``, unless ``env`` sets it)."""
        full_env = {**clean_env(), "PYTEST_ADDOPTS": UNUSED_ADDOPTS, **(env or {})}
        if own_process or any(key.startswith("PYTHON") for key in env or {}):
            return subprocess.run([sys.executable, "-m", "ckdn", *args], cwd=self.root,
                                  env=full_env, capture_output=True, text=True,
                                  timeout=timeout, check=False)
        return run_in_process(list(args), cwd=self.root, env=full_env, timeout=timeout)

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


def run_in_process(argv: list[str], *, cwd: Path, env: dict[str, str],
                   timeout: float) -> subprocess.CompletedProcess[str]:
    """``ckdn ARGV`` through ``ckdn.cli.main`` with this process's environment, directory
    and standard streams swapped for the call's, as a child would have them (a pipe for
    stdout and stderr, ``/dev/null`` for stdin, UTF-8), and the output read back as
    ``subprocess.run(text=True)`` reads it. A call that outlives ``timeout`` ends the
    worker with every thread's traceback (a hang must not pass for slowness)."""
    from ckdn.cli import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out, err = io.BytesIO(), io.BytesIO()
    code: int | str | None
    with open(os.devnull, encoding="utf-8") as stdin:
        sys.stdin = stdin
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", newline="\n",
                                      write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                                      newline="\n", write_through=True)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        faulthandler.dump_traceback_later(timeout, exit=True, file=2)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code
        except KeyboardInterrupt:
            raise
        except BaseException:  # what an uncaught exception prints and exits with
            traceback.print_exc()
            code = 1
        finally:
            faulthandler.cancel_dump_traceback_later()
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
                stream.detach()
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
    if code is None:
        code = 0
    elif not isinstance(code, int):  # SystemExit("message"): printed, exit 1
        err.write(f"{code}\n".encode())
        code = 1
    return subprocess.CompletedProcess(argv, code, _text(out.getvalue()), _text(err.getvalue()))


def _text(data: bytes) -> str:
    """Bytes as ``subprocess.run(text=True)`` decodes them: UTF-8, universal newlines."""
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


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
