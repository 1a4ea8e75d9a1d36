"""Fingerprints survive what happens between two runs, and never absorb a new finding."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.identity import SourceLines, fingerprints, match, normalise_message
from ckdn.identity.renames import git_renames
from ckdn.parsers.base import Finding

SOURCE = ["import os", "", "def total(items):", "    return sum(items) + unused_name", ""]


def write(root: Path, name: str, lines: list[str]) -> None:
    (root / name).write_text("\n".join(lines) + "\n")


def flagged(lines: list[str], needle: str, *, path: str = "app.py", rule: str = "F821",
            message: str = "Undefined name `unused_name`") -> Finding:
    """A finding at the line holding ``needle``, as ruff's parser builds one."""
    number = next(i for i, line in enumerate(lines, 1) if needle in line)
    return Finding(f"{path}:{number}:5:{rule}", "lint_violation", f"{rule} {message}",
                   f"{path}:{number}:5")


def prints(root: Path, findings: list[Finding]) -> list[str]:
    return [item.fingerprint for item in fingerprints(findings, SourceLines(str(root)))]


def known(root: Path, baseline: list[str], findings: list[Finding],
          renames: dict[str, list[str]] | None = None) -> list[bool]:
    return match(baseline, fingerprints(findings, SourceLines(str(root))), renames).known


_LINES = st.lists(st.text(alphabet="abc =()#x1", max_size=20), max_size=15)


@given(above=_LINES, indent=st.integers(0, 8))
def test_lines_inserted_above_and_reindentation_keep_the_fingerprint(
        tmp_path_factory: pytest.TempPathFactory, above: list[str], indent: int) -> None:
    root = tmp_path_factory.mktemp("src")
    write(root, "app.py", SOURCE)
    before = prints(root, [flagged(SOURCE, "unused_name")])
    edited = above + SOURCE[:3] + [" " * indent + SOURCE[3].strip()] + SOURCE[4:]
    write(root, "app.py", edited)
    after = flagged(edited, "unused_name")
    assert prints(root, [after]) == before


@given(copies=st.integers(1, 5), recorded=st.integers(0, 5))
def test_a_new_copy_of_a_known_finding_is_never_absorbed(
        tmp_path_factory: pytest.TempPathFactory, copies: int, recorded: int) -> None:
    root = tmp_path_factory.mktemp("src")
    lines = ["x = unused_name"] * max(copies, recorded)
    write(root, "app.py", lines)

    def at(n: int) -> Finding:
        return Finding(f"app.py:{n}:5:F821", "lint_violation", "F821 Undefined name",
                       f"app.py:{n}:5")
    baseline = prints(root, [at(n) for n in range(1, recorded + 1)])
    got = known(root, baseline, [at(n) for n in range(1, copies + 1)])
    assert got.count(True) == min(copies, recorded)
    assert got.count(False) == max(0, copies - recorded)


def test_a_reworded_message_keeps_the_fingerprint_of_a_finding_with_a_line(
        tmp_path: Path) -> None:
    write(tmp_path, "app.py", SOURCE)
    baseline = prints(tmp_path, [flagged(SOURCE, "unused_name", message="Undefined name 'a'")])
    again = flagged(SOURCE, "unused_name", message="Undefined name 'b' (2 times)")
    assert known(tmp_path, baseline, [again]) == [True]


def test_without_a_source_line_the_message_stands_in_numbers_and_names_folded(
        tmp_path: Path) -> None:
    first = Finding("req==1.0:PYSEC-1", "vulnerability", "req==1.0: PYSEC-1 (fix: 1.2)", None)
    reworded = Finding("req==1.0:PYSEC-1", "vulnerability", "req==1.0: PYSEC-1 (fix: 1.3)", None)
    other = Finding("req==1.0:PYSEC-2", "vulnerability", "req==1.0: PYSEC-2 (fix: 1.3)", None)
    baseline = prints(tmp_path, [first])
    assert known(tmp_path, baseline, [reworded, other]) == [True, False]
    assert normalise_message("found 'x' at 12 and `y` 3.5") == "found '_' at 0 and '_' 0"


