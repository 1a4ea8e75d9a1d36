"""Hostile inputs: peak RSS and time of every reader on outputs no real run should print.

Prints figures; it is not a timed test. Usage::

    python bench/bench_hostile.py                     # every case, full size
    python bench/bench_hostile.py --only line: sarif  # cases whose name starts so
    python bench/bench_hostile.py --gib 0.25          # a quarter of the sizes
    python bench/bench_hostile.py --core /tmp/old/core  # another build's core (before/after)

The target (issue 10): peak RSS <= 64 MiB for every input, whatever its size or
shape, and time linear in the input. Each case runs the parser in a fresh
interpreter under a tiny driver (so the peak RSS is the parser process's own,
start-up included) with a timeout, and prints its wall time, peak RSS and the
status the facts reconcile to; beside it the floor measured in the same run:
``cat FILE > /dev/null`` of the same input (the page cache warm, as for the
parser), and the ratio. The inputs, all generated from the real fixtures under
``tests/fixtures`` (so the surrounding evidence is a real tool's):

* ``line:<parser>``: the fixture's real log with one line of ``--gib`` GiB (the
  log's own longest line, repeated) after its first line, beside the fixture's
  report, for each of the 11 parsers that read the log;
* ``sarif``: a 500 MB SARIF log, semgrep's real results repeated (``json.load``
  of it is printed for comparison);
* ``string-doc:<parser>``: a report that is one JSON string of ``--gib`` GiB;
  ``string-field:<parser>``: the real report with one string field (a message, a
  code snippet, a description) grown to ``--gib`` GiB (bandit, ruff, pip-audit);
* ``findings:ruff``: 1,000,000 diagnostics (real ones cycled, as
  ``bench/bench_ruff.py`` makes them), ``json.load`` beside it;
  ``findings:junit``: 1,000,000 failing testcases in pytest's xunit2 layout;
* ``xml:junit-attr`` / ``xml:junit-text`` / ``xml:cobertura-attr``: a real JUnit
  report whose first failure has a ``--gib`` GiB ``message`` attribute or text,
  and a real Cobertura report with a ``--gib`` GiB ``filename``;
* ``tail:ckdn-run``: a whole ``ckdn run`` (generic parser, so the digest carries
  the log tail) of a check that prints one ``--gib`` GiB line; its floor is the
  same command writing into a file;
* ``fixtures``: every real JSON report of the fixtures (and pyright's document in
  its log), parsed 200 times in one process: the parser's time per report beside
  ``json.load`` of the same file (the streaming reader's cost on small inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
GIB = 1 << 30
MIB = 1 << 20
_BLOCK = 16 * MIB

#: The parsers that read the log, and the real fixture case each one reads it beside.
LOG_READERS: dict[str, tuple[str, str, dict[str, object]]] = {
    "mypy": ("mypy", "text_clean", {}),
    "ty": ("ty", "full_clean", {}),
    "reformat": ("reformat", "black_clean", {}),
    "pre_commit": ("pre_commit", "passing", {}),
    "pyright": ("pyright", "clean", {}),
    "ruff": ("ruff", "clean", {}),
    "bandit": ("bandit", "clean", {}),
    "pip_audit": ("pip_audit", "clean", {}),
    "pylint": ("pylint", "clean", {}),
    "sarif": ("sarif", "semgrep_clean", {}),
    "pytest": ("pytest", "all_pass", {}),
}

#: One parser on one run dir, in a fresh interpreter; prints its facts as JSON.
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from ckdn.parsers import get_parser
from ckdn.parsers.base import ParseContext
from ckdn.reconcile import Exit, reconcile
name, run_dir, cwd, rc, options = sys.argv[1:6]
ctx = ParseContext(check=name, run_dir=run_dir, cwd=cwd, rc=int(rc), options=json.loads(options))
result = get_parser(name).parse(ctx)
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "status": reconcile(Exit(int(rc)), result).status,
                  "total": result.total, "note": str((result.notes or [""])[0])[:150]}))
"""

#: ``json.load`` of one file, for comparison.
LOAD = r"""
import json, sys, time
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as handle:
    json.load(handle)
print(json.dumps({"wall": time.perf_counter() - t0}))
"""

