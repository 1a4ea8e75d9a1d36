"""Our packaged schemas and documents against the published contract (CONTRACT.md).

Two directions. Key by key, our schemas declare exactly the keys CONTRACT.md's
tables list, typed as they say, closed; every constraint ours adds is named in
:data:`STRICTER` with the seed sentence that allows it, and every place ours
accepts more is one of the two seed 000 differences (:data:`WIDER`). Then every
document variant ckdn writes, built in memory and written by real runs,
validates against the schemas rebuilt from CONTRACT.md's text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ckdn.schema import load_schema
from tests.contract import published
from tests.core.test_schema import DIGEST_VARIANTS, make_aggregates, make_digest, make_metas
from tests.diffgate_repo import CONFIG, break_a_caller_and_add_an_error, make_repo
from tests.project import Project, py

ROOT = Path(__file__).resolve().parents[2]
TEAM_COPY = ROOT.parent / "shared" / "CONTRACT.md"

#: Where our schema is stricter than the published one: (document, path) -> keyword ->
#: the seed's words that make it so. The test fails on any strictness not listed here.
STRICTER: dict[tuple[str, str], dict[str, str]] = {
    ("digest", "status_reason"): {"minLength": "001: status_reason says why the run is "
                                               "not green; an empty reason says nothing"},
    ("digest", "summary"): {"minProperties": "001: summary is present when the parser "
                                             "produced counts, after empty values are pruned"},
    ("digest", "finding.location"): {"minLength": "001: location when the parser has one"},
    ("aggregate", "members"): {"minItems": "000: an alias groups atomic checks; "
                                           "members = [...] (an empty alias is refused)"},
    ("aggregate", "member.check"): {"minLength": "000: a member is an atomic check, and a "
                                                 "digest's check has min length 1"},
    ("aggregate", "member.run_dir"): {"minLength": "001: a digest's run_dir has min length "
                                                   "1, and a member routes to it"},
}
#: Where ours accepts more: the two differences where seed 000 wins (CONTRACT.md says so).
WIDER: dict[tuple[str, str], str] = {
    ("aggregate", "status"): "000: the first non-green member's status (error, parse_mismatch)",
    ("aggregate", "member.status"): "000: members not reached are listed as skipped",
    ("aggregate", "member.required"): "000: a skipped member has no rc",
}
#: Keys ours declares that the published schemas do not. None: the diff-scoped gate
#: (issue 26) keeps the published ``gate``, its facts in ``summary`` and ``change.json``.
ADDED: dict[tuple[str, str], str] = {}
#: What only an imported run's digest carries (issue 27): keys a native digest never has,
#: and ``rc`` null beside them. The published schema refuses such a digest (closed, rc an
#: integer), so a consumer written for it can never take an import for a native run.
IMPORT_ONLY: dict[str, set[str]] = {"digest": {"origin", "import_summary"}}
IMPORT_WIDENED: dict[tuple[str, str], str] = {("digest", "rc"): "null"}
#: Keywords that only say *how* a constraint is written, not what it accepts.
_NOTES = {"description", "title", "format", "$comment"}


def _ours(name: str) -> dict[str, Any]:
    return load_schema({"digest": "ckdn.digest/2", "aggregate": "ckdn.aggregate/1",
                        "meta": "ckdn.meta/1"}[name])


def _published(name: str) -> dict[str, Any]:
    return {"digest": published.digest_schema, "aggregate": published.aggregate_schema,
            "meta": published.meta_schema}[name]()


def objects(name: str) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(path prefix, our object schema, the published one) for each closed object."""
    ours, theirs = _ours(name), _published(name)
    yield "", ours, theirs
    for sub in theirs.get("$defs", {}):
        yield f"{sub}.", ours["$defs"][sub], theirs["$defs"][sub]
    for key in ("gate", "baseline"):
        if key in theirs["properties"]:
            yield f"{key}.", ours["properties"][key], theirs["properties"][key]


@pytest.mark.parametrize("name", ["digest", "aggregate", "meta"])
def test_our_schema_declares_exactly_the_published_keys_closed(name: str) -> None:
    for prefix, ours, theirs in objects(name):
        assert ours.get("additionalProperties") is False, f"{name}: {prefix or 'top'} is open"
        assert list(ours["properties"]) == list(ours["properties"])  # (ordered, for diffs)
        extra = IMPORT_ONLY.get(name, set()) if not prefix else set()
        added = {key for key in ours["properties"] if (name, f"{prefix}{key}") in ADDED}
        assert set(ours["properties"]) - added == set(theirs["properties"]) | extra, \
            f"{name} {prefix}"
        path = f"{prefix}required"
        if (name, path) in WIDER:
            assert set(ours["required"]) < set(theirs["required"])
        else:
            assert set(ours["required"]) == set(theirs["required"]), f"{name} {path}"


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in _NOTES and k != "items"}


