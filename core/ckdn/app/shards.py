"""The door for sharding: plans, a shard's selection and record, the durations ledger (for the
CLI's ``plan``, ``durations`` and ``run --shard``, and the pytest plugin's ``--ckdn-shard``).

A ``ckdn run`` without ``--shard`` never imports it.
"""

from __future__ import annotations

import json
import os

from ckdn.app._shards.ledger import DURATIONS_FILE, SCHEMA_DURATIONS, update_durations
from ckdn.app._shards.plan import plan_check
from ckdn.app._shards.selection import (
    CI_VARIABLES,
    SHARD_ENV,
    SHARD_FILE,
    ShardSpec,
    read_plan_file,
    read_shard_file,
    resolve_shard,
    select_tests,
    write_shard_file,
)
from ckdn.config import Alias
from ckdn.errors import UsageError, os_reason, quote
from ckdn.identity.plan import SCHEMA_PLAN, SCHEMA_SHARD, Plan, Selection, hashed_shard
from ckdn.parsers import TEST_PARSERS
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ckdn.config import Config

__all__ = [
    "CI_VARIABLES",
    "DURATIONS_FILE",
    "SCHEMA_DURATIONS",
    "SCHEMA_PLAN",
    "SCHEMA_SHARD",
    "SHARD_ENV",
    "SHARD_FILE",
    "Plan",
    "Selection",
    "ShardSpec",
    "hashed_shard",
    "plan_check",
    "read_plan_file",
    "read_shard_file",
    "resolve_shard",
    "select_tests",
    "shard_arguments",
    "update_durations",
    "write_plan_file",
    "write_shard_file",
]


def shard_arguments(config: Config, name: str, shard: str, plan: str | None,
                    env: Mapping[str, str], *, rerun: bool = False) -> list[str]:
    """The pytest options that make ``ckdn run NAME`` shard ``shard`` of the plan (``rerun``:
    a run that replaces the shard's earlier one at the merge); the selection happens at
    collection, in the plugin. Refused for any check but a pytest one."""
    check = config.get(name)
    if isinstance(check, Alias):
        raise UsageError(f"--shard: {quote(name)} is an alias; shard one pytest check")
    if check.parser not in TEST_PARSERS:
        raise UsageError(f"--shard: check {quote(name)} (parser {quote(check.parser)}) is not "
                         "a pytest check; ckdn shards pytest checks, whose plugin selects the "
                         "tests as pytest collects them")
    spec = resolve_shard(shard, env)
    # --ckdn-digest: the plugin's evidence carries the shard's line into the digest's notes
    args = ["--ckdn-digest", "--ckdn-shard", str(spec)]
    if plan is not None:
        path = os.path.join(config.cwd, plan)
        planned = read_plan_file(path)
        if planned.check != name:
            raise UsageError(f"--plan {quote(plan)}: a plan of {quote(planned.check)}, not of "
                             f"{quote(name)}")
        if planned.total != spec.total:
            raise UsageError(f"--shard {spec}: the plan has {planned.total} shards "
                             f"(plan {planned.plan_id})")
        args += ["--ckdn-plan", os.path.abspath(path)]
    return [*args, "--ckdn-rerun"] if rerun else args


def write_plan_file(config: Config, plan: Plan, path: str) -> str:
    """Write ``plan`` as its ``ckdn.plan/1`` document at ``path`` (from the project's
    directory), atomically; the path written. UsageError in one line if it cannot be."""
    target = os.path.join(config.cwd, path)
    data = json.dumps(plan.document(), indent=1) + "\n"
    try:
        write_atomic(target, data.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"-o {quote(path)}: cannot write it: {os_reason(exc)}") from None
    return target
