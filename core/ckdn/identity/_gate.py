"""The gate: the CI decision beside the status, never in place of it (seed 001).

Policy ``no_new_findings``: a run passes the gate when everything that made it
red is known to the baseline. So the gate is

* ``unavailable`` when the status is ``error`` or ``parse_mismatch`` (its
  findings cannot be trusted to be complete), or when not every finding could
  be classified;
* ``fail`` on any policy gate failure (coverage ``fail_under``, pylint's score:
  those are not findings a baseline can accept), on any new finding, and on a
  red run with nothing to classify (an exit code alone: the gate cannot account
  for it, so it never passes it);
* ``pass`` otherwise: a green run, or a red one whose findings are all known.
"""

from __future__ import annotations

__all__ = ["POLICY", "decide"]

POLICY = "no_new_findings"
_UNTRUSTED = ("error", "parse_mismatch")


def decide(status: str, rc: int, *, total: int, classified: int, new: int,
           gate_failures: int, first_new: str = "") -> dict[str, str]:
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


def _gate(status: str, reason: str) -> dict[str, str]:
    return {"status": status, "policy": POLICY, "reason": reason}
