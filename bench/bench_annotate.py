"""`ckdn annotate` of a real 100,000-finding run, every format: wall time and peak RSS.

Target (issue 12): <= 1 s and <= 64 MiB for every format. Prints figures; it is not
a timed test. Usage::

    python bench/bench_annotate.py               # 100,000 findings
    python bench/bench_annotate.py -n 10000 --repeat 3

The run is made as ``bench/bench_diff.py`` makes its runs: the real diagnostics
ruff wrote into the fixture ``tests/fixtures/ruff/violations/ruff.json``, cycled
over generated source files, stored by a real ``ckdn run`` (a command that copies
the report and exits 1, as ruff would) with ``top`` keeping every finding, so the
run dir holds the whole ``findings.jsonl`` (every finding and its fingerprint),
which the views stream. Each ``ckdn annotate --format F`` then runs in a fresh
process; the floor, measured in the same run the same way, is ``ckdn show
--json`` of the same run (start the CLI, read the stored digest, print it), and
each format's time is also given as a ratio to it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_diff import (
    PER_FILE,
    ckdn_executable,
    line,
    print_machine,
    report,
    ruff_config,
    sources,
    timed,
)

FORMATS = ("text", "github", "summary", "sarif", "codequality")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=100_000, help="findings in the run")
    args.add_argument("--repeat", type=int, default=5, help="fresh-process runs per format")
    opts = args.parse_args()
    ckdn = ckdn_executable()
    print_machine()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sources(root, opts.n // PER_FILE + 1)
        report(root / "a.json", root, 0, opts.n, shift_every_other=False)
        (root / "ckdn.toml").write_text(ruff_config(str(root / "a.json"), top=opts.n, keep=20),
                                        encoding="utf-8")
        line("ckdn run ruff", [timed(root, ckdn, "run", "ruff")],
             " (parse, fingerprint, findings.jsonl, digest)")
        size = (root / ".agent-runs" / "latest" / "findings.jsonl").stat().st_size
        print(f"{'':24s} findings.jsonl: {size / 1e6:.1f} MB")
        floor = [timed(root, ckdn, "show", "--json") for _ in range(opts.repeat)]
        base = min(r[0] for r in floor)
        line("floor: ckdn show --json", floor)
        for fmt in FORMATS:
            runs = [timed(root, ckdn, "annotate", "--format", fmt) for _ in range(opts.repeat)]
            best = min(r[0] for r in runs)
            out = runs[0][4]
            line(f"annotate --format {fmt}", runs,
                 f"; {best / base:.1f}x the floor; {len(out) / 1e3:,.1f} kB out "
                 "(target <= 1 s, <= 64 MiB)")


if __name__ == "__main__":
    main()
