"""Real git repositories for the diff-gate corpus: a base commit, a change, the diff git makes.

A tiny "linter" stands in for a check so origins can be computed both sides: every
line holding ``BAD`` is a finding ``B1``; a line ``use NAME`` with no ``def NAME`` in
the tree is a finding ``U1`` (a caller broken by a change elsewhere).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ckdn.identity import SourceLines, fingerprints
from ckdn.identity._baseline import BaselineIndex
from ckdn.identity.change import ChangeSet, read_diff
from ckdn.identity.scope import Placed, place
from ckdn.parsers.base import Finding

#: The flags ckdn pins when it calls git itself (seed 002, the issue).
PINNED = ("--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
          "-M")
_USE = re.compile(r"^\s*use (\w+)")
_DEF = re.compile(r"^\s*def (\w+)", re.M)


def git(root: Path, *args: str, text: bool = False) -> bytes:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "core.quotePath=false", "-c", "init.defaultBranch=main",
                           "-c", "core.autocrlf=false", *args],
                          check=True, capture_output=True).stdout


class Repo:
    """A repository in ``root`` with one base commit (:meth:`base`), changed after it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q")
        self.base_sha = ""

    def write(self, path: str, text: str | bytes) -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(text.encode() if isinstance(text, str) else text)

    def remove(self, path: str) -> None:
        git(self.root, "rm", "-q", path)

    def move(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        git(self.root, "mv", old, new)

    def commit(self, message: str = "change") -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.root, "rev-parse", "HEAD").decode().strip()

    def base(self, files: dict[str, str | bytes]) -> None:
        for path, text in files.items():
            self.write(path, text)
        self.base_sha = self.commit("base")

    def diff(self, *extra: str) -> bytes:
        """The change against the base, work tree included, as ckdn makes it (index too:
        a ``git mv`` is staged)."""
        git(self.root, "add", "-A")
        return git(self.root, "diff", *PINNED, *extra, self.base_sha)

    def tree_at_base(self, into: Path) -> Path:
        git(self.root, "worktree", "add", "-q", "--detach", str(into), self.base_sha)
        return into


def lint(root: Path) -> list[Finding]:
    """The stand-in linter's findings over every text file under ``root``, sorted by path."""
    texts: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            full = Path(folder) / name
            if full.is_symlink():
                continue
            data = full.read_bytes()
            if b"\0" in data:
                continue
            texts[os.path.relpath(full, root)] = data.decode("utf-8", "replace")
    defined = {m for text in texts.values() for m in _DEF.findall(text)}
    found = []
    for path in sorted(texts):
        for number, line in enumerate(texts[path].splitlines(), 1):
            if "BAD" in line:
                found.append(Finding(f"{path}:{number}:B1", "lint", "a bad line",
                                     f"{path}:{number}"))
            use = _USE.match(line)
            if use and use[1] not in defined:
                found.append(Finding(f"{path}:{number}:U1", "lint",
                                     f"name '{use[1]}' is not defined", f"{path}:{number}"))
    return found


def classify(repo: Repo, diff: bytes,
             tmp: Path) -> tuple[ChangeSet, list[tuple[str, int, str, str]]]:
    """Read ``diff`` and place the head's findings against the base's: ``(path, line,
    where, origin)`` of each."""
    changes = read_diff(diff.splitlines(keepends=True))
    base_root = repo.tree_at_base(tmp / "base-tree")
    base = fingerprints(lint(base_root), SourceLines(str(base_root)))
    head_findings = lint(repo.root)
    source = SourceLines(str(repo.root))
    head = fingerprints(head_findings, source)
    placed: Placed = place(changes, head, source, BaselineIndex(i.fingerprint for i in base))
    rows = [(item.path, item.line, where, origin)
            for item, where, origin in zip(head, placed.wheres, placed.origins, strict=True)]
    return changes, rows
