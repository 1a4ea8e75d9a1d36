"""Making a file or a run appear whole: the runs dir, the one atomic writer, and ``latest``."""

from __future__ import annotations

import os

from ckdn.evidence_files import read_regular
from ckdn.store._names import parse_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable

# A reader (an agent polling ``latest``, ``ckdn show`` in another terminal, the
# next run's prune) must see either the old state or the new one, never half a
# document: every document is written to a dot-entry in its own directory,
# fsynced, then renamed into place, and ``latest`` is a symlink renamed over the
# old one (or, where symlinks are unavailable, a ``LATEST`` file written the same
# way). A runs dir ckdn creates gets a ``.gitignore`` of ``*`` at once, as
# pytest's, mypy's and ruff's caches do: evidence is never committed by accident.

LATEST_LINK = "latest"
LATEST_FILE = "LATEST"
#: LATEST holds one short line; never read more than this.
_SMALL_READ = 4096
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = b"# Created by ckdn automatically.\n*\n"


def make_runs_dir(runs_dir: str, mode: int = 0o777) -> None:
    """Make ``runs_dir`` (and its parents, with the default mode) unless it is there, with
    ``mode`` (less the umask); the one ckdn makes gets its ``.gitignore``. Raises
    ``OSError`` (``FileExistsError`` for a file in the way)."""
    try:
        os.mkdir(runs_dir, mode)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(runs_dir), exist_ok=True)
        make_runs_dir(runs_dir, mode)
        return
    except FileExistsError:
        if os.path.isdir(runs_dir):
            return
        raise
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(os.path.join(runs_dir, GITIGNORE), flags, 0o644)
    except FileExistsError:  # written already by whoever raced us to it
        return
    with open(fd, "wb") as handle:
        handle.write(GITIGNORE_TEXT)


def write_atomic(path: str, data: bytes | Iterable[bytes], *, durable: bool = True,
                 mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one.

    ``data`` may be chunks (a file of a million findings is written as it is
    encoded, never held whole).

    The temp file is a dot-entry in the same directory (``os.replace`` must not
    cross file systems), so it is never read as evidence and never left behind
    on failure. ``durable`` fsyncs it first: after a power cut a new file renamed
    without fsync can survive empty on ext4 and XFS. ``mode`` (less the umask) is the
    new file's (0600 for a private run's documents). Raises ``OSError``.
    """
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with open(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                for chunk in data:
                    handle.write(chunk)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink_missing_ok(tmp)
        raise


def publish(runs_dir: str, run_dir: str, *, durable: bool = True) -> None:
    """Point ``latest`` at ``run_dir`` atomically, or write ``LATEST`` where symlinks fail.

    A ``LATEST`` left from a time symlinks failed is removed once one works; a
    ``latest`` left from a time they worked is removed when falling back, so the
    two never disagree about the newest run. Raises ``OSError``, and
    ``ValueError`` for a path that is not a run dir of ``runs_dir``.
    """
    parent, name = os.path.split(run_dir)
    if parent != runs_dir or parse_name(name) is None:
        raise ValueError(f"{run_dir} is not a run dir of {runs_dir}")
    link = os.path.join(runs_dir, LATEST_LINK)
    marker = os.path.join(runs_dir, LATEST_FILE)
    tmp = os.path.join(runs_dir, f".{LATEST_LINK}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    if _swap_symlink(name, tmp, link):
        _unlink_missing_ok(marker)
    else:
        write_atomic(marker, name.encode("utf-8", "surrogateescape") + b"\n", durable=durable)
        if os.path.islink(link):
            os.unlink(link)


def published(runs_dir: str) -> list[str]:
    """Names ``latest`` and ``LATEST`` point at, in that order of precedence."""
    names: list[str] = []
    try:  # noqa: SIM105 - `ckdn run` does not import contextlib
        names.append(os.readlink(os.path.join(runs_dir, LATEST_LINK)))
    except OSError:
        pass  # absent, or not a symlink: not published that way
    try:
        # Never through a symlink, never blocking on a FIFO planted under that name.
        data = read_regular(os.path.join(runs_dir, LATEST_FILE), _SMALL_READ)
    except OSError:  # absent, unreadable, a symlink: the symlink or a listing decides
        return names
    names.extend(data.decode("utf-8", "surrogateescape").splitlines()[:1])
    return names


def _swap_symlink(name: str, tmp: str, link: str) -> bool:
    """True when ``link`` now points at ``name``; False when symlinks are unavailable."""
    try:
        os.symlink(name, tmp)
    except (OSError, NotImplementedError):
        return False
    try:
        os.replace(tmp, link)
    except OSError:
        # e.g. a real directory named `latest` is in the way: fall back, leave it.
        os.unlink(tmp)
        return False
    return True


def _unlink_missing_ok(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
