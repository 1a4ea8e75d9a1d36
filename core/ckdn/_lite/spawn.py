"""Starting a check's command: ``posix_spawn`` where it can do the whole job, else ``Popen``."""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable, Mapping, Sequence
    from typing import Protocol

    class Process(Protocol):
        """What the runner needs of a started child (``Popen`` has it too)."""

        pid: int
        returncode: int | None

        def wait(self) -> int: ...
else:  # the C module that `signal` wraps in enums: no enum, functools, collections
    import _signal as signal


__all__ = ["Spawned", "start"]

# The stand-in for :class:`subprocess.Popen` (differential tests:
# tests/core/lite/test_spawn.py, and every runner test runs through both paths by the
# ``spawn_path`` fixture); the fallback is ``Popen`` itself.
#
# Why not always :class:`subprocess.Popen`: importing :mod:`subprocess` pulls in
# threading, selectors and locale, about a sixth of what a trivial ``ckdn run``
# costs (bench/bench_startup.py). :func:`os.posix_spawn` is in the interpreter
# already, and with ``setsid`` and file actions it starts the child exactly as
# the runner asks ``Popen`` to:
#
# * its own session (``start_new_session=True``);
# * stdin from ``/dev/null``, stdout and stderr into the log;
# * no other descriptor inherited (``close_fds=True``): every inheritable one
#   listed in ``/proc/self/fd`` gets a close action;
# * SIGPIPE and SIGXFSZ back to their defaults, which Python ignores and exec
#   would keep ignored (``restore_signals=True``);
# * the program looked up on the ``PATH`` of the *child's* environment, trying
#   each directory in turn and reporting a permission error in preference to
#   "not found", as ``Popen`` does.
#
# One difference is glibc's and cannot be undone from here: its ``posix_spawn``
# leaves the two signals it reserves for itself (32 and 33, below ``SIGRTMIN``)
# ignored in the child, as it does for every program that spawns through it (Rust's
# ``Command``, Python's own ``subprocess`` in its ``posix_spawn`` mode). Programs
# built on glibc cannot use those signals anyway.
#
# ``posix_spawn`` cannot change directory (``posix_spawn_file_actions_addchdir``
# is not exposed before Python 3.13), so a child that runs elsewhere than ckdn's
# own directory, and any platform without ``/proc/self/fd``, goes through
# ``Popen``. Both paths raise the same :class:`OSError` subclasses with the same
# ``filename`` when nothing could be started.
#
# On Linux the child dies with ckdn (``PR_SET_PDEATHSIG``, SIGKILL) on every path:
# ``Popen`` runs ``prctl`` in the child between fork and exec while ckdn has one
# thread (Python code between fork and exec is unsafe with more); ``posix_spawn``
# runs no code of ours in the child, so there (and on ``Popen`` with threads) the
# child is started through util-linux's ``setpriv --pdeathsig KILL``, an exec
# trampoline that sets the signal and execs the program, found once per process
# (:func:`trampoline`; bench/bench_runner.py measures what it adds). The program is
# looked up first, as without it, so a missing or refused program still raises
# the same error. The signal reaches the child only; what it starts in a session
# of its own is stopped by the check's next run or ``ckdn gc``
# (``ckdn.process.stop_left_running``).

_Action = tuple[int | str, ...]  # one posix_spawn file action
_PR_SET_PDEATHSIG = 1

#: Where util-linux's ``setpriv`` may be; None: look (:func:`trampoline`), "": none.
_TRAMPOLINE_PLACES = ("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv")
_trampoline: str | None = None
#: Replaced by tests to exercise the ``Popen`` path in the current directory.
_use_posix_spawn = hasattr(os, "posix_spawn") and os.path.isdir("/proc/self/fd")
#: Python ignores these; a child would keep them ignored across exec.
_RESET_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))


class Spawned:
    """A child started by ``posix_spawn``: the part of ``Popen``'s interface the runner uses."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        """Reap the child; like ``Popen``, a signal death is ``-signum``."""
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                status = 0  # reaped elsewhere (a SIGCHLD handler of the host): as Popen does
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def start(args: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str],
          log_fd: int) -> Process:
    """Start ``args`` in ``cwd`` with ``log_fd`` as stdout and stderr, in a session of its own.

    Raises :class:`OSError` when the command could not be started.
    """
    if _use_posix_spawn and _is_current_dir(cwd):
        actions = _file_actions(log_fd)
        if actions is not None:
            try:
                return Spawned(_posix_spawn(args, env, actions))
            except OSError as error:
                if error.errno != errno.EBADF:  # a host thread closed a listed fd: Popen below
                    raise
    import subprocess  # here, the fallback: what the stand-in does not handle (docstring)

    dying = _dying_with_us()
    wrapper = trampoline() if dying is None else ""
    if wrapper:
        program = _found(args[0], env, os.fspath(cwd))
        if program is not None:
            args = [wrapper, *_PDEATHSIG, program, *args[1:]]
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=log_fd,
        stderr=log_fd,
        start_new_session=True,
        preexec_fn=dying,  # noqa: PLW1509 - only while ckdn has one thread
    )


#: What ``setpriv`` is told before the program: SIGKILL the program when ckdn dies.
_PDEATHSIG = ("--pdeathsig", "KILL", "--")


def trampoline() -> str:
    """util-linux's ``setpriv`` if this system has one (Linux), else "": looked up once."""
    global _trampoline  # noqa: PLW0603 - one answer per process
    if _trampoline is None:
        _trampoline = next((place for place in _TRAMPOLINE_PLACES
                            if os.access(place, os.X_OK)), "")
    return _trampoline


