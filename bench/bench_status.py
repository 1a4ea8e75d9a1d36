"""``ckdn status`` on a green 10-check project, against one ``git status`` alone.

Also ``ckdn run`` of ``true`` recording the tree (a ``git status`` beside it, ``source.json``)
against the same check with ``reads_files = false``.

Prints figures; it is not a timed test. Usage::

    python bench/bench_status.py                 # 10 checks, 200 tracked files, 40 rounds
    python bench/bench_status.py --files 5000 --dirty 50 --rounds 20

The target (issue 25): a green ``ckdn status`` costs at most 150 ms more than the one
``git status`` it runs. Both are measured in turn in the same rounds (this VM's speed
drifts within seconds), with ``python -c pass`` as the floor of any Python command.
``--dirty`` edits that many tracked files before the runs, so each status hashes them.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ckdn

GIT_STATUS = ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=all",
              "--no-renames", "-z"]
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}


def make_project(root: Path, checks: int, files: int, dirty: int) -> None:
    lines = [f'[check.c{i:02}]\ncommand = "true"\nparser = "generic"\n' for i in range(checks)]
    lines.append('[check.blind]\ncommand = "true"\nparser = "generic"\nreads_files = false\n')
    required = ", ".join(f'"c{i:02}"' for i in range(checks))
    lines.append(f"[run]\nrequired = [{required}]\n")
    (root / "ckdn.toml").write_text("\n".join(lines[-1:] + lines[:-1]))
    src = root / "src"
    src.mkdir()
    for i in range(files):
        (src / f"m{i:05}.py").write_text(f"VALUE = {i}\n" * 20)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=ENV)
    for i in range(dirty):
        (src / f"m{i:05}.py").write_text(f"VALUE = {i + 1}\n" * 20)
    for i in range(checks):
        subprocess.run([sys.executable, "-m", "ckdn", "run", f"c{i:02}"], cwd=root, check=True,
                       env=ENV, stdout=subprocess.DEVNULL)


def wall(argv: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=ENV, check=False)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks", type=int, default=10)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--dirty", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=40)
    opts = parser.parse_args()
    compileall.compile_dir(Path(ckdn.__file__).parent, quiet=1)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; python "
          f"{sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        root = Path(tmp)
        make_project(root, opts.checks, opts.files, opts.dirty)
        ckdn_status = [sys.executable, "-m", "ckdn", "status"]
        doc = json.loads(subprocess.run([*ckdn_status, "--json"], cwd=root, env=ENV,
                                        capture_output=True, text=True, check=False).stdout)
        assert doc["verdict"] == "green", doc
        commands = {"python -c pass": [sys.executable, "-c", "pass"], "git status": GIT_STATUS,
                    "ckdn status": ckdn_status,
                    "ckdn run (tree)": [sys.executable, "-m", "ckdn", "run", "-q", "c00"],
                    "ckdn run (blind)": [sys.executable, "-m", "ckdn", "run", "-q", "blind"]}
        walls: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(opts.rounds):
            for name, argv in commands.items():
                walls[name].append(wall(argv, root))
    med = {name: statistics.median(times) for name, times in walls.items()}
    print(f"{opts.checks} checks, {opts.files} tracked files ({opts.dirty} dirty), "
          f"medians of {opts.rounds} rounds:")
    for name in commands:
        print(f"  {name:<16} {med[name] * 1000:7.1f} ms  (min {min(walls[name]) * 1000:.1f})")
    extra = med["ckdn status"] - med["git status"]
    print(f"  ckdn status - git status {extra * 1000:+.1f} ms (target <= +150 ms); "
          f"ratio {med['ckdn status'] / med['git status']:.2f}x git status, "
          f"{med['ckdn status'] / med['python -c pass']:.2f}x python -c pass")
    recorded = med["ckdn run (tree)"] - med["ckdn run (blind)"]
    print(f"  `ckdn run` of `true` recording the tree - with reads_files = false "
          f"{recorded * 1000:+.1f} ms")


if __name__ == "__main__":
    main()
