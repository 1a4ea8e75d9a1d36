"""How a host judges a run green: by its status, or by its gate (``--gate``, ``CKDN_GATE``).

One judgment for the hosts and an alias's ``fail_fast``, so the two never disagree.
"""

from __future__ import annotations

from ckdn.reconcile import PASS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.documents.types import Document


#: ``ckdn.identity.scope.POLICY_PREFIX`` (equal by a test), not imported from there: a run
#: without a diff never loads the diff-scoped gate's modules.
DIFF_POLICY_PREFIX = "diff:"


def diff_scoped(gate: object) -> bool:
    """Whether ``gate`` is a diff-scoped gate's, whose ``unavailable`` is red."""
    policy = gate.get("policy") if isinstance(gate, dict) else None
    return isinstance(policy, str) and policy.startswith(DIFF_POLICY_PREFIX)


def green(document: Document, *, gate: bool = False) -> bool:
    """Whether a host counts this digest or aggregate as green: its status is ``pass``,
    or, judging by the gate, the gate passed (an ``unavailable`` baseline gate: the status;
    an ``unavailable`` diff-scoped gate never)."""
    if gate:
        shown = document.get("gate")
        status = shown.get("status") if isinstance(shown, dict) else None
        if status in ("pass", "fail"):
            return status == "pass"
        if status == "unavailable" and diff_scoped(shown):
            return False
    return document.get("status") == PASS
