"""JUnit figures: the ``pytest`` parser on a 100,000-testcase report, and lxml beside it.

Prints figures; it is not a timed test. Usage::

    python bench/bench_junit.py                 # 100,000 testcases, 5 runs each
    python bench/bench_junit.py --cases 20000 -n 3
    python bench/bench_junit.py --keep junit.xml # also keep the generated report

What is measured: each figure runs a fresh process ``-n`` times from a tiny
driver (so its peak RSS is its own) and reports the median and best wall time,
the median CPU time and the largest peak RSS of that process tree:

* ``parser``: a fresh interpreter importing ckdn and running
  ``PytestParser().parse(ctx)`` on the report (start-up included);
* ``ckdn run``: the whole command on a check that copies the report into its
  run dir and exits 1 (spawn, log, parse, reconcile, digest, meta, publish);
  ``ckdn run true`` beside it is ckdn's own base cost on this machine;
* ``lxml``: ``lxml.etree.iterparse`` doing the parser's work (count outcomes,
  keep the first 20 failures' facts) with the usual clear-and-drop-siblings
  idiom, run by the fixtures venv's interpreter, the only place lxml is
  installed (it is not a ckdn dependency); skipped when that has no lxml;
* ``etree``: the stdlib's ``xml.etree.ElementTree.iterparse`` doing the same.

The generated report looks like pytest's own (``xunit2``, no whitespace
between elements): 2% failures with a realistic assertion text, a few setup
errors and skips, and totals on ``<testsuite>`` that agree with its content.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

REPO = Path(__file__).resolve().parent.parent
FIXTURES_PYTHON = REPO / ".fixtures-venv" / "bin" / "python"

PARSER_DRIVER = r"""
import sys
from pathlib import Path
from ckdn.parsers.base import ParseContext
from ckdn.parsers.junit import PytestParser
run_dir = Path(sys.argv[1])
result = PytestParser().parse(ParseContext(check="pytest", run_dir=run_dir, cwd=run_dir, rc=1))
assert result.parser_ok, result.notes
print(result.total, result.summary["counts"]["tests"])
"""

#: Runs argv once from a tiny process, so the measured child's peak RSS is its
#: own (Linux carries a forking parent's resident size into the child's peak).
#: Prints wall s, peak RSS KiB and CPU s of the child tree, its exit code, then
#: whatever the child printed.
DRIVER = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, use.ru_maxrss, use.ru_utime + use.ru_stime, p.returncode, p.stdout)
"""

#: Same work as the parser (count outcomes, keep the first 20 failures' facts),
#: written for any ElementTree-compatible iterparse: ``ET`` is lxml.etree or
#: xml.etree.ElementTree.
#: Same work as the parser (count outcomes, keep the first 20 failures' facts)
#: with iterparse: lxml.etree (hardened the way ckdn would have to use it, and
#: filtering ``testcase`` elements in C, its fastest mode) or the stdlib's
#: xml.etree.ElementTree (no tag filter there).
ITERPARSE_DRIVER = r"""
import sys
tests = failures = errors = skipped = 0
kept = []


def testcase(elem):
    global tests, failures, errors, skipped
    tests += 1
    for child in elem:
        tag = child.tag
        if tag == "failure" or tag == "error":
            if tag == "failure":
                failures += 1
            else:
                errors += 1
            if len(kept) < 20:
                text = child.text or ""
                e_lines = [ln for ln in text.split("\n") if ln.startswith("E ")][:12]
                kept.append((elem.get("classname"), elem.get("name"), child.get("message"),
                             e_lines))
        elif tag == "skipped":
            skipped += 1


if sys.argv[2] == "lxml":
    from lxml import etree
    events = etree.iterparse(sys.argv[1], events=("end",), tag=("testcase", "testsuite"),
                             resolve_entities=False, no_network=True, load_dtd=False)
    for _, elem in events:
        if elem.tag == "testcase":
            testcase(elem)
            elem.clear(keep_tail=True)
            while elem.getprevious() is not None:
                del elem.getparent()[0]
else:
    import xml.etree.ElementTree as ET
    root = None
    for event, elem in ET.iterparse(sys.argv[1], events=("start", "end")):
        if root is None:
            root = elem
        if event == "end" and elem.tag == "testcase":
            testcase(elem)
            elem.clear()
            for parent in root.iter("testsuite"):
                parent.clear()
print(failures + errors, tests)
"""


def generate(path: Path, cases: int) -> tuple[int, int]:
    """Write a pytest-like xunit2 report; returns (size in bytes, failures + errors).

    Written testcase by testcase, so generating costs the bench no memory (peak
    RSS of the measured children must not inherit a big parent).
    """
    failures = sum(1 for i in range(cases) if i % 50 == 7)
    errors = sum(1 for i in range(cases) if i % 50 != 7 and i % 1000 == 3)
    skipped = sum(1 for i in range(cases) if i % 50 != 7 and i % 1000 != 3 and i % 100 == 11)
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">')
        out.write(f'<testsuite name="pytest" errors="{errors}" failures="{failures}" '
                  f'skipped="{skipped}" tests="{cases}" time="123.456" '
                  f'timestamp="2026-01-01T00:00:00+00:00" hostname="bench">')
        for i in range(cases):
            out.write(_testcase(i))
        out.write("</testsuite></testsuites>")
    return path.stat().st_size, failures + errors


