"""A shared directory is made once a suite run, by one maker at a time, and never half."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.shared import shared_dir, shared_root


def test_a_shared_dir_is_made_once_and_then_read(tmp_path_factory: pytest.TempPathFactory,
                                                 tmp_path: Path) -> None:
    calls: list[Path] = []

    def make(root: Path) -> None:
        calls.append(root)
        (root / "made").write_text("once")

    key = f"once-{tmp_path.name}"
    first = shared_dir(tmp_path_factory, key, make)
    assert shared_dir(tmp_path_factory, key, make) == first
    assert calls == [first]
    assert (first / "made").read_text() == "once"
    assert first.parent == shared_root(tmp_path_factory)


def test_a_maker_that_fails_leaves_nothing_and_the_next_caller_makes_it_again(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    def broken(root: Path) -> None:
        (root / "half").write_text("")
        raise AssertionError("the real run was red")

    key = f"broken-{tmp_path.name}"
    with pytest.raises(AssertionError, match="the real run was red"):
        shared_dir(tmp_path_factory, key, broken)
    assert not (shared_root(tmp_path_factory) / f"shared-{key}").exists()
    with pytest.raises(AssertionError, match="the real run was red"):  # made again: seen again
        shared_dir(tmp_path_factory, key, broken)
    made = shared_dir(tmp_path_factory, key, lambda root: (root / "whole").write_text(""))
    assert sorted(p.name for p in made.iterdir()) == ["whole"]


MAKER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import tests.shared as shared

    class Factory:
        def getbasetemp(self):
            return Path(sys.argv[1])

    def make(root):
        with open(Path(sys.argv[1]) / "makers", "a") as log:
            log.write("made\\n")
        time.sleep(0.3)  # the other process asks while this one is making
        (root / "done").write_text("")

    print(sorted(p.name for p in shared.shared_dir(Factory(), "race", make).iterdir()))
""")


def test_two_processes_asking_at_once_get_one_maker(tmp_path: Path) -> None:
    """As two xdist workers do: the second waits on the lock, then reads the first's."""
    root = Path(__file__).parent.parent
    procs = [subprocess.Popen([sys.executable, "-c", MAKER, str(tmp_path)], cwd=root,
                              stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(root)})
             for _ in range(2)]
    outputs = [proc.communicate(timeout=60)[0] for proc in procs]
    assert outputs == ["['done']\n", "['done']\n"]
    assert (tmp_path / "makers").read_text() == "made\n"
