"""The shapes of the three documents, for type checkers: import under ``TYPE_CHECKING`` only."""

# No `from __future__ import annotations` here: TypedDict reads NotRequired from the
# evaluated annotations (on 3.11 a string annotation would make every key required).
from typing import Any, Literal, NotRequired, TypedDict, final

__all__ = [
    "Aggregate",
    "BaselineCounts",
    "ChangeDoc",
    "DiffBytes",
    "Digest",
    "DigestStatus",
    "Document",
    "FindingDoc",
    "GateDoc",
    "ImportSummary",
    "ImportedFacts",
    "ImportedOrigin",
    "MemberDoc",
    "MemberStatus",
    "Meta",
    "OriginDoc",
    "ScopeDoc",
]

# Each :class:`~typing.TypedDict` mirrors one packaged JSON Schema key for key
# (required keys required, optional keys ``NotRequired``);
# tests/core/test_document_types.py holds the two to each other, so a key added to a
# schema without its type (or the other way round) fails the suite. They cost
# nothing at run time: ``ckdn run`` never imports this module (it needs
# :mod:`typing`), and a TypedDict is a plain ``dict`` when the program runs.
#
# They are ``@final`` so that ``"alias" in doc`` tells a type checker which
# document it holds. The ``summary`` of a digest is free-form by contract (each parser names its own
# keys), so it is the one ``dict[str, Any]`` a document carries.

DigestStatus = Literal["pass", "fail", "error", "parse_mismatch"]
MemberStatus = Literal["pass", "fail", "error", "parse_mismatch", "skipped"]


@final
class FindingDoc(TypedDict):
    """One finding as a digest shows it."""

    id: str
    kind: str
    message: str
    location: NotRequired[str]
    detail: NotRequired[list[str]]
    baselined: NotRequired[Literal[True]]


@final
class BaselineCounts(TypedDict):
    known: int
    new: int


@final
class ScopeDoc(TypedDict):
    """A diff-scoped gate's facts (the digest's ``summary.diff_scope``): the scope, how many
    findings the change owns, where the origins came from, the commits, the counts."""

    policy: str
    gated: NotRequired[int]
    origin: NotRequired[str]
    base: NotRequired[str]
    head: NotRequired[str]
    counts: NotRequired[dict[str, dict[str, int]]]


@final
class GateDoc(TypedDict):
    """The CI decision with a baseline configured (``no_new_findings``) or a diff given
    (``diff:SCOPE``): the published, closed shape."""

    status: str
    policy: str
    reason: NotRequired[str]


@final
class ImportedOrigin(TypedDict):
    """Where an imported run's facts came from (``origin.imported``); ``files`` only on a
    merge of imported shards (``sha256`` is then that of their hashes, ``bytes`` their sum)."""

    format: str
    variant: str
    producer: str
    sha256: str
    bytes: int
    files: NotRequired[int]


@final
class OriginDoc(TypedDict):
    """``origin``: only on an imported run (a native run has none)."""

    imported: ImportedOrigin


@final
class ImportSummary(TypedDict):
    """What an import read, and what it could not attach: ``read == attached + unattached``."""

    read: int
    attached: int
    unattached_by_reason: dict[str, int]


@final
class ImportedFacts(TypedDict):
    """What the digest builder is told of an import."""

    origin: ImportedOrigin
    import_summary: ImportSummary


@final
class Digest(TypedDict):
    """``ckdn.digest/2``: the bounded, deterministic digest of one atomic run."""

    schema: Literal["ckdn.digest/2"]
    check: str
    status: str
    rc: int | None
    run_dir: str
    status_reason: NotRequired[str]
    timed_out: NotRequired[Literal[True]]
    interrupted: NotRequired[Literal[True]]
    summary: NotRequired[dict[str, Any]]
    findings_total: NotRequired[int]
    findings: NotRequired[list[FindingDoc]]
    findings_truncated: NotRequired[int]
    gate_failures: NotRequired[list[str]]
    notes: NotRequired[list[str]]
    artifacts: NotRequired[list[str]]
    log_tail: NotRequired[list[str]]
    baseline: NotRequired[BaselineCounts]
    gate: NotRequired[GateDoc]
    origin: NotRequired[OriginDoc]
    import_summary: NotRequired[ImportSummary]


@final
class MemberDoc(TypedDict):
    """One member of an aggregate; a member that was not reached has no ``rc``/``run_dir``."""

    check: str
    status: str
    rc: NotRequired[int]
    run_dir: NotRequired[str]


@final
class Aggregate(TypedDict):
    """``ckdn.aggregate/1``: the routing document of an alias run."""

    schema: Literal["ckdn.aggregate/1"]
    alias: str
    status: str
    rc: int
    members: list[MemberDoc]
    gate: NotRequired[GateDoc]
    interrupted: NotRequired[Literal[True]]


@final
class DiffBytes(TypedDict):
    """The diff a gate judged, as read: its SHA-256 and size."""

    sha256: str
    bytes: int


@final
class ChangeDoc(TypedDict):
    """``ckdn.change/1`` (``change.json``): the change a diff-scoped gate judged."""

    schema: Literal["ckdn.change/1"]
    check: str
    policy: str
    gate: str
    gated: int
    reason: NotRequired[str]
    origin: NotRequired[str]
    base: NotRequired[str]
    head: NotRequired[str]
    diff: NotRequired[DiffBytes]
    counts: NotRequired[dict[str, dict[str, int]]]


@final
class Meta(TypedDict):
    """``ckdn.meta/1``: what the digest leaves out on purpose (times, command, hash)."""

    schema: Literal["ckdn.meta/1"]
    ckdn_version: str
    check: str
    parser: str
    command: list[str]
    rc: int
    timed_out: bool
    started_at: str
    duration_s: float
    log_sha256: str
    log_bytes: int
    interrupted: bool
    env_keys: NotRequired[list[str]]


#: What a run prints and stores as its result: a digest, or an alias's aggregate.
Document = Digest | Aggregate