def _testcase(i: int) -> str:
    module = f"tests.integration.api.test_module_{i // 200:04d}"
    cls = f".TestGroup{i % 7}" if i % 3 else ""
    name = f"test_case_{i:06d}_handles_input[param-{i % 5}]"
    head = (f"<testcase classname={quoteattr(module + cls)} name={quoteattr(name)} "
            f'time="0.{i % 1000:04d}"')
    path = f"tests/integration/api/test_module_{i // 200:04d}.py"
    if i % 50 == 7:
        text = "\n".join([
            f"value = {i}", "",
            '    @pytest.mark.parametrize("value", range(5))',
            f"    def test_case_{i:06d}_handles_input(value):",
            '        """Check the handler against the reference implementation."""',
            "        expected = reference(value)",
            f">       assert compute(value) == {i + 1}",
            f"E       AssertionError: assert {i} == {i + 1}",
            f"E        +  where {i} = compute({i})",
            *[f"E         diff line {k}: expected {{'key': {k}, 'payload': 'abcdefghij'}} "
              f"got {{'key': {k + 1}, 'payload': 'abcdefghij'}}" for k in range(12)],
            "", f"{path}:{i % 400 + 12}: AssertionError"])
        return (f"{head}><failure message={quoteattr(f'AssertionError: assert {i} == {i + 1}')}>"
                f"{escape(text)}</failure></testcase>")
    if i % 1000 == 3:
        text = ('@pytest.fixture\n    def db():\n>       raise RuntimeError("down")\n'
                "E       RuntimeError: down\n\ntests/conftest.py:9: RuntimeError")
        return (f'{head}><error message="failed on setup with &quot;RuntimeError: '
                f'down&quot;">{escape(text)}</error></testcase>')
    if i % 100 == 11:
        return (f'{head}><skipped type="pytest.skip" message="not on this platform">'
                f"/src/{path}:3: not on this platform</skipped></testcase>")
    return head + " />"


class Figure:
    """Median wall and CPU time, largest peak RSS, and the child's output, over n runs."""

    def __init__(self, argv: list[str], n: int, cwd: Path) -> None:
        walls: list[float] = []
        cpus: list[float] = []
        peaks: list[float] = []
        self.rc = 0
        self.output: list[str] = []
        for _ in range(n):
            out = subprocess.run([sys.executable, "-c", DRIVER, *argv], cwd=cwd,
                                 capture_output=True, text=True, check=True).stdout.split()
            walls.append(float(out[0]))
            peaks.append(int(out[1]) / 1024)
            cpus.append(float(out[2]))
            self.rc = int(out[3])
            self.output = out[4:]
        self.wall = statistics.median(walls)
        self.best = min(walls)
        self.cpu = statistics.median(cpus)
        self.peak = max(peaks)

    def line(self, label: str, extra: str = "") -> str:
        return (f"{label:<24} wall median {self.wall:6.3f} s (best {self.best:6.3f})  "
                f"cpu {self.cpu:6.3f} s  peak {self.peak:5.1f} MiB{extra}")


def has_lxml(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import lxml.etree"], capture_output=True,
                           check=False)
    return probe.returncode == 0


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--cases", type=int, default=100_000)
    args.add_argument("-n", type=int, default=5, help="fresh processes per figure")
    args.add_argument("--keep", type=Path, help="copy the generated report here")
    opts = args.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.python_implementation()} {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        report = root / "junit.xml"
        size, findings = generate(report, opts.cases)
        if opts.keep:
            shutil.copy(report, opts.keep)
        print(f"report: {opts.cases} testcases, {size / 1e6:.1f} MB, {findings} findings")
        run_dir = root / "parse-run"
        run_dir.mkdir()
        shutil.copy(report, run_dir / "junit.xml")

        parser = Figure([sys.executable, "-c", PARSER_DRIVER, str(run_dir)], opts.n, root)
        print(parser.line("parser (stdlib expat)",
                          f"  (findings {parser.output[0]}, tests {parser.output[1]})"))

        ckdn = str(Path(sys.executable).with_name("ckdn"))  # this checkout's, never another
        project = root / "project"
        project.mkdir()
        (project / "ckdn.toml").write_text(
            "[run]\nkeep = 2\n[check.pytest]\n"
            f"command = \"sh -c 'cp \\\"$0\\\" \\\"$1\\\"; exit 1' {report} "
            "{run_dir}/junit.xml\"\nparser = \"pytest\"\n"
            "[check.true]\ncommand = \"true\"\nparser = \"generic\"\n")
        if Path(ckdn).exists():
            whole = Figure([ckdn, "run", "pytest"], opts.n, project)
            print(whole.line("ckdn run (whole)",
                             f"  (exit {whole.rc}; target <= 0.5 s, <= 60 MiB)"))
            base = Figure([ckdn, "run", "true"], opts.n, project)
            print(base.line("ckdn run true (base)"))
        else:
            print(f"ckdn run                 skipped: no ckdn script next to {sys.executable}")

        etree = Figure([sys.executable, "-c", ITERPARSE_DRIVER, str(report), "etree"], opts.n,
                       root)
        print(etree.line("ElementTree.iterparse"))
        if has_lxml(FIXTURES_PYTHON):
            lxml = Figure([str(FIXTURES_PYTHON), "-c", ITERPARSE_DRIVER, str(report), "lxml"],
                          opts.n, root)
            print(lxml.line("lxml.etree.iterparse"))
            print(f"lxml speed-up over the parser: wall {parser.wall / lxml.wall:.2f}x, cpu "
                  f"{parser.cpu / lxml.cpu:.2f}x (an lxml extra needs >= 1.5x)")
        else:
            print(f"lxml                     skipped: {FIXTURES_PYTHON} has no lxml")


if __name__ == "__main__":
    main()
