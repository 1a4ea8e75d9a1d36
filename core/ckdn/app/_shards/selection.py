"""Which shard this job is (``K/N``, or ``auto`` from the CI's own variables), the plan file it
runs, and the record it leaves in its run dir for ``ckdn merge --plan``.
"""

from __future__ import annotations

import json
import os

from ckdn.errors import UsageError, os_reason, quote
from ckdn.evidence_files import open_regular
from ckdn.identity.plan import (
    Plan,
    Selection,
    ShardRecord,
    read_plan,
    read_shard_record,
    select,
)
from ckdn.store import write_atomic

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["CI_VARIABLES", "SHARD_ENV", "SHARD_FILE", "ShardSpec", "read_plan_file",
           "read_shard_file", "resolve_shard", "select_tests", "write_shard_file"]

#: ``K/N`` set by the job itself (a GitHub Actions matrix value, any CI without its own).
SHARD_ENV = "CKDN_SHARD"
#: The record a shard leaves in its run dir.
SHARD_FILE = "shard.json"
#: The CIs' own variables: name, index variable, total variable, the index's first value.
#: Each base is the CI's documentation's (docs/sharding.md cites them).
CI_VARIABLES = (
    ("GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    ("Bitbucket", "BITBUCKET_PARALLEL_STEP", "BITBUCKET_PARALLEL_STEP_COUNT", 0),
    ("Semaphore", "SEMAPHORE_JOB_INDEX", "SEMAPHORE_JOB_COUNT", 1),
    ("Bazel", "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0),
)
#: The largest shard record read (its lists name tests: a million ids fit).
MAX_RECORD = 256 << 20
#: Bazel asks a test runner that shards to touch this file.
BAZEL_STATUS_FILE = "TEST_SHARD_STATUS_FILE"


class ShardSpec:
    """Shard ``index`` (1-based) of ``total``, and where that was read."""

    __slots__ = ("index", "source", "total")

    def __init__(self, index: int, total: int, source: str) -> None:
        self.index, self.total, self.source = index, total, source

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def _parse(text: str, where: str) -> ShardSpec:
    index, slash, total = text.strip().partition("/")
    if not slash or not index.isdigit() or not total.isdigit() \
            or not 1 <= int(index) <= int(total):
        raise UsageError(f"{where}: {quote(text[:40])} is not K/N with 1 <= K <= N "
                         "(e.g. 2/4; K is 1-based)")
    return ShardSpec(int(index), int(total), where)


def _from_ci(env: Mapping[str, str]) -> list[ShardSpec]:
    found = []
    value = env.get(SHARD_ENV, "").strip()
    if value:
        found.append(_parse(value, f"${SHARD_ENV}"))
    for name, index_var, total_var, base in CI_VARIABLES:
        index, total = env.get(index_var, "").strip(), env.get(total_var, "").strip()
        if not index:
            continue
        where = f"{name} (${index_var}, ${total_var})"
        if not index.isdigit() or not total.isdigit() \
                or not base <= int(index) < int(total) + base:
            raise UsageError(f"{where}: {quote(index[:20])} of {quote(total[:20])} is not a "
                             f"shard (the index starts at {base})")
        found.append(ShardSpec(int(index) - base + 1, int(total), where))
    return found


def resolve_shard(text: str, env: Mapping[str, str]) -> ShardSpec:
    """``K/N`` as given, or ``auto``: the one shard the CI's variables agree on (Bazel's
    status file touched); none, or two that disagree, is a refusal, never the whole suite."""
    if text.strip() != "auto":
        return _parse(text, "--shard")
    found = _from_ci(env)
    if not found:
        names = ", ".join([f"${SHARD_ENV}", *(f"${i}" for _n, i, _t, _b in CI_VARIABLES)])
        raise UsageError(f"--shard auto: no CI shard variable is set ({names}); refusing to "
                         "run the whole suite as one shard: pass --shard K/N")
    first = found[0]
    for other in found[1:]:
        if (other.index, other.total) != (first.index, first.total):
            raise UsageError(f"--shard auto: {first.source} says {first}, {other.source} "
                             f"says {other}")
    status = env.get(BAZEL_STATUS_FILE)
    if status and any(spec.source.startswith("Bazel") for spec in found):
        try:
            with open(status, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise UsageError(f"${BAZEL_STATUS_FILE} {quote(status)}: cannot touch it: "
                             f"{os_reason(exc)}") from None
    return first


def read_plan_file(path: str) -> Plan:
    """The plan in the ``ckdn.plan/1`` file at ``path``; UsageError in one line if not."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except OSError as exc:
        raise UsageError(f"--plan {quote(path)}: cannot read it: {os_reason(exc)}") from None
    except ValueError as exc:
        raise UsageError(f"--plan {quote(path)}: not JSON: {exc}") from None
    return read_plan(value, f"--plan {quote(path)}")


def select_tests(plan: Plan | None, collected: Sequence[str], spec: ShardSpec) -> Selection:
    """Shard ``spec`` of the ``collected`` node ids (the plan's, else every test by hash)."""
    return select(plan, collected, spec.index, spec.total)


def write_shard_file(run_dir: str, selection: Selection | Mapping[str, Any]) -> None:
    """The shard's record (a selection's, or one a pytest-xdist worker sent), beside its
    digest, for ``ckdn merge --plan``."""
    record = selection.record() if isinstance(selection, Selection) else dict(selection)
    data = json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n"
    write_atomic(os.path.join(run_dir, SHARD_FILE), data.encode("utf-8"))


def read_shard_file(run_dir: str) -> ShardRecord | None:
    """The record a shard left in ``run_dir``; None when there is none or it is not one
    (never read through a symlink, nor past :data:`MAX_RECORD` bytes)."""
    try:
        with open(open_regular(os.path.join(run_dir, SHARD_FILE)), "rb") as handle:
            data = handle.read(MAX_RECORD + 1)
        return read_shard_record(json.loads(data)) if len(data) <= MAX_RECORD else None
    except (OSError, ValueError):
        return None
