"""A finding's identity, and what is built on it: the baseline file and the gate.

One fingerprint function (:func:`fingerprints`) serves the baseline gate, a
red run's ``findings.jsonl`` and run comparison (:func:`pair`), and later SARIF
``partialFingerprints``, MCP results and shard merge (:func:`dedupe`). Domain room: it knows
findings (duck-typed), never the app or the runner; it reads source lines and
asks git for renames.

Names are loaded when first asked for (PEP 562): a passing run with a baseline
configured needs only the gate's decision, not hashing, patterns or git.
"""

from __future__ import annotations

from ckdn._lite.lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.identity._baseline import (
        SCHEMA_BASELINE,
        BaselineFile,
        encode_baseline,
        read_baseline,
        write_baseline,
    )
    from ckdn.identity._diff import TEST_CLASSES, compare_tests, pair
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
        SourceLines,
        fingerprints,
        normalise_line,
        normalise_message,
        retried_head,
        rule_of,
        split_location,
    )
    from ckdn.identity._gate import POLICY, decide, worst_gate
    from ckdn.identity._match import BaselineIndex, Matched, Rowed, match
    from ckdn.identity._merge import Conflict, dedupe, merge_summaries, outcome_conflicts
    from ckdn.identity._renames import git_renames
    from ckdn.identity._table import IdentityTable
    from ckdn.identity._tree import (
        SCHEMA_SOURCE,
        SOURCE_FILE,
        SourceWatch,
        read_source_state,
        source_document,
        source_state,
    )
    from ckdn.identity._writer import FindingsWriter

_HOMES = {
    "SCHEMA_BASELINE": "_baseline", "BaselineFile": "_baseline",
    "encode_baseline": "_baseline", "read_baseline": "_baseline",
    "write_baseline": "_baseline",
    "Fingerprinted": "_fingerprint", "SourceLines": "_fingerprint",
    "fingerprints": "_fingerprint", "normalise_line": "_fingerprint",
    "normalise_message": "_fingerprint", "rule_of": "_fingerprint",
    "retried_head": "_fingerprint",
    "split_location": "_fingerprint",
    "POLICY": "_gate", "decide": "_gate", "worst_gate": "_gate",
    "Matched": "_match", "match": "_match", "BaselineIndex": "_match", "Rowed": "_match",
    "IdentityTable": "_table", "FindingsSpool": "_findings_file",
    "FindingsWriter": "_writer",
    "git_renames": "_renames",
    "pair": "_diff", "TEST_CLASSES": "_diff", "compare_tests": "_diff",
    "SOURCE_FILE": "_tree", "SCHEMA_SOURCE": "_tree", "read_source_state": "_tree",
    "source_state": "_tree", "SourceWatch": "_tree", "source_document": "_tree",
    "Conflict": "_merge", "dedupe": "_merge", "merge_summaries": "_merge",
    "outcome_conflicts": "_merge",
    "FINDINGS_FILE": "_findings_file", "SCHEMA_FINDINGS": "_findings_file",
    "FindingRow": "_findings_file", "encode_findings": "_findings_file",
    "read_findings": "_findings_file", "MAX_TEXT": "_findings_file",
    "iter_findings": "_findings_file",
}

__all__ = [
    "FINDINGS_FILE",
    "MAX_TEXT",
    "POLICY",
    "SCHEMA_BASELINE",
    "SCHEMA_FINDINGS",
    "SCHEMA_SOURCE",
    "SOURCE_FILE",
    "TEST_CLASSES",
    "BaselineFile",
    "BaselineIndex",
    "Conflict",
    "FindingRow",
    "FindingsSpool",
    "FindingsWriter",
    "Fingerprinted",
    "IdentityTable",
    "Matched",
    "Rowed",
    "SourceLines",
    "SourceWatch",
    "compare_tests",
    "decide",
    "dedupe",
    "encode_baseline",
    "encode_findings",
    "fingerprints",
    "git_renames",
    "iter_findings",
    "match",
    "merge_summaries",
    "normalise_line",
    "normalise_message",
    "outcome_conflicts",
    "pair",
    "read_baseline",
    "read_findings",
    "read_source_state",
    "retried_head",
    "rule_of",
    "source_document",
    "source_state",
    "split_location",
    "worst_gate",
    "write_baseline",
]


__getattr__ = lazy_names(__name__, _HOMES, globals())
