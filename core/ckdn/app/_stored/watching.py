"""What a host shows while a check runs in another of its threads (which member, how much
log), read from the store, never from the running thread.
"""

from __future__ import annotations

import os

from ckdn._lite import Record, record
from ckdn.app._running.steps import ALL, LOG, store_for
from ckdn.config import Alias
from ckdn.errors import CkdnError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config


@record
class Progress(Record):
    """``member`` (1-based; 0 before the first started) of ``members``, named ``check``
    (None before the first), and its log's size in bytes so far."""

    __slots__ = ("check", "log_bytes", "member", "members")
    member: int
    members: int
    check: str | None
    log_bytes: int

    def __init__(self, member: int, members: int, check: str | None, log_bytes: int) -> None:
        self._assign(member, members, check, log_bytes)


class RunWatch:
    """Watches the runs of ``name`` (a check, an alias, or ``*`` for every check)."""

    def __init__(self, config: Config, name: str) -> None:
        if name == ALL:
            self.members = list(config.checks)
        else:
            target = config.get(name)
            self.members = list(target.members) if isinstance(target, Alias) else [target.name]
        self._store = store_for(config)
        self._before = {member: self._newest(member) for member in self.members}

    def _newest(self, check: str) -> str | None:
        try:
            names = self._store.run_names(check)
        except CkdnError:  # a watch only reports; the run itself says what failed
            return None
        return names[0] if names else None

    def now(self) -> Progress:
        """Where the run is now: the last member with a run newer than the watch."""
        current: tuple[int, str, str] | None = None
        for i, member in enumerate(self.members, 1):
            newest = self._newest(member)
            if newest is not None and newest != self._before[member]:
                current = (i, member, newest)
        if current is None:
            return Progress(0, len(self.members), None, 0)
        i, member, run = current
        try:
            size = os.lstat(os.path.join(self._store.runs_dir, run, LOG)).st_size
        except OSError:
            size = 0
        return Progress(i, len(self.members), member, size)
