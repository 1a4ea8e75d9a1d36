"""What the end of a pytest log says when no report could: usage errors and early stops."""

from __future__ import annotations

import os
import re

from ckdn.evidence_files import open_regular

# pytest writes its JUnit report (and the plugin its evidence) at the end of the
# session, so a run refused at its command line, or stopped early, leaves facts
# only in ``full.log``. Two of them are read, from the log's last
# :data:`TAIL_BYTES` only (constant cost, whatever the log's size), and only in
# the shapes pytest itself prints them:
#
# * a usage error: ``ERROR: usage: pytest ...`` then ``PROG: error: MESSAGE``
#   (argparse: ``unrecognized arguments: --ckdn-digest``), or
#   ``ERROR: file or directory not found: X``;
# * an early stop: the ``!!!!! stopping after N failures !!!!!`` separator pytest
#   prints just before its closing summary line (``-x``, ``--maxfail``; under
#   pytest-xdist also ``... Interrupted: stopping after N failures ...``).
#
# A usage error naming one of the ckdn plugin's own options means the plugin is
# not installed where pytest ran, which is what the note then says, with how to
# fix it.

#: How much of the end of the log is read.
TAIL_BYTES = 64 * 1024
#: Of those, how many of the last lines an early-stop separator may be among.
_LAST_LINES = 8
#: Longer lines are not pytest's separator or usage lines, and are not matched at all.
_WIDTH = 4096

_USAGE = re.compile(r"^\S.{0,200}?: error: (.{1,2000})$")
_NOT_FOUND = re.compile(r"^ERROR: (file or directory not found: .{1,2000})$")
_UNRECOGNIZED = "unrecognized arguments: "
_SEPARATOR = re.compile(r"^!{3,} (.{1,300}?) !{3,}$")
_STOP = re.compile(r"(?:^|: )(stopping after \d+ failures)$")


def stopped(rc: int) -> bool:
    """Whether exit code ``rc`` says the process was stopped rather than finished.

    ckdn's own 124 (timeout), 130 (Ctrl-C) and 128 + N (a signal) codes, or a
    negative code (killed by a signal): a stopped pytest wrote no report, so
    advice on writing one would be wrong.
    """
    return rc < 0 or rc >= 124


def _tail_lines(log_path: str) -> list[str]:
    """The last lines of the log, decoded leniently; none when it cannot be read."""

    try:
        fd = open_regular(log_path)
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL_BYTES)
        data = os.pread(fd, TAIL_BYTES, start)
    except OSError:
        return []
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").splitlines()
    if start > 0 and lines:
        lines = lines[1:]  # the first one is cut
    return [line.rstrip() for line in lines]


def usage_error(log_path: str) -> str | None:
    """pytest's usage error message, when the log ends with one; else None."""
    lines = _tail_lines(log_path)
    for index, line in enumerate(lines):
        if len(line) > _WIDTH:
            continue
        if line.startswith("ERROR: usage: "):
            for follow in lines[index + 1:index + 3]:
                match = _USAGE.match(follow[:_WIDTH])
                if match is not None:
                    return match.group(1)
        match = _NOT_FOUND.match(line)
        if match is not None:
            return match.group(1)
    return None


def usage_note(message: str) -> str:
    """What the usage error means for the check, and how to fix it."""
    if message.startswith(_UNRECOGNIZED):
        ours = [arg for arg in message[len(_UNRECOGNIZED):].split()
                if arg.startswith(("--ckdn-", "--no-ckdn-"))]
        if ours:
            return (f"pytest does not know {' '.join(ours)}: the ckdn pytest plugin is not "
                    "installed in the environment that ran pytest; install checkdown there "
                    "(pip install checkdown; tox: deps = checkdown; nox: "
                    "session.install(\"checkdown\")), or drop the option from the command")
    return f"pytest refused its command line (exit code 4, usage error): {message}"


def early_stop(log_path: str) -> str | None:
    """Why pytest stopped before running every test (``-x``, ``--maxfail``); else None."""
    for line in _tail_lines(log_path)[-_LAST_LINES:]:
        separator = _SEPARATOR.match(line) if len(line) <= _WIDTH else None
        if separator is None:
            continue
        match = _STOP.search(separator.group(1))
        if match is not None:
            return match.group(1)
    return None
