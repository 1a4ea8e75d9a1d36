"""ckdn-mcp figures: a `run_check` round trip over stdio against `ckdn run`, and start-up.

Prints figures; it is not a timed test. Usage::

    python bench/bench_mcp.py              # 30 round trips, 10 starts
    python bench/bench_mcp.py --runs 100

* **round trip**: the SDK's client calls ``run_check`` on a ``true`` check through a
  real ``ckdn-mcp`` over stdio, one call after another in one session (the server
  is started once, as a client keeps it), against ``ckdn run`` of the same check as
  a process (what an agent shelling out pays). The budget: at most 30 ms more.
* **start-up**: from spawning ``ckdn-mcp`` to the first ``tools/list`` answer, by
  hand over the pipes (the 2025-06-18 handshake), so no client time is counted.

The package is byte-compiled first and ``PYTHONDONTWRITEBYTECODE`` dropped, as for
an installed ckdn. The SDK's own import is most of the start-up.
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

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENV = {k: v for k, v in os.environ.items()
       if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CKDN_")}
CONFIG = '[run]\nkeep = 5\n\n[check.ok]\ncommand = "true"\nparser = "generic"\n'


def ckdn_run(project: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(BIN / "ckdn"), "run", "ok"], cwd=project, env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def round_trips(project: Path, runs: int) -> list[float]:
    params = StdioServerParameters(command=str(BIN / "ckdn-mcp"),
                                   args=["--cwd", str(project)], env=ENV)

    async def go() -> list[float]:
        times = []
        async with Client(params) as client:
            await client.list_tools()
            await client.call_tool("run_check", {"check": "ok"})  # warm: first imports
            for _ in range(runs):
                start = time.perf_counter()
                result = await client.call_tool("run_check", {"check": "ok"})
                times.append(time.perf_counter() - start)
                assert result.structured_content["exit_code"] == 0
        return times

    return anyio.run(go)


def start_up(project: Path, starts: int) -> list[float]:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "0"}}}
    times = []
    for _ in range(starts):
        start = time.perf_counter()
        proc = subprocess.Popen([str(BIN / "ckdn-mcp"), "--cwd", str(project)], env=ENV,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(json.dumps(hello).encode() + b"\n")
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        proc.stdin.flush()
        proc.stdout.readline()
        answer = json.loads(proc.stdout.readline())
        times.append(time.perf_counter() - start)
        assert answer["id"] == 2
        proc.communicate(timeout=30)
    return times


def _ms(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:6.1f} ms, "
            f"min {min(times) * 1000:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    for path in (ROOT / "core" / "ckdn", ROOT / "mcp_ckdn"):
        compileall.compile_dir(str(path), quiet=1)
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        project = Path(tmp)
        (project / "ckdn.toml").write_text(CONFIG)
        cli = ckdn_run(project, args.runs)
        trips = round_trips(project, args.runs)
        starts = start_up(project, args.starts)
    extra = statistics.median(trips) - statistics.median(cli)
    print(f"ckdn run ok (a process)        {_ms(cli)}")
    print(f"run_check ok over stdio        {_ms(trips)}")
    print(f"  round trip - ckdn run        {extra * 1000:+.1f} ms (budget +30 ms)")
    print(f"ckdn-mcp start -> tools/list   {_ms(starts)}")


if __name__ == "__main__":
    main()
