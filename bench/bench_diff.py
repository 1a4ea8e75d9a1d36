"""`ckdn diff` of two real 100,000-finding runs: wall time and peak RSS (target <= 1 s).

Prints figures; it is not a timed test. Usage::

    python bench/bench_diff.py               # 100,000 findings a side
    python bench/bench_diff.py -n 10000 --repeat 3

Two ruff reports are made of the real diagnostics ruff wrote into the fixture
``tests/fixtures/ruff/violations/ruff.json``, cycled over 2,500 generated source
files (as ``bench/bench_ruff.py`` makes its report), and each is stored by a
real ``ckdn run`` (a command that copies the report and exits 1, as ruff would),
so each run dir gets its ``findings.jsonl`` from the real seal, fingerprinted
from the source lines. Run B drops A's first 1% (fixed), adds 1% in new files
(new) and moves the findings of every other file three lines down (moved: the
flagged line's content is another, so they pair in the second pass, by
message). Then ``ckdn diff -1 latest --json`` runs in a fresh process; its wall
time, CPU time and peak RSS are printed (min and median of ``--repeat``), with
the time of the two ``ckdn run``s that wrote the files, for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "ruff" / "violations" / "ruff.json"
PER_FILE = 40
LINES = 300

DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.buffer.write(p.stdout)
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, p.returncode)
"""


def sources(root: Path, files: int) -> None:
    src = root / "src"
    src.mkdir()
    for k in range(files):
        (src / f"m{k:04d}.py").write_text(
            "".join(f"value_{k}_{j} = compute({j}, 'x')\n" for j in range(LINES)))


def report(path: Path, root: Path, first: int, count: int, shift_every_other: bool) -> None:
    """Diagnostics ``first .. first+count`` of the cycle, in ruff's JSON layout."""
    real = json.loads(FIXTURE.read_text(encoding="utf-8"))
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for n, i in enumerate(range(first, first + count)):
            diag = dict(real[i % len(real)])
            k = i // PER_FILE
            diag["filename"] = str(root / "src" / f"m{k:04d}.py")
            row = i % PER_FILE * 7 + 1 + (3 if shift_every_other and k % 2 == 0 else 0)
            diag["location"] = {"column": 1, "row": row}
            diag["end_location"] = {"column": 5, "row": row}
            diag["fix"] = None
            out.write(("\n" if n == 0 else ",\n") + json.dumps(diag))
        out.write("\n]")


def ckdn_executable() -> str:
    """The ``ckdn`` beside this Python (the benches run the installed command)."""
    ckdn = shutil.which("ckdn") or str(Path(sys.executable).with_name("ckdn"))
    if not Path(ckdn).exists():
        sys.exit("no `ckdn` executable next to this Python")
    return ckdn


def print_machine() -> None:
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}")


def ruff_config(report_path: str, *, top: int | None = None, keep: int = 5) -> str:
    """A ``ckdn.toml`` whose ``ruff`` check stores the prepared report as ruff's own (exit 1)."""
    run = f"[run]\nkeep = {keep}\n" + (f"top = {top}\n" if top is not None else "")
    return (run + "[check.ruff]\n"
            'command = "sh -c \'cp \\"$0\\" \\"$1\\"; exit 1\' '
            f'{report_path} {{run_dir}}/ruff.json"\n'
            'parser = "ruff"\n')


def store_runs(root: Path, ckdn: str, reports: list[str], *, keep: int = 5
               ) -> tuple[list[tuple[float, float, float, int, bytes]], list[Path]]:
    """A real ``ckdn run ruff`` of each prepared report, keeping every finding (``top``
    100000: their ``findings.jsonl`` is written without a baseline); their timings and
    run dirs."""
    runs, dirs = [], []
    for name in reports:
        (root / "ckdn.toml").write_text(ruff_config(str(root / name), top=100000, keep=keep))
        runs.append(timed(root, ckdn, "run", "ruff"))
        dirs.append(root / ".agent-runs" / os.readlink(root / ".agent-runs" / "latest"))
    return runs, dirs


def timed(root: Path, *argv: str) -> tuple[float, float, float, int, bytes]:
    proc = subprocess.run([sys.executable, "-c", DRIVER, *argv], cwd=root,
                          capture_output=True, check=True)
    wall, cpu, rss, rc = proc.stdout.split()
    return float(wall), float(cpu), float(rss), int(rc), proc.stderr


def line(label: str, runs: list[tuple[float, float, float, int, bytes]], extra: str = "") -> None:
    walls = [r[0] for r in runs]
    print(f"{label:24s} wall min {min(walls):6.3f} s median {statistics.median(walls):6.3f} s; "
          f"cpu min {min(r[1] for r in runs):6.3f} s; peak RSS {max(r[2] for r in runs):6.1f} "
          f"MiB; exit {runs[0][3]}{extra}")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=100_000, help="findings in each run")
    args.add_argument("--repeat", type=int, default=5, help="fresh-process diffs")
    opts = args.parse_args()
    ckdn = ckdn_executable()
    print_machine()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        edit = opts.n // 100
        sources(root, (opts.n + edit) // PER_FILE + 1)
        report(root / "a.json", root, 0, opts.n, shift_every_other=False)
        report(root / "b.json", root, edit, opts.n, shift_every_other=True)
        runs, _dirs = store_runs(root, ckdn, ["a.json", "b.json"])
        line("ckdn run ruff (A, B)", runs, " (parse, fingerprint, findings.jsonl, digest)")
        latest = root / ".agent-runs" / "latest"
        size = (latest / "findings.jsonl").stat().st_size
        print(f"{'':24s} findings.jsonl of B: {size / 1e6:.1f} MB")
        # the runs kept every finding (top = 100000: no re-read, so their files are written
        # without a baseline); the diff shows the usual top of each class
        (root / "ckdn.toml").write_text(ruff_config(str(root / "b.json")))
        diffs = [timed(root, ckdn, "diff", "-1", "latest", "--json")
                 for _ in range(opts.repeat)]
        doc = json.loads(diffs[0][4])
        line(f"ckdn diff ({opts.n} a side)", diffs, " (target <= 1 s)")
        print(f"{'':24s} counts {doc['counts']}")


if __name__ == "__main__":
    main()
