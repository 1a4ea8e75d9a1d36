"""Whole-`ckdn run` figures: start-up cost on a trivial check, and a check printing a lot.

Prints figures; it is not a timed test. Usage::

    python bench/bench_run.py                    # `true` check, 200 MB check
    python bench/bench_run.py --big              # also 2 GB
    python bench/bench_run.py --startup-only --against /path/to/other/venv/bin/ckdn
                                                 # start-up of this build and another one

Install both builds the same way for ``--against`` (say ``pip install .`` into two
fresh venvs, and run this script with the first one's python): a development venv's
editable install and the ``.pth`` files of its tools cost about 2 ms of every start,
which would be charged to the build.
    python bench/bench_run.py --startup-only --launcher uv
                                                 # as uv's console script starts it

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


def interleaved_walls(commands: list[list[str]], projects: list[Path], n: int
                      ) -> list[list[float]]:
    """``n`` walls of each command, taken in turn: this VM's speed drifts within seconds,
    and measuring one command after the other would charge the drift to one of them.
    The first command runs in the first project, each other one in its own."""
    walls: list[list[float]] = [[] for _ in commands]
    cwds = [projects[0], *projects]
    for _ in range(n):
        for argv, cwd, times in zip(commands, cwds, walls, strict=True):
            times.append(wall(argv, cwd))
    return walls


def uv_script(pip_script: str, path: Path) -> str:
    """A console script as uv writes it (it imports nothing but sys) for the same install."""
    with open(pip_script, encoding="utf-8") as handle:
        interpreter = handle.readline().removeprefix("#!").strip()
    path.write_text(f"#!{interpreter}\nimport sys\nfrom ckdn.cli import main\n"
                    "if __name__ == '__main__':\n    sys.exit(main())\n")
    path.chmod(0o755)
    return str(path)


def shell_wall(script: str, cwd: Path) -> float:
    os.sync()  # the previous run's dirty pages must not be written back during this one
    t = time.perf_counter()
    subprocess.run(["sh", "-c", script], cwd=cwd, check=True)
    took = time.perf_counter() - t
    (cwd / "copy.out").unlink()
    return took


def ckdn_run(ckdn: str, check: str, root: Path) -> tuple[float, float, int]:
    """One synced, measured ``ckdn run``; its run dir is removed afterwards, untimed."""
    os.sync()
    measured = measure([ckdn, "run", check], root)
    latest = root / ".agent-runs" / "latest"
    meta = json.loads((latest / "meta.json").read_text())
    assert meta["log_bytes"] == int(check.removeprefix("out").removeprefix("cat")), meta
    shutil.rmtree(latest.resolve())
    return measured


def big_output(ckdn: str, root: Path, size: int, rounds: int = 5) -> None:
    """A check printing ``size`` bytes, against three ways of putting them in a file.

    ``head -c`` into a file is the writer alone, what the check's own output costs.
    ``cat FILE > copy`` copies in the kernel (``copy_file_range``), faster than
    SHA-256 can read the bytes, which ``meta.json`` must carry: no implementation
    that hashes every byte gets within 1.5x of it. ``head -c | cat > copy`` moves
    the bytes through ``cat`` as a pipe would.

    Each round runs every baseline and both checks, synced, in turn: this VM's disk
    slows down for minutes after a few hundred MB are written, and measuring one
    command after the other would charge that to one of them. No run prunes (its
    run dir is removed, untimed, after it); pruning an older run, which every run
    does once ``keep`` is reached, costs what deleting the file costs, printed on
    its own.
    """
    mb = size / 1e6
    source = root / f"bytes{size}"
    subprocess.run(["sh", "-c", f"head -c {size} /dev/urandom > {source}"], check=True)
    baselines = {
        "head -c > file": f"head -c {size} /dev/zero > copy.out",
        "head -c | cat > file": f"head -c {size} /dev/zero | cat > copy.out",
        "cat FILE > file": f"cat {source} > copy.out",
    }
    base: dict[str, list[float]] = {name: [] for name in baselines}
    head: list[tuple[float, float, int]] = []
    cat: list[tuple[float, float, int]] = []
    for _ in range(rounds):
        for name, command in baselines.items():
            base[name].append(shell_wall(command, root))
        head.append(ckdn_run(ckdn, f"out{size}", root))
        cat.append(ckdn_run(ckdn, f"cat{size}", root))
    med = {name: statistics.median(walls) for name, walls in base.items()}
    head_wall, cat_wall = (statistics.median(r[0] for r in runs) for runs in (head, cat))
    rss = max(r[1] for r in (*head, *cat))
    print(f"{mb:6.0f} MB, medians of {rounds} rounds (target <= 1.5x, peak RSS <= 40 MiB):")
    print(f"  ckdn run `head -c` {head_wall:6.3f} s = {head_wall / med['head -c > file']:4.2f}x"
          f" head -c > file ({med['head -c > file']:.3f} s),"
          f" {head_wall / med['head -c | cat > file']:4.2f}x head -c | cat > file"
          f" ({med['head -c | cat > file']:.3f} s)")
    print(f"  ckdn run `cat FILE` {cat_wall:6.3f} s = {cat_wall / med['cat FILE > file']:4.2f}x"
          f" cat FILE > file ({med['cat FILE > file']:.3f} s)")
    print(f"  peak RSS {rss:5.1f} MiB")
    os.sync()
    t = time.perf_counter()
    source.unlink()
    print(f"  deleting a synced {mb:.0f} MB file (what pruning an older run costs once"
          f" `keep` is reached): {time.perf_counter() - t:.3f} s")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--big", action="store_true", help="also measure a 2 GB check")
    args.add_argument("-n", type=int, default=100, help="runs for the start-up median")
    args.add_argument("--keep", type=int, default=20,
                      help="[run].keep of the start-up project, which starts with that many runs"
                           " so every measured run prunes one, as at a user's steady state"
                           " (default 20, ckdn's own default)")
    args.add_argument("--against", metavar="CKDN",
                      help="another ckdn program (say an older build's) timed in the same rounds")
    args.add_argument("--startup-only", action="store_true", help="skip the big-output figures")
    args.add_argument("--launcher", choices=("pip", "uv"), default="pip",
                      help="how `ckdn` starts: the installed script (ckdn's own launcher; an older"
                           " build's pip console script imports re first) or uv's (imports only"
                           " sys); default pip")
    opts = args.parse_args()
    ckdn = shutil.which("ckdn") or str(Path(sys.executable).with_name("ckdn"))
    import ckdn as package

    compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        programs = {"ckdn run true": ckdn}
        if opts.against:
            programs["other ckdn run true"] = opts.against
        if opts.launcher == "uv":
            programs = {label: uv_script(program, root / f"ckdn{index}")
                        for index, (label, program) in enumerate(programs.items())}
        projects: list[Path] = []
        for index, program in enumerate(programs.values()):
            project = root / f"project{index}"  # each build its own store
            project.mkdir()
            (project / "ckdn.toml").write_text(
                f'[run]\nkeep = {opts.keep}\n[check.true]\ncommand = "true"\nparser = "generic"\n')
            for _ in range(opts.keep):
                subprocess.run([program, "run", "true"], cwd=project, check=True,
                               capture_output=True, env=ENV)
            projects.append(project)
        walls = interleaved_walls([[sys.executable, "-c", "pass"],
                                   *([p, "run", "true"] for p in programs.values())],
                                  projects, opts.n)
        bares = walls[0]
        bare = statistics.median(bares)
        print(f"start-up ({opts.launcher} launcher), every run pruning one of keep = {opts.keep},"
              f" {opts.n} rounds:")
        print(f"python -c pass           median {bare * 1000:7.1f} ms"
              f"  (min {min(bares) * 1000:.1f})")
        for label, runs in zip(programs, walls[1:], strict=True):
            run = statistics.median(runs)
            extra = statistics.median(r - b for r, b in zip(runs, bares, strict=True))
            print(f"{label:<24} median {run * 1000:7.1f} ms  (min {min(runs) * 1000:.1f});"
                  f" - python {extra * 1000:5.1f} ms of the rounds; {run / bare:.2f}x python")
        if len(walls) == 3:
            diff = statistics.median(a - b for a, b in zip(walls[1], walls[2], strict=True))
            print(f"this build - the other   median {diff * 1000:+7.1f} ms of the rounds")
        if not opts.startup_only:
            sizes = [200_000_000] + ([2_000_000_000] if opts.big else [])
            blocks = "\n".join(
                f'[check.out{size}]\ncommand = "head -c {size} /dev/zero"\nparser = "generic"\n'
                f'[check.cat{size}]\ncommand = "cat {root}/bytes{size}"\nparser = "generic"\n'
                for size in sizes)
            (root / "ckdn.toml").write_text('[run]\nkeep = 1000\n' + blocks)
            for size in sizes:
                big_output(ckdn, root, size)


if __name__ == "__main__":
    main()
