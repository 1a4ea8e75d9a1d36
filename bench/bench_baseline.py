"""The baseline gate's cost: matching 100,000 findings, and a passing run with a baseline.

Prints figures; it is not a timed test. Usage::

    python bench/bench_baseline.py            # 100,000 findings, 100 rounds of `ckdn run`
    python bench/bench_baseline.py -n 40 --findings 20000
    python bench/bench_baseline.py --only whole --repeat 5

Targets (issue 11): matching 100,000 findings against a 100,000-entry baseline
<= 1 s and <= 64 MiB; `ckdn run` with a baseline configured on a passing check no
more than 2 ms over the same run without one.

1. **Matching**: a project of 1,000 files of 100 lines (the lines of real source:
   this repository's own modules, cycled), 100,000 ruff-shaped findings, one per
   line. A fresh interpreter reads the baseline file, hands the findings one by
   one to the identity table (as a run's parse does: none of them kept), reading
   every file's lines, and matches them against a baseline of the same findings
   recorded before 2
   lines were inserted at the top of every file (so the exact pass does the work)
   plus a baseline with every tenth entry gone (10,000 new). Its peak RSS
   (``ru_maxrss``) and wall time are printed, beside the floor: reading the same
   files and splitting their lines, in the same kind of process.
2. **A whole run**: `ckdn run ruff` of a 100,000-diagnostic ruff report (bench_ruff's,
   cycled from the real fixture; its source files do not exist, so messages stand
   in for lines), without a baseline and with one missing every tenth finding:
   wall time and the process's peak RSS, and whether findings.jsonl was written.
3. **A passing run**: `ckdn run ok` (a `true` check) in two otherwise identical
   projects, one with `[run].baseline` set, interleaved, medians and the median of
   the paired differences.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FILES = 1000
LINES = 100

MATCH = r"""
import resource, sys, time
sys.path.insert(0, sys.argv[1])
from ckdn.identity import IdentityTable, SourceLines, match, read_index
from ckdn.parsers.base import Finding
root, baseline_path, files, lines = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
start = time.perf_counter()
# as a run does: the baseline streamed into its index at the first finding, each finding
# handed over as the parser reports it (none kept), its identity packed into the table
index = read_index(baseline_path, None, "ruff")
table = IdentityTable(SourceLines(root))
for f in range(files):
    for l in range(3, lines + 3):
        table.add(Finding(f"m{f:04d}.py:{l}:1:F821", "lint_violation", "F821 Undefined name `x`",
                          f"m{f:04d}.py:{l}:1"))
matched = match(index, table)
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"took": took, "peak": peak, "new": matched.new, "stale": len(matched.stale),
                  "findings": len(table)}))
""".replace("import resource, sys", "import json, resource, sys")

FLOOR = r"""
import json, os, resource, sys, time
root = sys.argv[2]
start = time.perf_counter()
count = 0
for name in sorted(os.listdir(root)):
    with open(os.path.join(root, name), "rb") as handle:
        count += len(handle.read().splitlines())
took = time.perf_counter() - start
print(json.dumps({"took": took, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "lines": count}))
"""

RECORD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from ckdn.identity import SourceLines, fingerprints, write_baseline
from ckdn.parsers.base import Finding
root, out = sys.argv[2], sys.argv[3]
files, lines, every = (int(arg) for arg in sys.argv[4:7])
findings = [Finding(f"m{f:04d}.py:{l}:1:F821", "lint_violation", "F821 Undefined name `x`",
                    f"m{f:04d}.py:{l}:1") for f in range(files) for l in range(1, lines + 1)]
prints = [i.fingerprint for i in fingerprints(findings, SourceLines(root))]
write_baseline(out, {"ruff": [p for n, p in enumerate(prints) if not every or n % every]})
print("{}")
"""


def source_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted((REPO / "core" / "ckdn").rglob("*.py")):
        lines.extend(line for line in path.read_text().splitlines() if line.strip())
    return lines


def make_project(root: Path, files: int, lines: int, *, shifted: bool) -> None:
    pool = source_lines()
    root.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        body = [pool[(f * lines + n) % len(pool)] for n in range(lines)]
        head = ["# inserted", "# above"] if shifted else []
        (root / f"m{f:04d}.py").write_text("\n".join(head + body) + "\n")


