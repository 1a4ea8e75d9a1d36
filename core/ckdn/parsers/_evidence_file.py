"""Opening and streaming ckdn's own evidence files: never through a symlink, in bounded memory.

The pytest plugin hands a run's facts to the ``pytest`` parser in files it writes
into the run dir (:mod:`ckdn.parsers.pytest_evidence`). The check that wrote them
is code ckdn does not trust, so they are opened only as regular files and never
through a symlink (a FIFO does not even block the open), and the evidence is
streamed (:class:`~ckdn.parsers._jsonstream.JsonStream`): a first pass decodes
every top-level member but one array, whose items a second pass yields one at a
time, since what says how to read them (the schema) is written after them.
"""

from __future__ import annotations

import errno
import json
import os

from ckdn.parsers._jsonreport import kind_of
from ckdn.parsers._jsonstream import JsonStream
from ckdn.regular import NotRegular, open_regular, read_regular

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import IO, Any

__all__ = ["LIST", "OTHER", "items_of", "json_bytes", "members_but", "open_no_follow",
           "read_no_follow"]

LIST = object()  # in place of the streamed array in the first pass: it is an array
OTHER = object()  # in place of a streamed member that is not an array, or a key not read


def no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: the plugin never writes them, so the file was tampered."""
    raise ValueError(f"not JSON: {name}")


def open_no_follow(path: str | os.PathLike[str]) -> int:
    """A descriptor of the regular file at ``path``; :class:`ValueError` for a symlink or
    anything else (a FIFO does not block the open: ``O_NONBLOCK``)."""
    try:
        return open_regular(path)
    except NotRegular as exc:
        raise _refused(exc) from None


def _refused(exc: NotRegular) -> ValueError:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return ValueError("it is a symlink: refused (never read through a symlink)")
    return ValueError("not a regular file: refused")


def read_no_follow(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, never through a symlink.

    :class:`ValueError` when it is refused (a symlink, not a regular file, larger
    than ``limit`` bytes); :class:`OSError` when it cannot be read at all. A FIFO
    does not block the open (``O_NONBLOCK``), it is refused like any non-file.
    """
    try:
        data = read_regular(path, limit)
    except NotRegular as exc:
        raise _refused(exc) from None
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    return data


def json_bytes(data: bytes) -> Any:
    """A small file's JSON, strictly (UTF-8, no NaN): :class:`ValueError` saying what is wrong."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=no_constant)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte offset {exc.start})") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None


def _stream(handle: IO[str]) -> JsonStream:
    return JsonStream(handle, parse_constant=no_constant)


def members_but(handle: IO[str], streamed: str, keys: frozenset[str]) -> dict[str, Any]:
    """Pass 1: the top-level object's members in ``keys``, decoded, but ``streamed``
    (:data:`LIST` or :data:`OTHER` in its place); others are :data:`OTHER`, unread."""
    reader = _stream(handle)
    kind = kind_of(reader)
    if kind != "dict":
        raise ValueError(f"top level must be an object, not {kind}")
    doc: dict[str, Any] = {}
    for key in reader.members():
        if key in doc:
            raise ValueError(f"key {key!r} appears twice")
        if key == streamed:
            doc[key] = LIST if reader.peek() == "[" else OTHER
        else:
            doc[key] = reader.value() if key in keys else OTHER
    reader.finish()
    return doc


def items_of(handle: IO[str], streamed: str) -> Iterator[Any]:
    """Pass 2: the items of the top-level array ``streamed``, one at a time."""
    reader = _stream(handle)
    for key in reader.members():
        if key == streamed:
            yield from reader.items()
    reader.finish()
