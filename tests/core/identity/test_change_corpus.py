"""The diff reader and the where x origin placement over a corpus of real diffs made by real
git (and by ``diff -u``, and in the header styles of jj and hg) in temporary repositories.

Each case builds a base commit, changes the tree, takes the diff and checks the
``(path, line, where, origin)`` of every finding the stand-in linter reports after the change.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ckdn.identity.change import DiffError, read_diff
from ckdn.identity.scope import gated
from tests.core.identity.diff_repos import Repo, classify, git

Case = Callable[[Repo], None]
LINES = "".join(f"line {n}\n" for n in range(1, 31))  # a file long enough for distant lines


def numbered(marks: dict[int, str], count: int = 30) -> str:
    return "".join(marks.get(n, f"line {n}") + "\n" for n in range(1, count + 1))


CASES: dict[str, tuple[dict[str, str | bytes], Case, set[tuple[str, int, str, str]]]] = {}


def case(name: str, base: dict[str, str | bytes],
         expected: set[tuple[str, int, str, str]]) -> Callable[[Case], Case]:
    def register(change: Case) -> Case:
        CASES[name] = (base, change, expected)
        return change
    return register


@case("an added bad line is added and new", {"a.py": LINES}, {("a.py", 5, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({5: "BAD 5"}))


@case("a known finding beside an edit is context and known",
      {"a.py": numbered({5: "BAD five"})}, {("a.py", 5, "context", "known")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({5: "BAD five", 7: "line seven"}))


@case("a known finding far from the edit is in the file",
      {"a.py": numbered({25: "BAD"})}, {("a.py", 25, "file", "known")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({25: "BAD", 2: "edited"}))


@case("a finding in an untouched file is outside and known",
      {"a.py": LINES, "b.py": "BAD\n"}, {("b.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({3: "edited"}))


@case("a new file's findings are added and new", {"a.py": LINES},
      {("n.py", 2, "added", "new")})
def _(r: Repo) -> None:
    r.write("n.py", "ok\nBAD\n")


@case("a deleted file takes its findings with it", {"a.py": "BAD\n", "b.py": "BAD\n"},
      {("b.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    r.remove("a.py")


@case("a pure deletion above a finding leaves it known", {"a.py": numbered({10: "BAD"})},
      {("a.py", 7, "file", "known")})
def _(r: Repo) -> None:
    r.write("a.py", "".join(line + "\n" for line in numbered({10: "BAD"}).splitlines()[3:]))


@case("deleting the flagged line removes the finding", {"a.py": numbered({10: "BAD"})},
      set())
def _(r: Repo) -> None:
    r.write("a.py", numbered({}, 30).replace("line 10\n", ""))


@case("an R100 rename is in the file and known", {"old.py": numbered({4: "BAD"})},
      {("new.py", 4, "file", "known")})
def _(r: Repo) -> None:
    r.move("old.py", "new.py")


@case("an edited rename keeps its findings known", {"old.py": numbered({4: "BAD"})},
      {("new.py", 4, "file", "known"), ("new.py", 28, "added", "new")})
def _(r: Repo) -> None:
    r.move("old.py", "new.py")
    r.write("new.py", numbered({4: "BAD", 28: "BAD new"}))


@case("a rename git scores below its threshold is paired line by line",
      {"old.py": "head\nBAD kept\n" + "x\n" * 6},
      {("new.py", 2, "added", "moved")})
def _(r: Repo) -> None:
    r.remove("old.py")
    r.write("new.py", "other\nBAD kept\n" + "y\n" * 8)


@case("a move within a file is moved", {"a.py": numbered({3: "BAD moving"})},
      {("a.py", 27, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({27: "BAD moving"}))


@case("a move across files is moved", {"a.py": numbered({3: "BAD moving"}), "b.py": LINES},
      {("b.py", 10, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({}))
    r.write("b.py", numbered({10: "BAD moving"}))


@case("a move into a new file is moved", {"a.py": numbered({3: "BAD moving"})},
      {("c/b.py", 1, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({}))
    r.write("c/b.py", "BAD moving\n")


@case("a copy of a known line is new, the original stays known",
      {"a.py": numbered({12: "BAD twice"})},
      {("a.py", 12, "context", "known"), ("a.py", 14, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({12: "BAD twice", 14: "BAD twice"}))


@case("a copy above the original is still the new one",
      {"a.py": numbered({12: "BAD twice"})},
      {("a.py", 12, "context", "known"), ("a.py", 10, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({12: "BAD twice", 10: "BAD twice"}))


@case("a reindented flagged line is moved", {"a.py": numbered({6: "BAD indent"})},
      {("a.py", 6, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({6: "        BAD   indent"}))


@case("an edited flagged line with the same message is known on an added line",
      {"a.py": numbered({6: "BAD old text"})}, {("a.py", 6, "added", "known")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({6: "BAD new text"}))


@case("a mode-only change is in the file", {"run.sh": "BAD\n"},
      {("run.sh", 1, "file", "known")})
def _(r: Repo) -> None:
    (r.root / "run.sh").chmod(0o755)


@case("a binary file beside a text edit", {"a.py": LINES, "img.bin": b"\0\1\2"},
      {("a.py", 2, "added", "new")})
def _(r: Repo) -> None:
    r.write("img.bin", b"\0\3\4\5")
    r.write("a.py", numbered({2: "BAD"}))


@case("a binary file added", {"a.py": "BAD\n"}, {("a.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    r.write("new.bin", b"\0\0\1")


@case("a non-ASCII path, unquoted", {"café.py": LINES},
      {("café.py", 9, "added", "new")})
def _(r: Repo) -> None:
    r.write("café.py", numbered({9: "BAD"}))


@case("a path with spaces", {"my dir/a b.py": LINES}, {("my dir/a b.py", 9, "added", "new")})
def _(r: Repo) -> None:
    r.write("my dir/a b.py", numbered({9: "BAD"}))


@case("a path with a quote and a tab git quotes", {'q"t\tx.py': LINES},
      {('q"t\tx.py', 9, "added", "new")})
def _(r: Repo) -> None:
    r.write('q"t\tx.py', numbered({9: "BAD"}))


@case("content lines that look like headers", {"a.py": numbered({4: "-- old", 5: "keep"})},
      {("a.py", 4, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({4: "++ BAD", 5: "keep"}))


@case("content lines that look like a hunk header", {"a.py": LINES},
      {("a.py", 4, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({4: "@@ -1,2 +1,2 @@ BAD", 5: "diff --git a/x b/x"}))


@case("a CRLF file", {"w.txt": "one\r\ntwo\r\nthree\r\n"}, {("w.txt", 2, "added", "new")})
def _(r: Repo) -> None:
    r.write("w.txt", "one\r\nBAD two\r\nthree\r\n")


@case("no newline at end of file", {"a.py": "one\ntwo"}, {("a.py", 2, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", "one\nBAD two")


@case("no newline added at the end", {"a.py": "one\nBAD two"},
      {("a.py", 2, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", "one\nBAD two\n")


@case("an empty change", {"a.py": "BAD\n"}, {("a.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    del r


@case("several hunks in one file", {"a.py": numbered({15: "BAD mid"}, 60)},
      {("a.py", 2, "added", "new"), ("a.py", 15, "file", "known"),
       ("a.py", 55, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({2: "BAD a", 15: "BAD mid", 55: "BAD b"}, 60))


@case("a caller broken on an untouched line is new",
      {"lib.py": "def old_api():\n    pass\n", "app.py": "x\nuse old_api\n"},
      {("app.py", 2, "outside", "new")})
def _(r: Repo) -> None:
    r.write("lib.py", "def new_api():\n    pass\n")


@case("a caller broken in a file the change only renamed is new",
      {"lib.py": "def helper():\n    pass\n", "app.py": "x\nuse helper\n"},
      {("pkg/app.py", 2, "file", "new")})
def _(r: Repo) -> None:
    r.write("lib.py", "def other():\n    pass\n")
    r.move("app.py", "pkg/app.py")


@case("a symlink added", {"a.py": "BAD\n"}, {("a.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    (r.root / "link").symlink_to("a.py")


@case("an empty file added and one deleted", {"a.py": "BAD\n", "gone": ""},
      {("a.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    r.write("empty", "")
    r.remove("gone")


@case("a committed change and a work-tree change together", {"a.py": LINES},
      {("a.py", 3, "added", "new"), ("a.py", 20, "added", "new")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({3: "BAD c"}))
    r.commit()
    r.write("a.py", numbered({3: "BAD c", 20: "BAD w"}))


@case("a file in a subdirectory", {"src/pkg/m.py": LINES},
      {("src/pkg/m.py", 30, "added", "new")})
def _(r: Repo) -> None:
    r.write("src/pkg/m.py", numbered({30: "BAD last"}))


@case("a rename of a path with spaces", {"a b.py": numbered({2: "BAD"})},
      {("c d.py", 2, "file", "known")})
def _(r: Repo) -> None:
    r.move("a b.py", "c d.py")


@case("a rename into a non-ASCII directory", {"a.py": numbered({2: "BAD"})},
      {("répertoire/a.py", 2, "file", "known")})
def _(r: Repo) -> None:
    r.move("a.py", "répertoire/a.py")


@case("a binary file modified", {"a.bin": b"\0" * 10, "b.py": "BAD\n"},
      {("b.py", 1, "outside", "known")})
def _(r: Repo) -> None:
    r.write("a.bin", b"\0" * 11)


@case("a move of a block within a file", {"a.py": numbered({3: "BAD one", 4: "BAD two"})},
      {("a.py", 20, "added", "moved"), ("a.py", 21, "added", "moved")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({20: "BAD one", 21: "BAD two"}))


@case("a finding on the line a deletion collapses onto",
      {"a.py": numbered({6: "BAD after"})}, {("a.py", 5, "context", "known")})
def _(r: Repo) -> None:
    r.write("a.py", numbered({6: "BAD after"}).replace("line 5\n", ""))


MODES: dict[str, tuple[str, ...]] = {"git": (), "U0": ("-U0",), "no renames": ("--no-renames",)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_finding_is_placed_as_expected(name: str, tmp_path: Path) -> None:
    base, change, expected = CASES[name]
    repo = Repo(tmp_path / "repo")
    repo.base(base)
    change(repo)
    _, rows = classify(repo, repo.diff(), tmp_path)
    assert set(rows) == expected
    assert len(rows) == len(expected)


@pytest.mark.parametrize("name", ["an R100 rename is in the file and known",
                                  "a move within a file is moved",
                                  "a move across files is moved",
                                  "a rename of a path with spaces",
                                  "a move of a block within a file",
                                  "a rename git scores below its threshold is paired line by line"])
@pytest.mark.parametrize("scope", ["touched", "added", "new-anywhere"])
def test_rename_and_move_only_changes_gate_nothing(name: str, scope: str, tmp_path: Path) -> None:
    base, change, _ = CASES[name]
    repo = Repo(tmp_path / "repo")
    repo.base(base)
    change(repo)
    for extra in ((), ("--no-renames",)):
        _, rows = classify(repo, repo.diff(*extra), tmp_path / "-".join(extra or ("m",)))
        assert not [row for row in rows if gated(scope, row[2], row[3])]


def test_a_caller_broken_on_an_untouched_line_is_gated_unless_the_scope_is_added(
        tmp_path: Path) -> None:
    base, change, _ = CASES["a caller broken on an untouched line is new"]
    repo = Repo(tmp_path / "repo")
    repo.base(base)
    change(repo)
    _, rows = classify(repo, repo.diff(), tmp_path)
    assert [gated(s, rows[0][2], rows[0][3]) for s in ("touched", "added", "new-anywhere")] == [
        True, False, True]


def test_zero_context_diffs_place_added_lines_the_same(tmp_path: Path) -> None:
    base, change, expected = CASES["several hunks in one file"]
    repo = Repo(tmp_path / "repo")
    repo.base(base)
    change(repo)
    _, rows = classify(repo, repo.diff("-U0"), tmp_path)
    assert {row for row in rows if row[2] == "added"} == {
        row for row in expected if row[2] == "added"}


def test_renames_are_read_from_the_diff(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"a b.py": LINES, "x.py": numbered({1: "x"})})
    repo.move("a b.py", "dir/c d.py")
    repo.move("x.py", "y.py")
    repo.write("y.py", numbered({1: "x", 29: "edited"}))
    changes = read_diff(repo.diff().splitlines(keepends=True))
    assert changes.renames == {"dir/c d.py": "a b.py", "y.py": "x.py"}


def test_a_quoted_non_ascii_path_is_unquoted(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"naïve.py": LINES})
    repo.write("naïve.py", numbered({3: "BAD"}))
    git(repo.root, "add", "-A")
    quoted = git(repo.root, "-c", "core.quotePath=true", "diff", "--no-color",
                 "--src-prefix=a/", "--dst-prefix=b/", repo.base_sha)
    assert b'"a/na\\303\\257ve.py"' in quoted
    assert read_diff(quoted.splitlines(keepends=True)).where("naïve.py", 3) == "added"


def test_plain_diff_u_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "m.py").write_text(LINES)
    (tmp_path / "b" / "m.py").write_text(numbered({7: "BAD"}))
    (tmp_path / "b" / "n.py").write_text("new\n")
    (tmp_path / "a" / "n.py").write_text("")
    out = subprocess.run(["diff", "-u", "-r", "a", "b"], cwd=tmp_path, capture_output=True,
                         check=False).stdout
    assert out.startswith(b"diff -u -r a/m.py b/m.py\n--- a/m.py\t")
    changes = read_diff(out.splitlines(keepends=True))
    assert changes.where("m.py", 7) == "added"
    assert changes.where("m.py", 4) == "context"
    assert changes.where("n.py", 1) == "added"


def test_a_single_plain_diff_u_without_a_diff_line_is_read(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text(LINES)
    (tmp_path / "new.txt").write_text(numbered({7: "BAD"}))
    out = subprocess.run(["diff", "-u", "old.txt", "new.txt"], cwd=tmp_path,
                         capture_output=True, check=False).stdout
    assert out.startswith(b"--- old.txt\t")
    changes = read_diff(out.splitlines(keepends=True))
    assert changes.where("new.txt", 7) == "added"
    assert changes.renames == {"new.txt": "old.txt"}


def test_jj_style_headers_without_prefixes_are_read(tmp_path: Path) -> None:
    """jj is not installed here: ``git diff --no-prefix`` writes the header style of
    a producer that drops a/ and b/."""
    repo = Repo(tmp_path / "repo")
    repo.base({"a/inner.py": LINES})
    repo.write("a/inner.py", numbered({3: "BAD"}))
    git(repo.root, "add", "-A")
    out = git(repo.root, "diff", "--no-color", "--no-prefix", repo.base_sha)
    assert b"--- a/inner.py\n+++ a/inner.py\n" in out
    assert read_diff(out.splitlines(keepends=True)).where("a/inner.py", 3) == "added"


def test_hg_style_headers_are_read(tmp_path: Path) -> None:
    """hg is not installed here: git's diff is rewritten into the shape ``hg diff`` writes
    (``diff -r REV PATH``, ``---``/``+++`` with a tab and a date, no index line)."""
    repo = Repo(tmp_path / "repo")
    repo.base({"m.py": LINES})
    repo.write("m.py", numbered({3: "BAD"}))
    out = repo.diff().decode()
    lines = []
    for line in out.splitlines():
        if line.startswith("diff --git "):
            lines.append("diff -r 1a2b3c4d5e6f m.py")
        elif line.startswith("index "):
            continue
        elif line.startswith(("--- ", "+++ ")):
            lines.append(line + "\tThu Jan 01 00:00:00 1970 +0000")
        else:
            lines.append(line)
    text = ("\n".join(lines) + "\n").encode()
    assert read_diff(text.splitlines(keepends=True)).where("m.py", 3) == "added"


# -- what the reader refuses -------------------------------------------------------------------

def test_a_coloured_diff_is_refused(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"m.py": LINES})
    repo.write("m.py", numbered({3: "BAD"}))
    git(repo.root, "add", "-A")
    out = git(repo.root, "diff", "--color=always", repo.base_sha)
    with pytest.raises(DiffError, match="escape byte"):
        read_diff(out.splitlines(keepends=True))


def test_a_combined_diff_is_refused(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.base({"m.py": LINES})
    git(repo.root, "checkout", "-q", "-b", "side")
    repo.write("m.py", numbered({3: "side"}))
    repo.commit()
    git(repo.root, "checkout", "-q", "main")
    repo.write("m.py", numbered({3: "main"}))
    repo.commit()
    subprocess.run(["git", "-C", str(repo.root), "merge", "-q", "side"], capture_output=True,
                   check=False)
    repo.write("m.py", numbered({3: "merged"}))
    git(repo.root, "add", "-A")
    git(repo.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    out = git(repo.root, "show", "--cc", "--format=", "HEAD")
    assert out.startswith(b"diff --cc")
    with pytest.raises(DiffError, match="combined diff"):
        read_diff(out.splitlines(keepends=True))


@pytest.mark.parametrize("text", [
    b"--- a/x\n@@ -1 +1 @@\n-a\n+b\n",                       # --- without +++
    b"+++ b/x\n",                                             # +++ without ---
    b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n*b\n",  # unknown hunk line
    b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n",       # hunk cut short
    b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n",   # hunk too long
    b"hello, this is not a diff\n",
    b"@@ -1 +1 @@\n-a\n+b\n",                                 # a hunk before any file
    b'diff --git "a/x\\q" "b/x\\q"\n',                      # an unknown escape
    b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n\n",     # an empty hunk line
])
def test_a_diff_it_cannot_read_is_refused_in_one_line(text: bytes) -> None:
    with pytest.raises(DiffError) as caught:
        read_diff(text.splitlines(keepends=True))
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("diff line ")


def test_an_empty_diff_is_an_empty_change_set() -> None:
    changes = read_diff([])
    assert len(changes) == 0
    assert changes.where("a.py", 1) == "outside"


def test_the_corpus_holds_forty_real_diffs() -> None:
    # the placed cases, plus the readers' and refusals' own real diffs above
    assert len(CASES) + 6 >= 40
