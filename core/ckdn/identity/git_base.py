"""The change against a git base, made by ckdn itself: the merge base resolved strictly, the
diff made with pinned flags, and the base tree checked out in a temporary worktree.

Every way a base can be wrong is a :class:`BaseError` naming the fix: never a two-dot
fallback, never an empty diff standing in for a base that could not be found.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading

from ckdn.errors import CkdnError
from ckdn.identity.change import ChangeSet, DiffError, read_hashed_diff

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DIFF_FLAGS", "BaseError", "BaseTree", "GitChange", "PendingChange", "change_against",
           "show_prefix", "start_change"]

#: What ``git diff`` is told, whatever the user's git config says (seed 002): no colour, no
#: external driver or textconv (text that is on no disk), the a/ b/ prefixes the reader
#: strips (``diff.mnemonicPrefix`` writes others), rename detection on (``diff.renames``
#: may be off), paths as they are (``core.quotePath``).
DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
              "--dst-prefix=b/", "-M")
_CONFIG = ("-c", "core.quotePath=false", "-c", "diff.relative=false")
_TIMEOUT = 60.0
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_PAGER": "cat"}


class BaseError(CkdnError):
    """The base of the change cannot be trusted; the message is one line naming the fix."""


class GitChange:
    """The change from the merge base of a ref and ``HEAD`` to the work tree: the commits,
    the diff's SHA-256 and size in bytes, its change set (untracked files counted as added)."""

    __slots__ = ("base", "changes", "head", "prefix", "ref", "sha256", "size")

    def __init__(self, ref: str, base: str, head: str, *, prefix: str, changes: ChangeSet,
                 sha256: str, size: int = 0) -> None:
        self.ref = ref
        self.base = base
        self.head = head
        self.prefix = prefix
        self.changes = changes
        self.sha256 = sha256
        self.size = size


def _environ() -> dict[str, str]:
    env = {**os.environ, **_ENV}
    env.pop("GIT_EXTERNAL_DIFF", None)
    return env


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", cwd, *_CONFIG, *args], capture_output=True,
                              timeout=_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
                              env=_environ())
    except FileNotFoundError:
        raise BaseError("--diff-base needs git, which is not on PATH; install it or pass "
                        "--diff FILE") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise BaseError(f"git {args[0]} failed ({exc}); pass --diff FILE instead") from None


def _line(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "replace").strip()


def change_against(cwd: str, ref: str, *, ignore: Sequence[str] = ()) -> GitChange:
    """The change of the work tree at ``cwd`` against ``git merge-base REF HEAD``, with the
    diff's paths relative to ``cwd``; :class:`BaseError` if the base cannot be trusted.
    Untracked files under ``ignore`` (absolute: ckdn's runs dir) are not part of it."""
    return start_change(cwd, ref, ignore=ignore).result()


class PendingChange:
    """A change whose base is resolved (``base``, ``head``, ``prefix``) and whose diff is
    read in a thread once :meth:`start`-ed (after the check ran: the diff is of the tree
    it left): a base run waits on git and the tool meanwhile, so reading the diff costs
    it nothing. :meth:`result` joins it (raising what the read raised)."""

    __slots__ = ("_done", "_thread", "base", "head", "prefix", "ref")

    def __init__(self, cwd: str, ref: str, *, base: str, head: str, prefix: str,
                 ignore: Sequence[str]) -> None:
        self.ref, self.base, self.head, self.prefix = ref, base, head, prefix
        self._done: tuple[ChangeSet, str, int] | BaseException | None = None
        self._thread = threading.Thread(target=self._read, args=(cwd, ignore), daemon=True,
                                        name="ckdn-diff")

    def start(self) -> None:
        """Begin reading the diff (once)."""
        if self._thread.ident is None:
            self._thread.start()

    def _read(self, cwd: str, ignore: Sequence[str]) -> None:
        try:
            self._done = _changes(cwd, self.base, ignore)
        except BaseException as exc:  # handed to the caller of result(), which raises it
            self._done = exc

    def result(self) -> GitChange:
        self.start()
        self._thread.join()
        done = self._done
        if isinstance(done, BaseException):
            raise done
        assert done is not None
        changes, sha256, size = done
        return GitChange(self.ref, self.base, self.head, prefix=self.prefix, changes=changes,
                         sha256=sha256, size=size)