def test_the_line_number_is_never_part_of_the_fingerprint(tmp_path: Path) -> None:
    write(tmp_path, "app.py", ["a = 1", "b = unused_name"])
    one = prints(tmp_path, [flagged(["a = 1", "b = unused_name"], "unused")])
    write(tmp_path, "app.py", ["", "", "a = 1", "b = unused_name"])
    two = prints(tmp_path, [flagged(["", "", "a = 1", "b = unused_name"], "unused")])
    assert one == two


def test_an_edited_flagged_line_is_matched_by_rule_path_and_message(tmp_path: Path) -> None:
    write(tmp_path, "app.py", SOURCE)
    baseline = prints(tmp_path, [flagged(SOURCE, "unused_name")])
    edited = [*SOURCE[:3], "    return sum(items) * 2 + unused_name", ""]
    write(tmp_path, "app.py", edited)
    result = match(baseline, fingerprints([flagged(edited, "unused_name")],
                                          SourceLines(str(tmp_path))))
    assert result.known == [True]
    assert result.by_pass == {"exact": 0, "renamed": 0, "message": 1}


def test_another_rule_on_the_same_line_is_new(tmp_path: Path) -> None:
    write(tmp_path, "app.py", SOURCE)
    baseline = prints(tmp_path, [flagged(SOURCE, "unused_name")])
    other = flagged(SOURCE, "unused_name", rule="E501", message="Line too long")
    assert known(tmp_path, baseline, [other]) == [False]


def test_a_fixed_finding_is_a_stale_entry(tmp_path: Path) -> None:
    write(tmp_path, "app.py", SOURCE)
    baseline = prints(tmp_path, [flagged(SOURCE, "unused_name"), flagged(SOURCE, "import os",
                                                                        rule="F401")])
    result = match(baseline, fingerprints([flagged(SOURCE, "unused_name")],
                                          SourceLines(str(tmp_path))))
    assert result.known == [True]
    assert len(result.stale) == 1


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


@pytest.mark.parametrize("committed", [False, True])
def test_a_file_moved_with_git_mv_keeps_its_findings_known(tmp_path: Path,
                                                            committed: bool) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "pkg").mkdir()
    write(tmp_path, "pkg/app.py", SOURCE)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    baseline = prints(tmp_path, [flagged(SOURCE, "unused_name", path="pkg/app.py")])
    git(tmp_path, "mv", "pkg/app.py", "pkg/core.py")
    if committed:
        git(tmp_path, "commit", "-qm", "move")
    moved = flagged(SOURCE, "unused_name", path="pkg/core.py")
    assert known(tmp_path, baseline, [moved]) == [False]  # the path is part of identity
    renames = git_renames(str(tmp_path))
    assert renames == {"pkg/core.py": ["pkg/app.py"]}
    result = match(baseline, fingerprints([moved], SourceLines(str(tmp_path))), renames)
    assert (result.known, result.by_pass["renamed"]) == ([True], 1)
    # from a subdirectory, paths are the cwd's
    assert git_renames(str(tmp_path / "pkg")) == {"core.py": ["app.py"]}


def test_no_git_is_no_renames_never_an_error(tmp_path: Path) -> None:
    assert git_renames(str(tmp_path)) == {}


@given(data=st.binary(max_size=300))
def test_a_new_lines_key_is_hashed_with_the_builtin_sha256_to_the_same_digest(
        data: bytes) -> None:
    """A line's key is two SHA-256s of short inputs: the interpreter's own where built in (half
    OpenSSL's time a call), whose digest is OpenSSL's, byte for byte."""
    import hashlib
    import importlib.util

    from ckdn.identity import _fingerprint

    if importlib.util.find_spec("_sha2") or importlib.util.find_spec("_sha256"):
        assert _fingerprint._sha256 is not hashlib.sha256
    assert _fingerprint._sha256(data).digest() == hashlib.sha256(data).digest()
