"""nox integration figures: what ``nox -s <check>`` through nox_ckdn costs.

Prints figures; it is not a timed test. Usage::

    python bench/bench_nox.py                 # both modes, 15 rounds
    python bench/bench_nox.py -n 20 --mode none
    python bench/bench_nox.py --mode venv     # needs PyPI once, to fill the venvs

Four ways to run the same check, each a fresh process started from a generated
project in a temporary directory, in interleaved rounds (the order rotating
each round, so drifting machine load hits them alike):

* **tool**: the check's command itself, nothing around it;
* **ckdn run**: ``ckdn run <check>``;
* **nox raw**: ``nox -s raw_<check>``, a hand-written session that calls the
  tool with ``session.run`` (nox without ckdn);
* **nox > ckdn run**: ``nox -s cli_<check>``, a hand-written session that
  calls ``ckdn run <check>`` with ``session.run`` (nox and ckdn, without the
  integration: what a noxfile did before nox_ckdn);
* **nox_ckdn**: ``nox -s <check>``, the session ``nox_ckdn.sessions()``
  registered.

Two checks: ``ruff`` (``ruff check`` with its JSON report, over 40 small
modules) and ``noop`` (``python -c pass``, so the fixed costs are all there
is). Two modes: ``none`` (``python=False``, tools on ``PATH``) and ``venv``
(each session in its own virtualenv, created and filled from ``requires`` once,
then reused with ``nox -R``; *tool* and *ckdn run* get that venv's ``bin``
first on ``PATH``, so all four run the same ruff).

Figures per variant: median and best wall time, and the median over rounds of
the difference to that round's *tool* run. The integration's cost is the
median over rounds of ``nox_ckdn - nox > ckdn run``: the same nox, the same
environment, the same ckdn, once in-process through the integration and once as
the ``ckdn run`` CLI. The claim under test is that this is not above zero.
Finally, ``sessions()`` is timed in this process (registration is the cost
every nox invocation, even ``nox -l``, pays when the noxfile is imported).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

BIN = Path(sys.executable).parent
NOX = str(BIN / "nox")
CKDN = str(BIN / "ckdn")
RUFF_PIN = "ruff==0.17.6"
ENV = {key: value for key, value in os.environ.items()
       if key != "PYTHONDONTWRITEBYTECODE" and not key.startswith(("CKDN_", "NOX"))}
ENV["PATH"] = os.pathsep.join([str(BIN), ENV.get("PATH", "")])

RUFF_ARGV = ["ruff", "check", "--output-format", "json", "--output-file"]
CONFIG = f"""\
[check.ruff]
command = "{' '.join(RUFF_ARGV)} {{run_dir}}/ruff.json ."
parser = "ruff"
requires = ["{RUFF_PIN}"]

[check.noop]
command = "python -c pass"
parser = "generic"
"""

NOXFILE = """\
import nox
import nox_ckdn

VENV = {venv!r}
where = {{"venv_backend": "venv", "reuse_venv": True}} if VENV else {{"python": False}}

nox_ckdn.sessions(**where)


@nox.session(**where)
def raw_ruff(session):
    if VENV:
        session.install({pin!r})
    argv = [*{ruff!r}, "raw.json", "."]
    session.run(*argv, silent=True)


@nox.session(**where)
def raw_noop(session):
    session.run("python", "-c", "pass", silent=True)


@nox.session(**where)
def cli_ruff(session):
    if VENV:
        session.install({pin!r})
    session.run("ckdn", "run", "ruff", silent=True, external=True)


@nox.session(**where)
def cli_noop(session):
    session.run("ckdn", "run", "noop", silent=True, external=True)
