"""What a report is made of: the stored documents of one run, and every finding's row."""

from __future__ import annotations

from ckdn.errors import CkdnError
from ckdn.identity import rule_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import Any

    from ckdn.identity import FindingRow

__all__ = ["Checked", "Report", "headline", "imported_label", "level_of", "rule_id", "where"]

# A :class:`Report` is the run a user named: one digest, or an aggregate with the
# digests of its members. Each digest that was read is a :class:`Checked`, whose
# :meth:`~Checked.rows` give its findings as :class:`~ckdn.identity.FindingRow`
# (fingerprint, id, kind, location, message, baselined): every finding of the run
# when it left a ``findings.jsonl``, streamed (a 100,000-finding run is never held
# whole), else the digest's own. The views choose and cut; nothing here decides.

#: A digest's ``status`` that means its findings were read and can be believed.
GREEN = "pass"


class Checked:
    """One check's stored digest as a report reads it.

    ``rows`` opens the findings afresh on every call (a view may read them more
    than once); ``complete``: they are every finding of the run (its
    ``findings.jsonl``), not only the digest's ``top``; ``problems``: what went
    wrong reading them (a torn file), filled in while they are read, for the view's
    notes; ``tool``: the parser that read the tool's output (the SARIF driver).
    """

    __slots__ = ("complete", "digest", "help_uris", "problems", "rows", "tool")

    def __init__(self, digest: Mapping[str, Any], rows: Callable[[], Iterable[FindingRow]],
                 *, complete: bool, tool: str) -> None:
        self.digest = digest
        self.rows = rows
        self.complete = complete
        self.tool = tool
        self.problems: list[str] = []
        self.help_uris: dict[str, str] | None = None

    @property
    def check(self) -> str:
        return str(self.digest["check"])

    @property
    def status(self) -> str:
        return str(self.digest["status"])

    @property
    def run_dir(self) -> str:
        return str(self.digest["run_dir"])

    @property
    def total(self) -> int:
        """How many findings the run counted (the digest's count, else its list)."""
        total = self.digest.get("findings_total")
        if isinstance(total, int) and total >= 0:
            return total
        return len(self.digest.get("findings") or ())

    @property
    def classified(self) -> bool:
        """The baseline gate classified the findings: each is new or known (``baselined``)."""
        return isinstance(self.digest.get("baseline"), dict)

    def each(self) -> Iterator[FindingRow]:
        """The rows, a read that goes wrong ending them with a problem noted, never raising."""

        try:
            yield from self.rows()
        except CkdnError as exc:
            self.problems.append(exc.message)


class Report:
    """The run ``ckdn annotate`` projects: its document, and the digests it routes to.

    ``members``: an aggregate's members as it lists them (a member that passed
    has no digest to read, one not reached is ``skipped``); ``checks``: the digests
    read, in member order (one for a plain run); ``missing``: red members whose
    digest could not be read, with why; ``anchor``: the file a finding without a
    location is put on where a place is required (the project's ``ckdn.toml``,
    relative to the cwd); ``root``: the check's cwd, that locations are relative to.
    """

    __slots__ = ("anchor", "checks", "document", "members", "missing", "root")

    def __init__(self, document: Mapping[str, Any], checks: Sequence[Checked], *,
                 members: Sequence[Mapping[str, Any]] = (),
                 missing: Sequence[tuple[str, str]] = (), anchor: str = "ckdn.toml",
                 root: str = "") -> None:
        self.document = document
        self.checks = list(checks)
        self.members = list(members)
        self.missing = list(missing)
        self.anchor = anchor
        self.root = root

    @property
    def name(self) -> str:
        doc = self.document
        return str(doc["alias"] if "alias" in doc else doc["check"])

    @property
    def status(self) -> str:
        return str(self.document["status"])

    @property
    def is_aggregate(self) -> bool:
        return "alias" in self.document


def imported_label(digest: Mapping[str, Any]) -> str:
    """What every view says of an imported run (seed 004: visibly weaker, declared rather
    than inferred); empty for a run ckdn made itself."""
    origin = digest.get("origin")
    imported = origin.get("imported") if isinstance(origin, dict) else None
    if not isinstance(imported, dict):
        return ""
    summary = digest.get("import_summary")
    counted = ""
    if isinstance(summary, dict):
        reasons = summary.get("unattached_by_reason") or {}
        left = ", ".join(f"{count} {reason}" for reason, count in reasons.items()) \
            if isinstance(reasons, dict) else ""
        counted = (f"; {summary.get('attached', 0)} of {summary.get('read', 0)} record(s) "
                   f"attached" + (f" ({left} not)" if left else ""))
    return (f"imported {imported.get('format', '?')} ({imported.get('variant', '?')}, "
            f"from {imported.get('producer', '?')}): no exit code was observed{counted}")


def level_of(kind: str) -> str:
    """A finding's level as the tool meant it: ``error``, ``warning`` or ``note``.

    Parsers name the tool's lesser severities in the kind (mypy and pyright's
    ``type_warning`` / ``type_note``, SARIF's ``sarif_warning`` / ``sarif_note``);
    everything else is what failed the check, an error.
    """
    if kind.endswith("_warning"):
        return "warning"
    if kind.endswith(("_note", "_none")):
        return "note"
    return "error"


def where(location: str | None) -> tuple[str, int, int]:
    """``(path, line, column)`` of ``path[:line[:col]]``; 0 for a number it does not give.

    Called once per finding of a 100,000-finding run, so two ``rpartition``s, no loop.
    """
    if not location:
        return "", 0, 0
    head, _, tail = location.rpartition(":")
    if not (head and tail.isdigit() and len(tail) <= 9 and tail.isascii()):
        return location, 0, 0
    path, _, middle = head.rpartition(":")
    if path and middle.isdigit() and len(middle) <= 9 and middle.isascii():
        return path, int(middle), int(tail)
    return head, int(tail), 0


def rule_id(finding: Any, path: str) -> str:
    """The rule a finding breaks: the code in its id (``F401``, ``arg-type``), else its kind.

    The code is the finding's id without its location (:func:`ckdn.identity.rule_of`,
    the rule its fingerprint hashes). A test's id is its node id, and one rule per
    test is no rule, so a test finding's rule is its kind.
    """

    kind = str(finding.kind)
    if kind.startswith("test_"):
        return kind
    code = rule_of(finding, path).partition("\0")[2]
    if not code or len(code) > 100 or (code == finding.id and path):
        return kind
    return code


def headline(finding: Any) -> str:
    """A finding's message as a view shows it alone: a test's with its id in front (a
    test's message is its assertion, which says nothing of which test), else as it is."""
    message = str(finding.message)
    if str(finding.kind).startswith("test_") and finding.id and finding.id != "?":
        return f"{finding.id}: {message}" if message else str(finding.id)
    return message or str(finding.kind)
