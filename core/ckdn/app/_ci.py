"""A host's report to the GitHub job it runs in: annotations and the step summary.

Within GitHub's limits (the job's 50 annotations, the step's 1 MiB); ``CKDN_GITHUB=0``
turns it off, and it never fails the host: a problem is one line on stderr.
"""

from __future__ import annotations

import os
import sys

from ckdn.errors import CkdnError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from ckdn.config import Config

__all__ = ["GITHUB_ENV", "github_reporting", "report_to_github"]

#: ``CKDN_GITHUB=0`` turns a host's GitHub report off (``1`` or unset: on in a GitHub job).
GITHUB_ENV = "CKDN_GITHUB"
_OFF = ("0", "false", "no", "off")


def github_reporting(env: Mapping[str, str] | None = None, choice: bool | None = None) -> bool:
    """Whether a host reports to GitHub: in a GitHub Actions job, unless switched off
    (``choice``: the host's own switch, else ``$CKDN_GITHUB``)."""
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") != "true":
        return False
    if choice is not None:
        return choice
    return env.get(GITHUB_ENV, "").strip().lower() not in _OFF


def report_to_github(config: Config, document: Mapping[str, Any], *,
                     env: Mapping[str, str] | None = None, out: TextIO | None = None) -> None:
    """Annotate ``document``'s findings (an aggregate: every member's) on ``out`` and add
    its summary to the step's summary file."""
    # lazy: the report formats (and the findings' identity) load only when a GitHub job
    # asks for annotations, not in every host session that imports the door
    from ckdn.app._annotating import render_report, report_of
    env = os.environ if env is None else env
    stream = sys.stdout if out is None else out
    try:
        report = report_of(config, document)
        stream.write(render_report(report, "github", env=env))
        stream.flush()
        path = env.get("GITHUB_STEP_SUMMARY")
        if path:
            _append_summary(path, report)
    except (CkdnError, OSError) as exc:
        reason = exc.message if isinstance(exc, CkdnError) else (exc.strerror or str(exc))
        sys.stderr.write(f"ckdn: no GitHub report: {reason}\n")


def _append_summary(path: str, report: Any) -> None:
    """Append to the step's summary what fits in what the step has left of its 1 MiB."""
    # lazy: as report_to_github, which alone calls this
    from ckdn.app._annotating import render_report
    from ckdn.reports import SUMMARY_BYTES  # lazy: as render_report
    try:
        used = os.stat(path).st_size
    except FileNotFoundError:
        used = 0
    left = SUMMARY_BYTES - used
    if left < 4096:  # not even a table: say nothing rather than push the step past its limit
        return
    text = render_report(report, "summary", summary_budget=left - 2)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text + "\n")
