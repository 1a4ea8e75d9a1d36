"""ckdn.process.StopRequest: a host stops a run from another thread, as Ctrl-C would."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from ckdn import app
from ckdn.config import load_config
from ckdn.process.stop import StopRequest


def test_the_first_reason_is_kept_and_requests_after_close_are_harmless() -> None:
    stop = StopRequest()
    assert not stop.requested
    stop.request("tox was interrupted")
    stop.request("a second press")
    assert (stop.requested, stop.reason) == (True, "tox was interrupted")
    fd = stop.fileno()
    assert os.read(fd, 10) == b"xx"  # readable: what the runner polls
    stop.close()
    stop.request("too late")  # never writes to a closed (maybe reused) descriptor
    assert stop.fileno() == -1


def test_a_stopped_alias_member_ends_the_alias_and_the_rest_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(
        '[check.long]\ncommand = "sh -c \'sleep 30; touch slept\'"\nparser = "generic"\n'
        '[check.after]\ncommand = "true"\nparser = "generic"\n'
        '[check.both]\nmembers = ["long", "after"]\nfail_fast = false\n')
    config = load_config(tmp_path)
    with StopRequest() as stop:
        asker = threading.Timer(0.3, stop.request, args=("tox was interrupted",))
        asker.start()
        outcome = app.run(config, "both", stop=stop, env={"PATH": os.environ["PATH"]})
        asker.join()
    assert not (tmp_path / "slept").exists()  # stopped, not waited for
    aggregate = outcome.document
    assert "alias" in aggregate
    statuses = [(m["check"], m["status"]) for m in aggregate["members"]]
    assert statuses == [("long", "error"), ("after", "skipped")]
    member = json.loads(Path(tmp_path, aggregate["members"][0]["run_dir"],
                             "digest.json").read_text())
    assert (member["rc"], member["interrupted"]) == (130, True)
    assert member["notes"][0].startswith("stopped at the host's request (tox was interrupted)")
