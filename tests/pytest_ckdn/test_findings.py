"""Findings from pytest's own reports: kinds, ids, locations, details, bounds and order."""

from __future__ import annotations

import json

import pytest

from tests.pytest_ckdn.sessions import QUIET, Runner, recorded

FAILING = """
import pytest

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown broke")

@pytest.fixture
def broken_setup():
    raise OSError("setup broke")

def test_assert():
    x = 1
    assert x == 2

def test_call_and_teardown(broken_teardown):
    assert False, "call fails"

def test_setup(broken_setup):
    pass

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.mark.xfail(strict=True, reason="must fail")
def test_strict_xpass():
    pass

@pytest.mark.xfail(reason="may fail")
def test_loose_xpass():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

def test_ok():
    pass
"""


def test_a_failing_assertion_is_a_test_failure_at_the_assert_line(session: Runner,
                                                                  pytester: pytest.Pytester
                                                                  ) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    finding = rec.finding("suite/test_sample_fail.py::test_assert")
    assert finding["kind"] == "test_failure"
    assert finding["message"] == "assert 1 == 2"
    assert finding["location"] == "suite/test_sample_fail.py:15"
    assert finding["detail"] == ["E       assert 1 == 2",
                                 "suite/test_sample_fail.py:15: AssertionError"]


