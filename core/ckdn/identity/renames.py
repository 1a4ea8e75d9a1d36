"""Files git says were renamed: the second matching pass tries a finding's old path."""

from __future__ import annotations

import os
import subprocess

__all__ = ["HISTORY", "git_renames"]

# Asked only when findings are left unmatched after the exact pass, so a run whose
# findings are all known never starts git. Two sources, both cheap: renames in the
# index and the work tree against ``HEAD`` (a ``git mv`` not yet committed), and
# renames in the last :data:`HISTORY` commits (the baseline was recorded before
# them). Paths come back relative to the check's cwd, as locations are. No git, no
# repository, a git that fails or takes too long: no renames, never an error.

#: Commits of history searched for renames.
HISTORY = 200
_TIMEOUT = 10.0


def _git(cwd: str, *args: str) -> str | None:

    try:
        proc = subprocess.run(["git", "-C", cwd, *args], capture_output=True, text=True,
                              timeout=_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_renames(cwd: str) -> dict[str, list[str]]:
    """new path -> old paths (newest rename first), relative to ``cwd``."""
    prefix = _git(cwd, "rev-parse", "--show-prefix")
    if prefix is None:
        return {}
    prefix = prefix.strip()
    found: dict[str, list[str]] = {}
    # the index first: `git mv` stages the rename with the content it had, so a file
    # edited heavily since is still found there
    outputs = (_git(cwd, "diff", "--cached", "-M", "--name-status", "--no-color", "HEAD"),
               _git(cwd, "diff", "-M", "--name-status", "--no-color", "HEAD"),
               _git(cwd, "log", "-M", "--diff-filter=R", "--name-status", "--no-color",
                    "--format=", f"-n{HISTORY}", "HEAD"))
    for text in outputs:
        for line in (text or "").splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].startswith("R"):
                _add(found, _relative(parts[2], prefix), _relative(parts[1], prefix))
    # a file renamed twice (a -> b -> c) is tried under both older names
    for new, olds in list(found.items()):
        for old in list(olds):
            for older in found.get(old, ()):
                if older not in olds and older != new:
                    olds.append(older)
    return found


def _add(found: dict[str, list[str]], new: str | None, old: str | None) -> None:
    if new is not None and old is not None and old not in found.setdefault(new, []):
        found[new].append(old)


def _relative(path: str, prefix: str) -> str | None:
    """A repository path as the cwd sees it (``None`` outside the cwd's subtree)."""
    if not prefix:
        return path
    return path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, prefix)

