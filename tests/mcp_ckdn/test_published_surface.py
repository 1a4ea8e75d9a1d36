"""The published MCP surface (CONTRACT.md): a client written for it works unchanged here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_ckdn._schemas import OUTPUT_SCHEMAS
from mcp_ckdn._server import TOOL_NAMES
from tests.mcp_ckdn.conftest import call, data, error_text, valid
from tests.project import Project

CONFIG = """\
[check.ok]
command = "true"
parser = "generic"

[check.bad]
command = "sh -c 'echo boom; echo second line; exit 3'"
parser = "generic"

[check.also-ok]
command = "true"
parser = "generic"

[check.both]
members = ["ok", "bad"]
fail_fast = false

[check.greens]
members = ["ok", "also-ok"]
"""
#: tool -> arguments that make a valid call of it (after a run of `bad`).
VALID_CALLS: dict[str, dict[str, Any]] = {
    "list_checks": {}, "run_check": {"check": "ok"}, "run_group": {"alias": "greens"},
    "run_all": {}, "get_digest": {}, "list_runs": {"limit": 3}, "get_evidence": {},
    "diff": {"a": "-1", "b": "LATEST"}, "status": {"checks": ["ok"]},
}


@pytest.fixture
def root(project: Project) -> Path:
    project.config(CONFIG)
    return project.root


def test_every_tool_takes_config_and_cwd_and_a_call_without_them_is_the_servers(
        root: Path, tmp_path: Path) -> None:
    assert set(VALID_CALLS) == set(TOOL_NAMES)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for tool, arguments in VALID_CALLS.items():
        data(call(root, "run_check", {"check": "bad"}))
        if tool == "diff":
            arguments = {**arguments, "b": data(call(root, "list_runs"))["runs"][-1]["run_id"]}
        # from a server started in another directory, the call names the project
        found = call(elsewhere, tool, {**arguments, "cwd": str(root),
                                       "config": str(root / "ckdn.toml")})
        assert not found.is_error, (tool, found.content)


def test_a_call_naming_cwd_reads_that_projects_config(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "ckdn.toml").write_text('[check.theirs]\ncommand = "true"\nparser = "generic"\n')
    here = data(call(root, "list_checks"))
    there = data(call(root, "list_checks", {"cwd": str(other)}))
    assert "theirs" not in {c["name"] for c in here["checks"]}
    assert [c["name"] for c in there["checks"]] == ["theirs"]
    named = data(call(other, "list_checks", {"config": str(root / "ckdn.toml")}))
    assert "both" in {c["name"] for c in named["checks"]}
    assert "not a directory" in error_text(call(root, "list_checks", {"cwd": str(root / "no")}))


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_an_unknown_argument_is_an_error_in_one_line_never_ignored(root: Path,
                                                                   tool: str) -> None:
    data(call(root, "run_check", {"check": "bad"}))
    text = error_text(call(root, tool, {**VALID_CALLS[tool], "frobnicate": True}))
    assert text.startswith(f"{tool}: unknown argument 'frobnicate'; it takes: "), text
    assert {"config", "cwd"} <= set(text.split("; it takes: ")[1].split(", "))
    assert "\n" not in text
    assert not list((root / ".agent-runs").glob("*-greens"))  # the refused call ran nothing


def test_the_old_names_are_refused_rather_than_dropped(root: Path) -> None:
    """A call asking for extra arguments under another name never runs something else."""
    text = error_text(call(root, "run_check", {"check": "bad", "args": ["-x"]}))
    assert ("unknown argument 'args'; it takes: check, config, cwd, diff_base, extra_args, "
            "gate") in text
    assert not list((root / ".agent-runs").glob("*-bad"))  # nothing ran
    assert "unknown argument 'file'" in error_text(
        call(root, "get_evidence", {"file": "full.log"}))


def test_get_evidence_returns_the_runs_evidence_in_the_published_shape(root: Path) -> None:
    red = data(call(root, "run_check", {"check": "bad"}))
    evidence = data(call(root, "get_evidence", {"run": red["run_id"]}))
    jsonschema.validate(evidence, OUTPUT_SCHEMAS["get_evidence"])
    digest = red["digest"]
    assert {k: evidence[k] for k in ("check", "status", "rc", "run_dir")} == {
        k: digest[k] for k in ("check", "status", "rc", "run_dir")}
    assert evidence["run_id"] == red["run_id"]
    assert evidence["artifacts"][0] == "full.log"
    assert evidence["log_tail"] == digest["log_tail"]
    assert not {"artifact", "meta"} & set(evidence)


def test_get_evidence_with_an_artifact_adds_a_bounded_window_of_it(root: Path) -> None:
    red = data(call(root, "run_check", {"check": "bad"}))
    evidence = data(call(root, "get_evidence", {"run": red["run_id"], "artifact": "full.log",
                                                "offset": 1, "limit": 1}))
    jsonschema.validate(evidence, OUTPUT_SCHEMAS["get_evidence"])
    window = evidence["artifact"]
    assert {k: window[k] for k in ("name", "offset", "limit", "total_lines", "truncated",
                                   "lines")} == {
        "name": "full.log", "offset": 1, "limit": 1, "total_lines": 2, "truncated": False,
        "lines": ["second line"]}
    default = data(call(root, "get_evidence", {"artifact": "full.log"}))["artifact"]
    assert default["limit"] == 200  # the published default


def test_get_evidence_with_include_meta_adds_the_runs_provenance(root: Path) -> None:
    red = data(call(root, "run_check", {"check": "bad"}))
    evidence = data(call(root, "get_evidence", {"include_meta": True}))
    valid(evidence["meta"], "ckdn.meta/1")
    assert (evidence["meta"]["check"], evidence["meta"]["rc"]) == ("bad", 3)
    stored = json.loads((root / ".agent-runs" / red["run_id"] / "meta.json").read_text())
    assert evidence["meta"] == stored


def test_after_an_alias_get_evidence_answers_for_its_first_red_member_and_says_so(
        root: Path) -> None:
    group = data(call(root, "run_group", {"alias": "both"}))
    evidence = data(call(root, "get_evidence", {}))
    assert (evidence["check"], evidence["status"]) == ("bad", "fail")
    assert evidence["alias_run"] == {"run_id": group["run_id"], "alias": "both",
                                     "member": "bad"}
    named = data(call(root, "get_evidence", {"run": group["run_id"]}))
    assert named == evidence


def test_after_a_green_alias_get_evidence_answers_for_its_last_member(root: Path) -> None:
    group = data(call(root, "run_group", {"alias": "greens"}))
    evidence = data(call(root, "get_evidence", {}))
    assert (evidence["check"], evidence["status"]) == ("also-ok", "pass")
    assert evidence["alias_run"]["run_id"] == group["run_id"]
    assert evidence["run_id"].endswith("-also-ok")


def test_get_digest_declares_both_documents_and_returns_each_as_stored(root: Path) -> None:
    group = data(call(root, "run_group", {"alias": "both"}))
    aggregate = data(call(root, "get_digest", {}))
    valid(aggregate, "ckdn.aggregate/1")
    assert aggregate == group["aggregate"]
    digest = data(call(root, "get_digest", {"run": data(call(root, "get_evidence"))["run_id"]}))
    valid(digest, "ckdn.digest/2")
    for doc in (aggregate, digest):
        jsonschema.validate(doc, OUTPUT_SCHEMAS["get_digest"])
