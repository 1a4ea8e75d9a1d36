"""Loads recorded real-tool fixtures (tests/fixtures/<family>/<case>/) as parse contexts."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ckdn.parsers.base import ParseContext

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CaseLoader = Callable[..., ParseContext]


def case_meta(family: str, case: str) -> dict[str, Any]:
    """The recorded facts of one fixture case (tool, version, argv, rc, cwd)."""
    meta: dict[str, Any] = json.loads((FIXTURES / family / case / "case.json").read_text())
    return meta


@pytest.fixture
def load_case(tmp_path: Path) -> CaseLoader:
    """Copy a fixture case into a fresh run dir and build the ParseContext ckdn would.

    The cwd is the one recorded when the real tool ran, so locations come out
    exactly as they would on the recording machine.
    """

    def load(family: str, case: str, *, options: dict[str, Any] | None = None,
             top: int = 20, max_snippet_lines: int = 12, rc: int | None = None) -> ParseContext:
        src = FIXTURES / family / case
        run_dir = tmp_path / f"{family}-{case}"
        shutil.copytree(src, run_dir, ignore=shutil.ignore_patterns("case.json"))
        meta = case_meta(family, case)
        return ParseContext(
            check=family,
            run_dir=run_dir,
            cwd=Path(meta["cwd"]),
            rc=meta["rc"] if rc is None else rc,
            options=options or {},
            top=top,
            max_snippet_lines=max_snippet_lines,
        )

    return load