@pytest.mark.parametrize("name", ["digest", "aggregate", "meta"])
def test_each_key_is_typed_as_published_or_stricter_as_a_seed_says(name: str) -> None:
    seen_stricter, seen_wider = set(), set()
    for prefix, ours_object, theirs_object in objects(name):
        for key, theirs in theirs_object["properties"].items():
            path = f"{prefix}{key}"
            ours = ours_object["properties"][key]
            if "$ref" in ours:  # a shared definition (lines): compare what it stands for
                ours = _ours(name)["$defs"][ours["$ref"].rsplit("/", 1)[1]]
            mine, their = _constraints(ours), _constraints(theirs)
            if (name, path) in IMPORT_WIDENED:
                widened = IMPORT_WIDENED[name, path]
                assert mine["type"] == [their["type"], widened], path
                mine = {**mine, "type": their["type"]}
            if path in {"gate", "baseline"}:  # closed objects: compared key by key above
                mine = {k: v for k, v in mine.items() if k in ("type",)}
                their = {k: v for k, v in their.items() if k in ("type",)}
            if (name, path) in WIDER:
                assert set(their["enum"]) < set(mine["enum"]), path
                seen_wider.add((name, path))
                continue
            extra = {k for k in mine if k not in their}
            assert extra == set(STRICTER.get((name, path), {})), (
                f"{name} {path}: stricter than published by {sorted(extra)}, "
                "not named in STRICTER")
            seen_stricter |= {(name, path)} if extra else set()
            for keyword, value in their.items():
                if keyword == "pattern":
                    continue  # written differently; the documents below exercise it
                assert mine.get(keyword) == value, f"{name} {path}: {keyword}"
            if "items" in theirs and "$ref" not in theirs["items"]:
                assert ours["items"] == theirs["items"], f"{name} {path}: items"
    assert seen_stricter == {k for k in STRICTER if k[0] == name}
    assert seen_wider == {k for k in WIDER if k[0] == name and not k[1].endswith("required")}


def _check(schema: dict[str, Any], doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in Draft202012Validator(schema).iter_errors(doc)]


def test_the_rebuilt_schemas_are_valid_and_not_vacuous() -> None:
    for schema in (published.digest_schema(), published.aggregate_schema(),
                   published.meta_schema(), published.seed_000_aggregate_schema()):
        Draft202012Validator.check_schema(schema)
    assert _check(published.digest_schema(), {"schema": "ckdn.digest/2", "check": "x",
                                              "status": "pass", "rc": 0, "run_dir": "r",
                                              "argv": []})
    assert _check(published.meta_schema(), {})


@pytest.mark.parametrize("variant", sorted(DIGEST_VARIANTS))
def test_every_digest_variant_validates_against_the_published_schema(
        variant: str, tmp_path: Path) -> None:
    (tmp_path / "full.log").write_text("line\n" * 50)
    assert _check(published.digest_schema(), make_digest(variant, tmp_path)) == []


def test_an_imported_digest_is_refused_by_the_published_schema_and_kept_by_ours() -> None:
    native = {"schema": "ckdn.digest/2", "check": "x", "status": "pass", "rc": 0,
              "run_dir": "r"}
    imported = {**native, "rc": None,
                "origin": {"imported": {"format": "junit", "variant": "surefire",
                                        "producer": "maven-surefire", "sha256": "0" * 64,
                                        "bytes": 10}},
                "import_summary": {"read": 2, "attached": 1,
                                   "unattached_by_reason": {"no_name": 1}}}
    assert _check(published.digest_schema(), imported)
    assert _check(_ours("digest"), imported) == []
    assert _check(_ours("digest"), {**imported, "rc": 0}) != []  # rc null only with origin
    assert _check(_ours("digest"), {**native, "rc": None}) != []


def test_every_meta_variant_validates_against_the_published_schema(tmp_path: Path) -> None:
    metas = dict(make_metas(tmp_path))
    assert len(metas) >= 6
    for name, meta in metas.items():
        assert _check(published.meta_schema(), meta) == [], name


