"""Coverage of shards, combined by coverage.py itself (``coverage combine``).

A total is not a sum: two shards at 60% may cover 100% together, or 60%. Only
coverage.py's data files say which lines ran, so a shard that wants its
coverage merged keeps its data file in its run dir
(``env = {COVERAGE_FILE = "{run_dir}/.coverage"}``), and the merge runs
``python -m coverage combine --keep`` on them, then ``coverage json`` (and
``coverage xml`` when the check names a Cobertura report) into the merged run
dir, from the check's directory, so the project's own coverage configuration
(``[paths]`` remapping CI checkouts, ``omit``, ``precision``) applies. coverage.py
is run as a program, from the interpreter ckdn runs in: the core imports only
the standard library.

For a check of the ``coverage`` parser the merged report is then read by that
parser, and its total decides ``fail_under`` for the whole in place of the
shards' own totals. Fail closed: such a check whose shards have no data files
(their totals cannot be combined), a shard missing its file while others have
one, and a combine or report that fails are each a problem of the merge.
"""

from __future__ import annotations

import os
import sys

from ckdn.app._running.steps import options_for, parse_run

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ckdn.app._shards.merge import Shard
    from ckdn.app.host import HostLog
    from ckdn.config import Check, Config

__all__ = ["Covered", "combine_coverage"]

#: How long one coverage.py command may take before the merge gives up on it.
TIMEOUT_S = 600
_HINT = 'keep each shard\'s data file in its run dir: env = {COVERAGE_FILE = "{run_dir}/.coverage"}'


class Covered:
    """What the combined coverage adds to the merge."""

    __slots__ = ("decided", "gate_failures", "notes", "problems", "summary")

    def __init__(self, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        self.notes: list[str] = []
        self.summary: dict[str, Any] = {}
        self.gate_failures: list[str] = []
        self.decided = False  # the combined total decided the coverage gate

    @staticmethod
    def is_own(gate_failure: str) -> bool:
        """A shard's coverage gate failure, which the combined total replaces."""
        from ckdn.parsers.gates import is_coverage_gate

        return is_coverage_gate(gate_failure)


def combine_coverage(config: Config, check: Check, shards: Sequence[Shard], run_dir: str,
                     log: HostLog) -> Covered | None:
    """Combine the shards' coverage data into ``run_dir``; None when there is none to merge."""
    having = [s for s in shards if s.coverage]
    if not having:
        if check.parser == "coverage" and len(shards) > 1:
            return Covered([f"the coverage totals of {len(shards)} shards cannot be combined: "
                            f"no coverage.py data file in their run dirs; {_HINT}"])
        return None
    covered = Covered([f"shard {s.name}: no coverage.py data file in its run dir, while "
                       f"other shards have one; {_HINT}" for s in shards if not s.coverage])
    data = _shown(config, os.path.join(run_dir, ".coverage"))
    files = [_shown(config, f) for s in having for f in s.coverage]
    if not _coverage(config, log, ["combine", "--keep", "--data-file", data, *files], covered):
        return covered
    options = options_for(check, run_dir)
    reports = [("json", str(options.get("coverage_json", "coverage.json")))]
    if "coverage_xml" in options or check.parser != "coverage":
        reports.append(("xml", str(options.get("coverage_xml", "coverage.xml"))))
    for kind, name in reports:
        target = _shown(config, os.path.join(run_dir, name))
        if not _coverage(config, log, [kind, "--data-file", data, "-o", target], covered,
                         report=target):
            return covered
    if check.parser != "coverage":
        covered.notes.append(f"coverage of {len(files)} data file(s) combined into "
                             f"{reports[0][1]} in the run dir")
        return covered
    parsed = parse_run(config, check.name, "coverage", run_dir, 0, options=options, top=None)
    if not parsed.parser_ok:
        covered.problems.append("the combined coverage report cannot be read: "
                                + "; ".join(parsed.notes))
        return covered
    covered.summary = dict(parsed.summary)  # its counts are coverage's only (no JUnit read)
    covered.gate_failures = list(parsed.gate_failures)
    covered.notes = [f"coverage of {len(files)} data file(s) combined by coverage.py; its total "
                     "decides fail_under for the whole", *parsed.notes]
    covered.decided = True
    return covered


def _shown(config: Config, path: str) -> str:
    """``path`` relative to the check's directory when inside it (the log reads better)."""
    relative = os.path.relpath(path, config.cwd)
    return path if relative.startswith("..") else relative


def _coverage(config: Config, log: HostLog, args: list[str], covered: Covered,
              report: str | None = None) -> bool:
    """Run ``python -m coverage ARGS`` from the check's directory, its output into the log.

    A report command exits 2 when the project's own ``[report] fail_under`` is missed,
    having written the report: that is a total, not a failure (the gate is ckdn's).
    """
    import subprocess

    command = [sys.executable, "-m", "coverage", *args]
    log.write("$ python -m coverage " + " ".join(args) + "\n")
    try:
        done = subprocess.run(command, cwd=config.cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        covered.problems.append(f"coverage {args[0]} did not finish: {exc}")
        return False
    output = done.stdout.decode("utf-8", "backslashreplace")
    log.write(output if output.endswith("\n") or not output else output + "\n")
    if done.returncode == 2 and report is not None \
            and os.path.isfile(os.path.join(config.cwd, report)):
        return True
    if done.returncode != 0:
        last = output.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        why = ("coverage.py is not installed where ckdn runs (pip install coverage)"
               if "No module named coverage" in output else last[0][:300])
        covered.problems.append(f"coverage {args[0]} failed: {why}")
        return False
    return True
