"""The door for questions about stored runs and configured checks; nothing here runs a check,
and ``ckdn run`` never imports it.
"""

from __future__ import annotations

from ckdn.app._annotating import annotate, render_report, report_of
from ckdn.app._install.agent_kit import AGENTS, write_agent_kit
from ckdn.app._install.setup import SKILLS, this_checkdown, write_skills, write_starter
from ckdn.app._project.checks import (
    PLUGIN_FLAG,
    checks_of,
    describe_checks,
    lock_config,
    requirements,
    verify_config,
)
from ckdn.app._project.locating import CWD_ENV, locate_config, locate_cwd, resolution_order
from ckdn.app._stored.brief import BRIEF_BYTES, brief_red
from ckdn.app._stored.diff import diff_runs, render_diff
from ckdn.app._stored.evidence import MAX_LIMIT, read_document, read_meta, read_window, run_id
from ckdn.app._stored.freshness import SCHEMA_STATUS, STATES, render_status, status
from ckdn.app._stored.runs import (
    headline,
    list_runs,
    prune_runs,
    read_run,
    red_members,
    shown_runs_dir,
)
from ckdn.app._stored.watching import Progress, RunWatch
from ckdn.documents.render import render
from ckdn.documents.textcap import inert
from ckdn.reports import REPORT_FORMATS
from ckdn.schema import load_schema, schema_ids

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ckdn.config import Config

__all__ = [
    "AGENTS",
    "ANNOTATE_FORMATS",
    "BRIEF_BYTES",
    "CWD_ENV",
    "MAX_LIMIT",
    "PLUGIN_FLAG",
    "REPORT_FORMATS",
    "SCHEMA_STATUS",
    "SKILLS",
    "STATES",
    "Progress",
    "RunWatch",
    "annotate",
    "brief_red",
    "checks_of",
    "describe_checks",
    "diff_runs",
    "headline",
    "inert",
    "list_runs",
    "load_schema",
    "locate_config",
    "locate_cwd",
    "lock_config",
    "prune_runs",
    "read_document",
    "read_meta",
    "read_run",
    "read_window",
    "red_members",
    "render",
    "render_diff",
    "render_status",
    "report_text",
    "requirements",
    "resolution_order",
    "run_id",
    "schema_ids",
    "shown_runs_dir",
    "status",
    "this_checkdown",
    "verify_config",
    "write_agent_kit",
    "write_skills",
    "write_starter",
]

#: The report formats ``ckdn annotate --format`` knows, in the table's order (:mod:`ckdn.reports`).
ANNOTATE_FORMATS = REPORT_FORMATS


def report_text(config: Config, doc: Mapping[str, Any], *, color: bool = False) -> str:
    """The text view of a document in hand (``ckdn run --format text``, ``ckdn show`` on a
    terminal); an aggregate's red members are read from the store."""
    return render_report(report_of(config, doc), "text", color=color)
