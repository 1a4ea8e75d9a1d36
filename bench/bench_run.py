"""Whole-`ckdn run` figures: start-up cost on a trivial check, and a check printing a lot.

Prints figures; it is not a timed test. Usage::

    python bench/bench_run.py            # `true` check, 200 MB check
    python bench/bench_run.py --big      # also 2 GB

Peak RSS is measured per run in a fresh driver process with
``RUSAGE_CHILDREN``: the largest of ckdn and its child (the writer), so the
writer is kept tiny (``head -c`` / ``cat``).

The package is byte-compiled first and every run drops ``PYTHONDONTWRITEBYTECODE``,
so ckdn loads ``.pyc`` files as an installed one does. On a busy machine wall
times mislead; bench/bench_startup.py adds CPU time and import self times.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)
"""


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the measured tree, rc) of one run."""
    out = subprocess.run([sys.executable, "-c", DRIVER, *argv], cwd=cwd, capture_output=True,
                         text=True, check=True, env=ENV).stdout.split()
    return float(out[0]), int(out[1]) / 1024, int(out[2])


def wall(argv: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False, env=ENV)
    return time.perf_counter() - t


def paired_walls(first: list[str], second: list[str], cwd: Path, n: int
                 ) -> tuple[list[float], list[float]]:
    """``n`` walls of each, taken in alternation: this VM's speed drifts within seconds,
    and measuring one command after the other would charge the drift to one of them."""
    walls: tuple[list[float], list[float]] = ([], [])
    for _ in range(n):
        walls[0].append(wall(first, cwd))
        walls[1].append(wall(second, cwd))
    return walls


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--big", action="store_true", help="also measure a 2 GB check")
    args.add_argument("-n", type=int, default=100, help="runs for the start-up median")
    opts = args.parse_args()
    ckdn = shutil.which("ckdn") or str(Path(sys.executable).with_name("ckdn"))
    import ckdn as package

    compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sizes = [200_000_000] + ([2_000_000_000] if opts.big else [])
        blocks = "\n".join(
            f'[check.out{size}]\ncommand = "head -c {size} /dev/zero"\nparser = "generic"\n'
            for size in sizes)
        (root / "ckdn.toml").write_text(
            '[run]\nkeep = 3\n[check.true]\ncommand = "true"\nparser = "generic"\n' + blocks)
        subprocess.run([ckdn, "run", "true"], cwd=root, check=True, capture_output=True, env=ENV)
        bares, runs = paired_walls([sys.executable, "-c", "pass"], [ckdn, "run", "true"], root,
                                   opts.n)
        bare, run = statistics.median(bares), statistics.median(runs)
        extra = statistics.median(r - b for r, b in zip(runs, bares, strict=True))
        print(f"python -c pass           median {bare * 1000:7.1f} ms"
              f"  (min {min(bares) * 1000:.1f})")
        print(f"ckdn run true            median {run * 1000:7.1f} ms  (min {min(runs) * 1000:.1f};"
              " target <= 45 ms)")
        print(f"ckdn run true - python   median {extra * 1000:7.1f} ms of the pairs")
        for size in sizes:
            mb = size / 1e6
            target = root / "cat.out"
            cat_walls = []
            for _ in range(3):
                t = time.perf_counter()
                with open(target, "wb") as fh:
                    subprocess.run(["head", "-c", str(size), "/dev/zero"], stdout=fh, check=True)
                cat_walls.append(time.perf_counter() - t)
                target.unlink()
            big = [measure([ckdn, "run", f"out{size}"], root) for _ in range(3)]
            big_wall = statistics.median(r[0] for r in big)
            rss = max(r[1] for r in big)
            base = statistics.median(cat_walls)
            print(f"{mb:6.0f} MB: head into a file {base:6.3f} s; ckdn run {big_wall:6.3f} s "
                  f"= {big_wall / base:4.2f}x (target <= 1.5x); peak RSS {rss:5.1f} MiB "
                  "(target <= 40)")
        latest = json.loads((root / ".agent-runs" / "latest" / "meta.json").read_text())
        print(f"last meta: log_bytes={latest['log_bytes']}")


if __name__ == "__main__":
    main()
