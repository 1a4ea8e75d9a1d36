"""The aggregate (``ckdn.aggregate/1``): the routing document of an alias run."""

from __future__ import annotations

from ckdn._lite import Record, record
from ckdn.reconcile import ERROR, PASS, SKIPPED, STATUSES, exit_code

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

    from ckdn.documents.types import Aggregate, GateDoc, MemberDoc

__all__ = ["SCHEMA_AGGREGATE", "Member", "aggregate_status", "build_aggregate"]

# An aggregate holds no findings of its own: it says, per member, how it ended
# and where its run dir is, so a reader goes straight to the red member's digest.
# Its status is the first non-green member's (a member that never ran is never
# green), and its exit code follows the atomic pass-through rule. A module of its
# own: a run of one check never needs it.

SCHEMA_AGGREGATE: Final = "ckdn.aggregate/1"


@record
class Member(Record):
    """One alias member as the aggregate lists it; ``status="skipped"`` when not reached."""

    __slots__ = ("check", "rc", "run_dir", "status")
    check: str
    status: str
    rc: int | None
    run_dir: str | None

    def __init__(self, check: str, status: str, rc: int | None = None,
                 run_dir: str | None = None) -> None:
        self._assign(check, status, rc, run_dir)


def aggregate_status(members: Sequence[Member]) -> tuple[str, int]:
    """``(status, rc)`` of an alias: pass iff every member passed, else the first red one.

    ``rc`` is that member's exit code under the atomic pass-through rule
    (:func:`ckdn.reconcile.exit_code`). A list where nothing ran red but something
    was skipped is ``error`` / 1: a member that never ran is never green.
    """
    if not members:
        raise ValueError("an aggregate needs at least one member")
    skipped = False
    for member in members:
        if member.status == SKIPPED:
            skipped = True
        elif member.status != PASS:
            return member.status, exit_code(member.status, 1 if member.rc is None else member.rc)
    return (ERROR, 1) if skipped else (PASS, 0)


def build_aggregate(*, alias: str, members: Sequence[Member],
                    interrupted: bool = False, gate: GateDoc | None = None) -> Aggregate:
    """The ``ckdn.aggregate/1`` routing document of an alias run.

    A member that passed carries no ``run_dir`` (the contract routes only to red
    evidence); ``interrupted`` says Ctrl-C (or a host's stop) cut the series short.
    """
    status, rc = aggregate_status(members)
    entries: list[MemberDoc] = []
    for member in members:
        if member.status == SKIPPED:
            entries.append({"check": member.check, "status": SKIPPED})
            continue
        if member.status not in STATUSES:
            raise ValueError(f"member {member.check!r} has no valid status: {member.status!r}")
        if member.rc is None:
            raise ValueError(f"member {member.check!r} ran but has no rc")
        if member.status == PASS:
            entries.append({"check": member.check, "status": PASS, "rc": member.rc})
            continue
        if member.run_dir is None:
            raise ValueError(f"member {member.check!r} is not green but has no run_dir")
        entries.append({"check": member.check, "status": member.status, "rc": member.rc,
                        "run_dir": member.run_dir})
    aggregate: Aggregate = {"schema": SCHEMA_AGGREGATE, "alias": alias, "status": status,
                            "rc": rc, "members": entries}
    if interrupted:
        aggregate["interrupted"] = True
    if gate is not None:
        aggregate["gate"] = gate
    return aggregate
