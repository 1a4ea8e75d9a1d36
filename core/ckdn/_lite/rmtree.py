"""Removing a pruned run directory without ever following a symlink out of it."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["rmtree"]

# The stand-in for :func:`shutil.rmtree` (differential tests:
# tests/core/lite/test_rmtree.py); the fallback is ``shutil.rmtree`` itself where
# descriptor-relative removal is not supported.
#
# Pruning deletes evidence, so it must delete only what is inside the run
# directory: the tree is walked by directory descriptor with ``O_NOFOLLOW``, and a
# symlink is unlinked, never entered. Every run that reaches ``keep`` prunes one
# run dir, and ``shutil`` loads zlib, bz2 and lzma: so the walk is written here.


#: Opens a directory and never a symlink to one; what the tree removal walks with.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Removal by directory descriptor, as shutil.rmtree does where it can (Linux, macOS).
_FD_REMOVAL = ({os.open, os.unlink, os.rmdir} <= os.supports_dir_fd
               and os.scandir in os.supports_fd)


def rmtree(path: str) -> None:
    """Remove a tree that a concurrent prune may be removing too.

    Every run prunes one, so this walks the tree itself rather than import
    :mod:`shutil` (which loads zlib, bz2 and lzma): by directory descriptor,
    never following a symlink out of the tree, like ``shutil.rmtree``. An entry
    that is already gone is not an error; any other failure raises ``OSError``.
    """
    if not _FD_REMOVAL:
        _rmtree_shutil(path)
        return
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        _clear_dir(fd)
    finally:
        os.close(fd)
    try:  # noqa: SIM105 - `ckdn run` does not import contextlib
        os.rmdir(path)
    except FileNotFoundError:
        pass


def _clear_dir(dir_fd: int) -> None:
    with os.scandir(dir_fd) as listing:
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
    for name, is_dir in entries:
        if not is_dir:
            try:  # noqa: SIM105 - `ckdn run` does not import contextlib
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            continue
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            continue
        try:
            _clear_dir(fd)
        finally:
            os.close(fd)
        try:  # noqa: SIM105 - `ckdn run` does not import contextlib
            os.rmdir(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass


def _rmtree_shutil(path: str) -> None:
    import shutil  # here, the fallback: only without descriptor-relative removal

    if sys.version_info >= (3, 12):

        def onexc(func: Callable[..., object], name: str, exc: BaseException) -> None:
            if not isinstance(exc, FileNotFoundError):
                raise exc

        shutil.rmtree(path, onexc=onexc)
    else:

        def onerror(func: Callable[..., object], name: str, info: tuple[object, ...]) -> None:
            exc = info[1]
            if not isinstance(exc, FileNotFoundError):
                assert isinstance(exc, BaseException)
                raise exc

        shutil.rmtree(path, onerror=onerror)
