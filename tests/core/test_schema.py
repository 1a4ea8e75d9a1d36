"""The packaged JSON Schemas: valid themselves, and matching every document ckdn writes."""

from __future__ import annotations

import copy
import hashlib
import importlib.resources
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.documents import (
    SCHEMA_DIGEST,
    SCHEMA_META,
    Bounds,
    build_digest,
    build_meta,
)
from ckdn.documents.aggregate import SCHEMA_AGGREGATE, Member, build_aggregate
from ckdn.errors import UsageError
from ckdn.parsers.base import Finding, ParseResult
from ckdn.reconcile import ERROR, FAIL, PARSE_MISMATCH, PASS, SKIPPED, Exit, reconcile
from ckdn.schema import UnknownSchemaError, load_schema, schema_ids

if TYPE_CHECKING:
    from ckdn.documents.types import Aggregate, Digest, Meta

FINDING = Finding(id="src/a.py:3:1:F401", kind="lint_violation", message="`os` imported but unused",
                  location="src/a.py:3:1", detail=("import os",))

#: name -> (exit, parse result, run-level notes): one row per status variant.
DIGEST_VARIANTS: dict[str, tuple[Exit, ParseResult, tuple[str, ...]]] = {
    "pass": (Exit(0), ParseResult(summary={"counts": {"files": 12}}), ()),
    "fail_with_findings": (Exit(1), ParseResult(findings=[FINDING] * 3, findings_total=40), ()),
    "fail_gate_only": (Exit(0), ParseResult(gate_failures=["coverage 79.0% < fail_under 96.0%"]),
                       ()),
    "fail_generic_with_tail": (Exit(1), ParseResult(evidence_expected=False,
                                                    wants_log_tail=True), ()),
    "error_timed_out": (Exit(124, timed_out=True, timeout=1.0),
                        ParseResult(evidence_expected=False), ("timed out after 1s",)),
    "error_interrupted": (Exit(130, interrupted=True), ParseResult(), ()),
    "error_never_started": (Exit(127, started=False), ParseResult(),
                            ("command not found: 'nope'",)),
    "error_no_findings": (Exit(2), ParseResult(), ()),
    "error_signal": (Exit(-9), ParseResult(), ()),
    "parse_mismatch": (Exit(0), ParseResult(parser_ok=False,
                                            notes=["report not found: junit.xml"]), ()),
    "parse_mismatch_findings": (Exit(0), ParseResult(findings=[FINDING]), ()),
}