#: Every real JSON report of the fixtures, parsed ``n`` times: microseconds per parse and
#: per json.load of the same file.
FIXTURE_TIMES = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
from ckdn.parsers import get_parser
from ckdn.parsers.base import ParseContext
fixtures, n = Path(sys.argv[1]), int(sys.argv[2])
cases = [("ruff", "ruff/violations", "ruff.json"), ("bandit", "bandit/issues", "bandit.json"),
         ("pip_audit", "pip_audit/vulnerable", "pip-audit.json"),
         ("pylint", "pylint/messages", "pylint.json"), ("sarif", "sarif/ruff", "report.sarif"),
         ("sarif", "sarif/semgrep", "report.sarif"),
         ("coverage", "coverage/boundary_json_only", "coverage.json"),
         ("pyright", "pyright/errors", "full.log")]
out = {}
for parser, case, report in cases:
    run = Path(tempfile.mkdtemp()) / "run"
    shutil.copytree(fixtures / case, run, ignore=shutil.ignore_patterns("case.json"))
    meta = json.loads((fixtures / case / "case.json").read_text())
    ctx = ParseContext(check=parser, run_dir=run, cwd=meta["cwd"], rc=meta["rc"])
    chosen = get_parser(parser)
    start = time.perf_counter()
    for _ in range(n):
        chosen.parse(ctx)
    took = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        with open(run / report, "rb") as handle:
            if report.endswith(".log"):
                text = handle.read().decode()
                json.loads(text[text.index("{"):text.rindex("}") + 1])
            else:
                json.load(handle)
    loaded = (time.perf_counter() - start) / n
    out[f"{case}/{report}"] = [(run / report).stat().st_size, took, loaded]
print(json.dumps(out))
"""

#: Runs argv once and prints the child tree's wall time, peak RSS (KiB) and exit code,
#: then what it printed. A tiny process of its own: Linux carries a forking parent's
#: resident size into the child's peak, so the bench never forks the measured child.
DRIVER = r"""
import resource, subprocess, sys, time
timeout = float(sys.argv[1])
t = time.perf_counter()
try:
    p = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    rc, out, err = p.returncode, p.stdout.strip(), p.stderr.strip()[-300:]
