"""Where a host's check found its program: a note when it ran from outside the host env's
bin directories (the outer ``ruff`` instead of the env's looks exactly like the env's own).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["host_notes", "outside_note"]


def host_notes(program: str, env: Mapping[str, str], cwd: str,
               host_bins: Sequence[str]) -> tuple[str, ...]:
    """The digest notes of a host's run: :func:`outside_note`, if there is one."""
    note = outside_note(program, env, cwd, host_bins)
    return () if note is None else (note,)


def outside_note(program: str, env: Mapping[str, str], cwd: str,
                 host_bins: Sequence[str]) -> str | None:
    """The note for ``program`` run with ``env`` in ``cwd``, or None when it is the env's own."""
    if not program or os.sep in program or (os.altsep and os.altsep in program):
        return None
    found = _which(program, env, cwd)
    if found is None:
        return None
    here = os.path.realpath(os.path.dirname(found))
    bins = [b for b in host_bins if b]
    if any(here == os.path.realpath(os.path.join(cwd, b)) for b in bins):
        return None
    owned = (f"its bin directory {bins[0]}" if len(bins) == 1
             else f"its bin directories {', '.join(bins)}" if bins else "no bin directory")
    return (f"{program} ran from {found}, found on PATH outside the env ({owned}): the env "
            f"has no {program} of its own")


def _which(program: str, env: Mapping[str, str], cwd: str) -> str | None:
    """The file ``exec`` runs for ``program`` with ``env``'s PATH, as the child sees it."""
    for directory in os.get_exec_path(dict(env)):
        candidate = os.path.join(cwd, directory or os.curdir, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return None