def validator(schema_id: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(schema_id))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run dir whose full.log a real process wrote."""
    path = tmp_path_factory.mktemp("run")
    with open(path / "full.log", "wb") as log:
        subprocess.run([sys.executable, "-c", "for i in range(60): print('log line', i)"],
                       stdout=log, stderr=subprocess.STDOUT, check=True)
    return path


def make_digest(name: str, run_dir: Path) -> Digest:
    exit, result, notes = DIGEST_VARIANTS[name]
    return build_digest(check="ruff", verdict=reconcile(exit, result), exit=exit, result=result,
                        run_dir=".agent-runs/20260707T101500Z-ruff",
                        artifacts=["full.log", "ruff.json"], log_path=str(run_dir / "full.log"),
                        bounds=Bounds(top=2), notes=notes)


def make_aggregates() -> Iterator[tuple[str, Aggregate]]:
    def ran(check: str, status: str, rc: int) -> Member:
        return Member(check=check, status=status, rc=rc, run_dir=f".agent-runs/x-{check}")

    yield "pass", build_aggregate(alias="lint", members=[ran("ruff", PASS, 0),
                                                         ran("pylint", PASS, 0)])
    yield "fail_fast_skipped", build_aggregate(alias="lint", members=[
        ran("ruff", FAIL, 1), Member(check="pylint", status=SKIPPED)])
    yield "all_ran", build_aggregate(alias="types", members=[
        ran("ty", PASS, 0), ran("mypy", ERROR, -9), ran("pyright", FAIL, 1)])
    yield "mismatch_rc0", build_aggregate(alias="tests", members=[
        ran("pytest", PARSE_MISMATCH, 0)])


def make_metas(tmp_path: Path) -> Iterator[tuple[str, Meta]]:
    log = b"collected 3 items\n"
    digest = hashlib.sha256(log).hexdigest()
    now = time.time()
    for name, exit, status in [
        ("pass", Exit(0, duration=0.25), PASS),
        ("fail", Exit(1, duration=3.0), FAIL),
        ("timed_out", Exit(124, timed_out=True, timeout=1.0, duration=1.0), ERROR),
        ("interrupted", Exit(130, interrupted=True), ERROR),
        ("never_started", Exit(127, started=False), ERROR),
        ("signal", Exit(-15), ERROR),
    ]:
        yield name, build_meta(check="pytest", argv=["pytest", "-q", "--junitxml", "junit.xml"],
                               exit=exit, started_at=now, finished_at=now + exit.duration,
                               log_sha256=digest, log_bytes=len(log), parser="pytest",
                               env_keys={"LANG": "C"} if status == FAIL else {})


# ------------------------------------------------------------------- the schemas


SCHEMA_DIFF = "ckdn.diff/1"
SCHEMA_DOCTOR = "ckdn.doctor/1"
SCHEMA_PLAN = "ckdn.plan/1"
SCHEMA_CHANGE = "ckdn.change/1"
SCHEMA_STATUS = "ckdn.status/1"


def test_schema_ids_are_the_packaged_documents() -> None:
    assert schema_ids() == [SCHEMA_AGGREGATE, SCHEMA_CHANGE, SCHEMA_DIFF, SCHEMA_DIGEST,
                            SCHEMA_DOCTOR, SCHEMA_META, SCHEMA_PLAN, SCHEMA_STATUS]


@pytest.mark.parametrize("schema_id", [SCHEMA_DIGEST, SCHEMA_AGGREGATE, SCHEMA_META,
                                       SCHEMA_DIFF, SCHEMA_DOCTOR, SCHEMA_PLAN,
                                       SCHEMA_STATUS, SCHEMA_CHANGE])
def test_each_packaged_schema_is_a_valid_draft_2020_12_schema(schema_id: str) -> None:
    schema = load_schema(schema_id)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schema_id


@pytest.mark.parametrize("schema_id", [SCHEMA_DIGEST, SCHEMA_AGGREGATE, SCHEMA_META,
                                       SCHEMA_DIFF, SCHEMA_DOCTOR, SCHEMA_PLAN,
                                       SCHEMA_STATUS, SCHEMA_CHANGE])
def test_every_object_with_declared_keys_closes_additional_properties(schema_id: str) -> None:
    def objects(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    found = list(objects(load_schema(schema_id)))
    assert found
    assert all(node.get("additionalProperties") is False for node in found)


def test_the_schemas_ship_inside_the_package() -> None:
    folder = importlib.resources.files("ckdn") / "schemas"
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".json"))
    assert names == ["aggregate-1.json", "change-1.json", "diff-1.json", "digest-2.json",
                     "doctor-1.json", "meta-1.json", "plan-1.json", "status-1.json"]


@pytest.mark.parametrize("schema_id", ["ckdn.baseline/1", "ckdn.digest/1", "nope", ""])
def test_loading_an_unknown_schema_id_raises_a_one_line_usage_error(schema_id: str) -> None:
    with pytest.raises(UnknownSchemaError) as caught:
        load_schema(schema_id)
    assert isinstance(caught.value, UsageError)
    assert isinstance(caught.value, KeyError)
    assert caught.value.exit_code == 2
    assert "\n" not in str(caught.value)
    assert SCHEMA_DIGEST in str(caught.value)


def test_the_baseline_schema_id_says_why_it_has_no_schema() -> None:
    with pytest.raises(UnknownSchemaError, match="ckdn's own state"):
        load_schema("ckdn.baseline/1")


def test_load_schema_returns_a_fresh_copy_each_time() -> None:
    first = load_schema(SCHEMA_DIGEST)
    first["properties"].clear()
    assert load_schema(SCHEMA_DIGEST)["properties"]


# ------------------------------------------------------------- documents validate


@pytest.mark.parametrize("name", sorted(DIGEST_VARIANTS))
def test_every_digest_status_variant_validates(name: str, run_dir: Path) -> None:
    doc = make_digest(name, run_dir)
    validator(SCHEMA_DIGEST).validate(doc)


def test_the_digest_variants_cover_every_status(run_dir: Path) -> None:
    statuses = {make_digest(name, run_dir)["status"] for name in DIGEST_VARIANTS}
    assert statuses == {PASS, FAIL, ERROR, PARSE_MISMATCH}


def test_every_aggregate_variant_validates() -> None:
    check = validator(SCHEMA_AGGREGATE)
    for _name, doc in make_aggregates():
        check.validate(doc)


def test_every_meta_variant_validates(tmp_path: Path) -> None:
    check = validator(SCHEMA_META)
    for _name, doc in make_metas(tmp_path):
        check.validate(doc)


# --------------------------------------------------------- documents that must not


def all_documents(run_dir: Path, tmp_path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name in DIGEST_VARIANTS:
        yield SCHEMA_DIGEST, make_digest(name, run_dir)
    for _name, aggregate in make_aggregates():
        yield SCHEMA_AGGREGATE, aggregate
    for _name, meta in make_metas(tmp_path):
        yield SCHEMA_META, meta


def test_a_document_with_an_extra_key_fails_validation(run_dir: Path, tmp_path: Path) -> None:
    for schema_id, doc in all_documents(run_dir, tmp_path):
        bad = {**doc, "extra": 1}
        assert not validator(schema_id).is_valid(bad), (schema_id, doc["status"])


def test_an_extra_key_inside_a_finding_or_member_fails_validation(run_dir: Path) -> None:
    digest = changed(make_digest("fail_with_findings", run_dir),
                     lambda d: d["findings"][0].update(severity="high"))
    assert not validator(SCHEMA_DIGEST).is_valid(digest)
    aggregate = changed(dict(make_aggregates())["fail_fast_skipped"],
                        lambda d: d["members"][0].update(duration=1.0))
    assert not validator(SCHEMA_AGGREGATE).is_valid(aggregate)


def changed(doc: Mapping[str, Any], change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    copied = copy.deepcopy(dict(doc))
    change(copied)
    return copied


@pytest.mark.parametrize(("variant", "change"), [
    ("pass", lambda d: d.update(status_reason="why")),
    ("pass", lambda d: d.update(artifacts=["full.log"])),
    ("pass", lambda d: d.update(findings_total=1, findings=[{"id": "", "kind": "",
                                                            "message": ""}])),
    ("fail_with_findings", lambda d: d.pop("status_reason")),
    ("fail_with_findings", lambda d: d.pop("findings_total")),
    ("fail_with_findings", lambda d: d.update(findings_truncated=0)),
    ("fail_with_findings", lambda d: d.update(notes=[])),
    ("fail_with_findings", lambda d: d.update(timed_out=True)),
    ("fail_with_findings", lambda d: d.pop("run_dir")),
    ("fail_with_findings", lambda d: d.update(status="skipped")),
    ("error_timed_out", lambda d: d.update(timed_out=False)),
    ("error_no_findings", lambda d: d.update(findings_total=3)),
    ("error_no_findings", lambda d: d.update(summary={})),
])
def test_a_digest_breaking_the_contract_fails_validation(variant: str,
                                                         change: Callable[[dict[str, Any]], object],
                                                         run_dir: Path) -> None:
    check = validator(SCHEMA_DIGEST)
    doc = make_digest(variant, run_dir)
    assert check.is_valid(doc)
    assert not check.is_valid(changed(doc, change))


@pytest.mark.parametrize(("variant", "change"), [
    ("pass", lambda d: d.update(rc=1)),
    ("fail_fast_skipped", lambda d: d.update(rc=0)),
    ("fail_fast_skipped", lambda d: d["members"][1].update(rc=0)),
    ("fail_fast_skipped", lambda d: d["members"][0].pop("run_dir")),
    ("fail_fast_skipped", lambda d: d.update(status="skipped")),
    ("fail_fast_skipped", lambda d: d.update(members=[])),
    ("pass", lambda d: d["members"][0].update(status="fail")),
])
def test_an_aggregate_breaking_the_contract_fails_validation(
        variant: str, change: Callable[[dict[str, Any]], object]) -> None:
    check = validator(SCHEMA_AGGREGATE)
    doc = dict(make_aggregates())[variant]
    assert check.is_valid(doc)
    assert not check.is_valid(changed(doc, change))


@pytest.mark.parametrize("change", [
    lambda d: d.update(started_at="2026-07-07 10:15:00"),
    lambda d: d.update(log_sha256="abc"),
    lambda d: d.update(duration_s=-1.0),
    lambda d: d.pop("command"),
    lambda d: d.update(command="pytest -q"),
    lambda d: d.update(timed_out="no"),
    lambda d: d.update(started_at="2026-07-07T10:15:00.5+00:00"),
    lambda d: d.update(started_at="2026-07-07T10:15:00Z"),
    lambda d: d.update(env_keys=[]),
    lambda d: d.update(cwd="/work"),
    lambda d: d.pop("interrupted"),
])
def test_a_meta_breaking_the_contract_fails_validation(
        change: Callable[[dict[str, Any]], object], tmp_path: Path) -> None:
    check = validator(SCHEMA_META)
    doc = dict(make_metas(tmp_path))["pass"]
    assert check.is_valid(doc)
    assert not check.is_valid(changed(doc, change))
