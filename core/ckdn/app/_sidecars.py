"""What a sealed run leaves beside its documents, and the listing of it.

The digest lists the run dir's files (:func:`list_artifacts`). A run of a test
check also records the state of the source tree it ran on (``source.json``,
:mod:`ckdn.identity.source_tree`), so that ``ckdn diff`` can tell a test that changed
outcome on the same code (flaky) from one whose code changed: the ``git
status`` behind it is started beside the tool (:func:`source_watch`) and read
when the run is sealed (:func:`record_source`). A state git cannot give (no
repository, no git) leaves no file; nothing fails for it.
"""

from __future__ import annotations

import os

from ckdn.documents import MAX_ARTIFACTS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Check, Config
    from ckdn.identity.source_tree import SourceWatch
    from ckdn.store import Store

__all__ = ["list_artifacts", "record_source", "source_watch"]

def list_artifacts(run_dir: str) -> tuple[list[str], int]:
    """Names in the run dir a reader may open (dirs with a trailing slash), and how many
    more there are beyond the first :data:`~ckdn.documents.MAX_ARTIFACTS`."""
    try:
        entries = sorted(os.scandir(run_dir), key=lambda e: e.name)
    except OSError:
        return [], 0
    names = [e.name + ("/" if e.is_dir() else "") for e in entries
             if e.name != "digest.json" and not e.name.startswith(".")]
    return names[:MAX_ARTIFACTS], max(0, len(names) - MAX_ARTIFACTS)


def source_watch(config: Config, check: Check) -> SourceWatch | None:
    """A ``git status`` of the check's tree, started now, for a test check only."""
    from ckdn.parsers import TEST_PARSERS

    if check.parser not in TEST_PARSERS:
        return None
    from ckdn.identity.source_tree import SourceWatch

    return SourceWatch(config.cwd)


def record_source(store: Store, run_dir: str, watch: SourceWatch) -> None:
    """Write ``source.json`` with the tree's state, when git could say what it is."""
    from ckdn.errors import CkdnError
    from ckdn.identity.source_tree import SOURCE_FILE, source_document

    tree = watch.result()
    if tree is not None:
        try:
            store.write_atomic(os.path.join(run_dir, SOURCE_FILE), source_document(tree))
        except CkdnError as exc:  # evidence beside the digest: the digest is never lost for it
            del exc
