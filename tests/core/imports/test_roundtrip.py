"""native -> export -> import, for every parser's real recorded fixtures: the imported run
has the native run's outcome, its findings and their fingerprints, lost nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ckdn.app.exchange import export_run, import_results
from ckdn.app.host import begin_host_run
from ckdn.config import load_config
from ckdn.identity import FINDINGS_FILE, read_findings
from ckdn.parsers import BUILTIN
from ckdn.testing import RecordedCase, project_cases

CASES = [case for case in project_cases() if case.family in BUILTIN]
#: A native status, as an import of its export reads it: an exported run that was not
#: green for want of evidence is an import whose evidence is incomplete.
AS_IMPORTED = {"pass": "pass", "fail": "fail", "error": "error", "parse_mismatch": "error"}


def fingerprints(run_dir: str, check: str) -> list[tuple[str, str, str, str | None]]:
    path = os.path.join(run_dir, FINDINGS_FILE)
    if not os.path.exists(path):
        return []
    return [(row.fingerprint, row.id, row.kind, row.location)
            for row in read_findings(path, path, check)]


def native_run(tmp_path: Path, case: RecordedCase) -> tuple[str, dict[str, object]]:
    """The case sealed as ckdn seals a run it made: its files in the run dir, its log, its rc."""
    config = load_config(tmp_path)
    host = begin_host_run(config, case.family)
    with host:
        for name, data in case.files.items():
            Path(host.run_dir, name).write_bytes(data)
        host.open_log().write(case.log.decode("utf-8", "backslashreplace"))
        outcome = host.seal(argv=[case.tool or case.family], rc=case.rc, duration=0.0,
                            parser=case.family)
    return host.run_dir, dict(outcome.digest)


def test_every_parser_with_fixtures_is_in_the_round_trip() -> None:
    assert {case.family for case in CASES} >= {"pytest", "ruff", "mypy", "sarif", "bandit",
                                               "coverage", "pylint", "pyright", "ty"}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
@pytest.mark.parametrize("fmt", ["junit", "ctrf"])
def test_an_exported_run_imports_with_its_outcome_and_fingerprints(
        tmp_path: Path, case: RecordedCase, fmt: str) -> None:
    (tmp_path / "ckdn.toml").write_text("")
    run_dir, native = native_run(tmp_path, case)
    config = load_config(tmp_path)
    exported = tmp_path / f"export.{fmt}"
    exported.write_text(export_run(config, run_dir, fmt))
    outcome = import_results(config, fmt, str(exported), name=f"{case.family}-{fmt}")
    imported = outcome.digest
    assert imported["status"] == AS_IMPORTED[str(native["status"])]
    assert imported.get("findings_total") == native.get("findings_total")
    assert imported["origin"]["imported"]["producer"] == "ckdn"
    assert fingerprints(outcome.run_dir or "", f"{case.family}-{fmt}") == \
        fingerprints(run_dir, case.family)
    shown = [(f["id"], f["kind"], f.get("location")) for f in imported.get("findings", [])]
    natives: Any = native.get("findings", [])
    assert shown == [(f["id"], f["kind"], f.get("location")) for f in natives]
