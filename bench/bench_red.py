"""Red runs against their floor, measured in the same run: the figures of issue 22.

Prints figures; it is not a timed test. Usage::

    python bench/bench_red.py                       # every case
    python bench/bench_red.py --only ruff junit -n 3
    python bench/bench_red.py --core /tmp/old/core  # another build's core (the before column)

Each case is a whole ``ckdn run`` (``python -m ckdn``) of a check that replays a
report into its run dir and exits 1, beside its floor, the least any
implementation must do: the same replay plus the stdlib's own reader of the
report (``json.load`` for ruff, ``ElementTree.iterparse`` clearing as it goes
for JUnit) in a fresh interpreter; for a log, max(``cat`` to a file, ``sha256sum``
of it). Each figure is the best of ``-n`` rounds, floor and run taken in turn
(the machine is shared: best-of and ratios in one run, never absolute seconds
across runs), by wall and by CPU time (the wall includes fsync and the machine's
other load; CPU is the steadier ratio), with the run's peak RSS (``RUSAGE_CHILDREN`` of a tiny
driver, so the RSS is the measured tree's own).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_junit  # noqa: E402  (the bench folder is no package)
import bench_ruff  # noqa: E402

DRIVER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
rc = 0
for argv in json.loads(sys.argv[1]):
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, rc)
"""

JSON_LOAD = "import json,sys\nwith open(sys.argv[1],'rb') as f: json.load(f)"
ITERPARSE = ("import sys, xml.etree.ElementTree as ET\nroot = None\n"
             "for ev, el in ET.iterparse(sys.argv[1], events=('start', 'end')):\n"
             "    if root is None: root = el\n"
             "    if ev == 'end' and el.tag == 'testcase':\n"
             "        el.clear()\n"
             "        for p in root.iter('testsuite'): p.clear()\n")


