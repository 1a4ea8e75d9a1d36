"""Recorded real-tool fixtures (tests/fixtures/<family>/<case>/) as parse contexts.

Every parser test loads a case into a fresh run dir (:func:`load_case`), may edit
the recorded report there to provoke a guard (:func:`rewrite_json`), and asks
what the facts reconcile to (:func:`status`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.reconcile import Exit, reconcile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

CaseLoader = Callable[..., ParseContext]


def status(ctx: ParseContext, result: ParseResult) -> str:
    """The status ``result`` reconciles to with this run's exit code."""
    return reconcile(Exit(ctx.rc), result).status


def rewrite_json(ctx: ParseContext, name: str, change: Callable[[Any], object]) -> None:
    """Apply ``change`` to the decoded JSON of report ``name`` in the run dir; write it back."""
    path = Path(ctx.run_dir, name)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


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
        copies = 1
        while run_dir.exists():  # the same case loaded again in one test: a fresh copy
            copies += 1
            run_dir = tmp_path / f"{family}-{case}-{copies}"
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
