"""Every test's outcome in a pytest JUnit XML report, by node id."""

from __future__ import annotations

from pathlib import Path

from ckdn.parsers import TEST_PARSERS
from ckdn.parsers._pytest_text import node_id
from ckdn.parsers._xml import XmlError, XmlReader

__all__ = ["OUTCOMES", "TEST_PARSERS", "XmlError", "read_outcomes", "read_timed_outcomes", "worse"]

# A digest lists failures; a shard merge must also know which tests *passed*, so
# that a test one shard passed and another failed is caught (a merge of the two
# is not green, nor red for a known reason: the shards disagree about the same
# test). The report a run of a ``pytest`` or ``coverage`` check wrote into its run
# dir has every testcase; this reads it again, streaming, for ids and outcomes
# only (no message, no text), with the node ids the ``pytest`` parser gives its
# findings (:func:`~ckdn.parsers._pytest_text.node_id`).
#
# A testcase's outcome is the worst of its elements: ``error`` (an ``<error>``,
# e.g. a failing fixture), then ``failed``, ``skipped`` (``xfailed`` for pytest's
# xfail marker), else ``passed``. The same id twice in one report (a setup error
# and a call failure are one testcase; parametrised ids are distinct) keeps the
# worst too, so one report never disagrees with itself.

#: Outcomes from best to worst; a merge compares them by name.
OUTCOMES = ("passed", "skipped", "xfailed", "failed", "error")
_RANK = {name: rank for rank, name in enumerate(OUTCOMES)}


def worse(a: str, b: str) -> str:
    """The worse of two outcomes."""
    return a if _RANK[a] >= _RANK[b] else b


class _Outcomes(XmlReader):
    __slots__ = ("case", "cwd", "outcome", "outcomes", "seconds", "splits")

    def __init__(self, cwd: str) -> None:
        super().__init__()
        self.cwd = Path(cwd)
        self.case: dict[str, str] | None = None
        self.outcome = "passed"
        self.outcomes: dict[str, str] = {}
        self.seconds: dict[str, float] = {}  # a testcase's ``time``, summed over its cases
        self.splits: dict[str, int] = {}

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if tag not in ("testsuites", "testsuite"):
            raise XmlError(f"unrecognised root element <{tag}> (expected <testsuites> "
                           "or <testsuite>)")

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "testcase":
            if self.case is not None:
                raise XmlError(f"a <testcase> inside a <testcase> at {self.position()}")
            self.case = attrs
            self.outcome = "passed"
        elif self.case is None:
            return
        elif tag == "error":
            self.outcome = "error"
        elif tag == "failure":
            self.outcome = worse(self.outcome, "failed")
        elif tag == "skipped":
            kind = "xfailed" if attrs.get("type") == "pytest.xfail" else "skipped"
            self.outcome = worse(self.outcome, kind)

    def on_end(self, tag: str) -> None:
        if tag != "testcase" or self.case is None:
            return
        case, self.case = self.case, None
        ident, _file = node_id(case.get("classname", ""), case.get("name", ""),
                               case.get("file") or None, self.cwd, self.splits)
        known = self.outcomes.get(ident)
        self.outcomes[ident] = self.outcome if known is None else worse(known, self.outcome)
        try:
            took = float(case.get("time", ""))
        except ValueError:
            return
        if 0 <= took < float("inf"):  # NaN compares false
            self.seconds[ident] = self.seconds.get(ident, 0.0) + took


def read_outcomes(path: str | Path, cwd: str) -> dict[str, str]:
    """``{node id: outcome}`` of every testcase in the report at ``path``.

    Raises :class:`XmlError` for a report that is not pytest's JUnit XML and
    ``OSError`` for one that cannot be read: a caller never gets half a report.
    """
    reader = _Outcomes(cwd)
    reader.read(Path(path))
    return reader.outcomes


def read_timed_outcomes(path: str | Path, cwd: str) -> tuple[dict[str, str], dict[str, float]]:
    """:func:`read_outcomes` and each testcase's ``time`` (seconds), for a shard plan."""
    reader = _Outcomes(cwd)
    reader.read(Path(path))
    return reader.outcomes, reader.seconds
