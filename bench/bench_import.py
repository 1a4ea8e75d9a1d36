"""Import figures: 100,000 JUnit testcases and 100,000 SARIF results read by ``ckdn import``'s
readers against the stdlib floor, and the refusal of XML bombs. Prints figures; not a test.

Usage::

    python bench/bench_import.py              # 100,000 of each, 5 runs each
    python bench/bench_import.py --count 20000 -n 3
    python bench/bench_import.py --only junit --against /work/main/core   # beside another tree

Each figure runs a fresh interpreter ``-n`` times from a tiny driver (so its peak RSS is
its own), the figures in turn within each round, and a ratio is the median of the rounds'
ratios to the floor run just before: like with like under the same load:

* ``floor``: the stdlib parse of the same file: ``xml.etree.ElementTree.iterparse`` of
  the JUnit file counting testcases (each cleared once seen), ``json.load`` of the SARIF
  log; and, stricter, ``expat floor``: expat fed the JUnit file in chunks with one
  handler counting testcases, nothing built at all;
* ``importer``: ``ckdn.imports.read_import`` on the file (what ``ckdn import`` reads
  with: variant sniffing, totals checked, findings, the residue counted);
* ``ckdn import``: the whole command (copy into the run dir, read, seal, digest);
  ``--against CORE`` measures it a second time with another tree's ``core`` (main's, say)
  in the same minutes.

Bytecode is cached as an installed package has it (``PYTHONPYCACHEPREFIX`` in a temporary
directory, ``PYTHONDONTWRITEBYTECODE`` dropped), and each command runs once unmeasured
first, so no side pays for compiling its modules.

Bombs (billion laughs, quadratic blowup, XXE) are read in this process: the time from
opening the file to the refusal, the best of ``-n``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "core"))

from ckdn.imports import ImportRefused, read_import  # noqa: E402 - after the path above
from ckdn.parsers.base import ParseContext  # noqa: E402

DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, use.ru_maxrss, use.ru_utime + use.ru_stime, p.returncode, p.stdout.strip()[:200])
"""

EXPAT_FLOOR = r"""
import sys
from xml.parsers import expat
count = 0
def start(tag, attrs):
    global count
    if tag == "testcase":
        count += 1
parser = expat.ParserCreate()
parser.buffer_text = True
parser.StartElementHandler = start
with open(sys.argv[1], "rb") as handle:
    while chunk := handle.read(1 << 16):
        parser.Parse(chunk, False)
parser.Parse(b"", True)
print(count)
"""

JSON_FLOOR = r"""
import json, sys
with open(sys.argv[1], "rb") as handle:
    log = json.load(handle)
print(sum(len(run["results"]) for run in log["runs"]))
"""

ETREE_FLOOR = r"""
import sys
from xml.etree.ElementTree import iterparse
count = 0
for _event, elem in iterparse(sys.argv[1]):
    if elem.tag == "testcase":
        count += 1
        elem.clear()
print(count)
"""

IMPORTER = r"""
import os, shutil, sys, tempfile
from ckdn.imports import read_import
from ckdn.parsers.base import ParseContext
run_dir = tempfile.mkdtemp()
ext = os.path.splitext(sys.argv[2])[1]
copy = shutil.copy(sys.argv[2], os.path.join(run_dir, "imported" + ext))
imported = read_import(sys.argv[1], ParseContext("b", run_dir, run_dir, 0, {}, 20), copy)
print(imported.result.total, imported.cases, imported.mismatch)
"""


def junit_report(path: Path, cases: int) -> None:
    failures = cases // 50
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
                  f'<testsuite name="pytest" errors="0" failures="{failures}" skipped="0" '
                  f'tests="{cases}" time="1.0" timestamp="2026-12-02T00:00:00" hostname="h">')
        for index in range(cases):
            name = f'classname="tests.test_mod{index % 100}" name="test_case_{index}" time="0.001"'
            if index % 50 == 0:
                out.write(f'<testcase {name}><failure message="assert {index} == 0">'
                          f"def test():\n&gt;   assert {index} == 0\nE   assert {index} == 0"
                          "</failure></testcase>")
            else:
                out.write(f"<testcase {name}/>")
        out.write("</testsuite></testsuites>")


def sarif_log(path: Path, results: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "scanner", '
                  '"rules": [{"id": "R1"}, {"id": "R2"}]}}, "results": [')
        for index in range(results):
            level = "error" if index % 10 == 0 else "warning"
            out.write(("," if index else "") + json.dumps({
                "ruleId": f"R{1 + index % 2}", "level": level,
                "message": {"text": f"something found at {index}"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f"src/mod{index % 300}.py"},
                    "region": {"startLine": 1 + index % 500, "startColumn": 1}}}]}))
        out.write("]}]}")


def environment(core: Path, pycache: Path) -> dict[str, str]:
    """The measured commands' environment: ``core`` first on the path, bytecode cached."""
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(core), "PYTHONPYCACHEPREFIX": str(pycache)}


