"""The evidence store: run directories, their locks, ``latest``, listing, pruning."""

from ckdn.store._store import (
    FINISHED_MARKERS,
    RunDir,
    RunInfo,
    Store,
    check_of,
    shown_path,
    write_atomic,
)

__all__ = [
    "FINISHED_MARKERS",
    "RunDir",
    "RunInfo",
    "Store",
    "check_of",
    "shown_path",
    "write_atomic",
]

# :class:`Store` is the room's one entry point: a run takes its check's lock and a
# fresh run dir (:meth:`Store.begin` gives a :class:`RunDir`), documents are
# written atomically and fsynced (:meth:`Store.write_atomic`, or
# :func:`write_atomic` for a file outside the store's own bookkeeping), the run is
# published as ``latest``, and old runs are pruned. Reading goes through it too:
# :meth:`Store.runs` and :meth:`Store.resolve` (a user's run reference, never
# outside the runs dir). This room knows no parser and no document format beyond
# the two file names that mark a finished run.
