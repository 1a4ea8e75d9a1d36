"""The door's evidence windows (``ckdn.app.queries.read_window``): bounded whatever the file
holds, by run id only."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckdn.app import Config, inert, load_config, run
from ckdn.app.queries import MAX_LIMIT, read_window, run_id
from ckdn.errors import UsageError
from tests.project import Project, py

SETTINGS = settings(max_examples=60)  # each example is a real run of a check


def _run_printing(project: Project, data: bytes) -> tuple[Config, str]:
    """A real run of a check that copies ``data`` to its log."""
    (project.root / "blob.bin").write_bytes(data)
    copy = py("import sys; sys.stdout.buffer.write(open('blob.bin', 'rb').read())")
    project.config(f"[check.out]\ncommand = {json.dumps(copy)}\nparser = \"generic\"\n")
    config = load_config(str(project.root))
    outcome = run(config, "out")
    assert outcome.run_dir is not None
    return config, os.path.basename(outcome.run_dir)


def test_a_window_states_its_offset_limit_total_and_next_offset(project: Project) -> None:
    config, name = _run_printing(project, b"".join(b"line %d\n" % i for i in range(10)))
    window = read_window(config, name, offset=2, limit=3)
    assert window["lines"] == ["line 2", "line 3", "line 4"]
    assert (window["offset"], window["limit"], window["returned"]) == (2, 3, 3)
    assert (window["total_lines"], window["next_offset"], window["lines_cut"]) == (10, 5, 0)
    assert window["truncated"] is False
    tail = read_window(config, name, offset=-2, limit=50)
    assert (tail["lines"], tail["offset"], tail["next_offset"]) == (["line 8", "line 9"], 8, None)
    far = read_window(config, name, offset=-8, limit=2)  # counted first, never kept
    assert (far["lines"], far["offset"], far["next_offset"]) == (["line 2", "line 3"], 2, 4)
    before = read_window(config, name, offset=-10**9, limit=1)
    assert (before["lines"], before["offset"]) == (["line 0"], 0)
    past = read_window(config, name, offset=40, limit=5)
    assert (past["returned"], past["next_offset"], past["total_lines"]) == (0, None, 10)


def test_a_long_line_is_cut_and_counted_and_the_window_has_a_character_budget(
        project: Project) -> None:
    long = b"x" * 1_000_000
    config, name = _run_printing(project, long + b"\nshort\n" + (b"y" * 400 + b"\n") * 150)
    window = read_window(config, name, limit=MAX_LIMIT)
    first = window["lines"][0]
    assert first.startswith("x" * 300)
    assert first.endswith(f"... [+{1_000_000 - 300} chars]")
    assert window["lines"][1] == "short"
    assert window["truncated"] is True  # 150 cut lines of ~320 characters pass 16,000
    assert sum(map(len, window["lines"])) <= 16_000
    assert window["next_offset"] == window["returned"]
    assert window["lines_cut"] == window["returned"] - 1
    assert window["total_lines"] == 152


@SETTINGS
@given(st.binary(max_size=5000), st.integers(-300, 300), st.integers(1, MAX_LIMIT))
def test_any_bytes_give_a_bounded_inert_window_and_the_true_line_count(
        tmp_path_factory: pytest.TempPathFactory, data: bytes, offset: int, limit: int) -> None:
    project = Project(tmp_path_factory.mktemp("evidence"))
    config, name = _run_printing(project, data)
    window = read_window(config, name, offset=offset, limit=limit)
    assert window["total_lines"] == data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    assert window["returned"] == len(window["lines"]) <= limit
    assert sum(map(len, window["lines"])) <= 16_000 + 400
    for line in window["lines"]:
        assert inert(line) == line  # nothing in it acts on a terminal or reorders text


def test_run_references_are_run_ids_never_paths(project: Project) -> None:
    config, name = _run_printing(project, b"hi\n")
    assert run_id(config, None) == name
    run_dir = str(project.root / ".agent-runs" / name)
    for ref in (run_dir, f".agent-runs/{name}", f"../{name}", ".locks", ""):
        with pytest.raises(UsageError):
            read_window(config, ref)
    with pytest.raises(UsageError, match="limit must be between 1 and 200"):
        read_window(config, name, limit=MAX_LIMIT + 1)


def test_a_planted_symlink_or_fifo_is_never_read(project: Project) -> None:
    config, name = _run_printing(project, b"hi\n")
    log = project.root / ".agent-runs" / name / "full.log"
    log.unlink()
    log.symlink_to("/etc/passwd")
    with pytest.raises(UsageError, match="cannot be read"):
        read_window(config, name)
    log.unlink()
    os.mkfifo(log)
    with pytest.raises(UsageError, match="not a regular file"):
        read_window(config, name)


def test_a_planted_digest_listing_a_path_never_opens_it(project: Project) -> None:
    config, name = _run_printing(project, b"hi\n")
    digest_path = project.root / ".agent-runs" / name / "digest.json"
    digest = json.loads(digest_path.read_text())
    planted = ["../../ckdn.toml", "/etc/passwd", "..", "sub/x"]
    digest["artifacts"] = [*digest.get("artifacts", []), *planted]
    digest_path.write_text(json.dumps(digest))
    for file in planted:
        with pytest.raises(UsageError, match="is not evidence of run"):
            read_window(config, name, file)
    assert read_window(config, name, "full.log")["lines"] == ["hi"]
