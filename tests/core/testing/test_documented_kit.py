"""The kit as docs/testing.md shows it: a plugin's own suite, run by a real pytest.

The plugin is the worked example of docs/parsers.md; its tool is a small real
program (it reports every ``eval(`` in the Python files it is given), run through
``ckdn run`` to record a clean and a failing case the way docs/testing.md says:
copy ``full.log`` and the report from the run dir, write ``case.json``. Then the
test module of docs/testing.md runs in a real pytest, once over the example
parser (every rule holds) and once over the example with its unreadable-report
branch made lenient (the documented failure).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from ckdn.testing.conformance import RULES
from tests.core.test_parser_plugins import documented_plugin, install
from tests.project import PY, Project
from tests.shared import shared_dir

DOCS = Path(__file__).resolve().parents[3] / "docs" / "testing.md"

#: mytool: ``mytool.py REPORT DIR`` writes one issue per ``eval(`` in DIR's .py files.
MYTOOL = '''\
import json, pathlib, sys
issues = [{"file": str(path), "line": number, "code": "MT1", "text": "eval is too clever"}
          for path in sorted(pathlib.Path(sys.argv[2]).rglob("*.py"))
          for number, line in enumerate(path.read_text().splitlines(), 1) if "eval(" in line]
with open(sys.argv[1], "w") as report:
    json.dump(issues, report)
print(f"mytool: {len(issues)} issue(s)")
sys.exit(1 if issues else 0)
'''


def documented(marker: str, lang: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n```{lang}\n(.*?)```", DOCS.read_text(encoding="utf-8"),
                      re.DOTALL)
    assert match, f"docs/testing.md lost its {marker} block"
    return match.group(1)


def record(project: Project, site: Path, case: str, *, source: str, dest: Path,
           status: str) -> None:
    """Run mytool through ckdn on a project holding ``source`` and keep the run as a case."""
    work = project.root / case
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text(source)
    (work / "mytool.py").write_text(MYTOOL)
    (work / "ckdn.toml").write_text(
        f'[check.mytool]\ncommand = "{PY} mytool.py {{run_dir}}/mytool.json src"\n'
        'parser = "mytool"\n')
    proc = Project(work).ckdn("run", "mytool", env={"PYTHONPATH": str(site)})
    digest = json.loads(proc.stdout)
    run_dir = work / digest["run_dir"]
    (dest / case).mkdir(parents=True)
    for name in ("full.log", "mytool.json"):  # what the tool left in the run dir
        shutil.copy(run_dir / name, dest / case / name)
    case_json = {"tool": "mytool", "version": "mytool 1.0", "rc": digest["rc"],
                 "argv": ["mytool", "{run_dir}/mytool.json", "src"], "cwd": str(work),
                 "expect": {"status": status, "options": {}}}
    (dest / case / "case.json").write_text(json.dumps(case_json))


def record_cases(root: Path) -> None:
    """The clean and the failing case, recorded in ``root/recorded``."""
    project = Project(root)
    site = project.root / "site"
    install(site, "mytool_ckdn", "mytool = mytool_ckdn:MyToolParser",
            {"mytool_ckdn.py": documented_plugin()})
    recorded = project.root / "recorded"
    record(project, site, "clean", source="x = 1\n", dest=recorded, status="pass")
    record(project, site, "issue", source="y = eval('1')\n", dest=recorded, status="fail")


@pytest.fixture
def recorded_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two cases, recorded once a suite run: each test reads a copy."""
    return shared_dir(tmp_path_factory, "documented-kit-cases", record_cases) / "recorded"


@pytest.fixture
def plugin_suite(recorded_cases: Path, pytester: pytest.Pytester,
                 monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    shutil.copytree(recorded_cases, pytester.path / "recorded")
    pytester.makepyfile(test_mytool_parser=documented("kit-example: test_mytool_parser.py",
                                                      "python"))
    pytester.makeconftest(documented("kit-example: conftest.py", "python"))
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "dev")  # the budget is not what this test is about
    return pytester


def test_the_documented_plugin_keeps_every_rule_of_the_documented_suite(
        plugin_suite: pytest.Pytester) -> None:
    (plugin_suite.path / "mytool_ckdn.py").write_text(documented_plugin())
    result = plugin_suite.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(RULES))


def test_a_lenient_plugin_fails_the_documented_suite_as_documented(
        plugin_suite: pytest.Pytester) -> None:
    strict = 'return ParseResult(parser_ok=False, notes=[f"unreadable report: {exc}"])'
    assert strict in documented_plugin()
    (plugin_suite.path / "mytool_ckdn.py").write_text(
        documented_plugin().replace(strict, "items = []"))
    result = plugin_suite.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    assert result.ret == 1
    failure = documented("kit-failure", "text").strip()
    assert failure in result.stdout.str()
