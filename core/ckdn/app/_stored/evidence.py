"""Windows into a run's evidence: a bounded, inert, redacted slice of ``full.log`` or an
artifact, asked for by run id, never by path (an agent is never handed a whole log).
"""

from __future__ import annotations

import codecs
import errno
import json
import os
from collections import deque

from ckdn.app._running.steps import LOG, store_for
from ckdn.documents.redacting import redact_document, redacted_pieces
from ckdn.documents.stored import read_stored
from ckdn.documents.textcap import Cut, clean_line
from ckdn.errors import UsageError, quote
from ckdn.evidence_files import NotRegular, open_regular, read_regular
from ckdn.redact import Redaction, open_block_after
from ckdn.store import FINISHED_MARKERS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ckdn.config import Config
    from ckdn.redact import Redaction

#: The most lines one window holds, and the default.
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
#: Characters shown of one line; the rest is cut, with a counted marker.
LINE_WIDTH = 300
#: Characters of all lines of one window together: 200 cut lines would be 60,000.
MAX_CHARS = 16_000
#: The most bytes of a run's meta.json read (a real one is under 2 KiB).
_META_BYTES = 1 << 16
#: Bytes of a line read before it is cut (a UTF-8 character is at most 4 bytes).
_HEAD_BYTES = LINE_WIDTH * 4
_SKIP_BYTES = 1 << 16


def run_id(config: Config, ref: str | None) -> str:
    """The run id (run dir name) ``ref`` names: a name, never a path; None is the latest.

    UsageError (one line) for a path, a name that escapes the runs dir or names
    no run.
    """
    store = store_for(config)
    return os.path.basename(store.resolve(ref, name_only=True))


def read_document(config: Config, ref: str | None) -> dict[str, Any]:
    """``{run_id, digest}`` or ``{run_id, aggregate}`` of run ``ref`` (None: the latest), or
    ``{run_id, unfinished}`` (why there is no document yet) for a run still going or
    killed: not a mistake in the call. UsageError for a bad reference or a corrupt file."""
    store = store_for(config)
    path = store.resolve(ref, name_only=True)
    name = os.path.basename(path)
    try:
        doc = read_stored(path, store.display)
    except UsageError as exc:
        if any(os.path.lexists(os.path.join(path, marker)) for marker, _ in FINISHED_MARKERS):
            raise
        return {"run_id": name, "unfinished": str(exc)}
    redaction = _redaction(config, doc)
    if redaction is not None:
        doc = redact_document(doc, redaction)  # type: ignore[assignment]
    return {"run_id": name, ("aggregate" if "alias" in doc else "digest"): doc}


def read_meta(config: Config, ref: str | None) -> dict[str, Any]:
    """The ``ckdn.meta/1`` provenance of run ``ref`` (None: the latest), redacted as its
    digest is; UsageError (one line) when the run has none that can be read."""
    store = store_for(config)
    path = store.resolve(ref, name_only=True)
    name = os.path.basename(path)
    try:
        raw = read_regular(os.path.join(path, "meta.json"), _META_BYTES)
        meta = json.loads(raw) if len(raw) <= _META_BYTES else None
    except (OSError, ValueError):
        meta = None
    if not isinstance(meta, dict) or "check" not in meta:
        raise UsageError(f"run {quote(name)} has no readable meta.json")
    redaction = _redaction(config, meta)
    command = meta.get("command")
    if redaction is not None and isinstance(command, list):  # the one place meta holds text
        meta["command"] = [redaction.text(a) if isinstance(a, str) else a for a in command]
    return meta


def _redaction(config: Config, doc: Any) -> Redaction | None:
    """Today's redaction for a stored run of ``doc``'s check (its ``env`` too, if it is
    a configured check), or None when ``[run].redact`` is off."""
    if not config.run.redact.enabled:
        return None

    check = config.checks.get(str(doc.get("check", "")))
    return Redaction(config.run.redact,
                     {**os.environ, **check.env} if check is not None else None)


