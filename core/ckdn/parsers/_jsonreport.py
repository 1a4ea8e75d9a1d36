"""Opening a tool's JSON report in the run dir: the steps every JSON parser shares.

bandit, pylint, pip-audit and SARIF producers all write one JSON file whose
absence or damage has the same causes (the flag that writes it is missing, the
tool stopped before writing, the file is cut short), so the notes that explain
them are written once here; what the document must contain stays with each parser.
"""

from __future__ import annotations

import json

from ckdn.parsers.base import ArtifactError, ParseContext

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["load_report"]


def load_report(ctx: ParseContext, *, default: str, label: str, needs: str,
                log_tail: Callable[[], str], why: str = "",
                empty: str | None = None) -> tuple[str, Any] | str:
    """``(file name, decoded JSON)`` of the report named by the ``report`` option, or why not.

    ``label`` names the report in notes ("bandit report"), ``needs`` is what the
    command must do to write it ("include -f json -o {run_dir}/"), ``why`` explains
    the exit code, ``log_tail`` quotes the log's last words (read only on the error
    path), and ``empty``, when given, is how an empty file is explained (the tool
    stopped before writing) instead of as unreadable JSON.
    """
    try:
        path = ctx.artifact("report", default)
    except ArtifactError as exc:
        return str(exc)
    if not path.is_file():
        return (f"{label} {path.name} not found in the run dir (exit code {ctx.rc}{why}); "
                f"the command must {needs}{path.name}{log_tail()}")
    if empty is not None and path.stat().st_size == 0:
        return f"{label} {path.name} is empty (exit code {ctx.rc}{why}): {empty}{log_tail()}"
    try:
        with open(path, "rb") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError) as exc:
        return (f"{label} {path.name} is not readable JSON: {type(exc).__name__}: {exc}"
                f"{log_tail()}")
    return path.name, data
