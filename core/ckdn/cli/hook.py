"""``ckdn hook edit|stop``: the commands an agent's hooks run (docs/agents.md#3-hooks).

``edit`` (Claude Code's ``PostToolUse``) runs the named checks: silent on green; on
red the red checks' findings, grouped by rule and bounded (:func:`brief_red`), go to
stderr and the exit is 2, which hands them to the model. ``stop`` (``Stop``) asks
``ckdn status`` whether the tree as it is now is green, and blocks the stop while it
is not, naming what is stale, missing or red; a second stop in a row is let through
when only red checks are left (what the agent could not fix is the person's to hear,
with a message), so the hook never holds a session in a loop.
"""

from __future__ import annotations

import json
import os
import select
import sys

from ckdn import app
from ckdn.app.freshness import status as tree_status
from ckdn.app.queries import BRIEF_BYTES, brief_red, read_document
from ckdn.cli._verb_io import load_config
from ckdn.errors import CkdnError, UsageError, one_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from types import SimpleNamespace
    from typing import Any

__all__ = ["Decision", "add_options", "handle", "stop_decision"]

#: The exit code Claude Code reads as "blocked: stderr is the reason".
BLOCK = 2
#: The hook's input (JSON on stdin): the most bytes read, and how long to wait for them.
_PAYLOAD_BYTES = 1 << 20
_PAYLOAD_WAIT = 2.0
#: Checks named in a stop's reason, at most; files named per stale check.
_SHOWN_CHECKS = 10
_SHOWN_FILES = 5
#: The verdicts of a green ``ckdn.status/1`` document.
GREEN_VERDICTS = ("green", "pass")
#: States of a check the agent can make fresh by running it.
_NOT_RUN = ("stale", "missing")


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("event", choices=("edit", "stop"),
                        help="edit: run NAMES, findings on red (PostToolUse); stop: block while"
                             " `ckdn status NAMES` is not green (Stop)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="checks or aliases")
    parser.add_argument("--all", action="store_true",
                        help="edit: run every atomic check (instead of NAMES)")
    parser.add_argument("--run", action="store_true",
                        help="stop: rerun what is stale or missing first (`ckdn status --run`)")
    parser.add_argument("--client", choices=("claude", "cursor"), default="claude",
                        help="whose hook protocol to answer in (default: claude)")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    payload = _payload()
    if not getattr(args, "cwd", None) and not os.environ.get("CKDN_CWD"):
        args.cwd = _project_of(payload)
    if args.event == "edit":
        return _edit(args)
    status, problem = _status(args)
    briefs = _briefs(args, status) if status is not None \
        and status.get("verdict") not in GREEN_VERDICTS else ""
    return _answer_stop(args, stop_decision(status, problem, again=_again(payload),
                                            briefs=briefs))


def _payload() -> Mapping[str, Any]:
    """The JSON the client hands the hook on stdin ({} without one, or an unreadable one)."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        fd = sys.stdin.fileno()
        chunks: list[bytes] = []
        size = 0
        while size <= _PAYLOAD_BYTES and select.select([fd], [], [], _PAYLOAD_WAIT)[0]:
            chunk = os.read(fd, 1 << 16)  # a Write's input holds the whole file: many reads
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        raw = b"".join(chunks)
        value = json.loads(raw) if raw.strip() and size <= _PAYLOAD_BYTES else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _project_of(payload: Mapping[str, Any]) -> str | None:
    """The project the client names in the hook's input (Claude Code's ``cwd``, Cursor's
    first ``workspace_roots``), when it is a directory: a hook may start elsewhere."""
    roots = payload.get("workspace_roots")
    named = roots[0] if isinstance(roots, list) and roots else payload.get("cwd")
    return named if isinstance(named, str) and os.path.isdir(named) else None


def _again(payload: Mapping[str, Any]) -> bool:
    """This stop comes right after one the hook blocked (Claude Code's ``stop_hook_active``,
    Cursor's ``loop_count``)."""
    count = payload.get("loop_count")
    return payload.get("stop_hook_active") is True or (type(count) is int and count > 0)


def _edit(args: SimpleNamespace) -> int:
    if args.all == bool(args.names):
        raise UsageError("name the checks or aliases to run, or pass --all")
    config = load_config(args)
    outcomes = [app.run_all(config)] if args.all else [app.run(config, name)
                                                       for name in args.names]
    red = [o.document for o in outcomes if o.status != "pass"]
    if not red:
        return 0
    share = BRIEF_BYTES // len(red)
    sys.stderr.write("".join(brief_red(config, doc, share) for doc in red))
    return BLOCK


class Decision:
    """A stop's answer: ``block`` it with ``reason`` (for the model), or let it through,
    with ``message`` (for the person) when it leaves something red."""

    __slots__ = ("block", "message", "reason")

    def __init__(self, *, block: bool, reason: str = "", message: str = "") -> None:
        self.block = block
        self.reason = reason
        self.message = message


def _green(row: Mapping[str, Any]) -> bool:
    """A fresh ``pass`` that is not weakened (the entry's ``green``, else its state)."""
    if isinstance(row.get("green"), bool):
        return bool(row["green"])
    return row.get("state") == "fresh" and row.get("status") == "pass"


def _row_line(row: Mapping[str, Any]) -> str:
    name, state = str(row.get("check", "?")), str(row.get("state", "?"))
    if state == "stale":
        files = [str(f) for f in row.get("changed") or row.get("changed_files") or ()]
        total = row.get("changed_total")
        count = total if type(total) is int else len(files)
        shown = ", ".join(files[:_SHOWN_FILES]) + (", ..." if count > _SHOWN_FILES else "")
        counted = f"{count} file{'s' if count != 1 else ''}"
        return f"{name}: stale ({counted} changed since its run: {shown})" if files \
            else f"{name}: stale"
    if state == "fresh" and (row.get("weakened") or row.get("status") == "pass"):
        what = "; ".join(str(w) for w in row.get("weakened") or ())[:200]
        return f"{name}: weakened ({what})" if what else f"{name}: weakened"
    if state == "fresh":
        return f"{name}: {row.get('status', '?')} on the tree as it is now"
    reason = f" ({str(row['reason'])[:160]})" if row.get("reason") else ""
    return f"{name}: {state}{reason}"


def stop_decision(status: Mapping[str, Any] | None, problem: str = "", *, again: bool,
                  briefs: str = "") -> Decision:
    """What a stop gets, from the ``ckdn.status/1`` document (None: ``ckdn status`` could not
    answer, ``problem`` says why)."""
    if status is None:
        reason = f"ckdn status could not answer: {problem}"
        return Decision(block=False, message=reason) if again else Decision(block=True,
                                                                            reason=reason)
    rows = [r for r in status.get("checks") or () if isinstance(r, dict) and not _green(r)]
    if status.get("verdict") in GREEN_VERDICTS or not rows:
        return Decision(block=False)
    not_run = [r for r in rows if r.get("state") in _NOT_RUN]
    lines = [_row_line(r) for r in rows[:_SHOWN_CHECKS]]
    if len(rows) > _SHOWN_CHECKS:
        lines.append(f"... and {len(rows) - _SHOWN_CHECKS} more")
    if again and not not_run:
        return Decision(block=False, message="ckdn: stopped with checks not green: "
                        + "; ".join(lines))
    todo = []
    if not_run:
        todo.append("run what is stale or missing (ckdn run NAME, or ckdn status --run)")
    if len(not_run) < len(rows):
        todo.append("fix what is red and rerun that check; an error a tool's own config"
                    " causes is for the person: say so and stop")
    reason = "\n".join(["ckdn status: not green, so not done yet:", *lines,
                        "Next: " + "; ".join(todo) + "."]) + "\n"
    return Decision(block=True, reason=reason + briefs)


def _status(args: SimpleNamespace) -> tuple[dict[str, Any] | None, str]:
    """The ``ckdn.status/1`` document of the named checks, asked in this process (with
    ``--run``: what is stale or missing run first), or ckdn's one line why not."""
    try:
        return tree_status(load_config(args), args.names, run=args.run), ""
    except CkdnError as exc:
        return None, one_line(str(exc))


def _briefs(args: SimpleNamespace, status: Mapping[str, Any]) -> str:
    """The findings of the checks that are fresh and red, for the reason (bounded)."""
    rows = [r for r in status.get("checks") or () if isinstance(r, dict)
            and r.get("state") == "fresh" and r.get("status") not in (None, "pass")
            and isinstance(r.get("run_id"), str)]
    if not rows:
        return ""
    try:
        config = load_config(args)
        docs = [read_document(config, str(r["run_id"])).get("digest") for r in rows]
    except CkdnError:
        return ""
    share = BRIEF_BYTES // len(rows)
    return "".join(brief_red(config, doc, share) for doc in docs if isinstance(doc, dict))


def _answer_stop(args: SimpleNamespace, decision: Decision) -> int:
    if args.client == "cursor":  # Cursor reads a JSON answer on stdout, exit 0
        answer = {"followup_message": decision.reason} if decision.block else {}
        sys.stdout.write(json.dumps(answer) + "\n")
        return 0
    if decision.block:
        sys.stderr.write(decision.reason)
        return BLOCK
    if decision.message:
        sys.stdout.write(json.dumps({"systemMessage": decision.message}) + "\n")
    return 0
