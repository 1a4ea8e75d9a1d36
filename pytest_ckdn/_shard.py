"""``--ckdn-shard auto|K/N [--ckdn-plan FILE]``: this session runs one shard of the tests, chosen
as pytest collects them, with the deselected counted as pytest counts ``-k`` and the record a
shard merge checks left in the run dir.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from ckdn.app.shards import (
    Plan,
    read_plan_file,
    resolve_shard,
    select_tests,
    write_shard_file,
)
from ckdn.errors import CkdnError
from pytest_ckdn._settings import outer_run_dir

if TYPE_CHECKING:
    from collections.abc import Callable

    from ckdn.app import ParseResult

__all__ = ["SHARDER", "Sharder", "start_sharding"]

SHARDER = "ckdn-sharder"
#: What a pytest-xdist worker hands its controller (``workeroutput``).
RECORD_KEY = "ckdn_shard_record"
LINE_KEY = "ckdn_shard_line"


class Sharder:
    """The hooks of a sharded session: select at collection, say so, keep the record."""

    def __init__(self, config: pytest.Config, spec: Any, plan: Plan | None,
                 recorder: Callable[[], Any]) -> None:
        self.config = config
        self.rerun = bool(config.getoption("ckdn_rerun"))
        self.recorder = recorder  # the session's recorder, when it records
        self.spec = spec
        self.plan = plan
        self.line: str | None = None  # what the shard ran, for the terminal and the digest

    # First, before -k, -m and other plugins deselect: the shard is the plan's whole part of
    # what was collected, so a test they drop is a planned test no shard ran (the merge says so)
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        try:
            selection = select_tests(self.plan, [item.nodeid for item in items], self.spec)
        except CkdnError as exc:
            raise pytest.UsageError(f"ckdn: {exc}") from None
        selection.rerun = self.rerun
        chosen = set(selection.selected)
        kept = [item for item in items if item.nodeid in chosen]
        dropped = [item for item in items if item.nodeid not in chosen]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        worker_output = getattr(config, "workeroutput", None)
        if worker_output is not None:  # a pytest-xdist worker: the controller keeps the record
            worker_output[RECORD_KEY] = selection.record()
            worker_output[LINE_KEY] = selection.describe()
            return
        self.line = selection.describe()
        self._keep_record(selection.record())

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist's controller: each worker collected and selected the same shard; the
        first one down reports it."""
        output = getattr(node, "workeroutput", None) or {}
        if self.line is None and isinstance(output.get(RECORD_KEY), dict):
            self.line = str(output.get(LINE_KEY, ""))
            self._keep_record(output[RECORD_KEY])

    def _keep_record(self, record: dict[str, Any]) -> None:
        """Into the run dir of this session's record: the outer ``ckdn run``'s, else the
        recording session's own; a session ckdn does not record keeps none."""
        run_dir = getattr(self.recorder(), "run_dir", None) or outer_run_dir()
        if run_dir is None:
            return
        try:
            write_shard_file(str(run_dir), record)
        except (OSError, CkdnError) as exc:
            raise pytest.UsageError(f"ckdn: cannot write the shard record into {run_dir}: "
                                    f"{exc}") from None

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        return [f"ckdn: {self.line}"] if self.line is not None else []

    def pytest_ckdn_collect(self, result: ParseResult, config: pytest.Config) -> None:
        if self.line is not None:
            result.notes.append(self.line)


def start_sharding(config: pytest.Config, recorder: Callable[[], Any]) -> None:
    """Register the sharder when ``--ckdn-shard`` is given; one line and exit 4 on a mistake
    (``auto`` without a CI's variables, a plan that cannot be read)."""
    shard = config.getoption("ckdn_shard")
    plan_path = config.getoption("ckdn_plan")
    if shard is None:
        given = "--ckdn-plan" if plan_path is not None else "--ckdn-rerun"
        raise pytest.UsageError(f"ckdn: {given} needs --ckdn-shard auto|K/N")
    try:
        spec = resolve_shard(shard, os.environ)
        plan = None
        if plan_path is not None:
            plan = read_plan_file(os.path.join(str(config.invocation_params.dir), plan_path))
            if plan.total != spec.total:
                raise pytest.UsageError(f"ckdn: --ckdn-shard {spec}: the plan has {plan.total} "
                                        f"shards (plan {plan.plan_id})")
    except CkdnError as exc:
        raise pytest.UsageError(f"ckdn: {exc}") from None
    config.pluginmanager.register(Sharder(config, spec, plan, recorder), SHARDER)
