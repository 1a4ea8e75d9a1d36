"""Runner figures: spawn cost of a trivial command, and a command printing a lot.

Prints figures; it is not a timed test. Usage::

    python bench/bench_runner.py              # `true`, then 200 MB outputs
    python bench/bench_runner.py --big        # also 2 GB
    python bench/bench_runner.py -n 7 --dir /var/tmp

What is measured:

* ``true``: median wall of ``run_process(["true"])`` in one process (spawn, wait,
  tree check, seal), beside ``subprocess.run(["true"], stdout=file)``; then the
  same in a fresh interpreter each time, beside ``python -c pass``.
* the SHA-256 choice: import cost and speed of the builtin ``_sha256`` and of
  OpenSSL's ``hashlib.sha256``, which set the small-log threshold.
* the tree: what every run adds (the lock record naming the tree, the question
  whether anything still writes the log), and what only a command that starts
  children pays, lazily: ctypes for the subreaper, a first move into a cgroup
  (only where ckdn may make one), and ``sh -c 'sleep 0.02'`` with and without them.
* big outputs, for ``head -c N /dev/zero``, ``cat`` of an N-byte file and a
  Python writer: wall of ``run_process`` against the same command with its
  stdout redirected to a file by plain ``subprocess`` (the output file is
  deleted before every run, and the two alternate), and the peak RSS of a fresh
  interpreter doing ``run_process`` (``RUSAGE_SELF``: ckdn alone, not the writer).
  Every timed run starts after ``sync``, so none pays for another's writeback.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ckdn import _lite
from ckdn.process import run_process

DRIVER = r"""
import json, os, resource, sys, time
from pathlib import Path
from ckdn.process import run_process
argv, log = json.loads(sys.argv[1]), Path(sys.argv[2])
begin = time.perf_counter()
ran = run_process(argv, cwd=log.parent, env=dict(os.environ), log_path=log)
print(json.dumps({"wall": time.perf_counter() - begin, "bytes": ran.log_bytes,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

WRITER = r"""
import os, sys
total, block = int(sys.argv[1]), bytes(range(256)) * 256
while total > 0:
    total -= os.write(1, block[: min(total, len(block))])
"""

HASH_SPEED = r"""
import sys, time
name = sys.argv[1]
begin = time.perf_counter()
sha256 = __import__(name).sha256
imported = time.perf_counter() - begin
chunk, h = bytes(1 << 20), sha256()
begin = time.perf_counter()
for _ in range(200):
    h.update(chunk)
print(imported * 1000, 200 / (time.perf_counter() - begin))
"""


def median_ms(samples: list[float]) -> str:
    """Median, then minimum: on a shared machine the minimum is the steadier figure."""
    return f"{statistics.median(samples) * 1000:7.2f} ms (min {min(samples) * 1000:7.2f})"


def timed(action: Callable[..., object], /, *args: object, **kwargs: object) -> float:
    begin = time.perf_counter()
    action(*args, **kwargs)
    return time.perf_counter() - begin


def bench_true(work: Path, runs: int) -> None:
    log, env = work / "full.log", dict(os.environ)
    ours, plain = [], []
    for _ in range(runs):
        ours.append(timed(run_process, ["true"], cwd=work, env=env, log_path=log))
        with open(work / "plain.log", "wb") as out:
            plain.append(timed(subprocess.run, ["true"], stdout=out, stderr=out, check=True))
    print(f"true, in process ({runs} runs, median)")
    print(f"  run_process(['true'])                  {median_ms(ours)}")
    print(f"  subprocess.run(['true'], stdout=file)  {median_ms(plain)}")
    bench_trampoline(work, runs)
    fresh: dict[str, list[float]] = {"pass": [], "import": [], "run": []}
    code = {
        "pass": "pass",
        "import": "import ckdn.process",
        "run": "import os, pathlib; from ckdn.process import run_process; "
        f"run_process(['true'], cwd=pathlib.Path({str(work)!r}), env=dict(os.environ), "
        f"log_path=pathlib.Path({str(log)!r}))",
    }
    for _ in range(max(runs // 2, 5)):
        for key, source in code.items():
            fresh[key].append(timed(subprocess.run, [sys.executable, "-c", source], check=True))
    print("true, fresh interpreter each time (median)")
    print(f"  python -c pass                         {median_ms(fresh['pass'])}")
    print(f"  python -c 'import ckdn.process'        {median_ms(fresh['import'])}")
    print(f"  python -c run_process(['true'])        {median_ms(fresh['run'])}")


def bench_trampoline(work: Path, runs: int) -> None:
    """What the parent-death trampoline (``setpriv --pdeathsig``) adds to a spawn: the
    same ``run_process(['true'])`` with it and without it, alternating."""
    if not _lite.trampoline():
        print("  (no setpriv here: no trampoline to measure)")
        return
    log, env = work / "full.log", dict(os.environ)
    found = _lite.trampoline()
    with_it, without = [], []
    for _ in range(runs):
        _lite._trampoline = found
        with_it.append(timed(run_process, ["true"], cwd=work, env=env, log_path=log))
        _lite._trampoline = ""
        without.append(timed(run_process, ["true"], cwd=work, env=env, log_path=log))
    _lite._trampoline = found
    extra = statistics.median(with_it) - statistics.median(without)
    print(f"  without the trampoline                 {median_ms(without)}")
    print(f"  with {found} --pdeathsig  {median_ms(with_it)}")
    print(f"  the trampoline adds                    {extra * 1000:7.2f} ms (median; min"
          f" {(min(with_it) - min(without)) * 1000:.2f} ms), ratio"
          f" {statistics.median(with_it) / statistics.median(without):.2f}")


CTYPES_COST = r"""
import time
begin = time.perf_counter()
from ckdn.process import _strays
modules = time.perf_counter()
import ctypes
prctl = ctypes.CDLL(None, use_errno=True).prctl
print((modules - begin) * 1000, (time.perf_counter() - modules) * 1000)
"""


def bench_tree(work: Path, runs: int) -> None:
    from ckdn.process import _cgroup, _group
    from ckdn.process._group import Tree
    from ckdn.process._runner import LogHash
    from ckdn.store import _store

    log = work / "tree.log"
    log.write_bytes(b"")
    hashed = LogHash(log)
    lock = _store.open_lock(str(work / ".locks" / "x.lock"))

    def record() -> None:
        Tree(lambda child: _store.write_holder(lock, "20260101T000000Z-x", child)).started(
            os.getpid())

    print("the tree, every run (in process, median of 2000)")
    for title, action in (("the lock record names the tree", record),
                          ("does anything still write the log?", hashed.open_for_writing)):
        samples = [timed(action) for _ in range(2000)]
        print(f"  {title:40} {statistics.median(samples) * 1e6:6.1f} us")
    hashed.close()
    os.close(lock)
    print("the tree, only once the leader started a child")
    costs = [subprocess.run([sys.executable, "-c", CTYPES_COST], capture_output=True, text=True,
                            check=True).stdout.split() for _ in range(5)]
    print(f"  loading _strays and _cgroup (ckdn.process too)  "
          f"{min(float(c[0]) for c in costs):6.2f} ms (min, fresh interpreter)")
    print(f"  subreaper: ctypes and libc's prctl              "
          f"{min(float(c[1]) for c in costs):6.2f} ms (min, fresh interpreter)")
    made = _cgroup.Cgroup.make()
    if made is None:
        print("  cgroup: none here (ckdn may not make one)")
    else:
        sleeper = subprocess.Popen(["sleep", "1"])
        begin = time.perf_counter()
        made.take(sleeper.pid, [])
        print(f"  cgroup: first move (an RCU grace period)        "
              f"{(time.perf_counter() - begin) * 1000:6.2f} ms")
        sleeper.kill()
        sleeper.wait()
        made.remove()
    argv, env = ["sh", "-c", "sleep 0.02"], dict(os.environ)
    walls: dict[str, list[float]] = {"neither": [], "as run": []}
    for _ in range(runs):
        for key, samples in walls.items():
            _group._adopt_orphans = key == "as run"
            _cgroup._cgroup_home = None if key == "as run" else False
            samples.append(timed(run_process, argv, cwd=work, env=env, log_path=log))
    _group._adopt_orphans, _cgroup._cgroup_home = True, None
    print(f"  run_process(sh -c 'sleep 0.02'), neither        {median_ms(walls['neither'])}")
    print(f"  run_process(sh -c 'sleep 0.02'), as a run does  {median_ms(walls['as run'])}")


def bench_hashes() -> None:
    print("SHA-256 implementations (fresh interpreter: import ms, MiB/s on 1 MiB chunks)")
    for name in ("_sha256", "hashlib"):
        out = subprocess.run(
            [sys.executable, "-c", HASH_SPEED, name], capture_output=True, text=True, check=True
        ).stdout.split()
        print(f"  {name:8} import {float(out[0]):6.2f} ms  {float(out[1]):7.0f} MiB/s")


def settle(*outputs: Path) -> None:
    """Delete the outputs and flush dirty pages, so no run pays for the last one's writeback."""
    for path in outputs:
        path.unlink(missing_ok=True)
    os.sync()


def bench_big(work: Path, size: int, runs: int) -> None:
    source = work / "source.bin"
    with open(source, "wb") as out:
        block = os.urandom(1 << 20)
        for offset in range(0, size, len(block)):
            out.write(block[: min(len(block), size - offset)])
    workloads = {
        f"head -c {size} /dev/zero": ["head", "-c", str(size), "/dev/zero"],
        "cat <file>": ["cat", str(source)],
        "python writer (64 KiB writes)": [sys.executable, "-c", WRITER, str(size)],
    }
    log, plain, env = work / "full.log", work / "plain.log", dict(os.environ)
    print(
        f"{size / 1e6:.0f} MB of output ({runs} runs each; ratios = ours / plain, median and min)"
    )
    for title, argv in workloads.items():
        ours, base, rss = [], [], []
        for _ in range(runs):
            settle(log, plain)
            with open(plain, "wb") as out:
                base.append(timed(subprocess.run, argv, stdout=out, stderr=out, check=True))
            settle(log, plain)
            ours.append(timed(run_process, argv, cwd=work, env=env, log_path=log))
            settle(log, plain)
            driver = subprocess.run(
                [sys.executable, "-c", DRIVER, json.dumps(argv), str(log)],
                capture_output=True,
                text=True,
                check=True,
            )
            measured = json.loads(driver.stdout)
            assert measured["bytes"] == size, measured
            rss.append(measured["rss_kb"] / 1024)
        ratio = statistics.median(ours) / statistics.median(base)
        best = min(ours) / min(base)
        print(f"  {title}")
        print(f"    plain        {median_ms(base)}")
        print(f"    run_process  {median_ms(ours)}   ratio {ratio:.2f}x (min {best:.2f}x)")
        print(f"    peak RSS of a fresh interpreter doing run_process: {max(rss):.1f} MB")
    for path in (source, log, plain):
        path.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5, help="runs per big figure")
    parser.add_argument("--true-runs", type=int, default=50, help="runs for the `true` figure")
    parser.add_argument("--big", action="store_true", help="also measure 2 GB of output")
    parser.add_argument("--dir", type=Path, default=None, help="where logs are written")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.platform()}, {os.cpu_count()} CPUs")
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    if sys.flags.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set: fresh interpreters compile ckdn every time")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        bench_true(work, args.true_runs)
        bench_tree(work, args.true_runs)
        bench_hashes()
        bench_big(work, 200_000_000, args.runs)
        if args.big:
            bench_big(work, 2_000_000_000, max(args.runs // 2, 2))


if __name__ == "__main__":
    main()
