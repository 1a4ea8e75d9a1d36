"""What the command policy costs: the verdict alone, and a whole `ckdn run` of a `true` check.

Prints figures; it is not a timed test. Usage::

    python bench/bench_policy.py            # 150 interleaved rounds
    python bench/bench_policy.py --rounds 50

The verdict (:func:`ckdn.app._running.policy.verdict`) is timed in process on three argvs:
``true``, the project's own ruff and pytest commands, and a command of 200 path
arguments. The whole run is ``ckdn run ok`` (``command = "true"``) in two
projects that differ only in ``[run].command_policy`` (``workspace``, the
default, against ``off``), taken in turn each round because this VM's speed
drifts within seconds; the per-round difference is the steadiest figure. The
package is byte-compiled first and ``PYTHONDONTWRITEBYTECODE`` dropped, as for an
installed ckdn.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

ENV = {key: value for key, value in os.environ.items()
       if key != "PYTHONDONTWRITEBYTECODE" and not key.startswith("CKDN_")}
CONFIG = """\
[run]
command_policy = "{policy}"
keep = 20

[check.ok]
command = "true"
parser = "generic"
"""


def verdict_figures(root: Path) -> None:
    from ckdn.app import load_config
    from ckdn.app._running.policy import child_env, verdict

    (root / "ckdn.toml").write_text(
        '[check.t]\ncommand = "true"\nparser = "generic"\n'
        '[check.ruff]\ncommand = "ruff check --output-format json --output-file '
        '{run_dir}/ruff.json ."\nparser = "ruff"\n'
        '[check.pytest]\ncommand = "pytest -q --ckdn-digest --junitxml {run_dir}/junit.xml"\n'
        'parser = "pytest"\n'
        '[check.many]\ncommand = "true ' + " ".join(f"src/m{i}.py" for i in range(200))
        + '"\nparser = "generic"\n')
    config = load_config(root)
    for name in ("t", "ruff", "pytest", "many"):
        check = config.checks[name]
        run_dir = os.path.join(config.run.runs_dir, "RUN")
        argv = [a.replace("{run_dir}", run_dir) for a in check.argv]
        env = child_env(config, check, name, run_dir)
        n = 2000 if name != "many" else 100
        best = min(timeit.repeat(lambda: verdict(config, check, argv, run_dir, env),  # noqa: B023
                                 number=n, repeat=5)) / n
        print(f"verdict({name}: {len(argv)} argv tokens): {best * 1e6:.1f} us")


def wall(argv: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False, env=ENV)
    return time.perf_counter() - t


def run_figures(root: Path, rounds: int) -> None:
    ckdn = [sys.executable, "-m", "ckdn", "run", "ok"]
    projects = {}
    for policy in ("workspace", "off"):
        project = root / policy
        project.mkdir()
        (project / "ckdn.toml").write_text(CONFIG.format(policy=policy))
        for _ in range(21):  # `keep` runs already there: each measured run prunes one
            subprocess.run(ckdn, cwd=project, env=ENV, capture_output=True, check=True)
        projects[policy] = project
    walls: dict[str, list[float]] = {"workspace": [], "off": []}
    for _ in range(rounds):
        for policy, project in projects.items():
            walls[policy].append(wall(ckdn, project))
    on, off = (statistics.median(walls[p]) for p in ("workspace", "off"))
    diffs = [a - b for a, b in zip(walls["workspace"], walls["off"], strict=True)]
    print(f"ckdn run ok (true), {rounds} rounds, medians: workspace {on * 1e3:.2f} ms,"
          f" off {off * 1e3:.2f} ms, ratio {on / off:.3f}; per-round difference median"
          f" {statistics.median(diffs) * 1e3:+.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    import ckdn

    compileall.compile_dir(str(Path(ckdn.__file__).parent), quiet=1)
    print(f"python {platform.python_version()} on {platform.machine()},"
          f" {os.cpu_count()} cpus, {platform.platform()}")
    with tempfile.TemporaryDirectory(prefix="ckdn-bench-policy-") as tmp:
        verdict_figures(Path(tmp))
        run_figures(Path(tmp), args.rounds)


if __name__ == "__main__":
    main()