def test_a_test_failing_in_call_and_teardown_gives_two_findings_for_one_node_id(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    node = "suite/test_sample_fail.py::test_call_and_teardown"
    call = rec.finding(node, "test_failure")
    teardown = rec.finding(node + "@teardown", "test_error")  # as the JUnit path names it
    assert call["message"] == "AssertionError: call fails"
    assert call["location"] == "suite/test_sample_fail.py:18"
    assert teardown["message"] == "RuntimeError: teardown broke"
    assert teardown["location"] == "suite/test_sample_fail.py:7"


def test_a_setup_error_is_a_test_error_and_the_test_has_no_call_report(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    finding = rec.finding("suite/test_sample_fail.py::test_setup")
    assert finding["kind"] == "test_error"
    assert finding["message"] == "OSError: setup broke"
    assert finding["location"] == "suite/test_sample_fail.py:11"


def test_outcomes_are_counted_like_pytests_summary(session: Runner,
                                                   pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    outcomes = rec.result.parseoutcomes()
    assert rec.counts == {"tests": 8, "passed": 1, "failures": 3, "errors": 2, "skipped": 1,
                          "xfailed": 1, "xpassed": 1}
    assert outcomes == {"passed": 1, "failed": 3, "errors": 2, "skipped": 1, "xfailed": 1,
                        "xpassed": 1}
    assert rec.digest["status"] == "fail"
    assert rec.digest["rc"] == 1
    assert rec.digest["findings_total"] == 5


def test_a_strict_xpass_is_a_finding_and_a_loose_one_is_only_counted(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    strict = rec.finding("suite/test_sample_fail.py::test_strict_xpass")
    assert strict["kind"] == "test_failure"
    assert strict["message"] == "[XPASS(strict)] must fail"
    ids = {f["id"] for f in rec.digest["findings"]}
    assert "suite/test_sample_fail.py::test_loose_xpass" not in ids
    assert "suite/test_sample_fail.py::test_skipped" not in ids
    assert "suite/test_sample_fail.py::test_xfail" not in ids


def test_findings_follow_node_id_order_setup_before_call_before_teardown(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    rec = session()
    order = [(f["id"].split("::")[1], f["kind"]) for f in rec.digest["findings"]]
    assert order == [("test_assert", "test_failure"),
                     ("test_call_and_teardown", "test_failure"),
                     ("test_call_and_teardown@teardown", "test_error"),
                     ("test_setup", "test_error"),
                     ("test_strict_xpass", "test_failure")]


def test_a_crash_in_a_helper_module_is_located_at_the_tests_own_line(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(helper_mod="def explode():\n    raise ValueError('deep')\n")
    pytester.makepyfile(test_sample_helper="""
        from helper_mod import explode

        def test_calls_helper():
            explode()
        """)
    pytester.syspathinsert()
    rec = session()
    finding = rec.finding("test_sample_helper.py::test_calls_helper")
    assert finding["location"] == "test_sample_helper.py:4"
    assert finding["message"] == "ValueError: deep"
    assert finding["detail"][-1] == "helper_mod.py:2: ValueError"


def test_locations_are_relative_to_the_rootdir_when_pytest_runs_from_a_subdirectory(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\n")
    sub = pytester.mkpydir("pkg")
    sub.joinpath("test_sample_sub.py").write_text("def test_sub():\n    assert 0\n")
    monkeypatch.chdir(sub)
    result = pytester.runpytest("--ckdn-digest", *QUIET)
    rec = recorded(pytester, result)  # the run dir is the rootdir's too
    finding = rec.finding("pkg/test_sample_sub.py::test_sub")
    assert finding["location"] == "pkg/test_sample_sub.py:2"


@pytest.mark.parametrize(("source", "location", "message"), [
    ("def test_x(:\n    pass\n", "test_sample_coll.py:1", "SyntaxError: invalid syntax"),
    ("import os\nimport no_such_module_ckdn\n", "test_sample_coll.py:2",
     "ModuleNotFoundError: No module named 'no_such_module_ckdn'"),
    ("X = 1\n\nraise RuntimeError('module body')\n", "test_sample_coll.py:3",
     "RuntimeError: module body"),
], ids=["syntax", "import", "module-body"])
def test_a_collection_error_is_located_at_its_module_with_the_line_from_the_error(
        session: Runner, pytester: pytest.Pytester, source: str, location: str,
        message: str) -> None:
    pytester.path.joinpath("test_sample_coll.py").write_text(source)
    rec = session()
    finding = rec.finding("test_sample_coll.py")
    assert finding["kind"] == "collection_error"
    assert finding["location"] == location
    assert finding["message"] == message
    assert rec.digest["status"] == "fail"
    assert rec.digest["rc"] == 2
    assert "interrupted" not in rec.digest
    assert rec.counts["collection_errors"] == 1
    assert rec.counts["errors"] == rec.result.parseoutcomes()["errors"] == 1


def test_a_broken_conftest_in_a_subdirectory_is_a_collection_error_at_the_conftest(
        session: Runner, pytester: pytest.Pytester) -> None:
    sub = pytester.mkdir("sub")
    sub.joinpath("conftest.py").write_text("import no_such_module_ckdn\n")
    sub.joinpath("test_sample_in_sub.py").write_text("def test_in_sub():\n    pass\n")
    rec = session()
    finding = rec.finding("sub")
    assert finding["kind"] == "collection_error"
    assert finding["location"] == "sub/conftest.py:1"


def test_an_internal_error_is_a_finding(session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        def pytest_collection_finish(session):
            raise RuntimeError("plugin bug")
        """)
    pytester.makepyfile(test_sample_ie="def test_ok():\n    pass\n")
    rec = session()
    assert rec.digest["rc"] == 3
    assert rec.digest["status"] == "fail"
    finding = rec.finding("INTERNALERROR")
    assert finding["kind"] == "internal_error"
    assert finding["message"] == "RuntimeError: plugin bug"
    assert finding["location"] == "conftest.py:2"


def test_details_are_bounded_by_max_snippet_lines(session: Runner,
                                                  pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text("[run]\nmax_snippet_lines = 4\n")
    pytester.makepyfile(test_sample_long="""
        def test_long():
            assert list(range(40)) == list(range(1, 41))
        """)
    rec = session("-vv")
    detail = rec.finding("test_sample_long.py::test_long")["detail"]
    assert len(detail) == 5
    assert detail[3] == "test_sample_long.py:2: AssertionError"
    assert detail[4].startswith("... [+")


def test_findings_beyond_top_are_counted_and_the_first_in_order_kept(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("ckdn.toml").write_text(
        '[run]\ntop = 3\n[check.pytest]\ncommand = "pytest"\nparser = "pytest"\n')
    pytester.makepyfile(test_sample_many="""
        import pytest

        @pytest.mark.parametrize("n", range(12))
        def test_many(n):
            assert n < 0
        """)
    rec = session("-n", "2")
    assert rec.digest["findings_total"] == 12
    assert rec.digest["findings_truncated"] == 9
    assert [f["id"] for f in rec.digest["findings"]] == [
        f"test_sample_many.py::test_many[{n}]" for n in range(3)]


def test_identical_sessions_give_identical_digests_but_for_the_run_dir(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.mkdir("suite")
    pytester.path.joinpath("suite", "test_sample_fail.py").write_text(FAILING)
    first = session().digest
    for path in sorted((pytester.path / ".agent-runs").iterdir()):
        if path.name.endswith("-pytest") and not path.is_symlink():
            path.rename(path.with_name(path.name + ".old"))
    second = session().digest
    first.pop("run_dir")
    second.pop("run_dir")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


SHUFFLED = """
import pytest


@pytest.mark.parametrize("n", [3, 10, 2])
def test_param(n):
    assert n < 0


def test_zeta():
    assert False


class TestGroup:
    def test_b(self):
        assert False

    def test_a(self):
        assert False
"""


def test_pytest_randomly_seeds_do_not_change_the_digest_or_the_junit_findings(
        pytester: pytest.Pytester) -> None:
    """pytest-randomly (real, pinned in the dev extra) runs the tests in another order per
    seed; the digest, and what the JUnit parser reads from the same sessions, stay the same."""
    from ckdn.parsers.base import ParseContext
    from ckdn.parsers.junit import PytestParser

    pytester.makepyfile(test_sample_shuffled=SHUFFLED)
    digests: list[str] = []
    junit: list[list[tuple[str, str]]] = []
    orders: set[str] = set()
    for seed in (1, 2, 3, 4):
        report = pytester.path / f"junit-{seed}.xml"
        result = pytester.runpytest_subprocess(
            "--ckdn-digest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-v",
            "-p", "randomly",
            f"--randomly-seed={seed}", f"--junitxml={report}")
        orders.add(" ".join(line.split(" ")[0] for line in result.outlines
                            if " FAILED" in line or " PASSED" in line))
        digest = json.loads(result.outlines[-1])
        digest.pop("run_dir")
        digests.append(json.dumps(digest, sort_keys=True))
        ctx = ParseContext(check="pytest", run_dir=pytester.path, cwd=pytester.path,
                           rc=result.ret, options={"junit": report.name})
        junit.append([(f.id, f.kind) for f in PytestParser().parse(ctx).findings])
    assert len(orders) > 1  # the seeds did shuffle the run
    assert len(set(digests)) == 1
    assert all(found == junit[0] for found in junit)
    assert [f["id"] for f in json.loads(digests[0])["findings"]] == [
        "test_sample_shuffled.py::TestGroup::test_a", "test_sample_shuffled.py::TestGroup::test_b",
        "test_sample_shuffled.py::test_param[2]", "test_sample_shuffled.py::test_param[3]",
        "test_sample_shuffled.py::test_param[10]", "test_sample_shuffled.py::test_zeta"]
    assert [found[0] for found in junit[0]] == [f["id"] for f in json.loads(digests[0])["findings"]]


SUBTESTS = """
def test_discounts(subtests):
    for price, discounted in [(100, 90), (50, 45), (10, 8)]:
        with subtests.test(price=price):
            assert price * 0.9 == discounted
"""


def test_a_failing_subtest_and_its_test_get_the_ids_the_junit_path_gives(
        session: Runner, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sample_sub=SUBTESTS)
    rec = session("--junitxml", "junit.xml")
    assert [(f["id"], f["message"]) for f in rec.digest["findings"]] == [
        ("test_sample_sub.py::test_discounts", "assert (10 * 0.9) == 8"),
        ("test_sample_sub.py::test_discounts#2", "contains 1 failed subtest")]
