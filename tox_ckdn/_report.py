"""What an env's output shows of a ckdn run, and the one line that fails the env.

A green run shows its compact digest line, as ``ckdn run`` prints it. A run
that is not green shows the rendered document and, for an alias, each red
member's digest: the aggregate only routes, and the member digest is what a
reader acts on. Everything goes to the env's own output stream, so under
``tox p`` it is shown with that env's output (always for a failing env).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tox.tox_env.api import ToxEnv

    from ckdn.app import Outcome
    from ckdn.digest import Member

__all__ = ["headline", "members_of", "show"]


def show(tox_env: ToxEnv, cwd: Path, doc: dict[str, Any]) -> None:
    from ckdn.digest import encode, render
    from ckdn.reconcile import PASS

    if doc["status"] == PASS:
        text = encode(doc).decode("utf-8")
    else:
        text = "\n".join([render(doc), *_red_members(cwd, doc)])
    stream = tox_env.log_handler.stdout
    stream.write(text + "\n")
    stream.flush()


def headline(doc: dict[str, Any]) -> str:
    """One line: what is not green and where its evidence is."""
    from ckdn.reconcile import PASS, SKIPPED

    if "alias" in doc:
        first = next((m for m in doc["members"] if m["status"] not in (PASS, SKIPPED)), None)
        where = (f"; first red member {first['check']} {first['status']} (rc {first['rc']}),"
                 f" evidence in {first['run_dir']}" if first else "; a member did not run")
        return f"{doc['alias']} {doc['status']} (rc {doc['rc']}){where}"
    reason = f": {doc['status_reason']}" if doc.get("status_reason") else ""
    return f"{doc['check']} {doc['status']} (rc {doc['rc']}){reason}; evidence in {doc['run_dir']}"


def members_of(outcome: Outcome) -> list[Member]:
    """The tox aggregate's entries for one run: itself, or an alias's members."""
    from ckdn.digest import Member

    doc = outcome.document
    if "alias" not in doc:
        return [Member(check=doc["check"], status=doc["status"], rc=doc["rc"],
                       run_dir=doc["run_dir"])]
    return [Member(check=m["check"], status=m["status"], rc=m.get("rc"),
                   run_dir=m.get("run_dir")) for m in doc["members"]]


def _red_members(cwd: Path, doc: dict[str, Any]) -> Iterator[str]:
    """Each red member's digest, rendered, in member order."""
    import json

    from ckdn.digest import render
    from ckdn.reconcile import PASS, SKIPPED

    for entry in doc.get("members", ()):
        if entry["status"] in (PASS, SKIPPED):
            continue
        path = cwd / entry["run_dir"] / "digest.json"
        try:
            member = json.loads(path.read_bytes())
        except (OSError, ValueError):
            member = None
        if isinstance(member, dict):
            yield render(member)
        else:
            yield f"ckdn: no readable digest in {entry['run_dir']}"
