"""The documents a run leaves, built to their contracts: digest, aggregate, meta."""

from ckdn._lite import canonical as encode
from ckdn.documents._digest import (
    DIGEST_BUDGET,
    MAX_ARTIFACTS,
    MAX_DIGEST_BYTES,
    SCHEMA_CHANGE,
    SCHEMA_DIGEST,
    SCHEMA_META,
    Bounds,
    build_change,
    build_digest,
    build_meta,
)

__all__ = [
    "DIGEST_BUDGET",
    "MAX_ARTIFACTS",
    "MAX_DIGEST_BYTES",
    "SCHEMA_CHANGE",
    "SCHEMA_DIGEST",
    "SCHEMA_META",
    "Bounds",
    "build_change",
    "build_digest",
    "build_meta",
    "encode",
]

# * the digest (``ckdn.digest/2``): sparse, deterministic, bounded in bytes, every
#   cut counted (:func:`build_digest`, shrunk to its budget by ``fit``, its log
#   tail read backwards by ``_logtail``);
# * the meta (``ckdn.meta/1``): the provenance the digest leaves out on purpose;
# * their canonical bytes (:func:`encode`).
#
# What a run of one check never needs is in public modules of its own, imported
# on demand: :mod:`ckdn.documents.aggregate` (``ckdn.aggregate/1``, an alias run's
# routing document), :mod:`ckdn.documents.render` (the human form),
# :mod:`ckdn.documents.stored` (the
# one reader of a stored document, one error policy), :mod:`ckdn.documents.textcap`
# (the text policy and the one family of truncation helpers, shared with the
# parsers), :mod:`ckdn.documents.types` (the shapes, for type checkers).