def start_change(cwd: str, ref: str, *, ignore: Sequence[str] = ()) -> PendingChange:
    """:func:`change_against` with the base resolved now (:class:`BaseError` raised here)
    and the diff read in the background from :meth:`PendingChange.start` on."""
    if not ref or ref.startswith("-") or "\0" in ref:
        raise BaseError(f"--diff-base {ref!r} is not a ref; name a branch, tag or commit")
    base, head, prefix = _resolve(cwd, ref)
    return PendingChange(cwd, ref, base=base, head=head, prefix=prefix, ignore=ignore)


def _changes(cwd: str, base: str, ignore: Sequence[str]) -> tuple[ChangeSet, str, int]:
    """The diff against ``base`` read, the untracked files (listed meanwhile) added."""
    untracked = _start(cwd, "ls-files", "--others", "--exclude-standard", "-z")
    try:
        changes, sha256, size = _diff(cwd, base)
        out, error = untracked.communicate(timeout=_TIMEOUT)
    except BaseException:
        untracked.kill()
        untracked.wait()
        raise
    if untracked.returncode != 0:
        raise BaseError(f"git ls-files failed: {error.decode(errors='replace')[:200]}".strip())
    skipped = tuple(os.path.relpath(path, cwd) + os.sep for path in ignore)
    changes.add_untracked(os.path.normpath(p) for p in
                          out.decode("utf-8", "surrogateescape").split("\0")
                          if p and not p.startswith(skipped))
    return changes, sha256, size


