"""The architecture holds, and each rule of it is one a real tool can see broken.

import-linter (``lint-imports``, the ``layers`` check of ckdn.toml) holds the
contracts in pyproject.toml; each test below plants the violation one contract
names in a copy of the tree and watches that contract, and only it, break. The
last tests hold what import-linter has no contract type for: nothing imports
another room's private (``_x``) modules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"ckdn": ROOT / "core" / "ckdn", "pytest_ckdn": ROOT / "pytest_ckdn",
            "nox_ckdn": ROOT / "nox_ckdn", "tox_ckdn": ROOT / "tox_ckdn"}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = {
    "layers": "Layers: adapters > app > domain > infrastructure > stand-ins and errors",
    "door": "Adapters use ckdn.app (and ckdn.errors), nothing below it",
    "parsers": "Parsers report facts: they never import the app, reconcile or the store",
    "infrastructure": "The runner and the store know no parser, no document, no config",
}
#: Rooms of the core: a module ``ckdn.<room>._x`` is private to ``ckdn.<room>``.
ROOMS = ("app", "config", "process", "store", "documents", "parsers", "testing", "_lite",
         "redact")


def lint_imports(cwd: Path, pythonpath: list[Path] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    env = None
    if pythonpath is not None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath))}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def broken(output: str) -> set[str]:
    return {key for key, name in CONTRACTS.items() if f"{name} BROKEN" in output}


def test_the_tree_keeps_every_contract() -> None:
    proc = lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(" KEPT") == len(CONTRACTS)


@pytest.mark.parametrize(("module", "line", "expected"), [
    # a host reaching around the door for the store
    ("tox_ckdn/_report.py", "from ckdn.store import Store", {"door"}),
    # a host annotating with a core type it did not get through the door
    ("pytest_ckdn/hooks.py", "if TYPE_CHECKING:\n    from ckdn.documents.types import Digest",
     {"door"}),
    # a parser deciding a status
    ("core/ckdn/parsers/generic.py", "from ckdn.reconcile import reconcile", {"parsers"}),
    # the runner learning a document format: also a layer turned upside down
    ("core/ckdn/process/_loghash.py", "from ckdn.documents import encode",
     {"infrastructure", "layers"}),
    # the store reaching up into the app
    ("core/ckdn/store/_reading.py", "import ckdn.app", {"infrastructure", "layers"}),
    # a room of the domain reaching up into the app
    ("core/ckdn/config/_tables.py", "import ckdn.app", {"layers"}),
    # the app calling on the conformance kit: a test helper on the run path
    ("core/ckdn/app/_running/steps.py", "import ckdn.testing", {"layers"}),
    # a host reaching for the kit
    ("pytest_ckdn/hooks.py", "from ckdn.testing import run_parser", {"door"}),
    # a parser importing the kit: a layer turned upside down
    ("core/ckdn/parsers/generic.py", "import ckdn.testing", {"layers"}),
])
def test_each_contract_breaks_on_the_violation_it_names(tmp_path: Path, module: str, line: str,
                                                        expected: set[str]) -> None:
    (tmp_path / "core").mkdir()
    for name, source in PACKAGES.items():
        target = tmp_path / "core" / name if name == "ckdn" else tmp_path / name
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    planted = tmp_path / module
    text = planted.read_text()
    head, sep, rest = text.partition("\nfrom __future__ import annotations\n")
    planted.write_text(f"{head}{sep}\nfrom typing import TYPE_CHECKING\n{line}\n{rest}" if sep
                       else f"{line}\n{text}")
    proc = lint_imports(tmp_path, [tmp_path / "core", tmp_path])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert broken(proc.stdout) == expected, proc.stdout


def test_no_module_imports_another_rooms_private_modules() -> None:
    graph = grimp.build_graph("ckdn", "pytest_ckdn", "nox_ckdn", "tox_ckdn")
    strays = []
    for room in ROOMS:
        package = f"ckdn.{room}"
        for module in graph.find_children(package):
            if not module.rpartition(".")[2].startswith("_"):
                continue
            for importer in graph.find_modules_that_directly_import(module):
                if importer != package and not importer.startswith(package + "."):
                    strays.append(f"{importer} -> {module}")
    assert strays == []


def test_nothing_imports_the_conformance_kit() -> None:
    # ckdn.testing is for tests (a plugin's, and this suite): no module of ckdn, its
    # hosts or its root package may import it, not even for a type.
    graph = grimp.build_graph("ckdn", "pytest_ckdn", "nox_ckdn", "tox_ckdn")
    kit = {"ckdn.testing", *graph.find_descendants("ckdn.testing")}
    importers = {importer for module in kit
                 for importer in graph.find_modules_that_directly_import(module)}
    assert sorted(importers - kit) == []


def test_the_conformance_kit_imports_no_test_tool_at_import() -> None:
    probe = ("import sys, ckdn.testing; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('hypothesis', 'pytest', '_pytest')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"

