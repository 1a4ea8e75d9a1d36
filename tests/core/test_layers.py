"""The architecture holds, and each rule of it is one a real tool can see broken.

import-linter (``lint-imports``, the ``layers`` check of ckdn.toml) holds the contracts in
pyproject.toml; each plant below breaks one in a copy of the tree. grimp, its graph, finds
cycles; the function-level imports are counted against the code they sit in.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "ckdn"
PACKAGES = {"ckdn": CORE, "pytest_ckdn": ROOT / "pytest_ckdn", "nox_ckdn": ROOT / "nox_ckdn",
            "tox_ckdn": ROOT / "tox_ckdn", "mcp_ckdn": ROOT / "mcp_ckdn"}
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = {
    "layers": "Layers: adapters > app > domain > infrastructure > stand-ins and errors",
    "door": "Adapters use ckdn.app (and ckdn.errors), nothing below it",
    "private": "A private module (_x) is imported only inside the package that holds it",
    "parsers": "Parsers report facts: they never import the app, reconcile or the store",
    "importers": "Importers report facts: they never import the app, reconcile or the store",
    "infrastructure": "The runner and the store know no parser, no document, no config",
}
#: Where lazy loading is the design (DESIGN.md): the CLI's verb table, each host's entry point.
BOUNDARIES = ("core/ckdn/cli/__init__.py", "pytest_ckdn/plugin.py", "tox_ckdn/plugin.py",
              "nox_ckdn/__init__.py", "mcp_ckdn/__init__.py")
#: Function-level imports allowed per 1,000 lines of code, outside the boundaries.
IMPORTS_PER_KLOC = 3
#: The rooms whose restructuring has landed: held to the rules below without exception.
SETTLED = ("parsers", "reports", "identity", "redact", "config", "process", "store",
           "documents", "_lite", "testing", "schema", "reconcile", "evidence_files", "errors")


def lint_imports(cwd: Path, pythonpath: list[Path] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    env = None
    if pythonpath is not None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath))}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def broken(output: str) -> set[str]:
    return {key for key, name in CONTRACTS.items() if f"{name} BROKEN" in output}


def a_private_app_module() -> str:
    """A private module of the app, whatever its rooms are called today."""
    found = sorted(path.relative_to(CORE.parent).with_suffix("")
                   for path in (CORE / "app").rglob("_*.py") if path.name != "__init__.py")
    return ".".join(found[0].parts)


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
    ("core/ckdn/process/_runner.py", "from ckdn.documents import encode",
     {"infrastructure", "layers"}),
    # the store reaching up into the app
    ("core/ckdn/store/_store.py", "import ckdn.app", {"infrastructure", "layers"}),
    # a room of the domain reaching up into the app
    ("core/ckdn/config/_load.py", "import ckdn.app", {"layers"}),
    # the app calling on the conformance kit: a test helper on the run path
    ("core/ckdn/app/_running/steps.py", "import ckdn.testing", {"layers"}),
    # a host reaching for the kit
    ("pytest_ckdn/hooks.py", "from ckdn.testing import run_parser", {"door"}),
    # a parser importing the kit: a layer turned upside down
    ("core/ckdn/parsers/generic.py", "import ckdn.testing", {"layers"}),
    # the app importing the CLI
    ("core/ckdn/app/__init__.py", "import ckdn.cli", {"layers"}),
    # identity importing the CLI
    ("core/ckdn/identity/__init__.py", "import ckdn.cli", {"layers"}),
    # the MCP host importing a private module of the app
    ("mcp_ckdn/__init__.py", f"import {a_private_app_module()}", {"private"}),
    # a room reaching into another room's private module
    ("core/ckdn/reports/_text.py", "import ckdn.identity._fingerprint", {"private"}),
    # one host reaching into another's private module
    ("nox_ckdn/_run.py", "import tox_ckdn._report", {"private", "layers"}),
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
                       else f"from typing import TYPE_CHECKING\n{line}\n{text}")
    proc = lint_imports(tmp_path, [tmp_path / "core", tmp_path])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert broken(proc.stdout) == expected, proc.stdout


def layer_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (layers,) = [contract["layers"] for contract in config["tool"]["importlinter"]["contracts"]
                 if contract["type"] == "layers"]
    return {name.strip("() ") for layer in layers for name in re.split(r"[|:]", layer)}


def test_every_module_of_the_core_is_in_a_layer() -> None:
    found = {f"ckdn.{path.stem}" for path in CORE.glob("*.py") if path.name != "__init__.py"}
    found |= {f"ckdn.{path.parent.name}" for path in CORE.glob("*/__init__.py")}
    assert sorted(found - layer_modules()) == []


def test_the_root_package_imports_nothing_so_it_needs_no_layer() -> None:
    tree = ast.parse((CORE / "__init__.py").read_text())
    assert [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)] \
        == []


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every group of modules that import each other round (Tarjan's strongly connected
    components), type-checking and function-level imports included (grimp sees both)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            module, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target,
                                 iter(sorted(graph.find_modules_directly_imported_by(target)))))
                    break
                if target in stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))
    return cycles


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, include_external_packages=False)


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    planted = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d"):
        planted.add_module(module)
    planted.add_import(importer="a.b", imported="a.c")
    planted.add_import(importer="a.c", imported="a.b")
    planted.add_import(importer="a.d", imported="a.b")
    assert import_cycles(planted) == [["a.b", "a.c"]]


def settled(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "ckdn" and len(parts) > 1 and parts[1] in SETTLED


def test_no_room_of_the_domain_or_infrastructure_is_in_an_import_cycle(
        graph: grimp.ImportGraph) -> None:
    assert [cycle for cycle in import_cycles(graph) if any(map(settled, cycle))] == []


def test_no_module_is_in_an_import_cycle(graph: grimp.ImportGraph) -> None:
    assert import_cycles(graph) == []


def code_lines(tree: ast.Module, source: str) -> int:
    """Lines holding code: not blank, not only a comment, not a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in docstrings)


