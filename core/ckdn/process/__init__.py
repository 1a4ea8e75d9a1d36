"""One check's process: spawn it, follow its log, stop its tree, and say how it ended."""

from ckdn.process._group import ended_beside, started_beside
from ckdn.process._runner import (
    RC_INTERRUPTED,
    RC_NOT_EXECUTABLE,
    RC_NOT_FOUND,
    RC_TIMEOUT,
    Exit,
    FinishedRun,
    run_process,
    stop_left_running,
)

__all__ = [
    "RC_INTERRUPTED",
    "RC_NOT_EXECUTABLE",
    "RC_NOT_FOUND",
    "RC_TIMEOUT",
    "Exit",
    "FinishedRun",
    "ended_beside",
    "run_process",
    "started_beside",
    "stop_left_running",
]

# :func:`run_process` runs one argv without a shell, its stdout and stderr straight
# into the log file, in a process group (and, where ckdn may make one, a cgroup) of
# its own; whatever the child does, the whole tree is stopped, wherever its
# processes moved, and the log sealed before it returns a :class:`FinishedRun` (the
# :class:`Exit` and the log's hash and size). :func:`stop_left_running` stops what a
# run that died with its ckdn left behind, from the record ``on_spawn`` gave.
# :class:`ckdn.process.stop.StopRequest` (a module of its own: ``ckdn run`` never
# needs it) lets a host that runs checks in worker threads stop one as Ctrl-C would.
# This room knows no parser and no document.