def once(argv: list[str], env: dict[str, str]) -> tuple[float, int, float]:
    """(wall s, peak RSS KiB, CPU s: user and system) of one run of ``argv`` in a fresh
    interpreter."""
    line = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True,
                          text=True, check=True, env=env)
    wall, peak, cpu, _rc, _out = line.stdout.split(" ", 4)
    return float(wall), int(peak), float(cpu)


def measure(commands: list[tuple[str, list[str], dict[str, str]]],
            runs: int) -> dict[str, tuple[float, float, int, float, float]]:
    """label -> (median wall s, best wall s, peak RSS KiB, median ratio of wall to the
    first command's, the floor's, in the same round, and the same ratio of CPU time).
    Rounds take every command in turn, so a change of load falls on all of them, each
    round starting one command further on (what a command leaves the kernel to write
    back falls on each in turn); one round first is not counted (it writes the bytecode
    cache). CPU time (user and system, threads included) waits for no other process:
    on a busy machine it is the steadier ratio."""
    walls: dict[str, list[float]] = {label: [] for label, _argv, _env in commands}
    peaks: dict[str, int] = dict.fromkeys(walls, 0)
    ratios: dict[str, list[float]] = {label: [] for label in walls}
    cpus: dict[str, list[float]] = {label: [] for label in walls}
    for index in range(runs + 1):
        shift = index % len(commands)
        turn = {label: once(argv, env)
                for label, argv, env in commands[shift:] + commands[:shift]}
        floor, _peak, floor_cpu = turn[commands[0][0]]
        for label, (wall, peak, cpu) in turn.items():
            if index:
                walls[label].append(wall)
                peaks[label] = max(peaks[label], peak)
                ratios[label].append(wall / floor)
                cpus[label].append(cpu / floor_cpu)
    return {label: (statistics.median(walls[label]), min(walls[label]), peaks[label],
                    statistics.median(ratios[label]), statistics.median(cpus[label]))
            for label in walls}


BOMBS = {
    "billion laughs": ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                       + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">'
                                 for i in range(8)) + ']><testsuite tests="1"><testcase '
                       'name="&i;"/></testsuite>'),
    "quadratic blowup": ('<?xml version="1.0"?><!DOCTYPE k [<!ENTITY a "' + "x" * 100_000
                         + '">]><testsuite tests="1"><testcase name="' + "&a;" * 20_000
                         + '"/></testsuite>'),
    "XXE": ('<?xml version="1.0"?><!DOCTYPE f [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<testsuite tests="1"><testcase name="&x;"/></testsuite>'),
}


def bomb_times(tmp: Path, runs: int) -> dict[str, float]:
    times = {}
    ctx = ParseContext("b", tmp, tmp, 0, {}, 20)
    for name, text in BOMBS.items():
        path = tmp / "bomb.xml"
        path.write_text(text)
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            try:
                read_import("junit", ctx, str(path))
            except ImportRefused:
                best = min(best, time.perf_counter() - start)
            else:
                raise SystemExit(f"{name}: not refused")
        times[name] = best
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("-n", type=int, default=5, help="runs per figure")
    parser.add_argument("--only", choices=("junit", "sarif"), help="one format (and no bombs)")
    parser.add_argument("--against", type=Path, metavar="CORE",
                        help="also the whole command with this tree's core (main's, say)")
    args = parser.parse_args()
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = environment(REPO / "core", tmp / "pycache")
        junit, sarif = tmp / "junit.xml", tmp / "log.sarif"
        junit_report(junit, args.count)
        sarif_log(sarif, args.count)
        project = tmp / "project"
        project.mkdir()
        (project / "ckdn.toml").write_text("")
        for fmt, path, floor in (("junit", junit, ETREE_FLOOR), ("sarif", sarif, JSON_FLOOR)):
            if args.only not in (None, fmt):
                continue
            size = path.stat().st_size / 1e6
            command = [sys.executable, "-m", "ckdn", "--cwd", str(project), "import", fmt,
                       str(path), "--as", f"bench-{fmt}"]
            commands = [("floor", [sys.executable, "-c", floor, str(path)], env)]
            if fmt == "junit":
                commands.append(("expat floor", [sys.executable, "-c", EXPAT_FLOOR, str(path)],
                                 env))
            commands += [("importer", [sys.executable, "-c", IMPORTER, fmt, str(path)], env),
                         ("ckdn import", command, env)]
            if args.against is not None:
                commands.append(("against", command, environment(args.against.resolve(),
                                                                 tmp / "pycache-against")))
            print(f"{fmt}: {args.count:,} records, {size:.1f} MB")
            for label, (median, best, peak, ratio, cpu) in measure(commands, args.n).items():
                print(f"  {label:12} median {median:.3f} s, best {best:.3f} s, "
                      f"peak {peak / 1024:.1f} MiB, x{ratio:.2f} of the floor's wall, "
                      f"x{cpu:.2f} of its CPU (medians of the rounds' ratios)")
        if args.only is None:
            for name, seconds in bomb_times(tmp, args.n).items():
                print(f"{name}: refused in {seconds * 1000:.2f} ms")
        print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