def timed(commands: list[list[str]], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of the commands run one after the other."""
    os.sync()
    out = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)],
                         cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout
    wall, cpu, rss, _ = out.split()
    return float(wall), float(cpu), float(rss)


def case(label: str, root: Path, check: str, floor: list[Any], *, rounds: int,
         env: dict[str, str], target: str) -> None:
    ckdn = [sys.executable, "-m", "ckdn", "run", check]
    floors: list[tuple[float, float, float]] = []
    runs: list[tuple[float, float, float]] = []
    for _ in range(rounds):
        # a floor of several commands is their sum; a log's is max(cat, sha256): two rows
        parts = [timed(c, root, env) for c in floor] if isinstance(floor[0][0], list) \
            else [timed(floor, root, env)]
        floors.append(max(parts) if len(parts) > 1 else parts[0])
        runs.append(timed([ckdn], root, env))
        for latest in (root / ".agent-runs").glob(f"{check}*"):
            shutil.rmtree(latest, ignore_errors=True)
    wall_floor, cpu_floor = min(f[0] for f in floors), min(f[1] for f in floors)
    wall_run, cpu_run = min(r[0] for r in runs), min(r[1] for r in runs)
    rss = max(r[2] for r in runs)
    print(f"{label:<36} floor wall {wall_floor:6.2f} s cpu {cpu_floor:6.2f} s | run wall "
          f"{wall_run:6.2f} s cpu {cpu_run:6.2f} s | {wall_run / wall_floor:4.2f}x wall "
          f"{cpu_run / cpu_floor:4.2f}x cpu | peak {rss:5.1f} MiB  [target {target}]", flush=True)


def replay(report: Path, name: str) -> str:
    return f"sh -c 'cp {report} {{run_dir}}/{name}; exit 1'"


def baseline_project(root: Path, n: int, report: Path) -> tuple[Path, Path]:
    """The baseline case's project and its report, moved inside it: the workspace policy
    refuses a program naming a path above the project."""
    base_root = root / f"based{n}"
    base_root.mkdir()
    return base_root, report.rename(base_root / report.name)


def baseline_for(root: Path, check: str, env: dict[str, str]) -> Path:
    """A baseline recorded from one run of ``check``, with every other entry dropped
    (half the findings known), as ``[run].baseline`` then reads it."""
    subprocess.run([sys.executable, "-m", "ckdn", "baseline", check], cwd=root,
                   env=env, check=True, capture_output=True)
    path = root / "ckdn.baseline.json"
    data = json.loads(path.read_text())
    for name, entries in data["checks"].items():
        data["checks"][name] = entries[::2]
    path.write_text(json.dumps(data))
    return path


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=3, help="rounds per figure (best of)")
    args.add_argument("--core", type=Path, default=REPO / "core", help="the ckdn core to run")
    args.add_argument("--only", nargs="*", default=[], help="case name prefixes")
    args.add_argument("--million", action="store_true", help="also the 1,000,000 cases")
    opts = args.parse_args()
    env = dict(os.environ, PYTHONPATH=str(opts.core.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}; core {opts.core}")
    print("load:", os.getloadavg())

    def wanted(name: str) -> bool:
        return not opts.only or any(name.startswith(p) for p in opts.only)

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        checks = ["[run]\nkeep = 1000\n"]
        cases: list[tuple[str, str, list[Any], str]] = []
        sizes = [100_000] + ([1_000_000] if opts.million else [])
        for n in sizes:
            if wanted(f"ruff{n}"):
                report = root / f"ruff{n}.json"
                bench_ruff.generate(report, n)
                checks.append(f'[check.ruff{n}]\ncommand = "{replay(report, "ruff.json")}"\n'
                              'parser = "ruff"\n')
                copy = root / "copy.json"
                cases.append((f"ruff {n:,} red", f"ruff{n}",
                              [["cp", str(report), str(copy)], [py, "-c", JSON_LOAD, str(copy)]],
                              "<= 1.3x, " + ("<= 40 MB" if n == 100_000 else "<= 64 MiB")))
            if wanted(f"junit{n}"):
                report = root / f"junit{n}.xml"
                bench_junit.generate(report, n)
                checks.append(f'[check.junit{n}]\ncommand = "{replay(report, "junit.xml")}"\n'
                              'parser = "pytest"\n')
                copy = root / "copy.xml"
                cases.append((f"junit {n:,} testcases red", f"junit{n}",
                              [["cp", str(report), str(copy)], [py, "-c", ITERPARSE, str(copy)]],
                              "<= 1.2x" if n == 100_000 else "<= 64 MiB"))
        if wanted("log"):
            log = root / "big.log"
            lines = b"".join(p.read_bytes() for p in sorted((REPO / "tests" / "fixtures")
                                                             .rglob("*.log")))
            with open(log, "wb") as out:
                while out.tell() < 200_000_000:
                    out.write(lines)
            checks.append(f'[check.log]\ncommand = "cat {log}"\nparser = "generic"\n')
            cases.append(("a log of 200 MB", "log",
                          [[["sh", "-c", f"cat {log} > {root}/copy.log"]],
                           [["sha256sum", str(log)]]], "<= 1.5x, <= 40 MB"))
        (root / "ckdn.toml").write_text("".join(checks))
        for label, check, floor, target in cases:
            case(label, root, check, floor, rounds=opts.n, env=env, target=target)
        for n in sizes:
            if not wanted(f"baseline{n}"):
                continue
            report = root / f"ruff{n}.json"
            if not report.exists():
                bench_ruff.generate(report, n)
            base_root, report = baseline_project(root, n, report)
            (base_root / "ckdn.toml").write_text(
                f'[run]\nkeep = 1000\nbaseline = "ckdn.baseline.json"\n[check.ruff]\n'
                f'command = "{replay(report, "ruff.json")}"\nparser = "ruff"\n')
            baseline_for(base_root, "ruff", env)
            copy = root / "copy.json"
            case(f"ruff {n:,} red, baseline half known", base_root, "ruff",
                 [["cp", str(report), str(copy)], [py, "-c", JSON_LOAD, str(copy)]], rounds=opts.n,
                 env=env, target="<= 1.6x, <= 64 MiB")


if __name__ == "__main__":
    main()
