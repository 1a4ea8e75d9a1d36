"""The rules every parser keeps, as tests a parser's suite runs: ``conformance_tests``."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckdn.parsers.base import Option, OptionError
from ckdn.reconcile import PASS
from ckdn.testing._cases import RecordedCase, assert_replays
from ckdn.testing._rules import assert_loud, assert_never_green
from ckdn.testing._run import LOG
from ckdn.testing._spec import Conformance, Setup, ill_formed
from ckdn.testing.strategies import (
    contradictions,
    exit_codes,
    foreign_lines,
    garbage,
    line_soup,
    mutations,
    truncations,
    usage_lines,
)

__all__ = [
    "GENERATED",
    "RULES",
    "conformance_tests",
    "foreign_outputs_are_never_green",
    "garbage_logs_are_never_green",
    "garbage_reports_are_loud_and_never_green",
    "generated_rules",
    "logs_contradicting_a_clean_report_are_never_green",
    "mutated_outputs_never_crash_the_parser",
    "options_are_validated",
    "recorded_cases_replay_to_their_status",
    "recorded_runs_without_their_report_are_loud",
    "truncated_outputs_are_never_green",
    "verdicts_cut_short_are_never_green",
]

# Each rule is a function of a :class:`~ckdn.testing.Conformance` that returns how
# many cases it ran; the generated ones (:data:`GENERATED`, hypothesis) run the
# active hypothesis profile's example budget (:mod:`ckdn.testing.profiles`). The
# rules:
#
# * garbage as the log (and no report) is never green; a missing report is loud;
# * garbage as a report is loud and never green;
# * a recorded output cut short is never green, and a torn report is loud (cut
#   anywhere, by hypothesis, and at every byte of its last line);
# * a recorded output with bytes overwritten, inserted or deleted never crashes the
#   parser and is never green at a nonzero exit code; a JSON or XML report damaged
#   into one that is no longer well-formed is loud;
# * other tools' recorded outputs (as they were, as the log, as the report) are
#   never green;
# * a recorded clean run whose log says something failed (a line inserted anywhere:
#   ``9 failed, 5 passed``, ``Found 3 errors``, ``would reformat ...``), or whose log
#   is the tool's own usage line (its command line refused), is never green at exit
#   code 0: the log contradicts the report;
# * a recorded run without its report is loud at exit code 0 (never green at any);
# * every recorded case replays to its recorded status;
# * options are validated: an unknown one, or a value a declared one does not take, is
#   refused naming it.
#
# "Never green" means: not ``pass`` at exit code 0 unless the input is, but for
# trailing whitespace, the evidence of one of the tool's own recorded clean runs;
# never ``pass`` at any other exit code. No rule tolerates an exception.

Rule = Callable[[Conformance], int]

#: How much of a last line :func:`verdicts_cut_short_are_never_green` cuts through.
_LAST_LINE = 64

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.large_base_example]


def _generated(test: Callable[..., None]) -> Callable[..., None]:
    """The kit's settings over the active profile: no deadline (a run dir costs disk time),
    one failure at a time (the first a parser's author has to fix)."""
    return settings(deadline=None, suppress_health_check=_SUPPRESSED,
                    report_multiple_bugs=False)(test)


def garbage_logs_are_never_green(spec: Conformance) -> int:
    """Garbage as the log, no report: never green; loud where the parser needs a report."""
    runs = 0
    logs = st.one_of(garbage(), line_soup(foreign_lines(spec.foreign)))

    @_generated
    @given(log=logs, rc=exit_codes(), setup=st.sampled_from(spec.setups))
    def check(log: bytes, rc: int, setup: Setup) -> None:
        nonlocal runs
        runs += 1
        result = spec.run(rc, {LOG: log}, setup.options)
        spec.judge(result, rc, options=setup.options, outputs={LOG: log},
              what="a garbage log")
        if setup.reports and not spec.exit_code_only:
            assert_loud(result, rc, what=f"a run without {' or '.join(setup.reports)}")

    check()
    return runs


def garbage_reports_are_loud_and_never_green(spec: Conformance) -> int:
    """Garbage as one report beside a clean run's log: loud and never green."""
    setups = [setup for setup in spec.setups if setup.reports]
    if not setups or spec.exit_code_only:
        return 0
    runs = 0

    @_generated
    @given(data=st.data(), report=garbage(), rc=exit_codes())
    def check(data: st.DataObject, report: bytes, rc: int) -> None:
        nonlocal runs
        setup = data.draw(st.sampled_from(setups), label="setup")
        name = data.draw(st.sampled_from(setup.reports), label="report")
        log = data.draw(st.sampled_from(spec.clean_logs(setup)), label="log")
        runs += 1
        outputs = {LOG: log, name: report}
        result = spec.run(rc, outputs, setup.options)
        spec.judge(result, rc, options=setup.options, outputs=outputs,
              what=f"garbage as {name}")
        if not spec.is_clean_run(setup.options, outputs):
            assert_loud(result, rc, what=f"garbage as {name}")

    check()
    return runs


def logs_contradicting_a_clean_report_are_never_green(spec: Conformance) -> int:
    """A recorded clean run with a line saying something failed put into its log, or with
    the tool's own usage line as its log, beside its clean reports: never green at exit 0."""
    clean = {case.name: case for case in spec.cases if case.status == PASS}
    if spec.exit_code_only or not clean:
        return 0
    runs = 0

    @_generated
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        nonlocal runs
        case = clean[data.draw(st.sampled_from(sorted(clean)), label="case")]
        if data.draw(st.booleans(), label="usage line as the log"):
            log = data.draw(usage_lines(case.tool or spec.name), label="log")
            what = f"{case.name} with its tool's usage line as the log"
        else:
            lines = case.log.split(b"\n")
            at = data.draw(st.integers(0, len(lines)), label="line")
            line = data.draw(contradictions(), label="contradiction")
            log = b"\n".join([*lines[:at], line, *lines[at:]])
            what = f"{case.name}'s log with {line.decode()!r} at line {at + 1}"
        runs += 1
        result = spec.run(0, {**case.outputs(), LOG: log}, case.options, case.cwd)
        assert_never_green(result, 0, what=what)

    check()
    return runs


def _damageable(spec: Conformance) -> list[RecordedCase]:
    """Recorded outputs to cut and damage: the tool's own, or (exit code only) anyone's."""
    cases = list(spec.cases) or (list(spec.foreign) if spec.exit_code_only else [])
    return [case for case in cases if any(case.outputs()[name] for name in spec.evidence(case))]


def _is_report(spec: Conformance, case: RecordedCase, name: str) -> bool:
    return name != LOG and name in spec.reports and not spec.exit_code_only


def truncated_outputs_are_never_green(spec: Conformance) -> int:
    """A recorded output cut short is never green; a torn report is loud."""
    by_name = {case.name: case for case in _damageable(spec)}
    if not by_name:
        return 0
    runs = 0

    @_generated
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        nonlocal runs
        case = by_name[data.draw(st.sampled_from(sorted(by_name)), label="case")]
        name = data.draw(st.sampled_from([n for n in spec.evidence(case)
                                          if case.outputs()[n]]), label="file")
        original = case.outputs()[name]
        cut = data.draw(truncations(original), label="cut")
        rc = data.draw(st.one_of(st.just(0), st.just(case.rc), exit_codes()), label="rc")
        runs += 1
        outputs = {**case.outputs(), name: cut}
        result = spec.run(rc, outputs, case.options, case.cwd)
        torn = cut.rstrip() != original.rstrip()
        if name == LOG and not spec.verdict_at_end and cut.endswith(b"\n"):
            torn = False  # a shorter, complete-looking log: the tool prints no closing verdict
        what = f"{case.name}'s {name} cut to {len(cut)} of {len(original)} bytes"
        if not torn:  # as complete as the tool's own output: only the exit code rule holds
            spec.exit_code_rule(result, rc, what=what)
            return
        spec.judge(result, rc, options=case.options, outputs=outputs, what=what)
        if _is_report(spec, case, name):
            assert_loud(result, rc, what=what)

    check()
    return runs


def verdicts_cut_short_are_never_green(spec: Conformance) -> int:
    """Every cut inside the last line of each recorded output (a verdict, a closing tag),
    at exit code 0: never green; a torn report is loud."""
    if spec.exit_code_only:
        return 0
    runs = 0
    for case in _damageable(spec):
        for name in spec.evidence(case):
            original = case.outputs()[name]
            body = original.rstrip()
            start = max(body.rfind(b"\n") + 1, len(body) - _LAST_LINE)
            for cut in range(start, len(body)):
                if name == LOG and not spec.verdict_at_end and cut == start:
                    continue  # a line end: a shorter, complete-looking log
                runs += 1
                outputs = {**case.outputs(), name: original[:cut]}
                result = spec.run(0, outputs, case.options, case.cwd)
                what = f"{case.name}'s {name} cut to {cut} of {len(original)} bytes"
                spec.judge(result, 0, options=case.options, outputs=outputs, what=what)
                if _is_report(spec, case, name):
                    assert_loud(result, 0, what=what)
    return runs


def mutated_outputs_never_crash_the_parser(spec: Conformance) -> int:
    """Damaged recorded outputs: no exception, never green at a nonzero exit code; a JSON or
    XML report damaged out of well-formedness is loud."""
    by_name = {case.name: case for case in _damageable(spec)}
    if not by_name:
        return 0
    runs = 0

    @_generated
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        nonlocal runs
        case = by_name[data.draw(st.sampled_from(sorted(by_name)), label="case")]
        name = data.draw(st.sampled_from(sorted(case.outputs())), label="file")
        original = case.outputs()[name]
        damaged = data.draw(mutations(original), label="damaged")
        rc = data.draw(st.one_of(st.just(0), st.just(case.rc), exit_codes()), label="rc")
        runs += 1
        result = spec.run(rc, {**case.outputs(), name: damaged}, case.options, case.cwd)
        what = f"{case.name}'s {name}, damaged"
        spec.exit_code_rule(result, rc, what=what)
        if spec.strict_reports and _is_report(spec, case, name) and ill_formed(name, damaged):
            assert_loud(result, rc, what=f"{what} (no longer well-formed)")

    check()
    return runs


def foreign_outputs_are_never_green(spec: Conformance) -> int:
    """Other tools' recorded outputs, as they were, as the log, as each report: never green."""
    runs = 0
    for setup in spec.setups:
        beside = spec.clean_logs(setup)[0]
        for case in spec.foreign:
            # As recorded, at its own exit code too; its files elsewhere, at exit code 0.
            feeds: list[tuple[str, dict[str, bytes], bool, set[int]]] = [
                (f"{case.name} as recorded", case.outputs(), False, {0, case.rc})]
            for name, data in case.outputs().items():
                feeds.append((f"{case.name}'s {name} as the log", {LOG: data},
                              bool(setup.reports), {0}))
                feeds.extend((f"{case.name}'s {name} as {report}",
                              {LOG: beside, report: data}, True, {0}) for report in setup.reports)
            for what, outputs, loud, codes in feeds:
                for rc in sorted(codes):
                    runs += 1
                    result = spec.run(rc, outputs, setup.options)
                    spec.judge(result, rc, options=setup.options, outputs=outputs, what=what)
                    if (loud and not spec.exit_code_only
                            and not spec.is_clean_run(setup.options, outputs)):
                        assert_loud(result, rc, what=what)
    return runs


def recorded_runs_without_their_report_are_loud(spec: Conformance) -> int:
    """A recorded run with its reports removed (as if the tool never wrote them): loud at exit
    code 0, never green at any other."""
    if spec.exit_code_only or not spec.reports:
        return 0
    runs = 0
    for case in spec.cases:
        kept = {name: data for name, data in case.outputs().items() if name not in spec.reports}
        if len(kept) == len(case.outputs()):
            continue  # recorded without a report: its replay says what ckdn makes of that
        what = f"{case.name} without its report"
        for rc in sorted({0, case.rc}):
            runs += 1
            result = spec.run(rc, kept, case.options, case.cwd)
            if rc == 0:
                assert_loud(result, rc, what=what)
            else:  # the parser may know from the log why there is none (pytest's usage error)
                assert_never_green(result, rc, what=what)
    return runs


#: Values of the wrong kind for each option kind (``ckdn.parsers.base.Option``).
_WRONG: dict[str, tuple[object, ...]] = {
    "str": (1, True, ["x"]), "bool": ("true", 1, None), "int": ("1", 1.5, True),
    "number": ("1", True, math.nan, math.inf), "str_list": ("x", [1], [["x"]]),
    "bool_or_names": ("true", 1, None, "idna", [1], ["not a name"])}
_UNKNOWN = "no_such_option"


def options_are_validated(spec: Conformance) -> int:
    """An unknown option, and a value of the wrong kind, out of bounds or not among the
    choices of each declared option, is refused naming the option (before anything runs)."""
    validate = getattr(spec.parser, "validate_options", None)
    declared: Mapping[str, Option] = getattr(spec.parser, "OPTIONS", {}) or {}
    if validate is None:
        return 0  # a plugin without validate_options accepts any option, by the protocol
    checks: list[tuple[str, object]] = [(_UNKNOWN, True)]
    for key, option in declared.items():
        checks.extend((key, value) for value in _WRONG.get(option.kind, ()))
        if option.choices:
            checks.append((key, [_UNKNOWN] if option.kind == "str_list" else _UNKNOWN))
        if option.minimum is not None:
            checks.append((key, option.minimum - 1))
        if option.maximum is not None:
            checks.append((key, option.maximum + 1))
    for key, value in checks:
        try:
            validate({key: value})
        except OptionError as exc:
            if exc.key != key:
                raise AssertionError(f"option {key}={value!r} refused under another name: "
                                     f"{exc.key!r} ({exc.message})") from exc
        else:
            raise AssertionError(f"parser '{spec.name}' accepts option {key}={value!r}")
    return len(checks)


def recorded_cases_replay_to_their_status(spec: Conformance) -> int:
    """Every recorded case reconciles to its recorded status; one at least is ``pass``."""
    for case in spec.cases:
        assert_replays(spec.parser, case)
    if not spec.exit_code_only and not any(case.status == PASS for case in spec.cases):
        raise AssertionError(f"parser '{spec.name}': no recorded clean run (status pass); "
                             "record one: a parser that never passes keeps every other rule")
    return len(spec.cases)


#: The rules whose cases hypothesis generates, under the profile's example budget.
GENERATED: tuple[Rule, ...] = (garbage_logs_are_never_green,
                               garbage_reports_are_loud_and_never_green,
                               truncated_outputs_are_never_green,
                               mutated_outputs_never_crash_the_parser,
                               logs_contradicting_a_clean_report_are_never_green)
#: Every rule, in the order :func:`conformance_tests` runs them.
RULES: tuple[Rule, ...] = (*GENERATED, verdicts_cut_short_are_never_green,
                           foreign_outputs_are_never_green,
                           recorded_runs_without_their_report_are_loud,
                           recorded_cases_replay_to_their_status, options_are_validated)


def generated_rules(spec: Conformance) -> tuple[Rule, ...]:
    """The generated rules that have something to generate for ``spec``'s parser.

    Garbage reports need a report; cut and damaged outputs need recorded cases
    (anyone's, for an exit-code-only parser); a contradicted log, a recorded clean run.
    """
    has_reports = any(setup.reports for setup in spec.setups) and not spec.exit_code_only
    damageable = bool(_damageable(spec))
    has_clean = not spec.exit_code_only and any(case.status == PASS for case in spec.cases)
    return tuple(rule for rule in GENERATED
                 if (rule is not garbage_reports_are_loud_and_never_green or has_reports)
                 and (rule not in (truncated_outputs_are_never_green,
                                   mutated_outputs_never_crash_the_parser) or damageable)
                 and (rule is not logs_contradicting_a_clean_report_are_never_green
                      or has_clean))


def conformance_tests(spec: Conformance) -> type:
    """A test class holding ``spec``'s parser to every rule, one test method per rule.

    ``TestMyTool = conformance_tests(Conformance(...))`` in a test module: pytest
    collects it like any ``Test*`` class there.
    """

    def method(rule: Rule) -> Callable[[object], None]:
        def test(self: object) -> None:
            rule(spec)

        test.__name__ = f"test_{rule.__name__}"
        test.__doc__ = rule.__doc__
        return test

    namespace: dict[str, Any] = {f"test_{rule.__name__}": method(rule) for rule in RULES}
    return type(f"TestConformance_{spec.name}", (), namespace)