def read_window(config: Config, ref: str | None, file: str = LOG, offset: int = 0,
                limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """Lines ``offset`` .. ``offset + limit`` of ``file`` in run ``ref`` (None: the latest).

    A negative ``offset`` counts from the end (``-50``: the last 50 lines).
    ``file`` is ``full.log`` or an artifact the run's digest lists; a run without a
    digest (an alias's aggregate) has no evidence of its own. The window states
    ``offset`` (where it starts, resolved), ``limit`` (as asked), ``returned``,
    ``total_lines``, ``lines_cut`` (lines shown shorter than they are),
    ``truncated`` (the character budget ended the window early) and ``next_offset``
    (where the next window starts, or None at the end).
    """
    if limit < 1 or limit > MAX_LIMIT:
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    store = store_for(config)
    path = store.resolve(ref, name_only=True)
    name = os.path.basename(path)
    doc = read_stored(path, store.display)
    if "check" not in doc:
        raise UsageError(f"run {quote(name)} is an alias run (its aggregate); read the evidence"
                         " of one of its members' runs")
    # a name in the run dir itself, whatever a (planted) digest lists
    listed = list(dict.fromkeys([LOG, *(a for a in doc.get("artifacts", ())
                                        if isinstance(a, str) and _plain(a))]))  # each once
    if file not in listed:
        raise UsageError(f"{quote(file)} is not evidence of run {quote(name)}; choose one of: "
                         + ", ".join(listed))
    target = os.path.join(path, file)
    if offset < -limit:  # far from the end: count the lines first, rather than keep them
        total = sum(1 for _ in _lines(_open(target, name, file)))
        offset = max(0, total + offset)
    window = _window(_open(target, name, file), offset, limit, _redaction(config, doc))
    return {"run_id": name, "file": file, **window}


def _plain(name: str) -> bool:
    """A file directly in the run dir: no separator, not ``.``/``..`` nor a dot-file."""
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".") \
        and (os.altsep is None or os.altsep not in name)


def _open(path: str, run: str, file: str) -> int:
    """The file's descriptor: a regular file of the run dir, never through a symlink,
    never blocking on a FIFO."""
    try:
        return open_regular(path)
    except NotRegular as exc:
        if exc.errno == errno.EINVAL:
            raise UsageError(f"{file} of run {quote(run)} is not a regular file") from None
        raise UsageError(f"{file} of run {quote(run)} cannot be read: {exc.strerror}") from None
    except OSError as exc:
        raise UsageError(f"{file} of run {quote(run)} cannot be read: "
                         f"{exc.strerror or exc}") from exc


def _lines(fd: int) -> Iterator[tuple[str, int]]:
    """``(head, characters cut)`` of every line, in constant memory."""
    with os.fdopen(fd, "rb") as handle:
        while True:
            head = handle.readline(_HEAD_BYTES)
            if not head:
                return
            if head.endswith(b"\n"):
                yield head[:-1].decode("utf-8", "replace").rstrip("\r"), 0
                continue
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(head)
            omitted = 0
            while True:  # the rest of a long line: counted, never kept
                more = handle.readline(_SKIP_BYTES)
                if not more:
                    break
                ends = more.endswith(b"\n")
                omitted += len(decoder.decode(more[:-1] if ends else more))
                if ends:
                    break
            omitted += len(decoder.decode(b"", final=True))
            yield text, omitted


def _shown(text: str, omitted: int) -> tuple[str, bool]:
    line = clean_line(Cut(text, omitted) if omitted else text, LINE_WIDTH)
    return line, bool(omitted) or len(text) > LINE_WIDTH


def _window(fd: int, offset: int, limit: int, redaction: Redaction | None = None
            ) -> dict[str, Any]:
    total = 0
    # the key block open before each line (its BEGIN above the window): the one rule
    block: str | None = None
    track = redaction is not None and redaction.enabled
    opened: str | None = None
    if offset < 0:  # the last -offset (at most `limit`) lines
        tail: deque[tuple[tuple[str, int], str | None]] = deque(maxlen=-offset)
        for item in _lines(fd):
            total += 1
            tail.append((item, block))
            if track:
                block = open_block_after(item[0], block)
        start = total - len(tail)
        picked = [item for item, _ in list(tail)[:limit]]
        opened = tail[0][1] if tail else None
    else:
        start, picked = offset, []
        for item in _lines(fd):
            total += 1
            if total <= start:
                if track:
                    block = open_block_after(item[0], block)
            elif total <= start + limit:
                if not picked:
                    opened = block
                picked.append(item)
    if redaction is not None:
        picked = redacted_pieces(redaction, picked, LINE_WIDTH, opened)
    shown: list[str] = []
    cut = 0
    chars = 0
    truncated = False
    for text, omitted in picked:
        line, was_cut = _shown(text, omitted)
        if shown and chars + len(line) > MAX_CHARS:
            truncated = True
            break
        shown.append(line)
        chars += len(line)
        cut += was_cut
    end = start + len(shown)
    return {"offset": start, "limit": limit, "returned": len(shown), "total_lines": total,
            "lines_cut": cut, "truncated": truncated,
            "next_offset": end if end < total else None, "lines": shown}