def _resolve(cwd: str, ref: str) -> tuple[str, str, str]:
    """The merge base, ``HEAD`` and the directory ``cwd`` is in its repository, asked in one
    ``git rev-parse`` (``REF...HEAD`` prints both commits, then ``^`` and their merge
    bases); on any doubt the questions are asked one by one, for the message."""
    proc = _git(cwd, "rev-parse", "--is-inside-work-tree", "--is-shallow-repository",
                "--show-prefix", f"{ref}^{{commit}}...HEAD^{{commit}}")
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    revs = lines[3:-1]
    if (proc.returncode != 0 or lines[:2] != ["true", "false"] or lines[-1] or len(revs) < 2
            or not all(_HEX.fullmatch(rev) for rev in revs[:2])
            or not all(_HEX.fullmatch(rev[1:]) and rev[:1] == "^" for rev in revs[2:])):
        _diagnose(cwd, ref)
        raise BaseError(f"--diff-base {ref}: git rev-parse said what ckdn cannot read: "
                        f"{proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    prefix, head, found = lines[2], revs[0], revs[1]
    bases = [rev[1:] for rev in revs[2:]]
    if not bases:
        raise BaseError(f"--diff-base {ref}: no merge base with HEAD (unrelated histories); "
                        "name a ref that shares history with HEAD")
    if len(bases) > 1:  # a criss-cross merge: the one base `git merge-base` picks
        merged = _git(cwd, "merge-base", found, head)
        if merged.returncode != 0 or not _line(merged):
            raise BaseError(f"--diff-base {ref}: no merge base with HEAD; name another ref")
        bases = [_line(merged)]
    return bases[0], head, prefix


def _diagnose(cwd: str, ref: str) -> None:
    """The first reason the base cannot be found, asked one question at a time (only when
    the one ``rev-parse`` failed): raises it as a :class:`BaseError`."""
    inside = _git(cwd, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or _line(inside) != "true":
        raise BaseError(f"--diff-base needs a git work tree, and {cwd} is not in one; pass "
                        "--diff FILE instead")
    if _line(_git(cwd, "rev-parse", "--is-shallow-repository")) == "true":
        raise BaseError("the clone is shallow, so the merge base may be missing or wrong; "
                        "fetch the history (`git fetch --unshallow`; in CI `fetch-depth: 0`)")
    found = _git(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if found.returncode != 0:
        raise BaseError(f"--diff-base {ref}: no such commit here; fetch it (`git fetch "
                        f"origin {ref}`) or name another ref")
    head = _git(cwd, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head.returncode != 0:
        raise BaseError("HEAD has no commit yet, so there is no merge base; commit first")


def show_prefix(cwd: str) -> str:
    """The directory ``cwd`` is in its repository (``git rev-parse --show-prefix``)."""
    return _line(_git(cwd, "rev-parse", "--show-prefix"))


def _start(cwd: str, *args: str) -> subprocess.Popen[bytes]:
    """``git ARGS`` started, its output piped, to be read while another git runs."""
    try:
        return subprocess.Popen(["git", "-C", cwd, *_CONFIG, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                env=_environ())
    except OSError as exc:
        raise BaseError(f"git {args[0]} could not start ({exc}); pass --diff FILE instead"
                        ) from None


def _diff(cwd: str, base: str) -> tuple[ChangeSet, str, int]:
    """The change set, SHA-256 and size in bytes of ``git diff BASE`` (work tree against
    the base), read as git writes it."""
    argv = ["git", "-C", cwd, *_CONFIG, "diff", *DIFF_FLAGS, "--relative", base, "--"]
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=_environ())
    except OSError as exc:
        raise BaseError(f"git diff could not start ({exc}); pass --diff FILE instead") from None
    with proc:
        assert proc.stdout is not None
        try:
            changes, sha256, size = read_hashed_diff(proc.stdout)
        except DiffError as exc:
            proc.kill()
            raise BaseError(f"git diff wrote a diff ckdn cannot read ({exc})") from None
        rest = proc.stdout.read()
        error = proc.stderr.read() if proc.stderr is not None else b""
        code = proc.wait()
    if code != 0 or rest:
        raise BaseError(f"git diff {base[:12]} failed (exit {code}): "
                        f"{error.decode('utf-8', 'replace').strip()[:200]}")
    return changes, sha256, size


class BaseTree:
    """The base commit checked out in a temporary worktree (``git worktree add
    --detach``), removed on :meth:`close`; ``cwd`` is the check's directory in it. With
    ``wait=False`` git is started and :meth:`ready` waits for it (a tree added while the
    check runs on the head)."""

    __slots__ = ("_adding", "base", "cwd", "path", "repo_cwd")

    def __init__(self, cwd: str, base: str, prefix: str, *, wait: bool = True) -> None:
        self.repo_cwd = cwd
        self.base = base
        self.path = tempfile.mkdtemp(prefix="ckdn-base-")
        self.cwd = os.path.join(self.path, prefix) if prefix else self.path
        try:
            self._adding: subprocess.Popen[bytes] | None = _start(
                cwd, "worktree", "add", "--detach", "--quiet", self.path, base)
        except BaseError:
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        if wait:
            self.ready()

    def ready(self) -> None:
        """Wait for the tree to be checked out; :class:`BaseError` if git could not."""
        adding, self._adding = self._adding, None
        if adding is None:
            return
        try:
            _, error = adding.communicate(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            adding.kill()
            adding.wait()
            error = b"timed out"
        if adding.returncode != 0:
            shutil.rmtree(self.path, ignore_errors=True)
            raise BaseError(f"git worktree add of the base {self.base[:12]} failed: "
                            f"{error.decode('utf-8', 'replace').strip()[:200]}")

    def close(self) -> None:
        adding, self._adding = self._adding, None
        if adding is not None:  # never waited for: let it finish, then take it away
            try:
                adding.communicate(timeout=_TIMEOUT)
            except subprocess.TimeoutExpired:
                adding.kill()
                adding.wait()
        removed = _git(self.repo_cwd, "worktree", "remove", "--force", self.path)
        shutil.rmtree(self.path, ignore_errors=True)
        if removed.returncode != 0:  # git's record of it is pruned once the tree is gone
            _git(self.repo_cwd, "worktree", "prune")

    def __enter__(self) -> BaseTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
