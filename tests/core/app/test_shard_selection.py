"""`--shard auto|K/N`: each CI's variables read with its own base, and no variable (or two that
disagree) refused in one line, never the whole suite as one shard."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckdn.app.shards import (
    CI_VARIABLES,
    read_shard_file,
    resolve_shard,
    select_tests,
    write_shard_file,
)
from ckdn.errors import UsageError
from ckdn.identity.plan import make_plan

#: (variables, the 1-based shard they mean) for the second of four jobs on each CI.
SECOND_OF_FOUR = [
    ({"CKDN_SHARD": "2/4"}, "$CKDN_SHARD"),
    ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}, "GitLab"),
    ({"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "4"}, "CircleCI"),
    ({"BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "4"}, "Buildkite"),
    ({"BITBUCKET_PARALLEL_STEP": "1", "BITBUCKET_PARALLEL_STEP_COUNT": "4"}, "Bitbucket"),
    ({"SEMAPHORE_JOB_INDEX": "2", "SEMAPHORE_JOB_COUNT": "4"}, "Semaphore"),
    ({"TEST_SHARD_INDEX": "1", "TEST_TOTAL_SHARDS": "4"}, "Bazel"),
]


@pytest.mark.parametrize(("env", "source"), SECOND_OF_FOUR)
def test_auto_reads_each_cis_variables_with_its_own_base(env: dict[str, str],
                                                         source: str) -> None:
    spec = resolve_shard("auto", env)
    assert (spec.index, spec.total) == (2, 4)
    assert spec.source.startswith(source)


def test_every_ci_the_docs_name_is_tested() -> None:
    tested = {source for _env, source in SECOND_OF_FOUR}
    assert {name for name, *_rest in CI_VARIABLES} <= tested


def test_auto_without_any_shard_variable_is_refused_not_the_whole_suite() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_shard("auto", {"CI_NODE_TOTAL": "1", "PATH": "/bin"})
    assert "no CI shard variable is set" in caught.value.message
    assert "\n" not in caught.value.message


def test_two_cis_that_disagree_are_refused() -> None:
    env = {"CKDN_SHARD": "1/4", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}
    with pytest.raises(UsageError, match=r"says 1/4, GitLab .* says 2/4"):
        resolve_shard("auto", env)


def test_two_variables_that_agree_are_one_shard() -> None:
    env = {"CKDN_SHARD": "2/4", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}
    assert str(resolve_shard("auto", env)) == "2/4"


@pytest.mark.parametrize(("env", "said"), [
    ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"}, "starts at 1"),
    ({"CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "4"}, "starts at 0"),
    ({"TEST_SHARD_INDEX": "x", "TEST_TOTAL_SHARDS": "4"}, "starts at 0"),
])
def test_an_index_outside_its_cis_range_is_refused(env: dict[str, str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        resolve_shard("auto", env)


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0", ""])
def test_a_shard_that_is_not_k_of_n_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="is not K/N"):
        resolve_shard(text, {})


def test_bazels_shard_status_file_is_touched(tmp_path: Path) -> None:
    status = tmp_path / "status"
    env = {"TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "2",
           "TEST_SHARD_STATUS_FILE": str(status)}
    assert str(resolve_shard("auto", env)) == "1/2"
    assert status.exists()


def test_a_shard_record_is_read_back_but_never_through_a_symlink(tmp_path: Path) -> None:
    plan = make_plan("t", {"a": 1.0, "b": 2.0}, 2)
    (tmp_path / "real").mkdir()
    write_shard_file(str(tmp_path / "real"), select_tests(plan, ["a", "b"],
                                                          resolve_shard("1/2", {})))
    record = read_shard_file(str(tmp_path / "real"))
    assert record is not None
    assert (record.plan_id, record.index, record.total) == (plan.plan_id, 1, 2)
    (tmp_path / "planted").mkdir()
    (tmp_path / "planted" / "shard.json").symlink_to(tmp_path / "real" / "shard.json")
    assert read_shard_file(str(tmp_path / "planted")) is None
