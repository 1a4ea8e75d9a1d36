"""A finding's identity, and what is built on it: the baseline file and the gate.

One fingerprint function (:func:`fingerprints`) serves the baseline gate, a
red run's ``findings.jsonl`` and run comparison (:func:`pair`), and later SARIF
``partialFingerprints``, MCP results and shard merge. Domain room: it knows
findings (duck-typed), never the app or the runner; it reads source lines and
asks git for renames.
"""

from ckdn.identity._baseline import (
    SCHEMA_BASELINE,
    BaselineFile,
    encode_baseline,
    read_baseline,
    write_baseline,
)
from ckdn.identity._diff import pair
from ckdn.identity._findings_file import (
    FINDINGS_FILE,
    SCHEMA_FINDINGS,
    FindingRow,
    encode_findings,
    read_findings,
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
    "FINDINGS_FILE",
    "POLICY",
    "SCHEMA_BASELINE",
    "SCHEMA_FINDINGS",
    "BaselineFile",
    "FindingRow",
    "Fingerprinted",
    "Matched",
    "SourceLines",
    "decide",
    "encode_baseline",
    "encode_findings",
    "fingerprints",
    "git_renames",
    "match",
    "normalise_line",
    "normalise_message",
    "pair",
    "read_baseline",
    "read_findings",
    "rule_of",
    "split_location",
    "worst_gate",
    "write_baseline",
]