def _found(program: str, env: Mapping[str, str], cwd: str) -> str | None:
    """What to give the trampoline for ``program``: as named when it has a directory part
    (relative to ``cwd``, where the child starts), else the file exec would find on the
    child's ``PATH``; only a regular file we may execute (else None: started directly,
    so the error is exec's own)."""
    if os.path.dirname(program):
        return program if _executable_file(os.path.join(cwd, program)) else None
    for folder in _exec_path(env):
        path = os.path.join(folder, program)
        if os.path.exists(path):
            return path if _executable_file(path) else None  # else exec says why
    return None


def _dying_with_us() -> Callable[[], None] | None:
    """What the ``Popen`` child runs before exec on Linux: SIGKILL it when ckdn dies."""
    try:
        if os.listdir("/proc/self/task") != [str(os.getpid())]:
            return None  # another thread may hold a lock the child would then wait for
        import ctypes  # here: the Popen fallback only, which imports subprocess anyway

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, ImportError, AttributeError):  # not Linux
        return None
    prctl.argtypes = (ctypes.c_int, *[ctypes.c_ulong] * 4)
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # ckdn died before the line above: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return die_with_parent


def _is_current_dir(cwd: str | os.PathLike[str]) -> bool:
    where = os.fspath(cwd)
    try:
        if where == os.getcwd():
            return True
        here, there = os.stat("."), os.stat(where)
    except OSError:
        return False  # Popen reports what is wrong with it
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _file_actions(log_fd: int) -> list[_Action] | None:
    """Close every other inheritable descriptor, then wire stdin, stdout and stderr."""
    try:
        listed = os.listdir("/proc/self/fd")
    except OSError:
        return None
    actions: list[_Action] = []
    for name in listed:
        fd = int(name)
        if fd <= 2:
            continue
        try:
            inheritable = os.get_inheritable(fd)
        except OSError:
            continue  # the descriptor listdir itself used, closed by now
        if inheritable:
            actions.append((os.POSIX_SPAWN_CLOSE, fd))
    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    actions.append((os.POSIX_SPAWN_DUP2, log_fd, 1))
    actions.append((os.POSIX_SPAWN_DUP2, log_fd, 2))
    return actions


def _exec_path(env: Mapping[str, str]) -> list[str]:
    """``os.get_exec_path(env)`` for a str environment, without the :mod:`warnings`
    import it makes on every call (about a tenth of a millisecond of every run)."""
    path = env.get("PATH")
    return (os.defpath if path is None else path).split(os.pathsep)


def _posix_spawn(args: Sequence[str], env: Mapping[str, str],
                 actions: list[_Action]) -> int:
    """Spawn, searching the child's ``PATH`` the way ``Popen`` does; the pid."""
    program = args[0]
    if os.path.dirname(program):
        candidates = [program]
    else:
        candidates = [os.path.join(folder, program) for folder in _exec_path(env)]
    first_refusal: OSError | None = None
    last: OSError = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    for path in candidates:
        try:
            os.stat(path)  # a cheap look first: most PATH entries do not have it
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
            continue
        except OSError:
            pass  # let exec say what is wrong
        wrapper = trampoline()
        try:
            if wrapper and _executable_file(path):  # dies with ckdn (the notes at the top)
                return os.posix_spawn(wrapper, [wrapper, *_PDEATHSIG, path, *args[1:]], env,
                                      file_actions=actions, setsid=True,
                                      setsigdef=_RESET_SIGNALS)
            return os.posix_spawn(path, list(args), env, file_actions=actions, setsid=True,
                                  setsigdef=_RESET_SIGNALS)
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
        except OSError as error:
            if error.errno == errno.EBADF:
                raise
            last = error
            first_refusal = first_refusal or error
    failure = first_refusal or last
    raise type(failure)(failure.errno, failure.strerror, program)


def _executable_file(path: str) -> bool:
    """A regular file we may execute that the kernel can (an ELF binary, or a ``#!`` script
    whose interpreter is there): the trampoline would exec it; anything else is started
    directly, so a failure is exec's own error (rc 126/127, never started)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return False
        head = os.read(fd, 256)
    except OSError:
        return False
    finally:
        os.close(fd)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].split()
        if not words or not os.access(os.fsdecode(words[0]), os.X_OK):
            return False
    elif not head.startswith(b"\x7fELF"):
        return False
    return os.access(path, os.X_OK)
