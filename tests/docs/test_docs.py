"""Examples in the documentation are checked against the real program."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import jsonschema
import pytest

from ckdn.config import load_config
from ckdn.schema import load_schema
from tests.project import Project

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


def blocks(lang: str) -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(rf"```{lang}\n(.*?)```", text, re.DOTALL):
            found.append((str(page.relative_to(ROOT)), match.group(1)))
    return found


CONFIGS = [(page, body) for page, body in blocks("toml")
           if ("[check." in body or "[run]" in body) and "mytool" not in body]
DOCUMENTS = [(page, body) for page, body in blocks("json") if '"schema"' in body]


@pytest.mark.parametrize(("page", "body"), CONFIGS, ids=[f"{p}#{i}" for i, (p, _) in
                                                         enumerate(CONFIGS)])
def test_every_documented_config_loads(page: str, body: str, tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text(body)
    config = load_config(tmp_path)
    assert config.checks or config.aliases or config.run


@pytest.mark.parametrize(("page", "body"), DOCUMENTS, ids=[f"{p}#{i}" for i, (p, _) in
                                                           enumerate(DOCUMENTS)])
def test_every_documented_document_validates_against_its_schema(page: str, body: str,
                                                                tmp_path: Path) -> None:
    doc = json.loads(body)
    if doc["schema"] == "ckdn.baseline/1":  # ckdn's own state: its strict reader is the schema
        from ckdn.identity import read_baseline

        (tmp_path / "b.json").write_text(body)
        assert read_baseline(str(tmp_path / "b.json")).checks
        return
    jsonschema.Draft202012Validator(load_schema(doc["schema"])).validate(doc)


def test_the_starter_config_is_the_documented_catalogue(tmp_path: Path) -> None:
    from ckdn.config.starter import STARTER

    (tmp_path / "ckdn.toml").write_text(STARTER)
    config = load_config(tmp_path)
    assert {"pytest", "ruff", "mypy"} <= set(config.checks)
    parsers_page = (ROOT / "docs" / "parsers.md").read_text()
    for recipe_parser in re.findall(r'^#? ?parser = "(\w+)"', STARTER, re.MULTILINE):
        assert f"`{recipe_parser}`" in parsers_page


def test_documented_config_errors_are_what_ckdn_prints(project: Project) -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    block = page.split("<!-- config-errors")[1].split("```text\n")[1].split("```")[0]
    configs = {
        "kep": "[run]\nkep = 3\n",
        "timeout": '[check.ruff]\ncommand = "true"\nparser = "generic"\ntimeout = 0\n',
        "rufff": '[check.ruff]\ncommand = "true"\nparser = "generic"\n'
                 '[check.lint]\nmembers = ["rufff"]\n',
    }
    lines = block.strip().splitlines()
    assert len(lines) == len(configs)
    for line, config in zip(lines, configs.values(), strict=True):
        project.config(config)
        proc = project.ckdn("run", "x")
        assert proc.returncode == 2
        assert proc.stderr.strip() == line


def test_the_security_pages_blocked_command_is_what_ckdn_prints(project: Project) -> None:
    page = (ROOT / "docs" / "security.md").read_text()
    example = page.split("<!-- example: a blocked command -->")[1]
    config = example.split("```toml\n")[1].split("```")[0]
    console = example.split("```console\n")[1].split("```")[0].splitlines()
    assert console[0] == "$ ckdn run leak; echo $?"
    project.config(config)
    proc = project.ckdn("run", "leak")
    shown = json.loads(console[1])
    real = project.digest(proc)
    assert shown["run_dir"].startswith(".agent-runs/")
    assert real["run_dir"].startswith(".agent-runs/")
    assert {**shown, "run_dir": ""} == {**real, "run_dir": ""}
    assert str(proc.returncode) == console[2]


def test_the_cli_pages_checks_examples_are_what_ckdn_prints_after_init(
        project: Project) -> None:
    page = (ROOT / "docs" / "cli.md").read_text()

    def example(name: str) -> str:
        return page.split(f"<!-- example: {name}")[1].split("```", 2)[1].split("\n", 1)[1]

    # this venv's pytest first: the plugin is beside it, so init writes the plugin's recipe
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    assert project.ckdn("init", env={"PATH": path}).returncode == 0
    assert project.ckdn("checks").stdout == example("ckdn checks after ckdn init")
    shown = json.loads(example("ckdn checks --json after ckdn init"))
    real = json.loads(project.ckdn("checks", "--json").stdout)
    assert shown["checks"] == real["checks"][:len(shown["checks"])]


def test_readme_starts_with_the_two_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in first_block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    assert commands[0].endswith("ckdn run --all")
    assert commands[1].endswith("pytest")
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert ci == commands
    for command in commands:
        assert shlex.split(command)


def test_every_docs_page_is_linked_from_the_readme_or_an_index() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[^)]+)\)", readme))
    parsers_page = (ROOT / "docs" / "parsers.md").read_text()
    linked |= {f"docs/{p}" for p in re.findall(r"\]\((parsers/[^)]+)\)", parsers_page)}
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")}
    assert pages - linked == set()
    assert linked - pages == set(), "links to pages that do not exist"


# -- docs/design.md keeps up with the code -------------------------------------------------

DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")


def core_modules() -> list[str]:
    core = ROOT / "core"
    return sorted(".".join(path.relative_to(core).with_suffix("").parts).removesuffix(".__init__")
                  for path in (core / "ckdn").rglob("*.py"))


def test_the_design_page_names_every_core_module() -> None:
    table = DESIGN[DESIGN.index("## The rooms"):DESIGN.index("## Data flow of one run")]
    named = set(re.findall(r"`(ckdn(?:\.\w+)*)`", table))
    for row in re.findall(r"^\| `ckdn\.parsers\.<tool>` \| .*$", table, re.MULTILINE):
        named.update(f"ckdn.parsers.{tool}" for tool in re.findall(r"`(\w+)`", row))
    for row in re.findall(r"^\| `(ckdn\.parsers\._\w+)`((?:, `_\w+`)*) \|", table, re.MULTILINE):
        named.add(row[0])
        named.update(f"ckdn.parsers.{name}" for name in re.findall(r"`(_\w+)`", row[1]))
    assert sorted(set(core_modules()) - named) == []
    assert sorted(name for name in named - set(core_modules())
                  if name != "ckdn.toml") == []


def test_the_design_page_names_every_import_contract() -> None:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    names = [contract["name"] for contract in contracts["contracts"]]
    assert len(names) == 6
    assert [name for name in names if f"| {name} |" not in DESIGN] == []


def test_each_glossary_word_is_used_by_the_module_that_owns_it() -> None:
    section = DESIGN[DESIGN.index("## Glossary"):DESIGN.index("## The layers")]
    rows = re.findall(r"^\| (\w+) \| .* \| `(ckdn[\w.]*)` \|$", section, re.MULTILINE)
    assert len(rows) >= 6
    for word, module in rows:
        path = ROOT / "core" / Path(*module.split("."))
        source = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text()
        assert word in source.lower(), (word, module)
