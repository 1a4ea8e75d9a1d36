"""A finding's identity, what a run needs of it: the fingerprint, the findings file, the gate.

What only some verbs need lives in this room's public modules (``diff``, ``merge``,
``renames``), so a run never imports it.
"""

from ckdn.identity._baseline import (
    POLICY,
    SCHEMA_BASELINE,
    BaselineFile,
    BaselineIndex,
    Matched,
    Rowed,
    decide,
    encode_baseline,
    match,
    read_baseline,
    read_index,
    worst_gate,
    write_baseline,
)
from ckdn.identity._findings_file import (
    FINDINGS_FILE,
    MAX_TEXT,
    SCHEMA_FINDINGS,
    FindingRow,
    FindingsSpool,
    encode_findings,
    iter_findings,
    read_findings,
)
from ckdn.identity._fingerprint import (
    Fingerprinted,
    IdentityTable,
    SourceLines,
    fingerprints,
    normalise_line,
    normalise_message,
    retried_head,
    rule_of,
    split_location,
)
from ckdn.identity._writer import FindingsWriter, TableSpool

__all__ = [
    "FINDINGS_FILE",
    "MAX_TEXT",
    "POLICY",
    "SCHEMA_BASELINE",
    "SCHEMA_FINDINGS",
    "BaselineFile",
    "BaselineIndex",
    "FindingRow",
    "FindingsSpool",
    "FindingsWriter",
    "Fingerprinted",
    "IdentityTable",
    "Matched",
    "Rowed",
    "SourceLines",
    "TableSpool",
    "decide",
    "encode_baseline",
    "encode_findings",
    "fingerprints",
    "iter_findings",
    "match",
    "normalise_line",
    "normalise_message",
    "read_baseline",
    "read_findings",
    "read_index",
    "retried_head",
    "rule_of",
    "split_location",
    "worst_gate",
    "write_baseline",
]
