"""A small project in a git repository for the diff-scoped gate's tests, hosts included: a
stand-in type checker (``lint``), a library, a caller, one known error, committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: A stand-in type checker: ``use NAME`` with no ``def NAME`` in any .py file is an error,
#: printed as mypy prints one (the `mypy` parser reads it).
LINT = r'''
import os, re, sys
texts = {}
for root, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for name in sorted(files):
        if name.endswith(".py") and name != "lint.py":
            path = os.path.relpath(os.path.join(root, name))
            texts[path] = open(path, encoding="utf-8").read()
defined = {m for text in texts.values() for m in re.findall(r"^def (\w+)", text, re.M)}
out = []
for path in sorted(texts):
    for number, line in enumerate(texts[path].splitlines(), 1):
        found = re.match(r"\s*use (\w+)", line)
        if found and found[1] not in defined:
            out.append(f'{path}:{number}: error: Name "{found[1]}" is not defined  [name-defined]')
print("\n".join(out))
print(f"Found {len(out)} errors in 1 file (checked {len(texts)} source files)" if out
      else f"Success: no issues found in {len(texts)} source files")
sys.exit(1 if out else 0)
'''

CONFIG = f"""\
[check.lint]
command = "{sys.executable} lint.py"
parser = "mypy"
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "init.defaultBranch=main", *args], check=True,
                          capture_output=True, text=True).stdout

#: The files of the base commit (``.gitignore`` keeps ckdn's and the hosts' own dirs out).
FILES = {
    "lint.py": LINT,
    "lib.py": "def area():\n    pass\n",
    "app.py": "x = 1\nuse area\nuse missing\n" + "y = 2\n" * 10,
    ".gitignore": ".agent-runs/\n.nox/\n.tox/\n__pycache__/\n.pytest_cache/\n",
}


def make_repo(root: Path, config: str = CONFIG, *, files: dict[str, str] | None = None) -> None:
    """The base commit in ``root`` (a ``ckdn.toml`` of ``config``, plus ``files``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "ckdn.toml").write_text(config)
    for name, text in {**FILES, **(files or {})}.items():
        (root / name).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def break_a_caller_and_add_an_error(root: Path) -> None:
    """The change every host is held to: a renamed function breaks its caller on an untouched
    line (new, outside), a new line holds a new error (new, added)."""
    (root / "lib.py").write_text("def surface():\n    pass\nuse brand_new\n")


def gate_facts(digest: dict[str, object]) -> tuple[object, object, object]:
    """What every host must agree on: the gate's status, how many findings it gated, and
    the where x origin counts (the gate's facts, in ``summary.diff_scope``)."""
    gate, summary = digest["gate"], digest["summary"]
    assert isinstance(gate, dict)
    assert isinstance(summary, dict)
    scope = summary["diff_scope"]
    return gate["status"], scope.get("gated"), scope.get("counts")
