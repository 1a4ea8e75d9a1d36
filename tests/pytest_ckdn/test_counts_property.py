"""For any mix of outcomes, the digest's counts are pytest's own terminal summary counts."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pytest_ckdn.sessions import QUIET, recorded

HEADER = """
import warnings
import pytest

@pytest.fixture
def bad_setup():
    raise RuntimeError("setup")

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown")
"""

#: outcome -> test source (``{name}`` is the test's name).
OUTCOMES = {
    "pass": "def {name}():\n    pass\n",
    "fail": "def {name}():\n    assert False\n",
    "skip_call": "def {name}():\n    pytest.skip('later')\n",
    "skip_mark": "@pytest.mark.skip(reason='no')\ndef {name}():\n    pass\n",
    "xfail": "@pytest.mark.xfail(reason='bug')\ndef {name}():\n    assert False\n",
    "xpass": "@pytest.mark.xfail(reason='bug')\ndef {name}():\n    pass\n",
    "xpass_strict": "@pytest.mark.xfail(strict=True)\ndef {name}():\n    pass\n",
    "setup_error": "def {name}(bad_setup):\n    pass\n",
    "teardown_error": "def {name}(bad_teardown):\n    pass\n",
    "fail_and_teardown_error": "def {name}(bad_teardown):\n    assert False\n",
    "warn": "def {name}():\n    warnings.warn('careful', UserWarning)\n",
    "deselected": "def {name}_deselectme():\n    pass\n",
}

#: pytest's summary words -> the digest's count names.
SUMMARY_KEYS = {"failed": "failures"}


@settings(max_examples=20)  # each example is a real pytest session (some with xdist)
@given(mix=st.lists(st.sampled_from(sorted(OUTCOMES)), min_size=1, max_size=12),
       workers=st.sampled_from([0] * 7 + [2]))
def test_digest_counts_equal_pytests_terminal_summary(pytester: pytest.Pytester,
                                                      mix: list[str], workers: int) -> None:
    shutil.rmtree(pytester.path / ".agent-runs", ignore_errors=True)
    body = "\n\n".join(OUTCOMES[kind].format(name=f"test_{i}_{kind}")
                       for i, kind in enumerate(mix))
    pytester.makepyfile(test_sample_mix=HEADER + "\n\n" + body)
    args = ["--ckdn-digest", *QUIET, "-W", "always::UserWarning", "-k", "not deselectme"]
    if workers:
        args += ["-n", str(workers)]
    result = pytester.runpytest(*args)
    rec = recorded(pytester, result)
    # pytest's own summary line, not the digest after it (whose log tail may quote it)
    outcomes = pytest.RunResult.parse_summary_nouns(result.outlines[:-1])
    summary = {SUMMARY_KEYS.get(key, key): value for key, value in outcomes.items()}
    counts = dict(rec.counts)
    counts.pop("tests", None)
    assert counts == summary
    assert rec.counts.get("tests", 0) == sum(kind != "deselected" for kind in mix)


@pytest.mark.parametrize("extra", [[], ["-p", "no:terminal"], ["-n", "2"]],
                         ids=["terminal", "no_terminal", "xdist"])
def test_a_module_skipped_at_collection_is_a_test_as_junit_counts_it(
        pytester: pytest.Pytester, extra: list[str]) -> None:
    """structlog's ``pytest.skip(allow_module_level=True)``: pytest's summary says one more
    skipped than tests started; the digest's ``tests`` counts that module, as JUnit does."""
    pytester.makepyfile(
        test_sample_kept="def test_a():\n    pass\n\ndef test_b():\n    pass\n",
        test_sample_gone="import pytest\npytest.skip('no twisted', allow_module_level=True)\n")
    result = pytester.runpytest_subprocess("--ckdn-digest", *QUIET, "--junitxml=junit.xml",
                                           *extra)
    rec = recorded(pytester, result)
    counts = rec.counts
    junit = (pytester.path / "junit.xml").read_text()
    assert counts["tests"] == 3 == int(junit.split('tests="', 1)[1].split('"', 1)[0])
    assert counts["passed"] + counts["skipped"] == counts["tests"]
