"""The gate: the CI decision beside the status, never in place of it (seed 001)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.documents.types import GateDoc

__all__ = ["POLICY", "decide", "worst_gate"]

# Policy ``no_new_findings``: a run passes the gate when everything that made it
# red is known to the baseline. So the gate is
#
# * ``unavailable`` when the status is ``error`` or ``parse_mismatch`` (its
#   findings cannot be trusted to be complete), or when not every finding could
#   be classified;
# * ``fail`` on any policy gate failure (coverage ``fail_under``, pylint's score:
#   those are not findings a baseline can accept), on any new finding, and on a
#   red run with nothing to classify (an exit code alone: the gate cannot account
#   for it, so it never passes it);
# * ``pass`` otherwise: a green run, or a red one whose findings are all known.

POLICY = "no_new_findings"
_UNTRUSTED = ("error", "parse_mismatch")


def decide(status: str, rc: int, *, total: int, classified: int, new: int,
           gate_failures: int, first_new: str = "") -> GateDoc:
    """The digest's ``gate`` object."""
    if status in _UNTRUSTED:
        return _gate("unavailable", f"status is {status}: the run's evidence is not complete "
                                    "enough to compare with the baseline")
    if classified < total:
        return _gate("unavailable", f"{total - classified} of {total} finding(s) could not be "
                                    "classified")
    if gate_failures:
        return _gate("fail", f"{gate_failures} policy gate(s) failed (gate_failures): a "
                             "baseline accepts findings, not a missed threshold")
    if new:
        named = f" (first: {first_new})" if first_new else ""
        return _gate("fail", f"{new} new finding(s) not in the baseline{named}")
    if status != "pass" and total == 0:
        return _gate("fail", f"exit code {rc} with no finding to compare with the baseline")
    return {"status": "pass", "policy": POLICY}


def _gate(status: str, reason: str) -> GateDoc:
    return {"status": status, "policy": POLICY, "reason": reason}


_RANK = {"pass": 0, "unavailable": 1, "fail": 2}


def worst_gate(members: list[tuple[str, GateDoc | None]]) -> GateDoc:
    """An alias's gate: its worst member's (fail, then unavailable, then pass), the
    reason naming that member; a member that did not run (``None``: fail-fast skipped
    it) leaves at least ``unavailable``: the gate never passes what was not checked."""
    skipped = [name for name, gate in members if gate is None]
    ran = [(name, gate) for name, gate in members if gate is not None]
    worst = max(ran, key=lambda pair: _RANK.get(pair[1]["status"], 2), default=None)
    if worst is not None and worst[1]["status"] == "fail":
        return _gate("fail", f"{worst[0]}: {worst[1].get('reason', 'gate failed')}")
    if skipped:
        return _gate("unavailable", f"{len(skipped)} member(s) did not run "
                                    f"(first: {skipped[0]})")
    if worst is not None and worst[1]["status"] != "pass":
        return _gate(worst[1]["status"], f"{worst[0]}: {worst[1].get('reason', '')}")
    return {"status": "pass", "policy": POLICY}
