"""What an env's output shows of a ckdn run, and the one line that fails the env.

A green run shows its compact digest line, as ``ckdn run`` prints it. A run
that is not green shows the rendered document and, for an alias, each red
member's digest: the aggregate only routes, and the member digest is what a
reader acts on. Everything goes to the env's own output stream, so under
``tox p`` it is shown with that env's output (always for a failing env).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ckdn.app import PASS, encode
from ckdn.app.host import Member
from ckdn.app.queries import red_members, render

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tox.tox_env.api import ToxEnv

    from ckdn.app import Config, Outcome
    from ckdn.app.types import Document

__all__ = ["members_of", "show"]


def show(tox_env: ToxEnv, config: Config, doc: Document) -> None:
    if doc["status"] == PASS:
        text = encode(doc).decode("utf-8")
    else:
        text = "\n".join([render(doc), *_red_members(config, doc)])
    stream = tox_env.log_handler.stdout
    stream.write(text + "\n")
    stream.flush()


def members_of(outcome: Outcome) -> list[Member]:
    """The tox aggregate's entries for one run: itself, or an alias's members."""
    doc = outcome.document
    if "alias" not in doc:
        return [Member(check=doc["check"], status=doc["status"], rc=doc["rc"],
                       run_dir=doc["run_dir"])]
    return [Member(check=m["check"], status=m["status"], rc=m.get("rc"),
                   run_dir=m.get("run_dir")) for m in doc["members"]]


def _red_members(config: Config, doc: Document) -> Iterator[str]:
    """Each red member's digest, rendered, in member order."""
    for run_dir, member in red_members(config, doc):
        yield render(member) if member is not None else f"ckdn: no readable digest in {run_dir}"
