"""ckdn._lite.rmtree: removes what ``shutil.rmtree`` removes, never what a link points at.

Trees are generated (files, nested and empty directories, symlinks to files and
directories inside and outside the tree, dangling links), made twice, and removed
once by each; both must leave nothing of the tree and everything outside it. The
same holds on the fallback path (``shutil`` itself, for platforms without
descriptor-relative removal).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn import _lite as rmtree_module
from ckdn._lite import rmtree

NAMES = st.sampled_from(["a", "b", "c.txt", "dir", ".hidden", "é", "latest"])
#: A leaf is file content, or a link to a target outside the tree, inside it, or nowhere.
LEAVES = st.one_of(st.binary(max_size=20),
                   st.sampled_from(["->outside-file", "->outside-dir", "->inside", "->nowhere"]))
TREES: st.SearchStrategy[dict[str, Any]] = st.recursive(
    st.dictionaries(NAMES, LEAVES, max_size=4),
    lambda children: st.dictionaries(NAMES, st.one_of(LEAVES, children), max_size=4),
    max_leaves=20,
)


def make(root: Path, tree: dict[str, Any], outside: Path) -> None:
    root.mkdir()
    for name, value in tree.items():
        path = root / name
        if isinstance(value, dict):
            make(path, value, outside)
        elif isinstance(value, bytes):
            path.write_bytes(value)
        else:
            target = {"->outside-file": outside / "keep.txt", "->outside-dir": outside,
                      "->inside": root, "->nowhere": root / "missing"}[value]
            path.symlink_to(target)


def snapshot(outside: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(outside)): p.read_bytes() if p.is_file() else None
            for p in sorted(outside.rglob("*"))}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    keep = tmp_path / "outside"
    keep.mkdir()
    (keep / "keep.txt").write_bytes(b"evidence of another run")
    (keep / "sub").mkdir()
    (keep / "sub" / "deep.txt").write_bytes(b"deep")
    return keep


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(tree=TREES, fallback=st.booleans())
def test_the_tree_removal_removes_what_shutil_removes_and_nothing_else(
        tmp_path_factory: pytest.TempPathFactory, tree: dict[str, Any], fallback: bool) -> None:
    base = tmp_path_factory.mktemp("trees")
    outside = base / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_bytes(b"evidence")
    before = snapshot(outside)
    ours, theirs = base / "ours", base / "theirs"
    make(ours, tree, outside)
    make(theirs, tree, outside)
    original = rmtree_module._FD_REMOVAL
    try:
        rmtree_module._FD_REMOVAL = original and not fallback
        rmtree(str(ours))
    finally:
        rmtree_module._FD_REMOVAL = original
    shutil.rmtree(theirs)
    assert not os.path.lexists(ours)
    assert not os.path.lexists(theirs)
    assert snapshot(outside) == before


def test_a_tree_already_gone_is_not_an_error(tmp_path: Path) -> None:
    rmtree(str(tmp_path / "pruned-by-someone-else"))


def test_the_root_given_as_a_symlink_is_not_followed(tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(outside)
    before = snapshot(outside)
    with pytest.raises(OSError, match="symbolic link"):
        shutil.rmtree(link)
    with pytest.raises(OSError, match=r"Errno (40|20)"):  # ELOOP / ENOTDIR: O_NOFOLLOW held
        rmtree(str(link))
    assert snapshot(outside) == before
