"""The diff-scoped gate's cost: placing 10,000 findings on a 10,000-line diff, and the base run.

Prints figures; it is not a timed test. Usage::

    python bench/bench_diff_gate.py              # 10,000 findings, 10,000-line diff, 7 rounds
    python bench/bench_diff_gate.py --findings 2000 --rounds 3

Targets (issue 26): mapping 10,000 findings against a 10,000-line diff adds <= 50 ms to
the run; the base run in a worktree costs no more than the check itself (ckdn's own run
of it on the head tree: tool, parse, fingerprints) plus `git worktree add`.

1. **Mapping**: a git project of 100 files of 100 lines; the change edits every line
   of every file (a 20,000-line ``git diff``: 10,000 ``-``, 10,000 ``+``); the check
   prints 10,000 mypy-shaped errors, one per line, and a baseline holds them as they
   were before the change. `ckdn run lint` (the baseline gate) and `ckdn run lint
   --diff change.diff` (the diff-scoped gate, origins from the same baseline) are run
   in turn; the medians and the median of the paired differences are printed, and,
   in one process, the diff read and the placement alone.
2. **The base run**: `ckdn run lint --diff-base HEAD~` (its stored base run removed
   first) against `ckdn run lint` (no diff gate), beside a `git worktree add` of the
   base, each round timing all three in turn. The base run's cost is the paired
   difference of the first two (medians); its target, `ckdn run lint` plus `git worktree
   add` (medians), and the ratio of the two is the figure (<= 1.00 meets it). The check's
   command alone and the worktree's removal are printed beside. Then the same run again,
   reusing the stored base run. ``--findings 100`` shows the base run of a small report.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

LINT = r'''
import os, sys
out = []
for name in sorted(os.listdir("src")):
    with open(os.path.join("src", name)) as handle:
        for number, line in enumerate(handle, 1):
            if "value" in line:
                out.append(f'src/{name}:{number}: error: Name "value" is not defined'
                           '  [name-defined]')
sys.stdout.write("\n".join(out) + "\n")
print(f"Found {len(out)} errors in {len(os.listdir('src'))} files (checked 1 source files)")
sys.exit(1 if out else 0)
'''

PLACE = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from ckdn.identity import BaselineIndex, IdentityTable, SourceLines, read_baseline
from ckdn.identity.change import read_hashed_diff
from ckdn.identity.scope import place
from ckdn.parsers.base import Finding
root, diff_path, baseline = sys.argv[2], sys.argv[3], sys.argv[4]
findings = []
for line in open(sys.argv[5]):
    path, _, rest = line.partition(":")
    number = rest.partition(":")[0]
    if number.isdigit():
        findings.append(Finding(f"{path}:{number}:name-defined", "type_error",
                                'Name "value" is not defined [name-defined]', f"{path}:{number}"))
source = SourceLines(root)
identities = IdentityTable(source)  # as the run's tap holds them
for finding in findings:
    identities.add(finding)
identities.number()
index = BaselineIndex(read_baseline(baseline).checks["lint"])
start = time.perf_counter()
with open(diff_path, "rb") as handle:
    changes, _, _ = read_hashed_diff(handle)  # as --diff FILE reads it
read = time.perf_counter()
placed = place(changes, identities, source, index)
done = time.perf_counter()
print(f"{(read - start) * 1000:.1f} {(done - read) * 1000:.1f} {len(placed.wheres)}")
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b",
                           *args], check=True, capture_output=True, text=True).stdout


#: The core the ckdn runs import (``--core``: another build's, measured in the same rounds).
CORE = [str(REPO / "core")]


def ckdn(root: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CKDN_")}
    env["PYTHONPATH"] = CORE[0]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ckdn", *args], cwd=root, env=env,
                   capture_output=True, check=False)
    return time.perf_counter() - start


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


def project(root: Path, findings: int) -> None:
    files = max(1, findings // 100)
    (root / "src").mkdir(parents=True)
    for number in range(files):
        (root / "src" / f"m{number:03}.py").write_text(
            "".join(f"x{line} = value + {line}\n" for line in range(100)))
    (root / "lint.py").write_text(LINT)
    (root / ".gitignore").write_text(".agent-runs/\n")
    (root / "ckdn.toml").write_text(f'[run]\nbaseline = "ckdn.baseline.json"\nkeep = 3\n\n'
                                    f'[check.lint]\ncommand = "{sys.executable} lint.py"\n'
                                    f'parser = "mypy"\ntop = 5\n')
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    subprocess.run([sys.executable, "-m", "ckdn", "baseline", "lint"], cwd=root, check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": CORE[0]})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "baseline")
    for path in (root / "src").iterdir():  # every line edited: the flagged content changes
        path.write_text("".join(f"y{line} = value + {line}\n" for line in range(100)))
    (root / "change.diff").write_text(git(root, "diff", "--no-color", "HEAD"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--core", default=CORE[0], help="the core directory ckdn runs from "
                        "(another build's, e.g. /work/main/core)")
    args = parser.parse_args()
    CORE[0] = str(Path(args.core).resolve())
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores, core {CORE[0]}")
    with tempfile.TemporaryDirectory(prefix="ckdn-bench-diff-") as tmp:
        root = Path(tmp) / "p"
        project(root, args.findings)
        mapping(root, args.findings, args.rounds)
        base_run(root, args.rounds)
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) at the end")


def mapping(root: Path, findings: int, rounds: int) -> None:
    """1.: the diff-scoped gate against the baseline gate, and the placement in one process."""
    diff_lines = (root / "change.diff").read_text().count("\n")
    plain, scoped = [], []
    for _ in range(rounds):
        plain.append(ckdn(root, "run", "lint"))
        scoped.append(ckdn(root, "run", "lint", "--diff", "change.diff"))
    added = statistics.median(b - a for a, b in zip(plain, scoped, strict=True))
    print(f"1. mapping {findings} findings on a {diff_lines}-line diff "
          f"({rounds} rounds, medians)")
    print(f"   ckdn run lint (baseline gate)      {statistics.median(plain) * 1000:8.1f} ms")
    print(f"   ckdn run lint --diff change.diff   {statistics.median(scoped) * 1000:8.1f} ms")
    print(f"   added by the diff (paired median)  {added * 1000:8.1f} ms   target <= 50 ms")
    (root / "lint.out").write_text(subprocess.run(
        [sys.executable, "lint.py"], cwd=root, capture_output=True, text=True,
        check=False).stdout)
    place = subprocess.run([sys.executable, "-c", PLACE, CORE[0], str(root),
                            str(root / "change.diff"), str(root / "ckdn.baseline.json"),
                            str(root / "lint.out")], capture_output=True, text=True,
                           check=True).stdout.split()
    print(f"   in one process: diff read {place[0]} ms, {place[2]} findings placed "
          f"{place[1]} ms")



def base_run(root: Path, rounds: int) -> None:
    """2.: no baseline, so the base is run in a worktree."""
    config = (root / "ckdn.toml").read_text().replace('baseline = "ckdn.baseline.json"\n', "")
    (root / "ckdn.toml").write_text(config)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "change")
    base = git(root, "rev-parse", "HEAD~").strip()
    check, worktree, removal, without, with_base, stored = [], [], [], [], [], []
    for _ in range(rounds):
        check.append(timed([sys.executable, "lint.py"], root))
        where = Path(tempfile.mkdtemp(prefix="ckdn-bench-wt-"))
        start = time.perf_counter()
        git(root, "worktree", "add", "--detach", "--quiet", str(where), base)
        added_at = time.perf_counter()
        git(root, "worktree", "remove", "--force", str(where))
        worktree.append(added_at - start)
        removal.append(time.perf_counter() - added_at)
        shutil.rmtree(where, ignore_errors=True)
        without.append(ckdn(root, "run", "lint"))
        shutil.rmtree(root / ".agent-runs" / ".base-runs", ignore_errors=True)
        with_base.append(ckdn(root, "run", "lint", "--diff-base", "HEAD~"))
        stored.append(ckdn(root, "run", "lint", "--diff-base", "HEAD~"))
    cost = statistics.median(b - a for a, b in zip(without, with_base, strict=True))
    target = statistics.median(without) + statistics.median(worktree)
    print(f"2. the base run in a worktree ({rounds} rounds, medians)")
    print(f"   the check's command alone          {statistics.median(check) * 1000:8.1f} ms")
    print(f"   git worktree add                   {statistics.median(worktree) * 1000:8.1f} ms"
          f"   (its remove {statistics.median(removal) * 1000:.1f} ms)")
    print(f"   ckdn run lint                      {statistics.median(without) * 1000:8.1f} ms")
    fresh = statistics.median(with_base) * 1000
    print(f"   ckdn run lint --diff-base HEAD~    {fresh:8.1f} ms")
    print(f"   the base run's cost (paired)       {cost * 1000:8.1f} ms   "
          f"target <= {target * 1000:.1f} ms (ckdn run lint + worktree add)")
    print(f"   ratio base run / (ckdn run lint + git worktree add)  {cost / target:.2f}"
          f"   (<= 1.00 meets it)")
    print(f"   ... its stored base run reused     {statistics.median(stored) * 1000:8.1f} ms "
          f"(origin stored_base_run)")


if __name__ == "__main__":
    main()
