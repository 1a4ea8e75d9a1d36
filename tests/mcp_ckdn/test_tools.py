"""The tools over the SDK's memory transport: results are data, mistakes are isError."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from ckdn.app.queries import load_schema, resolution_order
from mcp_ckdn._schemas import OUTPUT_SCHEMAS
from mcp_ckdn._server import TOOL_NAMES, instructions
from tests.core.app.test_locating import CONFIG_ORDER, CWD_ORDER
from tests.mcp_ckdn.conftest import call, connected, data, error_text, valid
from tests.project import Project, py

CONFIG = f"""\
[check.ok]
command = "true"
parser = "generic"

[check.bad]
command = "sh -c 'echo boom; exit 3'"
parser = "generic"

[check.missing]
command = "no-such-program-ckdn-test"
parser = "generic"

[check.confused]
command = "true"
parser = "ruff"

[check.argv]
command = {json.dumps(py("import sys; print(sys.argv[1:])"))}
parser = "generic"

[check.both]
members = ["ok", "bad"]

[check.bad-first]
members = ["bad", "ok"]
fail_fast = true
"""


@pytest.fixture
def root(project: Project) -> Path:
    project.config(CONFIG)
    return project.root


def test_every_tool_is_listed_with_an_output_schema_built_from_the_packaged_ones(
        root: Path) -> None:
    async def go() -> Any:
        async with connected(root) as client:
            return (await client.list_tools()).tools

    tools = anyio.run(go)
    assert [tool.name for tool in tools] == list(TOOL_NAMES)
    for tool in tools:
        assert tool.output_schema == OUTPUT_SCHEMAS[tool.name]
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"
    digest = load_schema("ckdn.digest/2")
    embedded = OUTPUT_SCHEMAS["run_check"]["properties"]["digest"]
    assert embedded["required"] == digest["required"]
    assert set(embedded["properties"]) == set(digest["properties"])
    assert "$id" not in json.dumps(OUTPUT_SCHEMAS)  # plain #/$defs pointers only


def test_a_passing_and_a_failing_check_are_both_ordinary_results(root: Path) -> None:
    green = data(call(root, "run_check", {"check": "ok"}))
    red = data(call(root, "run_check", {"check": "bad"}))
    assert (green["exit_code"], green["digest"]["status"]) == (0, "pass")
    assert (red["exit_code"], red["digest"]["status"]) == (3, "fail")
    for result in (green, red):
        valid(result["digest"], "ckdn.digest/2")
        jsonschema.validate(result, OUTPUT_SCHEMAS["run_check"])
        assert (root / ".agent-runs" / result["run_id"] / "digest.json").is_file()


@pytest.mark.parametrize(("check", "status"), [("missing", "error"),
                                               ("confused", "parse_mismatch")])
def test_error_and_parse_mismatch_are_results_not_tool_errors(root: Path, check: str,
                                                              status: str) -> None:
    result = data(call(root, "run_check", {"check": check}))
    assert result["digest"]["status"] == status
    assert result["exit_code"] != 0


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("run_check", {"check": "nope"}, "unknown check 'nope'"),
    ("run_check", {"check": "both"}, "is an alias"),
    ("run_group", {"alias": "ok"}, "is an atomic check, not an alias"),
    ("get_digest", {"run": "../../etc"}, "is a path"),
    ("get_digest", {"run": "/etc"}, "is a path"),
    ("get_digest", {"run": ".locks"}, "is not a run"),
    ("get_digest", {"run": "20990101T000000Z-ok"}, "no run"),
    ("get_evidence", {"run": "../x"}, "is a path"),
    ("run_check", {"check": "argv", "extra_args": ["a\0b"]}, "holds a NUL character"),
    ("diff", {"a": "/tmp", "b": "x"}, "no run"),
])
def test_impossible_calls_are_tool_errors_with_one_line(root: Path, tool: str,
                                                        arguments: dict[str, Any],
                                                        message: str) -> None:
    data(call(root, "run_check", {"check": "ok"}))  # a run exists
    text = error_text(call(root, tool, arguments))
    assert message in text
    assert "\n" not in text
    assert "Traceback" not in text


def test_a_missing_config_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    text = error_text(call(tmp_path, "list_checks"))
    assert "no ckdn.toml in" in text
    named = error_text(call(tmp_path, "run_check", {"check": "ok"}, config="nowhere.toml"))
    assert "no such config file" in named


def test_a_run_reference_escaping_the_runs_dir_through_a_symlink_is_refused(root: Path) -> None:
    data(call(root, "run_check", {"check": "ok"}))
    outside = root / "outside-20260101T000000Z-ok"
    outside.mkdir()
    (root / ".agent-runs" / "20260101T000000Z-ok").symlink_to(outside)
    assert "outside the runs dir" in error_text(
        call(root, "get_digest", {"run": "20260101T000000Z-ok"}))


def test_extra_args_reach_the_configured_command_as_words_never_through_a_shell(
        root: Path) -> None:
    words = ["$(touch pwned)", ";", "touch", "pwned2", "`id`"]
    result = data(call(root, "run_check", {"check": "argv", "extra_args": words}))
    assert result["digest"]["status"] == "pass"
    log = (root / ".agent-runs" / result["run_id"] / "full.log").read_text()
    assert log.strip() == repr(words)
    assert not (root / "pwned").exists()
    assert not (root / "pwned2").exists()


def test_no_tool_takes_a_command(root: Path) -> None:
    async def go() -> Any:
        async with connected(root) as client:
            return (await client.list_tools()).tools

    for tool in anyio.run(go):
        assert set(tool.input_schema.get("properties", {})) <= {
            "check", "alias", "extra_args", "gate", "fail_fast", "run", "limit", "artifact",
            "offset", "include_meta", "a", "b", "config", "cwd",
            "diff_base",  # a git ref, never a command
            "checks", "accept_weakened"}  # status: check names and a flag (issue 25)


def test_run_group_returns_the_aggregate_and_its_members_digests_are_readable(
        root: Path) -> None:
    result = data(call(root, "run_group", {"alias": "both"}))
    aggregate = result["aggregate"]
    valid(aggregate, "ckdn.aggregate/1")
    assert (aggregate["status"], result["exit_code"]) == ("fail", 3)
    red = next(m for m in aggregate["members"] if m["status"] == "fail")
    member = data(call(root, "get_digest", {"run": os.path.basename(red["run_dir"])}))
    assert member["check"] == "bad"
    stored = data(call(root, "get_digest", {"run": result["run_id"]}))
    assert stored == aggregate


def test_fail_fast_stops_a_group_at_its_first_red_member(root: Path) -> None:
    members = data(call(root, "run_group", {"alias": "bad-first"}))["aggregate"]["members"]
    assert [m["status"] for m in members] == ["fail", "skipped"]
    members = data(call(root, "run_group", {"alias": "bad-first", "fail_fast": False})
                   )["aggregate"]["members"]
    assert [m["status"] for m in members] == ["fail", "pass"]


def test_run_all_runs_every_atomic_check_in_config_order(root: Path) -> None:
    result = data(call(root, "run_all", {}))
    assert [m["check"] for m in result["aggregate"]["members"]] == [
        "ok", "bad", "missing", "confused", "argv"]
    fast = data(call(root, "run_all", {"fail_fast": True}))["aggregate"]["members"]
    assert [m["status"] for m in fast] == ["pass", "fail", "skipped", "skipped", "skipped"]


def test_get_digest_reads_the_latest_or_a_named_run_and_list_runs_lists_them(
        root: Path) -> None:
    first = data(call(root, "run_check", {"check": "ok"}))
    second = data(call(root, "run_check", {"check": "bad"}))
    latest = data(call(root, "get_digest"))
    assert latest == second["digest"]  # the stored document itself, as published
    stored = root / ".agent-runs" / second["run_id"] / "digest.json"
    assert latest == json.loads(stored.read_text())
    valid(latest, "ckdn.digest/2")
    named = data(call(root, "get_digest", {"run": first["run_id"]}))
    assert named == first["digest"]
    runs = data(call(root, "list_runs", {"limit": 5}))["runs"]
    assert {r["run_id"] for r in runs} == {first["run_id"], second["run_id"]}
    assert {r["status"] for r in runs} == {"pass", "fail"}
    assert call(root, "list_runs", {"limit": 0}).is_error


def test_list_checks_shows_the_configured_checks_and_never_their_env_values(
        project: Project) -> None:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   'env = { TOKEN = "s3cret" }\n')
    result = data(call(project.root, "list_checks"))
    assert [c["name"] for c in result["checks"]] == ["ok"]
    assert result["runs_dir"] == ".agent-runs"
    assert "s3cret" not in json.dumps(result)


def test_get_evidence_of_an_unlisted_artifact_is_a_tool_error(root: Path) -> None:
    one = data(call(root, "run_check", {"check": "ok"}))
    for name in ("../digest.json", "digest.json", "nope.txt", ".hidden"):
        text = error_text(call(root, "get_evidence", {"run": one["run_id"], "artifact": name}))
        assert "is not evidence of run" in text


def test_diff_compares_two_runs_of_one_check(root: Path) -> None:
    first = data(call(root, "run_check", {"check": "bad"}))
    second = data(call(root, "run_check", {"check": "bad"}))
    result = data(call(root, "diff", {"a": first["run_id"], "b": second["run_id"]}))
    valid(result["diff"], "ckdn.diff/1")
    relative = data(call(root, "diff", {"a": "-1", "b": second["run_id"]}))
    assert relative == result


def test_the_instructions_advertise_the_order_the_resolver_walks() -> None:
    order = resolution_order()
    config, cwd = order.split("; ")
    positions = [config.index(source) for source in CONFIG_ORDER]
    assert positions == sorted(positions)
    positions = [cwd.index(source) for source in CWD_ORDER]
    assert positions == sorted(positions)
    assert order in instructions("/some/project")


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("get_evidence", {"limit": 500}, "limit: "),
    ("get_evidence", {"limit": 0}, "limit: "),
    ("get_evidence", {"offset": "abc"}, "offset: "),
    ("get_evidence", {"limit": [1]}, "limit: "),
    ("list_runs", {"limit": 1000}, "limit: "),
    ("list_runs", {"limit": "ten"}, "limit: "),
    ("run_check", {"check": 7}, "check: "),
    ("run_check", {"check": "ok", "extra_args": "not a list"}, "extra_args: "),
    ("get_evidence", {"include_meta": "maybe"}, "include_meta: "),
    ("get_digest", {"run": 5}, "run: "),
    ("list_checks", {"cwd": 5}, "cwd: "),
    ("run_check", {}, "check: "),
    ("run_all", {"fail_fast": "maybe"}, "fail_fast: "),
])
def test_a_wrong_argument_is_answered_in_ckdns_one_line(root: Path, tool: str,
                                                        arguments: dict[str, Any],
                                                        message: str) -> None:
    data(call(root, "run_check", {"check": "ok"}))
    text = error_text(call(root, tool, arguments))
    assert text.startswith(f"{tool}: invalid arguments: {message}"), text
    assert "\n" not in text
    assert "http" not in text  # no pointer to pydantic's documentation
    assert "pydantic" not in text.lower()


def test_a_foreign_file_lists_full_log_once_among_the_choices(root: Path) -> None:
    data(call(root, "run_check", {"check": "bad"}))
    text = error_text(call(root, "get_evidence", {"artifact": "junit.xml"}))
    assert "choose one of: " in text
    choices = text.split("choose one of: ", 1)[1].split(", ")
    assert choices.count("full.log") == 1, text
    assert len(choices) == len(set(choices))
