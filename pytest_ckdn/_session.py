"""The session recorder: pytest hooks in, one ckdn run (or evidence file) out.

Registered by ``pytest_configure`` only in an enabled, non-worker session. It
feeds every report to the :class:`~pytest_ckdn._collect.Collector` as it
arrives and does the rest in ``pytest_unconfigure``, the first point where
pytest's exit status is final (``--max-warnings`` turns 0 into 6 inside the
terminal reporter's ``pytest_sessionfinish`` wrapper, after every plain
``pytest_sessionfinish``).

Facts of the host it respects:

* a collection error ends the session through ``pytest_keyboard_interrupt``
  with pytest's own ``Interrupted`` (and pytest-xdist's ``-x`` with its own):
  only a bare ``KeyboardInterrupt`` is a Ctrl-C;
* ``pytest.exit()`` also arrives there; it is a deliberate stop, noted;
* ``-x`` / ``--maxfail`` set ``session.shouldfail`` (stepwise and plugins
  ``session.shouldstop``): the session stopped early, which is noted and never
  a pass;
* a usage error raised inside the session (a bad ``-k``) reaches no hook: it
  is read from the exception in flight while ``pytest_sessionfinish`` runs;
* SIGTERM kills Python outright, so while recording it is turned into an
  interruption pytest finishes cleanly (:mod:`pytest_ckdn._signals`).

Under ``ckdn run`` the recorder also keeps a progress line in the outer run dir
as each test starts (:class:`ckdn.app.host.ProgressLog`): when pytest is
killed before it could write its evidence, the ``pytest`` parser still names the
test that was running.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ckdn.app import ChangeRequest, ParseResult, encode, gate_exit_code
from ckdn.app.host import (
    ALL_FINDINGS,
    ALLOW_NO_TESTS_HINT,
    NO_TESTS_COLLECTED_STATUS,
    RC_INTERRUPTED,
    RC_TERMINATED,
    ProgressLog,
    begin_host_run,
    coverage_gates,
    coverage_worst_files,
    github_reporting,
    max_warnings_gate,
    no_tests_collected,
    no_tests_gate,
    report_to_github,
    stopped_early,
    write_evidence,
)
from ckdn.errors import CkdnError
from pytest_ckdn._collect import SKIPPED_COLLECTOR, Collector, Paths
from pytest_ckdn._coverage import coverage_of, json_report
from pytest_ckdn._settings import NESTED_ENV, Settings
from pytest_ckdn._signals import SigtermStop, Terminated
from pytest_ckdn._tee import LogTee

if TYPE_CHECKING:
    from ckdn.app.host import HostRun

__all__ = ["PARSER_LABEL", "Recorder"]

#: What ``meta.json`` names as the parser of a plugin session.
PARSER_LABEL = "pytest-plugin"
#: The plugin's options that take a value (left out with it from a base run's arguments).
_VALUED = ("--ckdn-check", "--ckdn-fail-under", "--ckdn-config", "--ckdn-diff-base")
#: The outcomes of a test that ran (anything but skipped).
_RAN = ("passed", "failures", "errors", "xfailed", "xpassed")
#: How pytest words the stop after collection errors: those are findings already.
_COLLECTION_STOP = "during collection"


def _keep(settings: Settings) -> int:
    ckdn = settings.ckdn
    if ckdn is not None and ckdn.run.baseline is not None:
        return ALL_FINDINGS
    return settings.top


class Recorder:
    """Collects one session; seals it (standalone) or writes evidence (under ``ckdn run``)."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        # With a baseline every failure is classified, so all are kept; the digest shows top.
        self.collector = Collector(Paths(config.rootpath, config.invocation_params.dir),
                                   top=_keep(settings), snippet_lines=settings.snippet_lines)
        self.session: pytest.Session | None = None
        self.interrupted = False
        self.stop_reason: str | None = None
        self.notes: list[str] = list(settings.notes)
        self.running: dict[str, None] = {}
        self.finished = 0
        self.sigterm = SigtermStop()
        self._clock = time.perf_counter()
        self._reporter: Any = None
        self._run: HostRun | None = None
        self._tee: LogTee | None = None
        self._progress: ProgressLog | None = None
        self._progress_behind = False  # a test finished since the line was last written
        self._mark: str | None = None

    # -- session hooks -----------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Open the run dir and start the log before pytest prints its header."""
        self._reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.settings.ckdn is not None:
            self._begin()
        else:
            self._begin_progress()
        self.session = session
        self.sigterm.install()

    def _begin(self) -> None:
        assert self.settings.ckdn is not None
        try:
            self._run = begin_host_run(self.settings.ckdn, self.settings.check, tests=True)
        except CkdnError as exc:
            raise pytest.UsageError(f"ckdn: {exc}") from None
        writer = self.config.get_terminal_writer() if self._reporter is not None else None
        self._tee = LogTee(self._run.open_log(), writer)
        if writer is None:
            self.notes.append("pytest's terminal reporter is disabled: full.log is empty")

    def _begin_progress(self) -> None:
        assert self.settings.evidence_dir is not None
        self._mark = os.environ.get(NESTED_ENV)
        os.environ[NESTED_ENV] = str(self.settings.evidence_dir)  # see _settings: nested sessions
        try:
            self._progress = ProgressLog(str(self.settings.evidence_dir))
        except OSError as exc:
            sys.stderr.write(f"ckdn: cannot keep progress in {self.settings.evidence_dir}: "
                             f"{exc.strerror or exc}; a killed session will not name its test\n")
            return
        self._update_progress()

    def _update_progress(self) -> None:
        self._progress_behind = False
        progress = self._progress
        if progress is not None:
            try:
                progress.update(list(self.running), self.collector.tests, self.finished,
                                self.collector.findings_total)
            except OSError:
                self._progress = None
                progress.close(remove=False)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.collector.tests += 1
        self.running[nodeid] = None
        self._update_progress()

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        # Not written here: the next test's start writes both (one write a test, not two);
        # only pytest's own step between two tests can see the line one test behind.
        self.running.pop(nodeid, None)
        self.finished += 1
        self._progress_behind = True

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, None, None]:
        """Bring the line up to date once the tests are done: a kill during the session's
        end (coverage, plugins) then reads "between tests", not the last test."""
        yield  # an old-style wrapper: pytest's outcome, raised or not, comes back here
        self._catch_up_progress()

    def _catch_up_progress(self) -> None:
        if self._progress_behind:
            self._update_progress()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.collector.test_report(report)
        if self._reporter is None:
            self._count(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.collector.collect_report(report)
        if self._reporter is None:
            self.collector.count("error" if report.failed else
                                 "skipped" if report.skipped else "")
            if report.skipped:
                self.collector.count(SKIPPED_COLLECTOR)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if self._reporter is None:
            for _ in items:
                self.collector.count("deselected")

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str,
                                location: Any) -> None:
        if self._reporter is None:
            self.collector.count("warnings")

    def _count(self, report: pytest.TestReport) -> None:
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        self.collector.count(status[0] if status else report.outcome)

    def pytest_internalerror(self, excrepr: Any, excinfo: Any) -> None:
        self.collector.internal_error(excrepr)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if excinfo.type is KeyboardInterrupt:
            self.interrupted = True
        elif excinfo.type is Terminated:
            pass  # the handler recorded it
        elif isinstance(excinfo.value, pytest.exit.Exception):
            self.notes.append(f"pytest.exit() stopped the session: {excinfo.value.msg}")
        elif isinstance(excinfo.value, KeyboardInterrupt):  # pytest's or xdist's Interrupted
            reason = str(excinfo.value)
            if reason and not reason.endswith(_COLLECTION_STOP):
                self.stop_reason = reason

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._catch_up_progress()  # a loop that raised never reached the wrapper's end
        in_flight = sys.exc_info()[1]
        if isinstance(in_flight, pytest.UsageError):
            self.notes.append(f"pytest usage error: {in_flight}")

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.session is None:  # the session never started: nothing to record
            return
        self.sigterm.disarm()
        try:
            if self.settings.ckdn is None:
                self._write_evidence()
            else:
                self._seal()
        finally:
            self.sigterm.restore()
            if self.settings.ckdn is None:
                self._unmark()
            if self._progress is not None:
                self._progress.close(remove=False)
            if self._tee is not None:
                self._tee.close()
            if self._run is not None:
                self._run.release()

    def _unmark(self) -> None:
        if self._mark is None:
            os.environ.pop(NESTED_ENV, None)
        else:
            os.environ[NESTED_ENV] = self._mark

    # -- the end of the session --------------------------------------------------------------

    @property
    def run_dir(self) -> str | None:
        """The run dir this session records into: the outer run's, else its own once begun
        (a sharded session keeps its record there)."""
        if self.settings.evidence_dir is not None:
            return str(self.settings.evidence_dir)
        return self._run.run_dir if self._run is not None else None

    def exit_status(self) -> int:
        assert self.session is not None
        return int(self.session.exitstatus)

    def _where(self) -> str:
        """The tests running right now, for a note about a stop."""
        if not self.running:
            return "between tests"
        shown = list(self.running)[:8]
        more = len(self.running) - len(shown)
        return "while running " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")

    def _worst_files(self) -> Any:
        """The files behind a missed coverage gate, from pytest-cov's data written into the
        run dir as coverage.py's JSON report (only asked when a gate fails)."""
        run_dir = (self._run.run_dir if self._run is not None
                   else str(self.settings.evidence_dir or ""))
        if not run_dir:
            return "no run dir to write the report into"
        try:
            path = json_report(self.config.pluginmanager, run_dir)
        except (OSError, RuntimeError) as exc:
            return str(exc)
        return coverage_worst_files(path, cwd=str(self.config.invocation_params.dir),
                                    top=self.settings.top,
                                    preview=self.settings.missing_lines_preview)

    def _early_stop(self) -> str | None:
        session = self.session
        assert session is not None
        reason = session.shouldfail or session.shouldstop or self.stop_reason
        return str(reason) if reason else None

    def result(self) -> ParseResult:
        """The session's facts (findings, counts, coverage, gates), before other plugins add."""
        collector = self.collector
        stats = getattr(self._reporter, "stats", None) if self._reporter is not None else None
        counts = collector.counts(stats)
        summary: dict[str, Any] = {"counts": counts}
        gates: list[str] = []
        notes = list(self.notes)
        covered, coverage_failures, coverage_notes = coverage_gates(
            coverage_of(self.config.pluginmanager), self.settings.fail_under,
            self._worst_files)
        summary.update(covered)
        gates.extend(coverage_failures)
        notes.extend(coverage_notes)
        status = self.exit_status()
        warnings = max_warnings_gate(status, counts["warnings"])
        if warnings is not None:
            gates.append(warnings)
        if status == NO_TESTS_COLLECTED_STATUS:
            # pytest itself says the run went wrong: an error to fix, not a failed gate
            notes.append(no_tests_collected(counts["deselected"]))
        elif status == pytest.ExitCode.OK and collector.findings_total == 0 \
                and not self.settings.allow_no_tests:
            # only where pytest believed it finished normally: any other status has its cause
            unverified = no_tests_gate(counts["tests"], sum(counts[name] for name in _RAN),
                                       deselected=counts["deselected"])
            if unverified is not None:
                gates.append(unverified)
                notes.append(f"{unverified}; {ALLOW_NO_TESTS_HINT}")
        early = self._early_stop()
        if early is not None:
            stop = stopped_early(early)
            notes.append(stop)
            if collector.findings_total == 0:  # nothing else keeps it from reading as a pass
                gates.append(stop)
        if self.sigterm.received:
            notes.append(f"pytest received SIGTERM {self._where()} (pytest exit status {status})")
        elif self.interrupted:
            notes.append(f"interrupted by Ctrl-C {self._where()} (pytest exit status {status})")
        return ParseResult(findings=collector.findings(), findings_total=collector.findings_total,
                           summary=summary, notes=notes, gate_failures=gates)

    def _facts(self) -> ParseResult:
        result = self.result()
        self.config.hook.pytest_ckdn_collect(result=result, config=self.config)
        return result

    def _final_status(self) -> int:
        """The exit code of the record: 143 after SIGTERM and 130 after Ctrl-C, as ckdn's."""
        if self.sigterm.received:
            return RC_TERMINATED
        return RC_INTERRUPTED if self.interrupted else self.exit_status()

    def _write_evidence(self) -> None:
        assert self.settings.evidence_dir is not None
        assert self.session is not None
        where = self.settings.evidence_dir
        status = self.exit_status()
        facts = self._facts()
        if self.sigterm.received:
            # pytest exits with what the evidence records, so the two agree
            status = self.session.exitstatus = self._final_status()
        try:
            write_evidence(str(where), facts, status)
        except OSError as exc:
            sys.stderr.write(f"ckdn: cannot write evidence into {where}: {exc.strerror or exc};"
                             " the outer run falls back to other evidence\n")
            return
        if self._progress is not None:
            self._progress.close(remove=True)
            self._progress = None

    def _seal(self) -> None:
        assert self._run is not None
        assert self._tee is not None
        result = self._facts()
        self._tee.close()
        argv = ["pytest", *map(str, self.config.invocation_params.args)]
        try:
            outcome = self._run.seal(
                argv=argv, rc=self._final_status(),
                interrupted=self.interrupted or self.sigterm.received,
                duration=time.perf_counter() - self._clock, result=result,
                parser=PARSER_LABEL, top=self.settings.check_top or self.settings.top,
                gated=True, outcomes=self.collector.outcomes,
                durations=self.collector.durations, change=self._change())
        except CkdnError as exc:
            sys.stderr.write(f"ckdn: {exc}\n")
            return
        self.config.hook.pytest_ckdn_digest(digest=outcome.document, config=self.config)
        self._report_to_github(outcome.document)  # before the digest: that is the last line
        self._print(encode(outcome.document).decode("utf-8"))
        assert self.session is not None
        # `pytest --ckdn-digest` exits like `ckdn run pytest` would: pytest's own
        # code, except 1 when that is 0 but the digest is not a pass (and 130
        # after Ctrl-C, 143 after SIGTERM).
        self.session.exitstatus = outcome.exit_code
        if self.settings.gate or self.settings.diff_base is not None:
            self.session.exitstatus = gate_exit_code(outcome)

    def _change(self) -> ChangeRequest | None:
        """``--ckdn-diff-base``: the change to gate by, and the session as it runs again on
        the base tree (this interpreter's pytest, the same arguments but ckdn's own, its
        evidence handed to the base run's dir)."""
        ref = self.settings.diff_base
        if ref is None:
            return None
        args: list[str] = []
        skip = False
        for arg in map(str, self.config.invocation_params.args):
            if skip:
                skip = False
                continue
            if arg.startswith(("--ckdn-", "--no-ckdn-")):
                skip = "=" not in arg and arg in _VALUED
                continue
            args.append(arg)
        return ChangeRequest(base=ref, base_argv=[sys.executable, "-m", "pytest", *args,
                                                  "--ckdn-digest"], base_parser="pytest")

    def _report_to_github(self, document: Any) -> None:
        """In a GitHub Actions job: the digest's annotations and step summary (docs/ci.md)."""
        if self.settings.ckdn is not None \
                and github_reporting(choice=self.config.getoption("ckdn_github")):
            if self._reporter is not None:
                self._reporter.flush()
            report_to_github(self.settings.ckdn, document)

    def _print(self, line: str) -> None:
        if self._reporter is not None:
            self._reporter.write_line(line)
            self._reporter.flush()
        else:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

