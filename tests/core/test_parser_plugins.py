"""Third-party parsers from the `ckdn.parsers` entry-point group, through a real install layout.

The plugin is the worked example in docs/parsers.md, installed as a real
distribution (a ``.dist-info`` with ``entry_points.txt`` on ``PYTHONPATH``), so
``importlib.metadata`` discovers it exactly as it would a pip-installed one.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.project import PY, Project, clean_env, py

DOCS = Path(__file__).resolve().parents[2] / "docs" / "parsers.md"


def documented_plugin() -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"<!-- plugin-example: mytool_ckdn.py -->\n```python\n(.*?)```", text,
                      re.DOTALL)
    assert match, "docs/parsers.md lost its plugin example"
    return match.group(1)


def install(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    site.mkdir(exist_ok=True)
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[ckdn.parsers]\n{entry_points}\n")
    for name, code in modules.items():
        (site / name).write_text(code)


def run(project: Project, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return project.ckdn(*args, env={"PYTHONPATH": str(site)})


MYTOOL = (
    "import json, sys; "
    "json.dump([{'file': 'src/a.py', 'line': 3, 'code': 'MT1', 'text': 'too clever'}], "
    "open(sys.argv[1], 'w')); sys.exit(1)"
)


def test_a_plugin_parser_is_discovered_and_its_findings_reach_the_digest(
        project: Project) -> None:
    site = project.root / "site"
    install(site, "mytool_ckdn", "mytool = mytool_ckdn:MyToolParser",
            {"mytool_ckdn.py": documented_plugin()})
    project.config(f"[check.mytool]\ncommand = '''{py(MYTOOL)} {{run_dir}}/mytool.json'''\n"
                   'parser = "mytool"\n')
    proc = run(project, site, "run", "mytool")
    assert proc.returncode == 1, proc.stderr
    doc = project.digest(proc)
    assert doc["status"] == "fail"
    assert doc["findings"] == [{"id": "src/a.py:3:MT1", "kind": "mytool_issue",
                                "message": "MT1 too clever", "location": "src/a.py:3"}]
    assert doc["summary"] == {"counts": {"issues": 1}}


def test_a_plugin_options_are_validated_at_load(project: Project) -> None:
    site = project.root / "site"
    install(site, "mytool_ckdn", "mytool = mytool_ckdn:MyToolParser",
            {"mytool_ckdn.py": documented_plugin()})
    project.config('[check.mytool]\ncommand = "true"\nparser = "mytool"\nreprt = "x.json"\n')
    proc = run(project, site, "run", "mytool")
    assert proc.returncode == 2
    assert "reprt" in proc.stderr
    assert "did you mean 'report'" in proc.stderr


def test_a_plugin_that_fails_to_import_is_one_config_error_naming_it(project: Project) -> None:
    site = project.root / "site"
    install(site, "broken_ckdn", "broken = broken_ckdn:Parser",
            {"broken_ckdn.py": "raise ImportError('needs libfoo')\n"})
    project.config('[check.b]\ncommand = "true"\nparser = "broken"\n')
    proc = run(project, site, "run", "b")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert "broken" in lines[0]
    assert "needs libfoo" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_plugin_cannot_shadow_a_built_in_parser(project: Project) -> None:
    site = project.root / "site"
    install(site, "evil_ckdn", "generic = evil_ckdn:Parser",
            {"evil_ckdn.py": "raise SystemExit('the plugin was imported')\n"})
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    proc = run(project, site, "run", "ok")
    assert proc.returncode == 0, proc.stderr
    assert project.digest(proc)["status"] == "pass"


def test_an_unknown_parser_name_is_refused_with_a_suggestion(project: Project) -> None:
    project.config('[check.r]\ncommand = "true"\nparser = "rufff"\n')
    proc = project.ckdn("run", "r")
    assert proc.returncode == 2
    assert "did you mean 'ruff'" in proc.stderr


def test_built_in_parsers_never_pay_for_entry_point_discovery(tmp_path: Path) -> None:
    (tmp_path / "ckdn.toml").write_text('[check.ok]\ncommand = "true"\nparser = "generic"\n')
    probe = ("import sys\nfrom ckdn.cli import main\nmain(['run', 'ok'])\n"
             "print('\\n' + str('importlib.metadata' in sys.modules))\n")
    env = clean_env()
    out = subprocess.run([PY, "-c", probe], cwd=tmp_path, env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False"
    assert json.loads(out.strip().splitlines()[0])["status"] == "pass"
