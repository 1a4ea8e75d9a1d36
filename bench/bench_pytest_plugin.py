"""pytest plugin figures: what ``--ckdn-digest`` costs, and how big its digest gets.

Prints figures; it is not a timed test. Usage::

    python bench/bench_pytest_plugin.py              # 5,000 passing tests, 15 rounds
    python bench/bench_pytest_plugin.py --tests 2000 -n 5
    python bench/bench_pytest_plugin.py --only failing
    python bench/bench_pytest_plugin.py --project jsonschema-4.23.0 --python venv/bin/python -n 5

What is measured, each in a fresh ``python -m pytest`` process run from a
generated project in a temporary directory:

* **trivial**: ``--tests`` passing tests (100 per module). Three variants run in
  interleaved rounds (the order rotating each round) so that load on the
  machine hits them alike: plain ``pytest``, ``pytest --ckdn-digest`` and
  ``pytest --junitxml=FILE``. For each: median and best wall time, median CPU
  time (user + system of the process tree), and the median over rounds of the
  ratio to that round's plain run (robust against a machine whose load drifts
  between rounds). The issue's targets: ``--ckdn-digest`` at most 5% over
  plain, and no more than ``--junitxml``.
* **share**: after each of the two, one session run in this process with the
  plugin's hooks timed from the inside: the plugin's own cost, measured
  directly, as a share of the session (the machine's load moves wall times by
  more than the plugin costs, so a difference of two runs cannot resolve it).
* **failing**: ``--failing`` tests that fail with long tracebacks (each fails
  ten frames deep in a recursive helper, on an assertion comparing two 30-key
  dicts, in pytest's default long traceback style), in ``rounds // 5``
  interleaved rounds. Figures: wall time plain vs ``--ckdn-digest``, the
  digest's size in bytes (bound: 64 KiB), ``findings_total`` and
  ``findings_truncated``.

Every variant runs with ``-p no:cacheprovider -p no:hypothesispytest`` (no
cache writes; hypothesis's plugin alone costs about a second of import here),
which makes the plugin's relative cost look larger, not smaller. The children
run with bytecode caching on, as users have it, even when this process was
started with ``PYTHONDONTWRITEBYTECODE`` set (the development sandbox sets it,
which would charge every run the compile and assertion-rewrite time of every
module it imports).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMMON = ["-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
ENV = {key: value for key, value in os.environ.items()
       if key != "PYTHONDONTWRITEBYTECODE" and not key.startswith("CKDN_")}

FAILING_MODULE = '''
def deep(n, left, right):
    if n == 0:
        assert left == right
    deep(n - 1, left, right)


{tests}
'''
FAILING_TEST = '''
def test_fail_{i}():
    left = {{f"key{{k}}": k for k in range(30)}}
    right = dict(left, key{i_mod}=-1)
    deep(10, left, right)
'''


def write_trivial(root: Path, tests: int) -> None:
    per_module = 100
    for module in range((tests + per_module - 1) // per_module):
        count = min(per_module, tests - module * per_module)
        body = "\n\n".join(f"def test_{i}():\n    pass" for i in range(count))
        (root / f"test_trivial_{module:03d}.py").write_text(body + "\n")


def write_failing(root: Path, tests: int) -> None:
    # 50 per module: pytest re-parses a module for each traceback entry it shows,
    # so one huge module would measure that instead.
    per_module = 50
    for module in range((tests + per_module - 1) // per_module):
        count = min(per_module, tests - module * per_module)
        body = "".join(FAILING_TEST.format(i=i, i_mod=i % 30) for i in range(count))
        (root / f"test_failing_{module:03d}.py").write_text(FAILING_MODULE.format(tests=body))


def plugin_share(root: Path, args: list[str]) -> tuple[float, float, int]:
    """(s inside the plugin's own code, s of the whole session, calls) of one session.

    Runs pytest in this process with every hook of the plugin (its module hooks
    and the session recorder's) and the log tee timed, so the plugin's cost is
    measured directly rather than as a difference of two noisy wall times. It
    leaves out pluggy's dispatch to those hooks (well under a microsecond per
    call) and counts the first-time import of ckdn's modules, as a real session
    pays it.
    """
    import pytest

    from pytest_ckdn import _session, _tee, plugin

    spent = [0.0, 0]

    def timed(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start
                spent[1] += 1

        return wrapper

    targets: list[tuple[Any, str]] = [(_session.Recorder, name) for name in vars(_session.Recorder)
                                      if name.startswith("pytest_")]
    targets += [(plugin, "pytest_configure"), (_tee.LogTee, "write")]
    saved = [(owner, name, getattr(owner, name)) for owner, name in targets]
    for owner, name, func in saved:
        setattr(owner, name, timed(func))
    cwd = os.getcwd()
    os.chdir(root)
    start = time.perf_counter()
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            pytest.main([*COMMON, *args])
    finally:
        total = time.perf_counter() - start
        os.chdir(cwd)
        for owner, name, func in saved:
            setattr(owner, name, func)
    return spent[0], total, int(spent[1])


def report_share(root: Path, args: list[str]) -> None:
    inside, total, calls = plugin_share(root, args)
    print(f"  plugin's own code in one in-process --ckdn-digest session: {1000 * inside:.0f} ms"
          f" in {calls} calls = {100 * inside / total:.1f}% of its {total:.3f} s")


def run_once(root: Path, args: list[str], *, argv: list[str] | None = None,
             env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s of the child tree, exit code) of one pytest process (or ``argv``)."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(argv or [sys.executable, "-m", "pytest", *COMMON, *args], cwd=root,
                          env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu, proc.returncode


def trivial(tests: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_trivial(root, tests)
        variants = {
            "plain": [],
            "--ckdn-digest": ["--ckdn-digest"],
            "--junitxml": ["--junitxml", str(root / "junit.xml")],
        }
        run_once(root, [])  # warm the page cache and pyc files
        print(f"trivial: {tests} passing tests, {rounds} interleaved rounds")
        interleaved({name: functools.partial(run_once, root, args)
                     for name, args in variants.items()}, rounds)
        report_share(root, ["--ckdn-digest"])


def interleaved(variants: dict[str, Callable[[], tuple[float, float, int]]], rounds: int,
                ok: tuple[int, ...] = (0,)) -> None:
    """Run each variant once a round, the order rotating, and print each one's medians and
    the median of its per-round ratios to the first variant's (plain pytest)."""
    names = list(variants)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in order:
            wall, cpu, code = variants[name]()
            if code not in ok:
                raise SystemExit(f"{name}: exited {code}")
            walls[name].append(wall)
            cpus[name].append(cpu)
    plain = names[0]
    for name in names:
        wall_ratio = statistics.median(w / p for w, p in zip(walls[name], walls[plain],
                                                              strict=True))
        cpu_ratios = [c / p for c, p in zip(cpus[name], cpus[plain], strict=True)]
        cpu_ratio = statistics.median(cpu_ratios)
        print(f"  {name:16} wall median {statistics.median(walls[name]):6.3f} s"
              f" (best {min(walls[name]):6.3f})  cpu median"
              f" {statistics.median(cpus[name]):6.3f} s   per-round vs {plain}:"
              f" wall {100 * (wall_ratio - 1):+5.1f}%  cpu {100 * (cpu_ratio - 1):+5.1f}%"
              f"  (rounds: {' '.join(f'{100 * (r - 1):+.1f}' for r in cpu_ratios)})",
              flush=True)
    print(f"  load average now {os.getloadavg()[0]:.2f}")


def project(root: Path, python: Path, rounds: int) -> None:
    """A real project's suite, run by ``python`` (its venv, with checkdown installed): plain
    pytest, ``pytest --ckdn-digest``, ``pytest --junitxml`` (pytest's own writer, what the
    starter recipe adds to plain pytest), ``ckdn run pytest`` (the starter recipe: pytest with
    ``--junitxml``) and ``ckdn run pytest-plugin`` (pytest with ``--ckdn-digest``, the
    plugin's digest read by the run), interleaved. A ``ckdn.toml`` is written for the last
    two if the project has none, and removed after."""
    env = dict(ENV, PATH=f"{python.parent}{os.pathsep}{ENV.get('PATH', '')}")
    pytest = ["python", "-m", "pytest", *COMMON]
    config = root / "ckdn.toml"
    written = not config.exists()
    if written:
        config.write_text(f'[check.pytest]\ncommand = "{" ".join(pytest)} '
                          '--junitxml {run_dir}/junit.xml"\nparser = "pytest"\n'
                          f'[check.pytest-plugin]\ncommand = "{" ".join(pytest)} '
                          '--ckdn-digest"\nparser = "pytest"\n')
    try:
        def run(argv: list[str]) -> Callable[[], tuple[float, float, int]]:
            return functools.partial(run_once, root, [], argv=argv, env=env)

        run(pytest)()  # warm the page cache and pyc files
        print(f"project {root}: {rounds} interleaved rounds, run by {python}")
        junit = root / ".agent-runs" / "bench-junit.xml"
        junit.parent.mkdir(exist_ok=True)
        interleaved({"plain": run(pytest), "--ckdn-digest": run([*pytest, "--ckdn-digest"]),
                     "--junitxml": run([*pytest, "--junitxml", str(junit)]),
                     "ckdn run pytest": run(["python", "-m", "ckdn", "run", "pytest"]),
                     "ckdn run (plugin)": run(["python", "-m", "ckdn", "run", "pytest-plugin"])},
                    rounds)
    finally:
        if written:
            config.unlink()


def failing(tests: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_failing(root, tests)
        walls: dict[str, list[float]] = {"plain": [], "--ckdn-digest": []}
        for round_ in range(rounds):
            order = list(walls) if round_ % 2 == 0 else list(reversed(walls))
            for name in order:
                wall, _, code = run_once(root, [] if name == "plain" else [name])
                if code != 1:
                    raise SystemExit(f"{name}: pytest exited {code}")
                walls[name].append(wall)
        latest = root / ".agent-runs" / "latest"
        data = (latest / "digest.json").read_bytes()
        doc = json.loads(data)
        log = (latest / "full.log").stat().st_size
        ratio = statistics.median(d / p for d, p in zip(walls["--ckdn-digest"], walls["plain"],
                                                         strict=True))
        print(f"failing: {tests} failing tests with long tracebacks, {rounds} rounds")
        for name, values in walls.items():
            print(f"  {name:14} wall median {statistics.median(values):6.3f} s"
                  f" (best {min(values):6.3f})")
        print(f"  per-round --ckdn-digest vs plain: wall {100 * (ratio - 1):+5.1f}%")
        print(f"  digest {len(data)} bytes (bound 65536); findings shown "
              f"{len(doc.get('findings', []))}, findings_total {doc.get('findings_total')}, "
              f"findings_truncated {doc.get('findings_truncated')}; full.log {log} bytes")
        report_share(root, ["--ckdn-digest"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=5000, help="passing tests (trivial)")
    parser.add_argument("--failing", type=int, default=1000, help="failing tests")
    parser.add_argument("-n", "--rounds", type=int, default=15, help="rounds of the trivial runs")
    parser.add_argument("--only", choices=["trivial", "failing"])
    parser.add_argument("--project", type=Path,
                        help="instead: this project's own suite (plain, --ckdn-digest, "
                             "ckdn run pytest), e.g. jsonschema's sdist")
    parser.add_argument("--python", type=Path, default=Path(sys.executable),
                        help="the interpreter of the project's venv (checkdown installed)")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    if args.project is not None:
        project(args.project.resolve(), args.python.absolute(), args.rounds)
        return
    if args.only in (None, "trivial"):
        trivial(args.tests, args.rounds)
    if args.only in (None, "failing"):
        failing(args.failing, max(1, args.rounds // 5))


if __name__ == "__main__":
    main()