"""

MODULE = '"""Module {i}."""\n\n\ndef f{i}(x: int) -> int:\n    return x + {i}\n'


def write_project(root: Path, *, venv: bool) -> None:
    (root / "ckdn.toml").write_text(CONFIG)
    (root / "noxfile.py").write_text(NOXFILE.format(venv=venv, pin=RUFF_PIN, ruff=RUFF_ARGV))
    (root / "ruff.toml").write_text('line-length = 120\n[lint]\nselect = ["E", "F", "W"]\n')
    for i in range(40):
        (root / f"mod{i}.py").write_text(MODULE.format(i=i))


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n"
                         f"{proc.stdout.decode()}{proc.stderr.decode()}")
    return elapsed


def variants(root: Path, check: str, *, venv: bool) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = dict(ENV)
    nox_extra: list[str] = []
    if venv:
        # The same interpreter and tools nox's session sees: its venv's bin first.
        env["PATH"] = os.pathsep.join([str(root / ".nox" / check / "bin"), env["PATH"]])
        nox_extra = ["-R"]
    tool = ([*RUFF_ARGV, "tool.json", "."] if check == "ruff" else ["python", "-c", "pass"])
    return {
        "tool": (tool, env),
        "ckdn run": ([CKDN, "run", check], env),
        "nox raw": ([NOX, *nox_extra, "-s", f"raw_{check}"], ENV),
        "nox > ckdn run": ([NOX, *nox_extra, "-s", f"cli_{check}"], ENV),
        "nox_ckdn": ([NOX, *nox_extra, "-s", check], ENV),
    }


def prepare_venvs(root: Path) -> None:
    """Create and fill every session's venv once, so that timed runs only reuse them."""
    for session in ("ruff", "noop", "raw_ruff", "raw_noop", "cli_ruff", "cli_noop"):
        proc = subprocess.run([NOX, "-s", session], cwd=root, env=ENV, capture_output=True,
                              check=False)
        if proc.returncode != 0:
            raise SystemExit(f"preparing venv for {session} failed:\n{proc.stderr.decode()}")


def measure(root: Path, check: str, rounds: int, *, venv: bool) -> dict[str, list[float]]:
    runs = variants(root, check, venv=venv)
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up: page cache, bytecode
        timed(runs[name][0], root, runs[name][1])
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            argv, env = runs[name]
            times[name].append(timed(argv, root, env))
    return times


def report(check: str, mode: str, times: dict[str, list[float]]) -> None:
    tool = times["tool"]
    print(f"\n{check} ({mode}), {len(tool)} rounds; ms")
    print(f"  {'variant':<15} {'median':>8} {'best':>8} {'- tool':>8}")
    for name, values in times.items():
        over = statistics.median(v - t for v, t in zip(values, tool, strict=True))
        print(f"  {name:<15} {statistics.median(values) * 1e3:8.1f} {min(values) * 1e3:8.1f}"
              f" {over * 1e3:8.1f}")
    own = [b - c for b, c in zip(times["nox_ckdn"], times["nox > ckdn run"], strict=True)]
    spread = statistics.quantiles(own, n=4) if len(own) >= 4 else [min(own), max(own)]
    print(f"  integration's cost, nox_ckdn - nox > ckdn run:"
          f" median {statistics.median(own) * 1e3:+.1f} ms,"
          f" quartiles {spread[0] * 1e3:+.1f} / {spread[-1] * 1e3:+.1f} ms")


def registration_cost(root: Path, repeat: int = 200) -> float:
    """Seconds one ``nox_ckdn.sessions()`` takes in-process (config load included)."""
    import nox.registry

    import nox_ckdn

    cwd = Path.cwd()
    os.chdir(root)
    try:
        best = float("inf")
        for _ in range(repeat):
            nox.registry.reset()
            start = time.perf_counter()
            nox_ckdn.sessions(python=False)
            best = min(best, time.perf_counter() - start)
        nox.registry.reset()
    finally:
        os.chdir(cwd)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--rounds", type=int, default=15)
    parser.add_argument("--mode", choices=("none", "venv", "both"), default="both")
    args = parser.parse_args()
    nox_version = subprocess.run([NOX, "--version"], capture_output=True, text=True,
                                 check=True, env=ENV)
    print(f"python {platform.python_version()}, nox {nox_version.stderr.strip()},"
          f" {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs")
    modes = ["none", "venv"] if args.mode == "both" else [args.mode]
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="bench-nox-") as tmp:
            root = Path(tmp)
            write_project(root, venv=mode == "venv")
            if mode == "venv":
                prepare_venvs(root)
            else:
                print(f"\nsessions() registering 2 checks: "
                      f"{registration_cost(root) * 1e6:.0f} us (best of 200)")
            for check in ("ruff", "noop"):
                report(check, mode, measure(root, check, args.rounds, venv=mode == "venv"))


if __name__ == "__main__":
    main()