except subprocess.TimeoutExpired:
    rc, out, err = "timeout", "", ""
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, use.ru_maxrss, rc, use.ru_utime + use.ru_stime)
print(out)
print(err)
"""


class Measured:
    """One measured process: wall time, peak RSS, what it printed."""

    def __init__(self, argv: list[str], *, timeout: float, env: dict[str, str],
                 cwd: Path | None = None) -> None:
        proc = subprocess.run([sys.executable, "-c", DRIVER, str(timeout), *argv], env=env,
                              cwd=cwd, capture_output=True, text=True, check=True)
        head, out, err = [*proc.stdout.split("\n", 2), "", ""][:3]
        wall, peak, rc, cpu = head.split()
        self.wall = float(wall)
        self.cpu = float(cpu)
        self.peak = int(peak) / 1024
        self.rc = rc
        self.out = out
        self.err = err.strip()
        self.facts: dict[str, object] = {}
        if out.startswith("{"):
            self.facts = json.loads(out)
            self.wall = float(self.facts.get("wall", self.wall))  # type: ignore[arg-type]


def floor(path: Path) -> float:
    """``cat FILE > /dev/null``: reading the input once, from the page cache."""
    with open(os.devnull, "wb") as sink:
        subprocess.run(["cat", str(path)], stdout=sink, check=True)  # warm the cache
        start = time.perf_counter()
        subprocess.run(["cat", str(path)], stdout=sink, check=True)
    return time.perf_counter() - start


# --- generating the inputs (streamed: the bench itself stays small) ---------------------------

def write_repeated(out: object, unit: str, size: int) -> None:
    """``unit`` repeated to ``size`` bytes (ASCII units), written in blocks."""
    block = (unit * (_BLOCK // len(unit) + 1))[:_BLOCK]
    left = size
    while left > 0:
        piece = block[:left]
        out.write(piece)  # type: ignore[attr-defined]
        left -= len(piece)


def copy_case(family: str, case: str, dest: Path) -> tuple[Path, int]:
    """A fixture case copied into ``dest`` as a run dir; (its recorded cwd, its rc)."""
    src = FIXTURES / family / case
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("case.json"))
    meta = json.loads((src / "case.json").read_text())
    return Path(meta["cwd"]), int(meta["rc"])


def long_line_log(run_dir: Path, size: int) -> None:
    """The real log with one ``size``-byte line (its longest line, repeated) after line 1."""
    log = run_dir / "full.log"
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) or ["\n"]
    unit = max((ln.rstrip("\n") for ln in lines), key=len) or "x"
    unit = unit.encode("ascii", "replace").decode()
    with open(log, "w", encoding="utf-8") as out:
        out.write(lines[0])
        write_repeated(out, unit, size)
        out.write("\n")
        out.writelines(lines[1:])


def sarif_report(path: Path, size: int) -> None:
    """semgrep's real SARIF log with its results repeated to about ``size`` bytes."""
    real = json.loads((FIXTURES / "sarif" / "semgrep" / "report.sarif").read_text())
    run = real["runs"][0]
    items = [json.dumps(r, separators=(",", ":")) for r in run["results"]]
    tool = json.dumps(run["tool"], separators=(",", ":"))
    invocations = json.dumps(run["invocations"], separators=(",", ":"))
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"version":"2.1.0","runs":[{"invocations":' + invocations + ',"results":[')
        index = 0
        while written < size:
            item = items[index % len(items)]
            out.write(("," if index else "") + item)
            written += len(item) + 1
            index += 1
        out.write('],"tool":' + tool + '}],"$schema":"https://json.schemastore.org/sarif-2.1.0'
                  '.json"}')


def string_document(path: Path, size: int) -> None:
    """A report that is one JSON string of ``size`` bytes."""
    with open(path, "w", encoding="ascii") as out:
        out.write('"')
        write_repeated(out, "abcdefghij", size)
        out.write('"')


#: Where each report's real string field is grown: (fixture case, report, path to the string).
STRING_FIELDS = {
    "bandit": ("bandit", "issues", "bandit.json", ("results", 0, "code")),
    "ruff": ("ruff", "violations", "ruff.json", (0, "message")),
    "pip_audit": ("pip_audit", "vulnerable", "pip-audit.json", None),
}


def string_field(path: Path, key_path: tuple[object, ...] | None, size: int) -> None:
    """The real report at ``path`` with the string at ``key_path`` grown to ``size`` bytes."""
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    holder: Any
    key: Any
    if key_path is None:  # pip-audit: the first vulnerability's description
        dep = next(d for d in data["dependencies"] if d.get("vulns"))
        holder, key = dep["vulns"][0], "description"
    else:
        holder = data
        for step in key_path[:-1]:
            holder = holder[step]
        key = key_path[-1]
    marker = "\x00GROW\x00"
    holder[key] = marker
    text = json.dumps(data, indent=2)
    head, tail = text.split(json.dumps(marker))
    with open(path, "w", encoding="utf-8") as out:
        out.write(head + '"')
        write_repeated(out, "grown text ", size)
        out.write('"' + tail)


def ruff_findings(path: Path, count: int) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from bench_ruff import generate  # the same diagnostics bench_ruff.py measures

    generate(path, count)


def junit_failures(path: Path, count: int) -> None:
    """``count`` failing testcases, pytest's xunit2 layout, a short real-looking failure each."""
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
                  f'<testsuite name="pytest" errors="0" failures="{count}" skipped="0" '
                  f'tests="{count}" time="1.0" timestamp="2026-01-01T00:00:00+00:00" '
                  'hostname="bench">')
        for i in range(count):
            module = f"tests.test_m{i // 500:04d}"
            out.write(f'<testcase classname="{module}" name="test_{i:07d}" time="0.001">'
                      f'<failure message="assert {i} == {i + 1}">def test_{i:07d}():\n'
                      f'&gt;       assert {i} == {i + 1}\nE       assert {i} == {i + 1}\n\n'
                      f'tests/test_m{i // 500:04d}.py:{i % 500 + 1}: AssertionError</failure>'
                      '</testcase>')
        out.write("</testsuite></testsuites>")


def junit_grown(path: Path, size: int, *, where: str) -> None:
    """The real failing JUnit report with its first failure's message or text grown."""
    text = path.read_text(encoding="utf-8")
    start = text.index("<failure ")
    if where == "attr":
        at = text.index('message="', start) + len('message="')
    else:
        at = text.index(">", start) + 1
    with open(path, "w", encoding="utf-8") as out:
        out.write(text[:at])
        write_repeated(out, "grown text ", size)
        out.write(text[at:])


def cobertura_grown(path: Path, size: int) -> None:
    """The real Cobertura report with its first class's filename grown (the JSON report,
    which the parser would read instead, removed)."""
    (path.parent / "coverage.json").unlink()
    text = path.read_text(encoding="utf-8")
    at = text.index('filename="', text.index("<class ")) + len('filename="')
    with open(path, "w", encoding="utf-8") as out:
        out.write(text[:at])
        write_repeated(out, "grown/", size)
        out.write(text[at:])


# --- the cases ---------------------------------------------------------------------------------

class Bench:
    def __init__(self, opts: argparse.Namespace, root: Path) -> None:
        self.opts = opts
        self.root = root
        self.env = dict(os.environ, PYTHONPATH=str(opts.core))
        self.size = int(opts.gib * GIB)
        self.rows: list[str] = []

    def wanted(self, name: str) -> bool:
        return not self.opts.only or any(name.startswith(p) for p in self.opts.only)

    def parse(self, name: str, parser: str, run_dir: Path, cwd: Path, rc: int, *,
              inp: Path, options: dict[str, object] | None = None,
              compare_load: bool = False) -> None:
        size = inp.stat().st_size
        base = floor(inp)
        got = Measured([sys.executable, "-c", CHILD, parser, str(run_dir), str(cwd), str(rc),
                        json.dumps(options or {})], timeout=self.opts.timeout, env=self.env)
        self.row(name, size, got, base)
        if compare_load:
            load = Measured([sys.executable, "-c", LOAD, str(inp)], timeout=self.opts.timeout,
                            env=self.env)
            self.row("  json.load of it", size, load, base, facts=False)

    def row(self, name: str, size: int, got: Measured, base: float, *, facts: bool = True) -> None:
        if got.rc == "timeout":
            took = f">{self.opts.timeout:.0f} s (killed)"
        else:
            took = f"{got.wall:7.2f} s = {got.wall / base:5.1f}x (cpu {got.cpu:6.2f} s)"
        said = ""
        if facts:
            if got.facts:
                said = (f"{got.facts['status']}, {got.facts['total']} finding(s); "
                        f"{got.facts['note']}")
            elif got.rc != "timeout":
                said = f"exit {got.rc}: {got.err.splitlines()[-1] if got.err else got.out[:100]}"
        line = (f"{name:<26} {size / MIB:8.0f} MiB  floor {base:6.2f} s  {took:<37} "
                f"peak {got.peak:7.1f} MiB  {said}")
        print(line, flush=True)
        self.rows.append(line)

    def run(self) -> None:
        for parser, (family, case, options) in LOG_READERS.items():
            if self.wanted(f"line:{parser}"):
                self.line_case(parser, family, case, options)
        if self.wanted("sarif"):
            self.one_report("sarif", "sarif", ("sarif", "semgrep_clean"), "report.sarif",
                            lambda p: sarif_report(p, int(self.opts.sarif_mb * 1e6)),
                            compare_load=True)
        for parser, (family, case, name, key_path) in STRING_FIELDS.items():
            if self.wanted(f"string-doc:{parser}"):
                self.one_report(f"string-doc:{parser}", parser, (family, case), name,
                                lambda p: string_document(p, self.size))
            if self.wanted(f"string-field:{parser}"):
                self.one_report(f"string-field:{parser}", parser, (family, case), name,
                                partial(string_field, key_path=key_path, size=self.size))
        if self.wanted("findings:ruff"):
            self.one_report("findings:ruff", "ruff", ("ruff", "violations"), "ruff.json",
                            lambda p: ruff_findings(p, self.opts.findings), compare_load=True,
                            log=False)
        if self.wanted("findings:junit"):
            self.one_report("findings:junit", "pytest", ("pytest", "failing"), "junit.xml",
                            lambda p: junit_failures(p, self.opts.findings), log=False)
        if self.wanted("xml:junit-attr"):
            self.one_report("xml:junit-attr", "pytest", ("pytest", "failing"), "junit.xml",
                            lambda p: junit_grown(p, self.size, where="attr"))
        if self.wanted("xml:junit-text"):
            self.one_report("xml:junit-text", "pytest", ("pytest", "failing"), "junit.xml",
                            lambda p: junit_grown(p, self.size, where="text"))
        if self.wanted("xml:cobertura-attr"):
            self.one_report("xml:cobertura-attr", "coverage", ("coverage", "below"),
                            "coverage.xml", partial(cobertura_grown, size=self.size))
        if self.wanted("tail:ckdn-run"):
            self.tail_case()
        if self.wanted("fixtures"):
            self.fixture_times()

    def fixture_times(self) -> None:
        proc = subprocess.run([sys.executable, "-c", FIXTURE_TIMES, str(FIXTURES), "200"],
                              env=self.env, capture_output=True, text=True, check=True)
        for name, (size, took, loaded) in json.loads(proc.stdout).items():
            print(f"fixture {name:<40} {size:7d} B  parser {took * 1e6:7.0f} us  "
                  f"json.load {loaded * 1e6:5.0f} us", flush=True)

    def fresh(self, name: str) -> Path:
        path = self.root / name.replace(":", "-")
        if path.exists():
            shutil.rmtree(path)
        return path

    def line_case(self, parser: str, family: str, case: str,
                  options: dict[str, object]) -> None:
        run_dir = self.fresh(f"line-{parser}")
        cwd, rc = copy_case(family, case, run_dir)
        long_line_log(run_dir, self.size)
        self.parse(f"line:{parser}", parser, run_dir, cwd, rc, inp=run_dir / "full.log",
                   options=options)
        shutil.rmtree(run_dir)

    def one_report(self, name: str, parser: str, case: tuple[str, str], report: str,
                   make: Callable[[Path], object], *, compare_load: bool = False,
                   log: bool = True) -> None:
        run_dir = self.fresh(name)
        cwd, rc = copy_case(*case, run_dir)
        make(run_dir / report)
        if not log:  # a generated report: the recorded log would contradict its counts
            (run_dir / "full.log").write_text("")
        self.parse(name, parser, run_dir, cwd, rc if rc else 1, inp=run_dir / report,
                   compare_load=compare_load)
        shutil.rmtree(run_dir)

    def tail_case(self) -> None:
        project = self.fresh("tail")
        project.mkdir()
        line = project / "line.txt"
        with open(line, "w", encoding="ascii") as out:
            out.write("first line\n")
            write_repeated(out, "a long line ", self.size)
            out.write("\nlast line\n")
        (project / "ckdn.toml").write_text(
            "[run]\nkeep = 1\n[check.print]\n"
            f"command = \"sh -c 'cat \\\"$0\\\"; exit 1' {line}\"\nparser = \"generic\"\n")
        ckdn = [sys.executable, "-c", "import sys; from ckdn.cli import main; "
                "sys.exit(main(sys.argv[1:]))", "run", "print"]
        sink = project / "copy.txt"
        start = time.perf_counter()
        with open(sink, "wb") as out:
            subprocess.run(["cat", str(line)], stdout=out, check=True)
        base = time.perf_counter() - start
        sink.unlink()
        got = Measured(ckdn, timeout=self.opts.timeout, env=self.env, cwd=project)
        digest = json.loads((project / ".agent-runs" / "latest" / "digest.json").read_text())
        got.facts = {"status": digest["status"], "total": 0,
                     "note": f"tail: {[t[:40] for t in digest.get('log_tail', [])]}"}
        self.row("tail:ckdn-run", line.stat().st_size, got, base)
        shutil.rmtree(project)


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--gib", type=float, default=1.0, help="size of a huge line or value")
    args.add_argument("--sarif-mb", type=float, default=500.0)
    args.add_argument("--findings", type=int, default=1_000_000)
    args.add_argument("--timeout", type=float, default=600.0, help="seconds per measured run")
    args.add_argument("--core", type=Path, default=REPO / "core", help="the ckdn core to run")
    args.add_argument("--dir", type=Path, help="where the inputs go (default: a temp dir)")
    args.add_argument("--only", nargs="*", default=[], help="case name prefixes")
    opts = args.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}; core {opts.core}")
    print(f"{'case':<26} {'input':>12}  {'floor (cat)':<15} {'wall = x floor (cpu)':<37} "
          f"{'peak RSS':<17} status, findings; first note")
    if opts.dir:
        opts.dir.mkdir(parents=True, exist_ok=True)
        Bench(opts, opts.dir).run()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            Bench(opts, Path(tmp)).run()


if __name__ == "__main__":
    main()
