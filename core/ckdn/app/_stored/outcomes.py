"""Every test's outcome in a stored run (``tests.jsonl``, or the JUnit report read again), for
a shard merge and ``ckdn diff``: a digest lists failures only.
"""

from __future__ import annotations

import json
import json.encoder
import os

from ckdn.app._running.parsing import options_for
from ckdn.errors import UsageError
from ckdn.evidence_files import open_regular
from ckdn.parsers.base import ArtifactError, ParseContext
from ckdn.parsers.junit import DEFAULT_JUNIT
from ckdn.parsers.outcomes import (
    OUTCOMES,
    TEST_PARSERS,
    XmlError,
    read_outcomes,
    read_timed_outcomes,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

    from ckdn.config import Check, Config
    from ckdn.store import Store

__all__ = ["TESTS_FILE", "record_outcomes", "run_durations", "run_outcomes"]

TESTS_FILE = "tests.jsonl"
SCHEMA_TESTS = "ckdn.tests/1"
#: The most tests one file holds, and the longest line read (an id is cut to 4,000).
MAX_TESTS = 2_000_000
_ID_CHARS = 4000
_MAX_LINE = 64 << 10
_TEST_KEYS = frozenset(("id", "outcome"))
_TIMED_KEYS = _TEST_KEYS | {"seconds"}


def record_outcomes(store: Store, run_dir: str, check: str, outcomes: Mapping[str, str],
                    durations: Mapping[str, float] | None = None) -> None:
    """Write ``tests.jsonl`` (every test's outcome, by id, and its seconds when ``durations``
    has them) into ``run_dir``; CkdnError if not."""
    took = durations or {}
    quoted = json.encoder.encode_basestring_ascii

    def chunks() -> Iterator[bytes]:
        header = {"schema": SCHEMA_TESTS, "check": check, "total": len(outcomes)}
        yield (json.dumps(header, separators=(",", ":")) + "\n").encode("ascii")
        lines: list[str] = []
        for ident in sorted(outcomes):
            seconds = took.get(ident)
            timed = f',"seconds":{round(seconds, 6)!r}' if seconds is not None else ""
            lines.append(f'{{"id":{quoted(ident[:_ID_CHARS])},"outcome":"{outcomes[ident]}"'
                         f'{timed}}}')
            if len(lines) >= 4096:
                yield ("\n".join(lines) + "\n").encode("ascii")
                lines = []
        if lines:
            yield ("\n".join(lines) + "\n").encode("ascii")

    store.write_atomic(os.path.join(run_dir, TESTS_FILE), chunks())


def _read_tests_file(path: str, shown: str, check: str,
                     durations: dict[str, float] | None = None) -> dict[str, str]:
    """The outcomes of a ``tests.jsonl`` (their seconds into ``durations``); UsageError naming
    the file for one ckdn did not write."""
    known = frozenset(OUTCOMES)
    try:
        fd = open_regular(path)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    out: dict[str, str] = {}
    with open(fd, "rb") as handle:
        total = -1
        for number, raw in enumerate(iter(lambda: handle.readline(_MAX_LINE + 1), b""), 1):
            try:
                value = json.loads(raw) if raw.endswith(b"\n") else None
            except ValueError:
                value = None
            if number == 1:
                if not isinstance(value, dict) or value.get("schema") != SCHEMA_TESTS \
                        or value.get("check") != check or type(value.get("total")) is not int \
                        or not 0 <= value["total"] <= MAX_TESTS:
                    raise UsageError(f"{shown}:1: not a {SCHEMA_TESTS} header of {check!r}")
                total = value["total"]
                continue
            if not isinstance(value, dict) or not _TEST_KEYS <= set(value) <= _TIMED_KEYS \
                    or type(value["id"]) is not str or type(value["outcome"]) is not str \
                    or value["outcome"] not in known or len(out) >= total \
                    or type(value.get("seconds", 0.0)) not in (int, float):
                raise UsageError(f"{shown}:{number}: not a test line of {SCHEMA_TESTS}")
            out[value["id"]] = value["outcome"]
            if durations is not None and "seconds" in value:
                durations[value["id"]] = float(value["seconds"])
    if len(out) != total:
        raise UsageError(f"{shown}: {len(out)} tests, its header says {total} (a torn file)")
    return out


def _junit_report(config: Config, check: Check | None, name: str, run_dir: str,
                  rc: int) -> Path | None:
    """The run's JUnit report, where its check's options put it, or ``None``: none there."""
    options = options_for(check, run_dir) if check is not None else {}
    ctx = ParseContext(name, run_dir, config.cwd, rc, options)
    try:
        report = ctx.artifact("junit", DEFAULT_JUNIT)
    except ArtifactError as exc:
        raise UsageError(str(exc)) from None
    return report if report.is_file() else None


def run_outcomes(config: Config, name: str, run_dir: str, rc: int, *,
                  parser: str | None = None) -> dict[str, str] | None:
    """``{node id: outcome}`` of the run of check ``name`` in ``run_dir``, or ``None``.

    ``parser``: the run's own (its ``meta.json``), else the configured check's.
    UsageError, in one line, for a record that is there and cannot be read.
    """
    recorded = os.path.join(run_dir, TESTS_FILE)
    if os.path.lexists(recorded):
        return _read_tests_file(recorded, f"{os.path.basename(run_dir)}/{TESTS_FILE}", name)
    check = config.check_of_run(name)
    if parser is None and check is not None:
        parser = check.parser
    if parser not in TEST_PARSERS:
        return None
    report = _junit_report(config, check, name, run_dir, rc)
    if report is None:
        return None
    try:
        return read_outcomes(report, config.cwd)
    except (XmlError, OSError) as exc:
        raise UsageError(f"{report.name} cannot be read again: {exc}") from None


def run_durations(config: Config, name: str, run_dir: str, rc: int
                  ) -> tuple[dict[str, str], dict[str, float]] | None:
    """Every test's outcome and the seconds of those timed in the run in ``run_dir``
    (``tests.jsonl``, else its JUnit report's ``time``), or ``None``: no such record."""
    recorded = os.path.join(run_dir, TESTS_FILE)
    durations: dict[str, float] = {}
    if os.path.lexists(recorded):
        outcomes = _read_tests_file(recorded, f"{os.path.basename(run_dir)}/{TESTS_FILE}", name,
                                    durations)
        return outcomes, durations
    report = _junit_report(config, config.check_of_run(name), name, run_dir, rc)
    if report is None:
        return None
    try:
        return read_timed_outcomes(report, config.cwd)
    except (XmlError, OSError) as exc:
        raise UsageError(f"{report.name} cannot be read again: {exc}") from None
