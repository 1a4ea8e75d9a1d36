"""Reading a stored document back: one reader, one policy."""

from __future__ import annotations

import errno
import json
import os
import stat

from ckdn.errors import UsageError

__all__ = ["MAX_DOCUMENT_BYTES", "read_stored"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

    from ckdn.documents.types import Document

# A digest or aggregate on disk is evidence a host shows a person or a model,
# and it may be half-written by a killed process, hand-edited, or planted. So it
# is read by :func:`read_stored` only, with one policy: it is usable (a JSON object,
# under a size bound, with the keys and JSON types its schema requires, members
# included) or it is a :class:`~ckdn.errors.UsageError` naming the file and what
# is wrong with it. Callers that can carry on without it (a listing, a host
# showing red members) catch that one error.
#
# Nothing is read through a symlink: the run dir and the document are opened
# without following one (and without blocking on a FIFO), so a ``digest.json``
# planted as a link to some other JSON file is refused, never shown.

DIGEST = "digest.json"
AGGREGATE = "aggregate.json"
#: No document ckdn writes comes near this; a larger file is refused unread.
MAX_DOCUMENT_BYTES = 16 << 20
#: The keys (and JSON types) a stored document must have to be read at all.
_REQUIRED: dict[str, tuple[tuple[str, type], ...]] = {
    DIGEST: (("check", str), ("status", str), ("rc", int), ("run_dir", str)),
    AGGREGATE: (("alias", str), ("status", str), ("rc", int), ("members", list)),
}
_MEMBER: tuple[tuple[str, type], ...] = (("check", str), ("status", str))
#: What a member that ran and is not green must also say: where its evidence is.
_RED_MEMBER: tuple[tuple[str, type], ...] = (("rc", int), ("run_dir", str))
_JSON_NAMES = {str: "string", int: "integer", list: "array"}


def read_stored(run_dir: str, shown: Callable[[str], str]) -> Document:
    """The digest (or aggregate) a finished run dir holds; UsageError if there is none usable."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        folder = os.open(run_dir, flags | os.O_DIRECTORY)
    except OSError as exc:
        raise UsageError(f"{shown(run_dir)}: cannot read: {_why(exc, run_dir)}") from exc
    try:
        for name in (DIGEST, AGGREGATE):
            path = os.path.join(run_dir, name)
            try:
                fd = os.open(name, flags | os.O_NONBLOCK, dir_fd=folder)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise UsageError(f"{shown(path)}: cannot read: {_why(exc, path)}") from exc
            with open(fd, "rb") as handle:
                mode = os.fstat(fd).st_mode
                if stat.S_ISDIR(mode):  # not a marker (the listing agrees)
                    continue
                if not stat.S_ISREG(mode):
                    raise UsageError(f"{shown(path)}: cannot read: not a regular file")
                return _load(handle, path, name, shown)
        has_log = os.path.lexists(os.path.join(run_dir, "full.log"))
    finally:
        os.close(folder)
    if has_log:
        raise UsageError(
            f"{shown(run_dir)} is unfinished: no digest yet (it is still running, or it was"
            f" killed); its log is {shown(os.path.join(run_dir, 'full.log'))}")
    raise UsageError(  # an alias run's own dir, or a run killed before its log existed
        f"{shown(run_dir)} is unfinished: nothing written yet (it is still running, or it was"
        " killed); `ckdn list` shows the runs beside it")


def _why(exc: OSError, path: str) -> str:
    """What was wrong with ``path``, saying so plainly for a symlink (``O_NOFOLLOW``)."""
    if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and os.path.islink(path):
        return "it is a symlink, and ckdn reads nothing in the runs dir through one"
    return exc.strerror or str(exc)


def _load(handle: BinaryIO, path: str, name: str, shown: Callable[[str], str]) -> Document:

    try:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
        if len(data) > MAX_DOCUMENT_BYTES:
            raise ValueError(f"larger than {MAX_DOCUMENT_BYTES} bytes")
        doc = json.loads(data, parse_constant=_no_constant)
    except (OSError, ValueError, RecursionError) as exc:
        why = f"{exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"{shown(path)}: cannot read: {why}") from exc
    problem = _shape_problem(doc, name)
    if problem:
        raise UsageError(f"{shown(path)}: cannot read: {problem}")
    document: Document = doc
    return document


def _no_constant(name: str) -> object:
    raise ValueError(f"not JSON: {name}")


def _shape_problem(doc: object, name: str) -> str | None:
    if not isinstance(doc, dict):
        return f"not a JSON object but {type(doc).__name__}"
    required = _REQUIRED[name]
    if name == DIGEST and doc.get("rc") is None and isinstance(doc.get("origin"), dict):
        required = tuple(pair for pair in required if pair[0] != "rc")  # an import's rc: null
    problem = _missing(doc, required, "")
    if problem or name != AGGREGATE:
        return problem
    for index, member in enumerate(doc["members"]):
        where = f"members[{index}]."
        if not isinstance(member, dict):
            return f"{where[:-1]} is not a JSON object"
        problem = _missing(member, _MEMBER, where)
        if problem is None and member["status"] not in ("pass", "skipped"):
            problem = _missing(member, _RED_MEMBER, where)
        if problem:
            return problem
    return None


def _missing(doc: dict[str, object], required: tuple[tuple[str, type], ...],
             where: str) -> str | None:
    for key, kind in required:
        value = doc.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{where}{key} is missing or not a JSON {_JSON_NAMES[kind]}"
    return None
