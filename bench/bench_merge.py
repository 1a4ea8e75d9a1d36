"""`ckdn merge` of two real 100,000-finding shard runs: wall time and peak RSS (target <= 1 s).

Prints figures; it is not a timed test. Usage::

    python bench/bench_merge.py               # 100,000 findings a shard
    python bench/bench_merge.py -n 10000 --repeat 3

The shards are made as ``bench/bench_diff.py`` makes its runs: ruff reports of
the real diagnostics in ``tests/fixtures/ruff/violations/ruff.json`` cycled over
generated source files, each stored by a real ``ckdn run`` (so each run dir has
the ``findings.jsonl`` the real seal wrote). Shard B's findings start half way
through A's, so half of each shard is the other's (deduplicated) and the merge
holds 150,000 distinct findings. ``ckdn merge --check ruff A B`` then runs in a
fresh process (min and median of ``--repeat``), beside the floor of the same
reading: a Python process that reads both files line by line with ``json.loads``
and keeps a set of the fingerprints, and nothing else.
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
    store_runs,
    timed,
)

FLOOR = r"""
import json, sys
seen = set()
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        next(f)
        for raw in f:
            seen.add(json.loads(raw)["fingerprint"])
print(len(seen))
"""


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("-n", type=int, default=100_000, help="findings in each shard")
    args.add_argument("--repeat", type=int, default=5, help="fresh-process merges")
    opts = args.parse_args()
    ckdn = ckdn_executable()
    print_machine()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        half = opts.n // 2
        sources(root, (opts.n + half) // PER_FILE + 1)
        report(root / "a.json", root, 0, opts.n, shift_every_other=False)
        report(root / "b.json", root, half, opts.n, shift_every_other=False)
        runs, dirs = store_runs(root, ckdn, ["a.json", "b.json"], keep=0)
        line("ckdn run ruff (A, B)", runs, " (the shards: parse, fingerprint, findings.jsonl)")
        shards = [str(d) for d in dirs]
        # the merge shows the usual top; each shard kept every finding in findings.jsonl
        (root / "ckdn.toml").write_text(ruff_config(str(root / "b.json"), keep=0))
        files = [str(Path(s) / "findings.jsonl") for s in shards]
        floor = [timed(root, sys.executable, "-c", FLOOR, *files) for _ in range(opts.repeat)]
        line("floor: read both files", floor, f" ({floor[0][4].decode().strip() or '?'} distinct)")
        merges = [timed(root, ckdn, "merge", "--check", "ruff", "--expect", "2", *shards)
                  for _ in range(opts.repeat)]
        import json

        doc = json.loads(merges[0][4])
        line(f"ckdn merge ({opts.n} a shard)", merges, " (target <= 1 s)")
        ratio = min(m[0] for m in merges) / min(f[0] for f in floor)
        print(f"{'':24s} findings_total {doc['findings_total']}, status {doc['status']}; "
              f"{ratio:.1f}x the floor")


if __name__ == "__main__":
    main()
