"""What a ``pytest --ckdn-digest`` session left behind, read and schema-checked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.schema import load_schema
from tests.project import UNUSED_PLUGINS

#: Plugins the inner sessions do without: the cache would write into the
#: pytester dir, hypothesis's plugin costs seconds per in-process run
#: (its modules are re-imported and assertion-rewritten every time), and
#: pytest-randomly is asked for only by the tests about order (and
#: :data:`~tests.project.UNUSED_PLUGINS`).
QUIET = ("-p", "no:cacheprovider", *UNUSED_PLUGINS, "-p", "no:randomly")

DIGEST_SCHEMA = Draft202012Validator(load_schema("ckdn.digest/2"))
META_SCHEMA = Draft202012Validator(load_schema("ckdn.meta/1"))


def valid_digest(doc: dict[str, Any]) -> dict[str, Any]:
    errors = sorted(DIGEST_SCHEMA.iter_errors(doc), key=str)
    assert not errors, [e.message for e in errors]
    return doc


@dataclass
class Recorded:
    """One plugin session: pytest's result and the ckdn run dir it left."""

    result: pytest.RunResult
    run_dir: Path
    digest: dict[str, Any]
    meta: dict[str, Any]

    @property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = self.digest.get("summary", {}).get("counts", {})
        return counts

    def finding(self, nodeid: str, kind: str | None = None) -> dict[str, Any]:
        found: list[dict[str, Any]] = [
            f for f in self.digest.get("findings", [])
            if f["id"] == nodeid and (kind is None or f["kind"] == kind)]
        assert len(found) == 1, (nodeid, kind, self.digest)
        return found[0]

    @property
    def printed(self) -> dict[str, Any]:
        """The digest pytest printed as its last line."""
        lines = [line for line in self.result.outlines if line.strip()]
        doc: dict[str, Any] = json.loads(lines[-1])
        return doc


def run_dirs(root: Path, check: str = "pytest") -> list[Path]:
    runs = root / ".agent-runs"
    if not runs.is_dir():
        return []
    return sorted(p for p in runs.iterdir()
                  if p.is_dir() and not p.is_symlink() and p.name.endswith("-" + check))


def recorded(pytester: pytest.Pytester, result: pytest.RunResult, *,
             check: str = "pytest", root: Path | None = None) -> Recorded:
    """The single run dir the session left, with its digest and meta validated."""
    dirs = run_dirs(root or pytester.path, check)
    assert len(dirs) == 1, (dirs, result.stdout.str(), result.stderr.str())
    run_dir = dirs[0]
    digest = valid_digest(json.loads((run_dir / "digest.json").read_text()))
    meta = json.loads((run_dir / "meta.json").read_text())
    meta_errors = sorted(META_SCHEMA.iter_errors(meta), key=str)
    assert not meta_errors, [e.message for e in meta_errors]
    return Recorded(result, run_dir, digest, meta)


def run(pytester: pytest.Pytester, *args: str, subprocess: bool = False,
        check: str = "pytest") -> Recorded:
    """Run pytest with ``--ckdn-digest`` and return what it recorded."""
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    result = runner("--ckdn-digest", *QUIET, *args)
    return recorded(pytester, result, check=check)


class Runner:
    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester

    def __call__(self, *args: str, subprocess: bool = False, check: str = "pytest") -> Recorded:
        return run(self.pytester, *args, subprocess=subprocess, check=check)