def test_every_aggregate_variant_validates_against_the_published_schema_but_seed_000s(
        ) -> None:
    """Aggregates of members that all ran with pass or fail are the published shape; a
    skipped member or an error status are seed 000's, and only that schema takes them."""
    for name, doc in make_aggregates():
        assert _check(published.seed_000_aggregate_schema(), doc) == [], name
        seed_only = (doc["status"] not in ("pass", "fail")
                     or any(m["status"] == "skipped" for m in doc["members"]))
        assert bool(_check(published.aggregate_schema(), doc)) == seed_only, name


def test_documents_written_by_real_runs_validate_against_the_published_schemas(
        project: Project) -> None:
    project.config(f"""
        [check.ok]
        command = "true"
        parser = "generic"
        env = {{ LANG = "C", A_FLAG = "1" }}
        [check.bad]
        command = \"\"\"{py("print('x.py:1:1: E1 boom'); raise SystemExit(1)")}\"\"\"
        parser = "generic"
        [check.slow]
        command = \"\"\"{py("import time; time.sleep(30)")}\"\"\"
        parser = "generic"
        timeout = 0.5
        [check.missing]
        command = "no-such-program-ckdn-test"
        parser = "generic"
        [check.lint]
        members = ["ok", "bad", "slow"]
        [check.everything]
        members = ["ok", "slow", "missing", "bad"]
        fail_fast = false
        """)
    for args in (["run", "ok"], ["run", "bad"], ["run", "lint"], ["run", "everything"],
                 ["run", "--all"]):
        assert project.ckdn(*args).returncode != 2
    seen = {"digest.json": 0, "meta.json": 0, "aggregate.json": 0}
    for run_dir in project.run_dirs():
        for name in seen:
            path = run_dir / name
            if not path.exists():
                continue
            doc = json.loads(path.read_text())
            schema = {"digest.json": published.digest_schema(),
                      "meta.json": published.meta_schema(),
                      "aggregate.json": published.seed_000_aggregate_schema()}[name]
            assert _check(schema, doc) == [], f"{run_dir.name}/{name}"
            seen[name] += 1
    assert seen["digest.json"] == seen["meta.json"] >= 12
    assert seen["aggregate.json"] == 3
    metas = [json.loads(p.read_text()) for p in project.runs.glob("*-ok/meta.json")]
    assert {tuple(m.get("env_keys", ())) for m in metas} == {("A_FLAG", "LANG")}


@pytest.mark.parametrize("case", ["pass", "fail", "base_failure"])
def test_a_diff_gated_run_writes_the_published_shapes(case: str, tmp_path: Path) -> None:
    """Issue 26's gate inside the published contract: the digest, meta and an alias's
    aggregate of a diff-gated run validate against the published schemas, whatever the
    gate; its facts are ``summary.diff_scope`` and ``change.json`` (``ckdn.change/1``)."""
    project = Project(tmp_path)
    make_repo(tmp_path, CONFIG + '\n[check.all]\nmembers = ["lint"]\n')
    if case == "fail":
        break_a_caller_and_add_an_error(tmp_path)
    ref = "no-such-branch" if case == "base_failure" else "HEAD"
    gate = {"pass": "pass", "fail": "fail", "base_failure": "unavailable"}[case]
    for name in ("lint", "all"):
        proc = project.ckdn("run", name, "--gate", "--diff-base", ref)
        assert (project.digest(proc)["gate"]["status"], proc.returncode != 0) == (
            gate, case != "pass"), proc.stderr
    kinds = {"digest.json": published.digest_schema(), "meta.json": published.meta_schema(),
             "aggregate.json": published.aggregate_schema(),
             "change.json": load_schema("ckdn.change/1")}
    seen = dict.fromkeys(kinds, 0)
    for run_dir in project.run_dirs():
        for name, schema in kinds.items():
            path = run_dir / name
            if path.exists():
                doc = json.loads(path.read_text())
                assert _check(schema, doc) == [], f"{run_dir.name}/{name}"
                seen[name] += 1
                if name == "digest.json":
                    assert doc["gate"]["policy"] == "diff:touched"
                    assert doc["summary"]["diff_scope"]["policy"] == "touched"
    assert seen == {"digest.json": 2, "meta.json": 2, "aggregate.json": 1, "change.json": 2}


def test_the_copy_here_is_the_teams_contract() -> None:
    if not TEAM_COPY.exists():
        pytest.skip("the team's shared/CONTRACT.md is not beside this checkout")
    assert published.CONTRACT.read_bytes() == TEAM_COPY.read_bytes()
