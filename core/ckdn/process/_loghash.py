"""SHA-256 and size of ``full.log``, computed while the child writes it, and its seal."""

from __future__ import annotations

import fcntl
import os
import signal
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Protocol

    class _Hash(Protocol):
        def update(self, data: memoryview, /) -> None: ...

        def hexdigest(self) -> str: ...

# Sealing a 2 GB log then costs only its tail, in constant memory. A small log is
# hashed once at the end with the builtin SHA-256: loading OpenSSL costs more than
# hashing it (bench/bench_runner.py). The hash is only true if nothing writes into the
# log afterwards: :meth:`LogHash.open_for_writing` asks the kernel, in one ``fcntl``,
# whether anything still has it open for writing (``_leftovers`` deals with what does).

_CHUNK = 1 << 20  # read size while following the log
_SMALL_CHUNK = 64 << 10  # read size for a log hashed once at the end
_STREAM_FROM = 256 << 10  # a log smaller than this is hashed once, at the end
_MIN_READ = 64 << 10  # while the child runs, wait for this much before reading


def _sha256(*, small: bool) -> _Hash:
    """OpenSSL's SHA-256 is ~10x faster, but loading it costs more than hashing a small log."""
    if small:
        # CPython's builtin module; asking for the other name first costs a failed import.
        names = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
        for name in names:
            try:
                hasher: _Hash = __import__(name).sha256()
                return hasher
            except ImportError:
                continue
    import hashlib  # here: loading OpenSSL is the cost avoided above

    return hashlib.sha256()


class LogHash:
    """SHA-256 and size of the log, computed while the child writes it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self._buffer: memoryview | None = None  # made on the first read, sized for the log
        self._hash: _Hash | None = None
        self._offset = 0

    def size(self) -> int:
        return os.fstat(self._file.fileno()).st_size

    def follow(self) -> bool:
        """Hash one chunk if enough is waiting; true when it did, so the caller comes back soon."""
        size = self.size()
        if size < self._offset:
            self._restart()
        if self._hash is None:
            if size < _STREAM_FROM:
                return False
            self._hash = _sha256(small=False)
        return size - self._offset >= _MIN_READ and self._read() > 0

    def seal(self) -> tuple[str, int]:
        """Hash the rest; the log is complete now. Returns (sha256 hex, byte count)."""
        size = self.size()
        if size < self._offset:
            self._restart()
        if self._hash is None:
            self._hash = _sha256(small=size < _STREAM_FROM)
        while self._read():
            pass
        return self._hash.hexdigest(), self._offset

    def close(self) -> None:
        self._file.close()

    def fileno(self) -> int:
        return self._file.fileno()

    def open_for_writing(self) -> bool | None:
        """Whether any process has the log open for writing; None where the kernel cannot say.

        The kernel refuses a read lease while anyone has the file open for writing, and
        ckdn's own descriptor is read-only. The lease is dropped at once; a writer opening
        the file meanwhile would break it with SIGURG, ignored unless handled (the default,
        SIGIO, would kill ckdn). Leases need a local file system that the caller owns.
        """
        fd = self._file.fileno()
        try:
            fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except BlockingIOError:
            return True
        except (OSError, AttributeError):  # no leases here (NFS, a log someone else owns, macOS)
            return None
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return False

    def seal_copy(self) -> None:
        """Put a copy of the log in its place and hash that: a writer ckdn could not stop
        writes on into the original, which has no name any more."""
        folder, name = os.path.split(self._path)
        temporary = os.path.join(folder, f".{name}.sealing-{os.getpid()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW
        out = os.open(temporary, flags, 0o666)
        try:
            source, offset, end = self._file.fileno(), 0, self.size()
            while offset < end and (chunk := os.pread(source, min(_CHUNK, end - offset), offset)):
                offset += len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
        except BaseException:
            os.close(out)
            os.unlink(temporary)
            raise
        os.close(out)
        os.rename(temporary, self._path)
        self._file.close()
        self._file = open(self._path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self._hash, self._offset = None, 0

    def _read(self) -> int:
        assert self._hash is not None
        if self._buffer is None:
            # Zeroing a 1 MiB buffer costs a trivial run about as much as hashing its log.
            small = self.size() < _STREAM_FROM
            self._buffer = memoryview(bytearray(_SMALL_CHUNK if small else _CHUNK))
        count = self._file.readinto(self._buffer) or 0
        if count:
            self._hash.update(self._buffer[:count])
            self._offset += count
        return count

    def _restart(self) -> None:
        """The child truncated its log (``echo x >/dev/stderr`` reopens it): start over."""
        self._file.seek(0)
        self._offset = 0
        if self._hash is not None:
            self._hash = _sha256(small=False)
