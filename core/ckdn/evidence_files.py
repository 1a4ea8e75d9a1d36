"""Opening a file ckdn reads as evidence: a regular file, never through a symlink."""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = ["NotRegular", "open_log", "open_regular", "read_regular"]

# Everything in a run dir, a runs dir or a shard copied from CI may be planted:
# ``full.log`` as a symlink to a secret, ``digest.json`` as a FIFO that blocks
# the reader forever. So every reader opens its file the one way here: without
# following a symlink (``O_NOFOLLOW``), without blocking on a FIFO
# (``O_NONBLOCK``), not inherited by a child (``O_CLOEXEC``), and keeps it only
# when it is a regular file. What is refused is an :class:`NotRegular` (an
# ``OSError``, so a caller that treats any unreadable file alike needs nothing
# more) whose text says why in words a reader understands; each caller turns it
# into its own refusal (a note, a one-line error, an empty answer). The project's
# own files (``ckdn.toml``, the baseline, ``ckdn.lock.toml``) are read the same way,
# a symlink followed (``follow``): every file ckdn reads comes through here.

_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_CLOEXEC", 0))


_FOLLOWING = _FLAGS & ~getattr(os, "O_NOFOLLOW", 0)


class NotRegular(OSError):
    """The file is a symlink, or not a regular file: refused, not read."""


def open_regular(path: str | os.PathLike[str], *, dir_fd: int | None = None,
                 follow: bool = False) -> int:
    """A descriptor of the regular file at ``path`` (relative to ``dir_fd`` if given).

    ``FileNotFoundError`` for a missing file, :class:`NotRegular` for a symlink or
    anything but a regular file, ``OSError`` for any other failure to open it.
    ``follow``: a symlink is followed (the project's own files: the config, the
    baseline, the lock file), what it names must still be a regular file.
    """
    try:
        fd = os.open(path, _FOLLOWING if follow else _FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and _is_link(path, dir_fd):
            raise NotRegular(exc.errno, "it is a symlink, and ckdn reads nothing through "
                                        "one") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(path: str | os.PathLike[str], dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def open_log(path: str | os.PathLike[str]) -> BinaryIO:
    """A run's ``full.log`` opened for binary reading (:func:`open_regular`).

    A check can replace its own log (a link to ``/etc/passwd``, a FIFO that would
    block the read forever); neither is followed or read: ``OSError`` whose
    ``strerror`` says which it was (``FileNotFoundError`` for a missing log).
    """
    try:
        fd = open_regular(path)
    except NotRegular as exc:
        symlink = exc.errno in (errno.ELOOP, errno.EMLINK)
        raise OSError(exc.errno, "full.log is a symlink, not followed" if symlink
                      else "full.log is not a regular file, not read") from None
    return open(fd, "rb")


def read_regular(path: str | os.PathLike[str], limit: int, *,
                 dir_fd: int | None = None, follow: bool = False) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path`` (:func:`open_regular`);
    one more byte than that is read, so a caller can tell a longer file (``len > limit``)."""
    fd = open_regular(path, dir_fd=dir_fd, follow=follow)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)
