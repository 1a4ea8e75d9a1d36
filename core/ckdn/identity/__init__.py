"""A finding's identity, and what is built on it: the baseline file and the gate.

One fingerprint function (:func:`fingerprints`) serves the baseline gate, and
later SARIF ``partialFingerprints``, MCP results, run comparison and shard
merge. Domain room: it knows findings (duck-typed), never the app or the
runner; it reads source lines and asks git for renames.
"""

from ckdn.identity._baseline import (
    SCHEMA_BASELINE,
    BaselineFile,
    encode_baseline,
    read_baseline,
    write_baseline,
)
from ckdn.identity._fingerprint import (
    Fingerprinted,
    SourceLines,
    fingerprints,
    normalise_line,
    normalise_message,
    rule_of,
    split_location,
)
from ckdn.identity._gate import POLICY, decide, worst_gate
from ckdn.identity._match import Matched, match
from ckdn.identity._renames import git_renames

__all__ = [
    "POLICY",
    "SCHEMA_BASELINE",
    "BaselineFile",
    "Fingerprinted",
    "Matched",
    "SourceLines",
    "decide",
    "encode_baseline",
    "fingerprints",
    "git_renames",
    "match",
    "normalise_line",
    "normalise_message",
    "read_baseline",
    "rule_of",
    "split_location",
    "worst_gate",
    "write_baseline",
]