def child(code: str, *args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", code, str(REPO / "core"), *args],
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def matching(tmp: Path, files: int, lines: int) -> None:
    before, after = tmp / "before", tmp / "after"
    make_project(before, files, lines, shifted=False)
    make_project(after, files, lines, shifted=True)
    for every, label in ((0, "all known"), (10, "every 10th new")):
        baseline = tmp / f"baseline-{every}.json"
        child(RECORD, str(before), str(baseline), str(files), str(lines), str(every))
        got = child(MATCH, str(after), str(baseline), str(files), str(lines))
        floor = child(FLOOR, str(after))
        print(f"match {int(got['findings']):,} findings, {label:<15} "
              f"{got['took']:6.3f} s (floor: read and split the files {floor['took']:.3f} s, "
              f"x{got['took'] / floor['took']:.0f})  peak {got['peak']:6.1f} MiB "
              f"(floor {floor['peak']:.1f})  new {int(got['new']):,} stale {int(got['stale']):,}",
              flush=True)


def passing_run(tmp: Path, rounds: int) -> None:
    plain, gated = tmp / "plain", tmp / "gated"
    for root, extra in ((plain, ""), (gated, '[run]\nbaseline = "ckdn.baseline.json"\n')):
        root.mkdir()
        (root / "ckdn.toml").write_text(extra + '[check.ok]\ncommand = "true"\n'
                                                'parser = "generic"\n')
    (gated / "ckdn.baseline.json").write_text('{"checks": {}, "schema": "ckdn.baseline/1"}\n')
    ckdn = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from ckdn.cli import main; main()", str(REPO / "core"), "run", "ok"]
    # byte-compiled, as an installed ckdn runs (a dev shell's PYTHONDONTWRITEBYTECODE
    # would charge every run a compile of each module it loads)
    compileall.compile_dir(REPO / "core", quiet=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls: dict[Path, list[float]] = {plain: [], gated: []}
    for _ in range(rounds):
        for root in (plain, gated):
            start = time.perf_counter()
            subprocess.run(ckdn, cwd=root, capture_output=True, check=True, env=env)
            walls[root].append(time.perf_counter() - start)
    diff = statistics.median(g - p for g, p in zip(walls[gated], walls[plain], strict=True))
    print(f"ckdn run ok, {rounds} interleaved rounds: without a baseline "
          f"{statistics.median(walls[plain]) * 1000:.1f} ms, with one "
          f"{statistics.median(walls[gated]) * 1000:.1f} ms; paired difference "
          f"{diff * 1000:+.2f} ms (target <= +2 ms)", flush=True)


DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, p.returncode)
"""


def whole_run(tmp: Path, count: int, repeat: int) -> None:
    """``ckdn run`` of a ruff report of ``count`` diagnostics (bench_ruff's, cycled from the
    real fixture): without a baseline, then with one that knows every finding but a tenth."""
    sys.path.insert(0, str(REPO / "bench"))
    from bench_ruff import generate

    root = tmp / "whole"
    root.mkdir()
    report = root / "report.json"  # inside the project: the command policy confines paths
    size = generate(report, count)
    ckdn = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from ckdn.cli import main; main()", str(REPO / "core")]
    command = (f'command = "sh -c \'cp \\"$0\\" \\"$1\\"; exit 1\' {report} '
               '{run_dir}/ruff.json"\nparser = "ruff"\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for label, head in (("no baseline", ""), ("baseline", 'baseline = "ckdn.baseline.json"\n')):
        (root / "ckdn.toml").write_text(f"[run]\nkeep = 2\n{head}[check.ruff]\n{command}")
        if head:
            subprocess.run([*ckdn, "baseline", "ruff"], cwd=root, check=True,
                           capture_output=True, env=env)
            doc = json.loads((root / "ckdn.baseline.json").read_text())  # every tenth new
            doc["checks"]["ruff"] = [p for n, p in enumerate(doc["checks"]["ruff"]) if n % 10]
            (root / "ckdn.baseline.json").write_text(json.dumps(doc, indent=2) + "\n")
        runs = []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, "-c", DRIVER, *ckdn, "run", "ruff"],
                                 cwd=root, capture_output=True, text=True, check=True,
                                 env=env).stdout.split()
            runs.append((float(out[0]), float(out[1]), int(out[2])))
        digest = json.loads((root / ".agent-runs" / "latest" / "digest.json").read_text())
        files = sorted(os.listdir(root / ".agent-runs" / "latest"))
        print(f"ckdn run ruff, {count:,} diagnostics ({size / 1e6:.1f} MB), {label:<11}: wall "
              f"min {min(r[0] for r in runs):.3f} s median "
              f"{statistics.median(r[0] for r in runs):.3f} s; peak RSS "
              f"{max(r[1] for r in runs):.1f} MiB; exit {runs[0][2]}; gate "
              f"{digest.get('gate', {}).get('status', '-')} {digest.get('baseline', '')}; "
              f"findings.jsonl {'yes' if 'findings.jsonl' in files else 'NO'}", flush=True)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("-n", type=int, default=100, help="rounds of the passing run")
    args.add_argument("--findings", type=int, default=FILES * LINES)
    args.add_argument("--repeat", type=int, default=3, help="whole runs of each kind")
    args.add_argument("--only", choices=("match", "whole", "passing"))
    opts = args.parse_args()
    print(f"machine: {platform.machine()} {platform.python_implementation()} "
          f"{platform.python_version()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if opts.only in (None, "match"):
            matching(Path(tmp), max(1, opts.findings // LINES), LINES)
        if opts.only in (None, "whole"):
            whole_run(Path(tmp), opts.findings, opts.repeat)
        if opts.only in (None, "passing"):
            passing_run(Path(tmp), opts.n)


if __name__ == "__main__":
    main()