def function_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    functions = [node for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    found = {sub.lineno: sub for node in functions for sub in ast.walk(node)
             if isinstance(sub, ast.Import | ast.ImportFrom)}
    return [found[line] for line in sorted(found)]


def imports_and_lines(paths: list[Path]) -> tuple[list[str], int, list[str]]:
    """The function-level imports in ``paths``, their code lines, the imports without a reason
    (a comment on the import's line or on the line just above)."""
    found, lines, unexplained = [], 0, []
    for path in paths:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines += code_lines(tree, source)
        text = source.splitlines()
        for node in function_level_imports(tree):
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:" \
                    f"{node.lineno}"
            found.append(where)
            own, above = text[node.lineno - 1], text[node.lineno - 2].strip()
            if "#" not in own and not above.startswith("#"):
                unexplained.append(where)
    return found, lines, unexplained


def product_modules() -> list[Path]:
    return [path for package in PACKAGES.values() for path in sorted(package.rglob("*.py"))
            if not str(path.relative_to(ROOT)).startswith(BOUNDARIES)]


def test_the_counter_counts_imports_in_functions_and_their_reasons(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Doc."""\n\nimport os\n\n\ndef f():\n    # why\n    import re\n'
                      "    import json\n    return os, re, json\n")
    found, lines, unexplained = imports_and_lines([sample])
    assert (found, lines, unexplained) == (["sample.py:8", "sample.py:9"], 5, ["sample.py:9"])


def test_the_settled_rooms_import_at_the_top_with_a_reason_for_each_exception() -> None:
    paths = [path for path in product_modules()
             if path.is_relative_to(CORE) and settled(".".join(
                 ("ckdn", *path.relative_to(CORE).with_suffix("").parts)))]
    found, lines, unexplained = imports_and_lines(paths)
    assert unexplained == []
    assert len(found) * 1000 <= IMPORTS_PER_KLOC * lines, (len(found), lines)


def test_function_level_imports_stay_under_three_per_thousand_lines_outside_the_boundaries(
        ) -> None:
    found, lines, unexplained = imports_and_lines(product_modules())
    assert len(found) * 1000 <= IMPORTS_PER_KLOC * lines, (len(found), lines)
    assert unexplained == []


def test_nothing_imports_the_conformance_kit(graph: grimp.ImportGraph) -> None:
    # ckdn.testing is for tests (a plugin's, and this suite): no module of ckdn, its
    # hosts or its root package may import it, not even for a type.
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
