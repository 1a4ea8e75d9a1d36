"""The state of the source tree a run saw, as one hash: were these two runs of the same code?"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

from ckdn.evidence_files import read_regular

__all__ = ["SCHEMA_SOURCE", "SOURCE_FILE", "read_source_state", "source_state"]

# A test that passed in one run and failed in the next is a regression when the
# code changed between them and flaky when it did not; only the tree can tell.
# The hash covers the commit (``HEAD``) and every path ``git status`` names (a
# tracked file modified, staged, deleted or renamed; an untracked file that is
# not ignored) with its content. Two runs with equal
# hashes ran on the same code; anything else (another commit, an edit, a new
# file, no git) is not known to be the same, and ``ckdn diff`` never calls a
# change in outcome flaky then. No git, no repository, a git that fails or takes
# too long: ``None``, never an error. Asked for test checks only, once per run,
# by one ``git status`` that runs beside the tool (:class:`SourceWatch`).

SOURCE_FILE = "source.json"
SCHEMA_SOURCE = "ckdn.source/1"
_TIMEOUT = 10.0
_BLOCK = 1 << 20


class SourceWatch:
    """``git status`` of the tree, started beside the tool and read when it ends.

    One ``git status --porcelain=v2 --branch --untracked-files=all -z`` runs while
    the check runs (started before it, so it costs the run no wall time), naming
    the commit and every path that differs from it: modified, staged, deleted or
    untracked and not ignored. :meth:`result` hashes the commit and each such
    path with its content (read then): two runs with equal hashes ran on the same
    code. Ignored files (build output, caches) are not part of the tree.
    """

    __slots__ = ("_cwd", "_proc")

    def __init__(self, cwd: str) -> None:

        self._cwd = cwd
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                ["git", "-C", cwd, "status", "--porcelain=v2", "--branch",
                 "--untracked-files=all", "-z"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
        except OSError:
            self._proc = None

    def result(self) -> str | None:
        """The tree's hash (hex sha256), or ``None`` when git cannot say."""

        proc, self._proc = self._proc, None
        if proc is None:
            return None
        try:
            out, _ = proc.communicate(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return None
        if proc.returncode != 0:
            return None
        head, paths = _parse(out)
        if head is None:
            return None
        digest = hashlib.sha256(b"head\0" + head)
        base = _top(os.fsencode(os.path.abspath(self._cwd)))
        for path in sorted(paths):
            digest.update(b"\0path\0" + path + b"\0" + _content(os.path.join(base, path)))
        return digest.hexdigest()


def _parse(out: bytes) -> tuple[bytes | None, set[bytes]]:
    """The commit and the changed paths of ``git status --porcelain=v2 -z`` (paths are the
    repository's, relative to its top; a rename's entry is followed by its old path)."""
    head: bytes | None = None
    paths: set[bytes] = set()
    fields = iter(out.split(b"\0"))
    for entry in fields:
        if entry.startswith(b"# branch.oid "):
            oid = entry[len(b"# branch.oid "):]
            head = oid if oid != b"(initial)" else None
        elif entry[:2] in (b"1 ", b"u "):
            paths.add(entry.split(b" ", 10 if entry[:1] == b"u" else 8)[-1])
        elif entry[:2] == b"2 ":
            paths.add(entry.split(b" ", 9)[-1])
            paths.add(next(fields, b""))  # the path it was renamed from: gone from there
        elif entry[:2] == b"? ":
            paths.add(entry[2:])
    return head, paths


def _top(path: bytes) -> bytes:
    """The work tree's top (where ``.git`` is), which status paths are relative to."""
    here = path
    while not os.path.lexists(os.path.join(here, b".git")):
        up = os.path.dirname(here)
        if up == here:
            return path
        here = up
    return here


def source_state(cwd: str) -> str | None:
    """The tree's hash now (:class:`SourceWatch` started and read at once)."""
    return SourceWatch(cwd).result()


def _content(path: bytes) -> bytes:
    """The file's sha256, read in blocks (a symlink: its target's name; unreadable: a mark)."""

    digest = hashlib.sha256()
    try:
        if os.path.islink(path):
            return b"link:" + os.fsencode(os.readlink(path))
        with open(path, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except OSError:
        return b"unreadable"
    return digest.digest()


def source_document(tree: str) -> bytes:
    """``source.json``'s bytes."""
    return b'{"schema":"%s","tree":"%s"}\n' % (SCHEMA_SOURCE.encode(), tree.encode())


def read_source_state(run_dir: str) -> str | None:
    """The state a run recorded in its ``source.json``; ``None`` for none or a bad file."""


    try:
        data = read_regular(os.path.join(run_dir, SOURCE_FILE), 4096)
    except OSError:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    tree = doc.get("tree") if isinstance(doc, dict) and doc.get("schema") == SCHEMA_SOURCE \
        else None
    return tree if isinstance(tree, str) and len(tree) == 64 else None
