"""The two pytest roads give the same findings: the plugin's (pytester, ``--ckdn-digest``)
and the JUnit report's (``ckdn run`` of a pytest check with ``--junitxml``), for every
outcome a real pytest session can produce (issue 24).

Same id, kind, message and location on both, so a baseline recorded on one road holds
on the other; the collection error's message is its exception, never pytest's hint.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.project import clean_env
from tests.pytest_ckdn.sessions import Runner

#: outcome -> (files of the session, extra pytest arguments)
SESSIONS: dict[str, tuple[dict[str, str], list[str]]] = {
    "failure": ({"test_a.py": "def test_f():\n    x = 1\n    assert x == 2\n"}, []),
    "setup_error": ({"test_a.py": "import pytest\n\n@pytest.fixture\ndef fx():\n"
                                  "    raise ValueError('bad setup')\n\n"
                                  "def test_s(fx):\n    pass\n"}, []),
    "setup_error_in_conftest": ({"conftest.py": "import pytest\n\n@pytest.fixture\ndef fx():\n"
                                                "    raise ValueError('in conftest')\n",
                                 "test_a.py": "def test_s(fx):\n    pass\n"}, []),
    "teardown_error": ({"test_a.py": "import pytest\n\n@pytest.fixture\ndef fx():\n"
                                     "    yield\n    raise ValueError('bad teardown')\n\n"
                                     "def test_t(fx):\n    assert 0\n"}, []),
    "collection_error": ({"test_a.py": "import no_such_module_ckdn\n\ndef test_x():\n"
                                       "    pass\n"}, []),
    "collection_syntax_error": ({"test_a.py": "def test_x(:\n    pass\n"}, []),
    "collection_error_with_a_hint": (
        {"test_a.py": "import pytest\n\n@pytest.fixture\n@pytest.mark.usefixtures('tmp_path')\n"
                      "def fx():\n    return 1\n\ndef test_x(fx):\n    pass\n"}, []),
    "xfail_strict": ({"test_a.py": "import pytest\n\n@pytest.mark.xfail(strict=True, "
                                   "reason='known')\ndef test_x():\n    pass\n"}, []),
    "xpass_strict_by_ini": ({"test_a.py": "import pytest\n\n@pytest.mark.xfail(reason='known')\n"
                                          "def test_x():\n    pass\n"},
                            ["-o", "xfail_strict=true"]),
    "skip": ({"test_a.py": "import pytest\n\n@pytest.mark.skip(reason='no')\n"
                           "def test_x():\n    pass\n\ndef test_y():\n    pass\n"}, []),
    "warning_as_error": ({"test_a.py": "import warnings\n\ndef test_w():\n"
                                       "    warnings.warn('careful', UserWarning)\n"},
                         ["-W", "error::UserWarning"]),
    "internal_error": ({"conftest.py": "def pytest_runtest_logreport(report):\n"
                                       "    if report.when == 'call':\n"
                                       "        raise RuntimeError('plugin broke')\n",
                        "test_a.py": "def test_x():\n    pass\n"}, []),
    "usage_error": ({"test_a.py": "def test_x():\n    pass\n"}, ["-k", "a and ("]),
    "class_and_params": ({"test_a.py": "import pytest\n\nclass TestC:\n"
                                       "    @pytest.mark.parametrize('v', [1, 'a b'])\n"
                                       "    def test_m(self, v):\n        assert v == 1\n"}, []),
}

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
          "-p", "no:xdist", "-p", "no:hypothesispytest", "-p", "no:ckdn"]


def identity(doc: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    return [(f["id"], f["kind"], f["message"], f.get("location")) for f in doc.get("findings", [])]


def plugin_road(pytester: pytest.Pytester, files: dict[str, str], extra: list[str]
                ) -> dict[str, Any]:
    for name, text in files.items():
        pytester.path.joinpath(name).write_text(text)
    result = Runner(pytester)(*extra, subprocess=True)
    digest: dict[str, Any] = result.digest
    return digest


def junit_road(root: Path, files: dict[str, str], extra: list[str]) -> dict[str, Any]:
    command = json.dumps([*PYTEST, *extra, "--junitxml", "{run_dir}/junit.xml"])
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        root.joinpath(name).write_text(text)
    root.joinpath("ckdn.toml").write_text(f'[check.pytest]\ncommand = {command}\n'
                                          'parser = "pytest"\n')
    proc = subprocess.run([sys.executable, "-m", "ckdn", "run", "pytest"], cwd=root,
                          env=clean_env(), capture_output=True, text=True, timeout=120,
                          check=False)
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc


@pytest.mark.parametrize("outcome", sorted(SESSIONS))
def test_both_roads_give_the_same_findings(pytester: pytest.Pytester, tmp_path: Path,
                                           outcome: str) -> None:
    files, extra = SESSIONS[outcome]
    plugin = plugin_road(pytester, files, extra)
    junit = junit_road(tmp_path / "junit-road", files, extra)
    assert identity(plugin) == identity(junit)
    assert plugin["status"] == junit["status"]
    if outcome in ("failure", "setup_error", "teardown_error", "collection_error",
                   "xfail_strict", "internal_error", "warning_as_error"):
        assert identity(plugin), outcome  # each of these is a finding: compared, not absent


def test_a_collection_errors_message_is_the_exception_not_pytests_hint(
        pytester: pytest.Pytester) -> None:
    files, extra = SESSIONS["collection_error_with_a_hint"]
    [finding] = plugin_road(pytester, files, extra)["findings"]
    assert (finding["kind"], finding["message"]) == (
        "collection_error", "Failed: Marks cannot be applied to fixtures.")


def test_the_junit_roads_collection_error_has_no_detail_inside_pytest(tmp_path: Path) -> None:
    files, extra = SESSIONS["collection_error_with_a_hint"]
    [finding] = junit_road(tmp_path, files, extra)["findings"]
    assert finding["kind"] == "collection_error"
    assert not any("_pytest" in line for line in finding.get("detail", []))
