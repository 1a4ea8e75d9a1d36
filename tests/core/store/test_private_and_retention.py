"""Private, bounded evidence: run dirs owner-only, runs removed by age and by total size."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from ckdn.store import Store
from tests.project import Project

DAY = 86400.0
NOW = 1_783_419_300.0  # 2026-07-07T10:15:00Z


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def store_at(root: Path, when: float, **kwargs: object) -> Store:
    return Store(root / "runs", root, clock=lambda: when, durable=False, **kwargs)  # type: ignore[arg-type]


def run_at(root: Path, check: str, when: float, size: int = 10, *, finished: bool = True) -> str:
    store = store_at(root, when)
    with store.begin(check) as rd:
        Path(rd.path, "full.log").write_bytes(b"x" * size)
        if finished:
            store.write_atomic(os.path.join(rd.path, "digest.json"), b"{}\n")
        return rd.name


def names(root: Path) -> set[str]:
    return {p.name for p in (root / "runs").iterdir() if not p.name.startswith((".", "l", "L"))}


def test_a_run_dir_and_its_documents_are_owner_only_by_default(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = Store(tmp_path / "runs", tmp_path)
        with store.begin("c") as rd:
            store.write_atomic(os.path.join(rd.path, "digest.json"), b"{}\n")
        assert mode(tmp_path / "runs") == 0o700
        assert mode(rd.path) == 0o700
        assert mode(os.path.join(rd.path, "digest.json")) == 0o600
        shared = Store(tmp_path / "shared", tmp_path, private=False)
        with shared.begin("c") as rd:
            shared.write_atomic(os.path.join(rd.path, "digest.json"), b"{}\n")
        assert mode(rd.path) == 0o755
        assert mode(os.path.join(rd.path, "digest.json")) == 0o644
    finally:
        os.umask(old)


def test_a_real_runs_log_and_documents_are_owner_only(project: Project) -> None:
    project.config(f"""
        [check.ok]
        command = "{sys.executable} -c pass"
        parser = "generic"
    """)
    proc = project.ckdn("run", "ok")
    assert proc.returncode == 0, proc.stderr
    run_dir = project.root / project.digest(proc)["run_dir"]
    assert mode(run_dir) == 0o700
    for name in ("full.log", "meta.json", "digest.json"):
        assert mode(run_dir / name) == 0o600, name


def test_private_false_leaves_the_umask_to_decide(project: Project) -> None:
    project.config("""
        [run]
        private = false
        [check.ok]
        command = "true"
        parser = "generic"
    """)
    proc = project.ckdn("run", "ok")
    run_dir = project.root / project.digest(proc)["run_dir"]
    assert mode(run_dir) & 0o055
    assert mode(run_dir / "full.log") & 0o044


def test_gc_removes_runs_older_than_max_age_but_never_an_unfinished_or_the_latest(
        tmp_path: Path) -> None:
    now = time.time()
    old = run_at(tmp_path, "a", now - 40 * DAY)
    old_unfinished = run_at(tmp_path, "a", now - 41 * DAY, finished=False)
    fresh = run_at(tmp_path, "b", now - 1 * DAY)
    oldest_other = run_at(tmp_path, "c", now - 50 * DAY)
    store = store_at(tmp_path, now)
    store.publish(str(tmp_path / "runs" / oldest_other))
    would = store.gc(20, max_age_days=30, dry_run=True)
    assert [os.path.basename(p) for p in would] == [old]
    assert names(tmp_path) == {old, old_unfinished, fresh, oldest_other}  # dry run: nothing gone
    removed = Store(tmp_path / "runs", tmp_path).gc(20, max_age_days=30)
    assert [os.path.basename(p) for p in removed] == [old]
    assert names(tmp_path) == {old_unfinished, fresh, oldest_other}


def test_gc_removes_the_oldest_finished_runs_until_the_total_fits_max_bytes(
        tmp_path: Path) -> None:
    runs = [run_at(tmp_path, "a", NOW - (10 - i) * DAY, size=1000) for i in range(5)]
    unfinished = run_at(tmp_path, "a", NOW - 20 * DAY, size=5000, finished=False)
    store = store_at(tmp_path, NOW)
    removed = [os.path.basename(p) for p in store.gc(20, max_bytes=2100)]
    assert removed == runs[:3]
    assert names(tmp_path) == {*runs[3:], unfinished}


def test_the_prune_after_each_run_applies_the_limits(project: Project) -> None:
    project.config("""
        [run]
        max_bytes = 1
        [check.ok]
        command = "true"
        parser = "generic"
    """)
    first = project.digest(project.ckdn("run", "ok"))["run_dir"]
    second = project.digest(project.ckdn("run", "ok"))["run_dir"]
    left = {p.name for p in project.runs.iterdir() if not p.name.startswith(".")} - {"latest"}
    assert left == {os.path.basename(second)}  # the latest stays, whatever its size
    assert first != second


def test_gc_dry_run_lists_what_would_go_and_removes_nothing(project: Project) -> None:
    project.config("""
        [run]
        keep = 0
        [check.ok]
        command = "true"
        parser = "generic"
    """)
    for _ in range(3):
        project.ckdn("run", "ok")
    before = sorted(p.name for p in project.runs.iterdir())
    proc = project.ckdn("gc", "--keep", "1", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    assert all(line.startswith("would remove ") for line in lines[:2])
    assert lines[-1].startswith("would remove 2 run directories; kept up to 1")
    assert sorted(p.name for p in project.runs.iterdir()) == before
    proc = project.ckdn("gc", "--keep", "1")
    assert proc.stdout.startswith("removed 2 run directories")


@pytest.mark.parametrize(("key", "value"), [("max_age_days", "0"), ("max_bytes", "-1")])
def test_a_retention_limit_that_is_no_limit_is_refused(project: Project, key: str,
                                                       value: str) -> None:
    project.config(f'[run]\n{key} = {value}\n[check.ok]\ncommand = "true"\nparser = "generic"\n')
    proc = project.ckdn("run", "ok")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert f"[run] {key}: must be" in proc.stderr
