"""The documents a run leaves, built to their contracts: digest, aggregate, meta.

* the digest (``ckdn.digest/2``): sparse, deterministic, bounded in bytes, every
  cut counted (:func:`build_digest`, shrunk to its budget by ``_fitting``, its log
  tail read backwards by ``_logtail``);
* the aggregate (``ckdn.aggregate/1``): an alias run's routing document;
* the meta (``ckdn.meta/1``): the provenance the digest leaves out on purpose;
* their canonical bytes (:func:`encode`) and human form (:func:`render`), and the
  one reader of a stored document (:func:`read_stored`, one error policy).

:mod:`ckdn.documents.textcap` is the text policy and the one family of truncation
helpers, shared with the parsers; :mod:`ckdn.documents.types` has the documents'
shapes for type checkers.
"""

from ckdn._lite.canonical import canonical as encode
from ckdn.documents._aggregate import SCHEMA_AGGREGATE, Member, aggregate_status, build_aggregate
from ckdn.documents._digest import (
    DIGEST_BUDGET,
    MAX_ARTIFACTS,
    MAX_DIGEST_BYTES,
    SCHEMA_DIGEST,
    Bounds,
    build_digest,
)
from ckdn.documents._logtail import read_log_tail
from ckdn.documents._meta import SCHEMA_META, build_meta
from ckdn.documents._render import render
from ckdn.documents._stored import MAX_DOCUMENT_BYTES, read_stored

__all__ = [
    "DIGEST_BUDGET",
    "MAX_ARTIFACTS",
    "MAX_DIGEST_BYTES",
    "MAX_DOCUMENT_BYTES",
    "SCHEMA_AGGREGATE",
    "SCHEMA_DIGEST",
    "SCHEMA_META",
    "Bounds",
    "Member",
    "aggregate_status",
    "build_aggregate",
    "build_digest",
    "build_meta",
    "encode",
    "read_log_tail",
    "read_stored",
    "render",
]
