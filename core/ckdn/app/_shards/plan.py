"""``ckdn plan CHECK --shards N``: the test set and its durations read from what ckdn keeps
(the ledger, else the newest whole run), planned by :func:`ckdn.identity.plan.make_plan`.
"""

from __future__ import annotations

from ckdn.app._shards.ledger import ledger_path, read_ledger, timed_runs
from ckdn.errors import UsageError, quote
from ckdn.identity.plan import Plan, make_plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config

__all__ = ["plan_check"]


def plan_check(config: Config, name: str, shards: int, *,
               durations: str | None = None) -> Plan:
    """The plan of ``name`` over ``shards`` shards; UsageError when nothing says which tests
    the check has, or they are fewer than the shards."""
    ledger = read_ledger(ledger_path(config, durations), required=durations is not None)
    known: dict[str, float | None] = dict(ledger.get(name, {}))
    newest = next(timed_runs(config, name), None)
    if newest is not None:
        _run, seconds, ran = newest
        for ident in ran:
            if known.get(ident) is None:
                known[ident] = seconds.get(ident)
    if not known:
        raise UsageError(f"no test of {quote(name)} is known: run it once (its JUnit report or "
                         "tests.jsonl names its tests), or point --durations at a ledger")
    return make_plan(name, known, shards)
