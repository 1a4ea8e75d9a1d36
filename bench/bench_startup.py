"""Start-up figures of `ckdn run` on a trivial check: import self-times, CPU time, wall time.

Prints figures; it is not a timed test. Usage::

    python bench/bench_startup.py            # 15 runs of each measurement
    python bench/bench_startup.py -n 40 --top 30

On a loaded machine wall time says little, so it also reports two figures that
load barely moves: the sum of ``python -X importtime`` self times (the smallest
of N runs) and the CPU time (user + sys, from ``RUSAGE_CHILDREN``: ckdn and the
``true`` it runs). Each is shown next to the same figure for ``python -c pass``.
The package is byte-compiled first and ``PYTHONDONTWRITEBYTECODE`` is dropped
from the environment, so the runs load ``.pyc`` files as an installed ckdn does.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, r.ru_utime + r.ru_stime)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def import_times(argv: list[str], cwd: Path, n: int) -> tuple[int, dict[str, int]]:
    """(smallest sum of self times in µs, smallest self time per module) over ``n`` runs."""
    sums: list[int] = []
    per_module: dict[str, int] = {}
    for _ in range(n):
        err = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, env=_env(),
                             capture_output=True, text=True, check=True).stderr
        total = 0
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _cumulative, name = line[len("import time:"):].split("|")
            us = int(self_us)
            total += us
            module = name.strip()
            per_module[module] = min(us, per_module.get(module, us))
        sums.append(total)
    return min(sums), per_module


def cpu_and_wall(argv: list[str], cwd: Path, n: int) -> tuple[list[float], list[float]]:
    """CPU seconds (user + sys of the whole tree) and wall seconds of ``n`` runs."""
    cpus: list[float] = []
    walls: list[float] = []
    for _ in range(n):
        out = subprocess.run([sys.executable, "-c", DRIVER, *argv], cwd=cwd, env=_env(),
                             capture_output=True, text=True, check=True).stdout.split()
        walls.append(float(out[0]))
        cpus.append(float(out[1]))
    return cpus, walls


def loaded_modules(argv: list[str], cwd: Path) -> list[str]:
    err = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, env=_env(),
                         capture_output=True, text=True, check=True).stderr
    return [line.split("|")[2].strip() for line in err.splitlines()
            if line.startswith("import time:") and "self [us]" not in line]


def main() -> None:
    options = argparse.ArgumentParser()
    options.add_argument("-n", type=int, default=15, help="runs per measurement")
    options.add_argument("--top", type=int, default=25, help="modules listed by self time")
    opts = options.parse_args()

    import ckdn

    compileall.compile_dir(Path(ckdn.__file__).parent, quiet=1)
    script = Path(sys.executable).with_name("ckdn")
    ckdn_argv = [str(script), "run", "true"]
    bare_argv = ["-c", "pass"]
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    print(f"{os.cpu_count()} cores, load average {' '.join(load)}, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ckdn.toml").write_text(
            '[run]\nkeep = 3\n[check.true]\ncommand = "true"\nparser = "generic"\n')
        for _ in range(5):  # reach the steady state: every run prunes one old run dir
            subprocess.run(ckdn_argv, cwd=root, env=_env(), check=True, capture_output=True)

        bare_sum, _ = import_times(bare_argv, root, opts.n)
        run_sum, per_module = import_times(ckdn_argv, root, opts.n)
        print(f"import self-time sum (min of {opts.n}): python -c pass {bare_sum / 1000:6.1f} ms;"
              f" ckdn run true {run_sum / 1000:6.1f} ms")
        bare_cpu, bare_wall = cpu_and_wall([sys.executable, *bare_argv], root, opts.n)
        run_cpu, run_wall = cpu_and_wall(ckdn_argv, root, opts.n)
        for label, cpu, wall in (("python -c pass", bare_cpu, bare_wall),
                                 ("ckdn run true", run_cpu, run_wall)):
            print(f"{label:<15} CPU min {min(cpu) * 1000:6.1f} ms, median "
                  f"{statistics.median(cpu) * 1000:6.1f} ms; wall min {min(wall) * 1000:6.1f} ms,"
                  f" median {statistics.median(wall) * 1000:6.1f} ms")
        print(f"(target: ckdn run true median wall <= 45 ms)\n\n"
              f"largest import self times (µs, min of {opts.n}):")
        for module, us in sorted(per_module.items(), key=lambda kv: -kv[1])[: opts.top]:
            print(f"  {us:7d}  {module}")
        modules = loaded_modules(ckdn_argv, root)
        print(f"\n{len(modules)} modules imported: {' '.join(sorted(modules))}")


if __name__ == "__main__":
    main()
