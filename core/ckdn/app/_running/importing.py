"""An import's part of a run, in place of the spawn: the file copied into the run dir as
evidence (by the kernel where it can), read there by its format's importer while another
thread hashes the copy, and ``full.log`` saying what was read. Loaded only by an imported
check: ``ckdn run`` never needs it."""

from __future__ import annotations

import errno
import hashlib
import os
import threading
import time

from ckdn.app._running.imported import ImportedRun
from ckdn.app._running.parsing import ALL_FINDINGS
from ckdn.errors import os_reason
from ckdn.evidence_files import open_regular
from ckdn.imports import ImportRefused, read_import
from ckdn.parsers.base import ParseContext
from ckdn.store import shown_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ckdn.app._running.parsing import FindingTap
    from ckdn.config import Config, ImportSource
    from ckdn.documents.types import ImportedFacts
    from ckdn.parsers.base import Finding, ParseResult

__all__ = ["COPY_NAME", "ImportedRun", "import_into"]

#: The copy of the imported file in the run dir (its extension kept): the evidence.
COPY_NAME = "imported"
_CHUNK = 1 << 20
#: What a file system that cannot ``sendfile`` between two files says.
_NO_SENDFILE = frozenset((errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSOCK,
                          errno.EXDEV))


def _copy(source: str, target: str, *, private: bool) -> int:
    """Copy ``source`` to ``target``, created new; its size. ``sendfile`` copies in the kernel
    (what shutil uses: unlike ``copy_file_range`` it reads a file that only looks empty);
    where a file system refuses it, the rest goes in bounded chunks."""
    try:
        fd = open_regular(source, follow=True)
    except OSError as exc:
        raise ImportRefused(f"cannot read {source}: {os_reason(exc)}") from None
    size = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    with open(fd, "rb") as src, open(os.open(target, flags, 0o600 if private else 0o644),
                                      "wb") as out:
        try:
            while sent := os.sendfile(out.fileno(), fd, None, _CHUNK):
                size += sent
            return size
        except OSError as exc:  # both offsets stand where sendfile left them
            if exc.errno not in _NO_SENDFILE:
                raise
        while chunk := src.read(_CHUNK):
            size += len(chunk)
            out.write(chunk)
    return size


class _Hashing:
    """The copy's sha256, computed in a thread beside the read (hashlib lets go of the GIL):
    on a free core the hash costs the import no time. The copy is the run's own, written
    once: the bytes hashed are the bytes read."""

    __slots__ = ("_thread", "digest", "error")

    def __init__(self, path: str) -> None:
        self.digest = ""
        self.error: OSError | None = None
        self._thread = threading.Thread(target=self._hash, args=(path,), daemon=True,
                                        name="ckdn-import-sha256")
        self._thread.start()

    def _hash(self, path: str) -> None:
        try:
            with open(open_regular(path), "rb") as handle:
                self.digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError as exc:
            self.error = exc

    def join(self) -> None:
        self._thread.join()

    def result(self) -> str:
        self._thread.join()
        if self.error is not None:
            raise ImportRefused(f"cannot hash the copy: {os_reason(self.error)}")
        return self.digest


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
    hashing: _Hashing | None = None
    try:
        size = _copy(source.path, copy, private=config.run.private)
        hashing = _Hashing(copy)
        ctx = ParseContext(name, run_dir, config.cwd, 0, {}, top,
                           config.run.max_snippet_lines, tap)
        imported = read_import(source.format, ctx, copy)
        sha256 = hashing.result()
    except BaseException:
        if hashing is not None:  # nothing is left running when the import is refused
            hashing.join()
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

    facts: ImportedFacts = {
        "origin": {"format": imported.format, "variant": imported.variant,
                   "producer": imported.producer, "sha256": sha256, "bytes": size},
        "import_summary": tally.summary(),  # type: ignore[typeddict-item]
    }
    marks = ImportedRun(facts, cases=imported.cases, mismatch=imported.mismatch, every=every)
    return (imported.result, marks, argv, hashlib.sha256(data).hexdigest(), len(data),
            started)
