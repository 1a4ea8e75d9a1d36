"""The note a host's run gets when its program is found on PATH outside the host's env."""

from __future__ import annotations

import os
from pathlib import Path

from ckdn.app._running.program_origin import outside_note


def tool(directory: Path, name: str = "tool") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_program_found_after_the_env_is_named_with_the_file_that_runs(tmp_path: Path) -> None:
    env_bin, outer = tmp_path / "env" / "bin", tmp_path / "outer"
    env_bin.mkdir(parents=True)
    found = tool(outer)
    note = outside_note("tool", {"PATH": f"{env_bin}{os.pathsep}{outer}"}, str(tmp_path),
                        [str(env_bin)])
    assert note == (f"tool ran from {found}, found on PATH outside the env (its bin directory "
                    f"{env_bin}): the env has no tool of its own")


def test_the_envs_own_program_has_no_note_even_through_a_symlinked_directory(
        tmp_path: Path) -> None:
    env_bin = tmp_path / "env" / "bin"
    tool(env_bin)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "env")
    path = {"PATH": f"{link / 'bin'}{os.pathsep}/usr/bin"}
    assert outside_note("tool", path, str(tmp_path), [str(env_bin)]) is None
    assert outside_note("tool", {"PATH": str(env_bin)}, str(tmp_path), [str(link / "bin")]) \
        is None


def test_only_an_executable_file_is_what_exec_would_run(tmp_path: Path) -> None:
    env_bin, first, second = tmp_path / "bin", tmp_path / "first", tmp_path / "second"
    env_bin.mkdir()
    tool(first).chmod(0o644)  # not executable: exec skips it
    (tmp_path / "dir" / "tool").mkdir(parents=True)  # a directory: skipped too
    found = tool(second)
    path = os.pathsep.join(map(str, [env_bin, tmp_path / "dir", first, second]))
    note = outside_note("tool", {"PATH": path}, str(tmp_path), [str(env_bin)])
    assert note is not None
    assert f" ran from {found}," in note


def test_a_relative_path_entry_is_read_from_the_checks_directory(tmp_path: Path) -> None:
    found = tool(tmp_path / "scripts")
    note = outside_note("tool", {"PATH": "scripts"}, str(tmp_path), [str(tmp_path / "bin")])
    assert note is not None
    assert f" ran from {found}," in note


def test_a_program_given_as_a_path_or_not_found_has_no_note(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    found = tool(outer)
    env = {"PATH": str(outer)}
    assert outside_note(str(found), env, str(tmp_path), [str(tmp_path / "bin")]) is None
    assert outside_note("./outer/tool", env, str(tmp_path), [str(tmp_path / "bin")]) is None
    assert outside_note("missing", env, str(tmp_path), [str(tmp_path / "bin")]) is None
    assert outside_note("", env, str(tmp_path), [str(tmp_path / "bin")]) is None


def test_several_bin_directories_are_all_the_envs(tmp_path: Path) -> None:
    scripts, bin_dir, outer = tmp_path / "Scripts", tmp_path / "bin", tmp_path / "outer"
    tool(scripts, "a")
    bin_dir.mkdir()
    tool(outer, "b")
    path = {"PATH": os.pathsep.join(map(str, [scripts, bin_dir, outer]))}
    assert outside_note("a", path, str(tmp_path), [str(scripts), str(bin_dir)]) is None
    note = outside_note("b", path, str(tmp_path), [str(scripts), str(bin_dir)])
    assert note is not None
    assert f"(its bin directories {scripts}, {bin_dir})" in note
