"""An import's part of a run, in place of the spawn: the file copied into the run dir as
evidence (hashed as it is copied), read there by its format's importer, and ``full.log``
saying what was read. Loaded only by an imported check: ``ckdn run`` never needs it."""

from __future__ import annotations

import hashlib
import os
import time

from ckdn.app._running.parsing import ALL_FINDINGS
from ckdn.errors import os_reason
from ckdn.evidence_files import open_regular
from ckdn.imports import ImportRefused, read_import
from ckdn.parsers.base import ParseContext
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ckdn.app._running.parsing import FindingTap
    from ckdn.config import Config, ImportSource
    from ckdn.documents.types import ImportedFacts
    from ckdn.imports import Imported
    from ckdn.parsers.base import Finding, ParseResult

__all__ = ["COPY_NAME", "ImportedRun", "import_into"]

#: The copy of the imported file in the run dir (its extension kept): the evidence.
COPY_NAME = "imported"
_CHUNK = 1 << 20


class ImportedRun:
    """What the steps after the read need of an import: the digest's marks, the counts the
    status is decided on, and ``every``: the file read again for all its findings
    (``findings.jsonl`` when the read's tap did not see them all)."""

    __slots__ = ("cases", "every", "facts", "mismatch")

    def __init__(self, imported: Imported, sha256: str, size: int,
                 every: Callable[[], Sequence[Finding]]) -> None:
        self.every = every
        self.cases = imported.cases
        self.mismatch = imported.mismatch
        self.facts: ImportedFacts = {
            "origin": {"format": imported.format, "variant": imported.variant,
                       "producer": imported.producer, "sha256": sha256, "bytes": size},
            "import_summary": imported.tally.summary(),  # type: ignore[typeddict-item]
        }


def _copy(source: str, target: str, *, private: bool) -> tuple[str, int]:
    """Copy ``source`` to ``target`` in bounded chunks; its sha256 and size."""
    try:
        fd = open_regular(source, follow=True)
    except OSError as exc:
        raise ImportRefused(f"cannot read {source}: {os_reason(exc)}") from None
    digest, size = hashlib.sha256(), 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    with open(fd, "rb") as src, open(os.open(target, flags, 0o600 if private else 0o644),
                                      "wb") as out:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return digest.hexdigest(), size


def import_into(config: Config, name: str, source: ImportSource, run_dir: str, *,
                top: int, tap: FindingTap | None = None
                ) -> tuple[ParseResult, ImportedRun, list[str], str, int, float]:
    """Read ``source`` into ``run_dir``: the facts, the import's marks, the argv meta.json
    records, ``full.log``'s sha256 and size, and when it started. ImportRefused (nothing
    left in the run dir) when the file is not one its format's importer reads."""
    started = time.time()
    ext = os.path.splitext(source.path)[1][:16]
    copy = os.path.join(run_dir, COPY_NAME + ext)
    log = os.path.join(run_dir, "full.log")
    shown = shown_path(source.path, config.cwd)
    try:
        sha256, size = _copy(source.path, copy, private=config.run.private)
        ctx = ParseContext(name, run_dir, config.cwd, 0, {}, top,
                           config.run.max_snippet_lines, tap)
        imported = read_import(source.format, ctx, copy)
    except BaseException:
        for path in (copy, log):
            try:
                os.unlink(path)
            except OSError as exc:  # never written: nothing to take back
                del exc
        raise
    tally = imported.tally
    text = (f"ckdn import {source.format} {shown}: {size} bytes, sha256 {sha256}\n"
            f"variant {imported.variant}, producer {imported.producer}\n"
            f"read {tally.read}, attached {tally.attached}, unattached "
            f"{sum(tally.unattached.values())} {tally.summary()['unattached_by_reason']}\n"
            f"findings {imported.result.total}, cases {imported.cases}"
            + (f", mismatch: {imported.mismatch}" if imported.mismatch else "") + "\n")
    data = text.encode("utf-8", "backslashreplace")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    with open(os.open(log, flags, 0o600 if config.run.private else 0o644), "wb") as out:
        out.write(data)
    argv = ["ckdn", "import", source.format, shown]
    def every() -> Sequence[Finding]:
        again = ParseContext(name, run_dir, config.cwd, 0, {}, ALL_FINDINGS, 0)
        return read_import(source.format, again, copy).result.findings

    marks = ImportedRun(imported, sha256, size, every)
    return (imported.result, marks, argv, hashlib.sha256(data).hexdigest(), len(data),
            started)
