"""The parser conformance kit: hold a parser, built-in or plugin, to ckdn's rules."""

from __future__ import annotations

from ckdn.testing._cases import (
    CASE_FILE,
    RecordedCase,
    assert_replays,
    load_case,
    load_cases,
    project_cases,
    replay,
)
from ckdn.testing._rules import assert_loud, assert_never_green, describe, verdict
from ckdn.testing._run import LOG, run_parser, unguarded
from ckdn.testing._spec import Conformance, Setup, ill_formed

__all__ = [
    "CASE_FILE",
    "LOG",
    "Conformance",
    "RecordedCase",
    "Setup",
    "assert_loud",
    "assert_never_green",
    "assert_replays",
    "describe",
    "ill_formed",
    "load_case",
    "load_cases",
    "project_cases",
    "replay",
    "run_parser",
    "unguarded",
    "verdict",
]

# What a parser's test suite needs: run a parser on given bytes in a fresh run dir
# (:func:`run_parser`), the verdict rules as assertions (:func:`assert_never_green`,
# :func:`assert_loud`), recorded real outputs and their replay
# (:class:`RecordedCase`, :func:`load_cases`, :func:`assert_replays`), ckdn's own
# fixtures as a corpus of other tools' outputs (:func:`project_cases`), and the
# description of a parser the rules need (:class:`Conformance`). The rules
# themselves, ready to run, are :func:`ckdn.testing.conformance.conformance_tests`;
# the strategies they draw from are :mod:`ckdn.testing.strategies`.
#
# This package imports only the standard library (and ckdn); the modules that
# generate cases import ``hypothesis`` (``pip install checkdown[testing]``). Nothing
# in ckdn imports this package: it is for tests.
