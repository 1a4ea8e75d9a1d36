"""RuffParser on a generated 100,000-diagnostic report: parse time and peak RSS.

Prints figures; it is not a timed test. Usage::

    python bench/bench_ruff.py                 # parser in a fresh interpreter
    python bench/bench_ruff.py --compare       # also: json.load of the same file
    python bench/bench_ruff.py --run           # also: the whole `ckdn run` (needs ckdn.cli)

The report is made of the real diagnostics ruff wrote into the fixture
``tests/fixtures/ruff/violations/ruff.json`` (its exact shape and pretty-printing),
cycled with new file names and rows, mostly without fixes, so the file comes out
near the 36 MB the issue measured for 100,000 diagnostics. Each measurement
runs in a fresh interpreter (import cost included) and reports wall time, CPU
time and that process's peak RSS; the minimum and median of ``--repeat`` runs
are printed because the wall time on a shared machine is noisy.
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

PARSE = r"""
import resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from pathlib import Path
from ckdn.parsers.base import ParseContext
from ckdn.parsers.ruff_json import RuffParser
run_dir = Path(sys.argv[1])
ctx = ParseContext(check="ruff", run_dir=run_dir, cwd=run_dir, rc=1)
result = RuffParser().parse(ctx)
wall = time.perf_counter() - t0; cpu = time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
assert result.parser_ok, result.notes
print(wall, cpu, rss, result.total)
"""

LOAD = r"""
import resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
import json
with open(sys.argv[1], encoding="utf-8") as fh:
    n = len(json.load(fh))
wall = time.perf_counter() - t0; cpu = time.process_time() - c0
print(wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, n)
"""

BARE = r"""
import resource, time
t0 = time.perf_counter(); c0 = time.process_time()
from ckdn.parsers.ruff_json import RuffParser
print(time.perf_counter() - t0, time.process_time() - c0,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0)
"""

DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, p.returncode)
"""


def generate(path: Path, count: int) -> int:
    """Write ``count`` diagnostics in ruff's JSON layout; return the file size."""
    real = json.loads(FIXTURE.read_text(encoding="utf-8"))
    plain = [d for d in real if d.get("fix") is None]
    fixed = [d for d in real if d.get("fix") is not None]
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for i in range(count):
            pool = fixed if i % 50 == 0 else plain
            diag = dict(pool[i % len(pool)])
            diag["filename"] = f"/home/dev/app/src/m{i // 40:04d}.py"
            row = i % 40 * 7 + 1
            diag["location"] = {"column": i % 17 + 1, "row": row}
            diag["end_location"] = {"column": i % 17 + 5, "row": row}
            text = json.dumps(diag, indent=2, ensure_ascii=False)
            out.write(("\n" if i == 0 else ",\n") + "\n".join("  " + ln for ln in text.split("\n")))
        out.write("\n]")
    return path.stat().st_size


def measure(code: str, arg: str) -> tuple[float, float, float, int]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "core"))
    out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    return float(out[0]), float(out[1]), float(out[2]), int(out[3])


def report(label: str, runs: list[tuple[float, float, float, int]]) -> None:
    walls = [r[0] for r in runs]
    cpus = [r[1] for r in runs]
    rss = max(r[2] for r in runs)
    print(f"{label:28s} wall min {min(walls):6.3f} s median {statistics.median(walls):6.3f} s; "
          f"cpu min {min(cpus):6.3f} s; peak RSS {rss:6.1f} MiB; items {runs[0][3]}")


def whole_run(root: Path, report_path: Path, repeat: int) -> None:
    ckdn = shutil.which("ckdn") or str(Path(sys.executable).with_name("ckdn"))
    if not Path(ckdn).exists():
        print("ckdn run: no `ckdn` executable next to this Python; skipped")
        return
    # Copy the report into the run dir and exit 1, as ruff would with findings.
    (root / "ckdn.toml").write_text(
        "[run]\nkeep = 2\n[check.ruff]\n"
        f'command = "sh -c \'cp \\"$0\\" \\"$1\\"; exit 1\' {report_path} {{run_dir}}/ruff.json"\n'
        'parser = "ruff"\n', encoding="utf-8")
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", DRIVER, ckdn, "run", "ruff"], cwd=root,
                             capture_output=True, text=True, check=True).stdout.split()
        runs.append((float(out[0]), float(out[1]), float(out[2]), int(out[3])))
    walls = [r[0] for r in runs]
    print(f"{'ckdn run ruff (whole)':28s} wall min {min(walls):6.3f} s median "
          f"{statistics.median(walls):6.3f} s; cpu min {min(r[1] for r in runs):6.3f} s "
          f"(ckdn + sh + cp); peak RSS {max(r[2] for r in runs):6.1f} MiB; exit {runs[0][3]} "
          "(target <= 1.2 s)")
    digest = json.loads((root / ".agent-runs" / "latest" / "digest.json").read_text())
    print(f"{'':28s} last digest: status {digest['status']}, "
          f"findings_total {digest.get('findings_total')}")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=100_000, help="diagnostics in the report")
    args.add_argument("--repeat", type=int, default=5, help="fresh-interpreter runs per figure")
    args.add_argument("--compare", action="store_true", help="also time json.load")
    args.add_argument("--run", action="store_true", help="also time the whole `ckdn run`")
    opts = args.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run_dir = root / "run"
        run_dir.mkdir()
        size = generate(run_dir / "ruff.json", opts.n)
        print(f"report: {opts.n} diagnostics, {size / 1e6:.1f} MB")
        report("import only", [measure(BARE, str(run_dir)) for _ in range(opts.repeat)])
        report("RuffParser.parse", [measure(PARSE, str(run_dir)) for _ in range(opts.repeat)])
        if opts.compare:
            report("json.load (for comparison)",
                   [measure(LOAD, str(run_dir / "ruff.json")) for _ in range(opts.repeat)])
        if opts.run:
            whole_run(root, run_dir / "ruff.json", opts.repeat)


if __name__ == "__main__":
    main()
