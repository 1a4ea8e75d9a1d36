"""Redaction figures: a digest's worth of text, a 200 MB full.log, and the corpora's counts.

Prints figures; it is not a timed test. Usage::

    python bench/bench_redact.py                # 200 MB log, 5 runs each
    python bench/bench_redact.py --mb 50 -n 3

What is measured, in this process, best and median of ``-n`` runs:

* ``digest``: redacting 64 KiB of log lines (a digest's whole budget of text) the
  way the digest does (``Redaction.lines`` on a log tail of 300-character lines),
  with the env secrets of a CI job set; the floor beside it is ``str.translate``
  of the same text (one pass over every character, in C);
* ``build_digest``: a red run's digest (40 findings with messages and details, a
  200-line tail) built with and without redaction;
* ``full.log``: redacting a 200 MB log file into another file (read, redact,
  hash, write: ``ckdn.redact._stream.rewrite``, what a run does), against a plain
  copy of the same file in the same block size;
  the log is every real tool output in tests/fixtures (131 logs), repeated,
  with a generated secret every 2,000 lines;
* ``screen``: what a green run pays: ``Redaction.argv`` on a plain command and
  the import of ``ckdn.redact`` (fresh interpreter, ``-X importtime``);
* ``corpora``: false negatives (a generated secret left, or not named by its
  rule) and false positives (a near miss changed) with the default rules, and
  with ``high_entropy`` on.
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
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "core"))

from ckdn.redact import Redaction, RedactSettings  # noqa: E402
from ckdn.redact._stream import BLOCK, rewrite  # noqa: E402
from tests.core.redact.corpus import (  # noqa: E402
    ENV_VALUES,
    env_secrets,
    near_misses,
    pem_blocks,
    secrets,
)

CI_ENV = {**ENV_VALUES, "GITHUB_TOKEN": "ghs_" + "k" * 36, "NPM_TOKEN": "npm_" + "n" * 36,
          "TWINE_PASSWORD": "pypi-AgEIcHlwaS5vcmc" + "p" * 80, "PATH": "/usr/bin:/bin",
          "HOME": "/home/ci"}


def real_lines() -> list[str]:
    logs = sorted((ROOT / "tests" / "fixtures").rglob("full.log"))
    out: list[str] = []
    for log in logs:
        out += log.read_text(encoding="utf-8", errors="replace").splitlines()
    return out


#: ``--cpu``: time by this process's CPU time, not the wall clock (on a shared machine
#: the wall clock also counts the time other processes had the CPU).
CLOCK = [time.perf_counter]


def timed(function, n: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    clock = CLOCK[0]
    for _ in range(n):
        start = clock()
        function()
        times.append(clock() - start)
    return min(times), statistics.median(times)


def digest_text(lines: list[str]) -> list[str]:
    """64 KiB of 300-character tail lines from real logs, a secret every 20 lines."""
    cases = secrets()
    out: list[str] = []
    size = index = 0
    while size < 64 * 1024:
        line = lines[index % len(lines)][:300]
        if index % 20 == 0:
            line = cases[index // 20 % len(cases)].line[:300]
        out.append(line)
        size += len(line) + 1
        index += 1
    return out


def bench_digest(lines: list[str], n: int) -> None:
    tail = digest_text(lines)
    text = "\n".join(tail)
    table = str.maketrans({"\x1b": "?"})
    redaction = Redaction(RedactSettings(), CI_ENV)
    redaction.lines(tail)  # built once per run: compiled patterns, encoded env forms
    best, median = timed(lambda: Redaction(RedactSettings(), CI_ENV).lines(tail), n)
    warm_best, warm_median = timed(lambda: redaction.lines(tail), n * 20)
    floor, _ = timed(lambda: text.translate(table), n * 20)
    print(f"digest: {len(text) / 1024:.0f} KiB in {len(tail)} lines: redacted in "
          f"{warm_best * 1e3:.2f} ms best, {warm_median * 1e3:.2f} ms median (a run's first "
          f"text, redactor built: {best * 1e3:.2f} / {median * 1e3:.2f} ms); str.translate "
          f"{floor * 1e3:.3f} ms, x{warm_best / floor:.0f}")


def bench_build_digest(n: int, tmp: Path) -> None:
    from ckdn.documents import Bounds, build_digest
    from ckdn.parsers.base import Finding, ParseResult
    from ckdn.process import Exit
    from ckdn.reconcile import reconcile

    cases = secrets()
    findings = [Finding(id=f"tests/test_m.py::test_{i}", kind="test_failure",
                        message=cases[i % len(cases)].line, location=f"tests/test_m.py:{i}",
                        detail=(f"E   {cases[(i + 1) % len(cases)].line}", "    x = 1") * 4)
                for i in range(40)]
    result = ParseResult(findings=findings, summary={"counts": {"tests": 40, "failures": 40}})
    exit = Exit(rc=1)
    verdict = reconcile(exit, result)
    log = tmp / "full.log"
    log.write_text("\n".join(case.line for case in cases * 7) + "\n")

    def build(redaction: Redaction | None) -> None:
        build_digest(check="pytest", verdict=verdict, exit=exit, result=result,
                     run_dir=".agent-runs/x", artifacts=["full.log"], log_path=str(log),
                     bounds=Bounds(top=40, log_tail_lines=200), redaction=redaction)

    plain, _ = timed(lambda: build(None), n * 4)
    red, _ = timed(lambda: build(Redaction(RedactSettings(), CI_ENV)), n * 4)
    print(f"build_digest: red run, 40 findings, 200-line tail: {plain * 1e3:.2f} ms without "
          f"redaction, {red * 1e3:.2f} ms with (+{(red - plain) * 1e3:.2f} ms)")


def make_log(path: Path, megabytes: int, lines: list[str]) -> int:
    cases = [case.line for case in secrets()] + [line for _, b in pem_blocks() for line in b]
    block: list[str] = []
    for index, line in enumerate(lines * 40):
        block.append(line)
        if index % 2000 == 0:
            block.append(cases[index // 2000 % len(cases)])
    chunk = ("\n".join(block) + "\n").encode()
    target = megabytes * 1_000_000
    with open(path, "wb") as out:
        written = 0
        while written < target:
            piece = chunk[:target - written]
            out.write(piece)
            written += len(piece)
    return written


def bench_full_log(megabytes: int, n: int, tmp: Path, lines: list[str]) -> None:
    log = tmp / "big.log"
    size = make_log(log, megabytes, lines)
    for label, env in (("no secret in the env", {"PATH": "/usr/bin", "HOME": "/home/ci"}),
                       (f"{len(Redaction(RedactSettings(), CI_ENV).values)} secrets in the env"
                        " (each in its encoded forms)", CI_ENV)):
        _full_log(log, size, n, tmp, label, env)


def _full_log(log: Path, size: int, n: int, tmp: Path, label: str,  # noqa: PLR0917
              env: dict[str, str]) -> None:
    dest = tmp / "out.log"

    def copy() -> None:
        with open(log, "rb") as src, open(dest, "wb") as out:
            while data := src.read(BLOCK):
                out.write(data)

    def write(_path: str, chunks: Iterator[bytes]) -> None:
        with open(dest, "wb") as out:
            for chunk in chunks:
                out.write(chunk)

    def redact() -> None:  # what a run does with [run.redact].full_log
        rewrite(str(log), write, Redaction(RedactSettings(), env).redactor)

    copy()
    floor, _ = timed(copy, n)
    best, median = timed(redact, n)
    mb = size / 1e6
    out = dest.read_bytes()
    left = sum(out.count(case.secret.encode()) for case in secrets())
    print(f"full.log, {label}: {mb:.0f} MB: redacted at {mb / best:.0f} MB/s best, "
          f"{mb / median:.0f} MB/s median ({best:.2f} s); plain copy {mb / floor:.0f} MB/s "
          f"({floor:.2f} s), x{best / floor:.1f}; secrets left in the output: {left}")


def bench_screen(n: int) -> None:
    argv = ["pytest", "-q", "-p", "no:cacheprovider", "--junitxml=.agent-runs/x/junit.xml",
            "tests/"]
    redaction = Redaction(RedactSettings(), dict(os.environ))
    best, _ = timed(lambda: Redaction(RedactSettings(), dict(os.environ)).argv(argv), n * 200)
    code = "import ckdn.redact"
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", code],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "core")},
                          check=True)
    own = [line for line in proc.stderr.splitlines() if line.endswith("| ckdn.redact")]
    self_us = own[0].split("|")[0].split(":")[1].strip() if own else "?"
    print(f"screen: Redaction(...).argv of a 6-token command with this env "
          f"({len(os.environ)} variables): {best * 1e6:.0f} us; import ckdn.redact self "
          f"{self_us} us (re not imported: {'re' not in redaction.__dict__})")


def bench_corpora() -> None:
    for high_entropy in (False, True):
        negatives = positives = 0
        corpus = secrets() + env_secrets()
        for case in corpus:
            red = Redaction(RedactSettings(high_entropy=high_entropy), ENV_VALUES)
            out = red.text(case.line)
            negatives += case.secret in out or f"[REDACTED:{case.rule}]" not in out
        for _rule, block in pem_blocks():
            out = "\n".join(Redaction(RedactSettings(high_entropy=high_entropy)).lines(block))
            negatives += any(line in out for line in block[1:-1])
        near = near_misses()
        for line in near:
            positives += Redaction(RedactSettings(high_entropy=high_entropy),
                                   ENV_VALUES).text(line) != line
        total = len(corpus) + len(pem_blocks())
        print(f"corpora ({'high_entropy on' if high_entropy else 'default rules'}): "
              f"false negatives {negatives} of {total} secrets, false positives {positives} "
              f"of {len(near)} near misses")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="time by CPU time, not wall clock")
    args = parser.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus,"
          f" load {os.getloadavg()[0]:.1f}, {'CPU' if args.cpu else 'wall'} time")
    lines = real_lines()
    tmp = Path(tempfile.mkdtemp(prefix="bench-redact-"))
    try:
        bench_corpora()
        bench_digest(lines, args.n)
        bench_build_digest(args.n, tmp)
        bench_screen(args.n)
        bench_full_log(args.mb, args.n, tmp, lines)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
