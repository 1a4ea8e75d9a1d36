"""What a host can say while a run goes on in another thread: the member, the log's size;
and a check already running is refused as busy."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from ckdn.app import Config, load_config, run
from ckdn.app.host import StopRequest
from ckdn.app.queries import RunWatch
from ckdn.errors import BusyError, RefusedError
from tests.project import Project

CONFIG = """\
[check.quick]
command = "true"
parser = "generic"

[check.hang]
command = "sh -c 'echo started; sleep 300'"
parser = "generic"

[check.pair]
members = ["quick", "hang"]
"""


def _until(predicate: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_watch_names_the_running_member_and_its_log_size(project: Project) -> None:
    project.config(CONFIG)
    config = load_config(str(project.root))
    with _stopped_now() as stopped:  # an older run: the watch must pass it over
        run(config, "hang", stop=stopped)
    watch = RunWatch(config, "pair")
    assert (watch.now().member, watch.now().members, watch.now().check) == (0, 2, None)
    with StopRequest() as stop:
        thread = threading.Thread(target=run, args=(config, "pair"), kwargs={"stop": stop})
        thread.start()
        _until(lambda: watch.now().member == 2 and watch.now().log_bytes > 0)
        now = watch.now()
        busy = _refusal(config)
        stop.request("test")
        thread.join(30)
    assert (now.member, now.members, now.check, now.log_bytes) == (2, 2, "hang", 8)
    assert isinstance(busy, BusyError)
    assert isinstance(busy, RefusedError)  # what every host already catches
    assert "is already running" in str(busy)


def _stopped_now() -> StopRequest:
    stop = StopRequest()
    stop.request("test")
    return stop


def _refusal(config: Config) -> Exception:
    with pytest.raises(BusyError) as caught:
        run(config, "hang")
    return caught.value


def test_a_watch_of_every_check_counts_them_all(project: Project) -> None:
    project.config(CONFIG)
    config = load_config(str(project.root))
    assert RunWatch(config, "*").now().members == 2
    assert RunWatch(config, "quick").now().members == 1


def test_an_unreadable_runs_dir_leaves_a_watch_quiet(project: Project) -> None:
    project.config(CONFIG)
    config = load_config(str(project.root))
    (project.root / ".agent-runs").write_text("not a dir")
    assert RunWatch(config, "quick").now().member == 0
