"""One parser on given bytes, in a fresh run directory, the way ckdn would call it."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ckdn.parsers.base import BaseParser, ParseContext, Parser, ParseResult

__all__ = ["LOG", "run_parser", "unguarded"]

# The crash guard stays out of the way here: a test that calls a parser wants to
# see an exception the parser raised, with its traceback, because every exception
# the guard catches in a real run is a digest that says "crashed" instead of what
# went wrong. So :func:`run_parser` calls the parser's own reading (``read`` for a
# :class:`~ckdn.parsers.base.BaseParser` that keeps its ``parse``, else ``parse``)
# and lets it raise; a parser that guards itself and reports a crash is refused
# the same way.

#: The log's name in a run dir: stdout and stderr of the tool, interleaved.
LOG = "full.log"


def unguarded(parser: Parser) -> Callable[[ParseContext], ParseResult]:
    """The call that reads a run without the crash guard in between.

    ``checked_read`` for a :class:`~ckdn.parsers.base.BaseParser` whose ``parse`` is the
    base's (the guard around it); ``parse`` for any other parser.
    """
    if isinstance(parser, BaseParser) and type(parser).parse is BaseParser.parse:
        return parser.checked_read  # read, and the base's rule that the log may contradict it
    return parser.parse


def run_parser(parser: Parser, rc: int, *, log: bytes = b"",
               files: Mapping[str, bytes] | None = None,
               options: Mapping[str, Any] | None = None, cwd: str | None = None,
               top: int = 20, max_snippet_lines: int = 12) -> ParseResult:
    """``parser``'s facts about a run that exited ``rc``, left ``log`` and wrote ``files``.

    The run dir is empty and emptied afterwards: ``log`` becomes its ``full.log``,
    each of ``files`` (a name relative to the run dir, and its bytes) is written
    beside it. ``cwd`` is the check's working directory (default: the run dir).
    An exception from the parser propagates; a result that is not a
    :class:`~ckdn.parsers.base.ParseResult`, or that reports the parser's own
    crash, raises :class:`AssertionError`.
    """
    run_dir = _empty_run_dir()
    try:
        _write(run_dir, LOG, log)
        for name, data in (files or {}).items():
            if os.path.normpath(name) == LOG:
                raise ValueError("pass the log as log=..., not as a file named full.log")
            _write(run_dir, name, data)
        ctx = ParseContext(check=parser.name, run_dir=run_dir, cwd=cwd or run_dir, rc=rc,
                           options=dict(options or {}), top=top,
                           max_snippet_lines=max_snippet_lines)
        result = unguarded(parser)(ctx)
    finally:
        _empty(run_dir)
    if not isinstance(result, ParseResult):
        raise AssertionError(f"parser '{parser.name}' returned {type(result).__name__}, "
                             "not a ParseResult")
    crashed = f"parser '{parser.name}' crashed"
    for note in result.notes:
        if note.startswith(crashed):
            raise AssertionError(f"the parser's own guard caught a crash: {note}")
    return result


#: Each thread's run dir, made once: a new directory a call cost more than the parse of a
#: small case (the conformance rules call this some 20,000 times a suite).
_RUN_DIRS = threading.local()


def _empty_run_dir() -> str:
    """This thread's run dir, empty; made on first use and removed when the process exits."""
    run_dir: str | None = getattr(_RUN_DIRS, "path", None)
    if run_dir is None or not os.path.isdir(run_dir):
        parent = tempfile.mkdtemp(prefix="ckdn-kit-")
        atexit.register(shutil.rmtree, parent, ignore_errors=True)
        run_dir = os.path.join(parent, "run")
        os.mkdir(run_dir)
        _RUN_DIRS.path = run_dir
    return run_dir


def _empty(run_dir: str) -> None:
    """Remove what a call left in ``run_dir``: the files it was given, and anything else."""
    with os.scandir(run_dir) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


def _write(run_dir: str, name: str, data: bytes) -> None:
    relative = os.path.normpath(name)
    if os.path.isabs(relative) or relative.split(os.sep)[0] == os.pardir:
        raise ValueError(f"a run file must be inside the run dir, not {name!r}")
    path = os.path.join(run_dir, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb", buffering=0) as handle:  # unbuffered: one write, no tty check
        if handle.write(data) != len(data):
            raise OSError(f"a short write to {path}")
