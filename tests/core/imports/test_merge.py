"""Imported runs through ``ckdn merge``: N CI jobs' files make one imported run (rc null,
an origin of N files, import summaries summed), decided as an import is, never green when
the whole is not, labelled imported by every view and refused by a native-only gate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ckdn.identity.merge import MIXED, REASONS_KEPT, merge_import_summaries, merge_origins
from ckdn.schema import load_schema
from tests.project import Project

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"
#: Two CI jobs' JUnit files from real producers (both red), and two green coverage files.
JUNIT = (FIXTURES / "junit" / "surefire.xml", FIXTURES / "junit" / "jest-junit.xml")
COBERTURA = (FIXTURES / "cobertura" / "c8.xml", FIXTURES / "cobertura" / "coveragepy.xml")


def valid(doc: dict[str, Any]) -> list[str]:
    return [e.message for e in Draft202012Validator(load_schema("ckdn.digest/2")).iter_errors(doc)]


def imported(project: Project, fmt: str, files: tuple[Path, ...], name: str) -> list[str]:
    """Each file imported as a run of ``name``: the shards, by run dir."""
    dirs = []
    for path in files:
        proc = project.ckdn("import", fmt, str(path), "--as", name)
        assert proc.returncode in (0, 1), proc.stderr
        dirs.append(project.digest(proc)["run_dir"])
    return dirs


def merged(project: Project, *args: str) -> tuple[int, dict[str, Any]]:
    proc = project.ckdn("merge", *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, project.digest(proc)


def test_imported_shards_make_an_imported_run_of_their_files(project: Project) -> None:
    project.config("")  # "tests" is no configured check: it names the imports alone
    shards = imported(project, "junit", JUNIT, "tests")
    alone = [json.loads((project.root / d / "digest.json").read_text()) for d in shards]
    code, doc = merged(project, "--check", "tests", "--expect", "2", *shards)
    assert code == 1
    assert doc["rc"] is None
    assert doc["status"] == "fail"
    origin = doc["origin"]["imported"]
    hashes = sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in JUNIT)
    assert origin == {
        "format": "junit", "variant": MIXED, "producer": MIXED, "files": 2,
        "bytes": sum(p.stat().st_size for p in JUNIT),
        "sha256": hashlib.sha256("".join(h + "\n" for h in hashes).encode()).hexdigest()}
    assert doc["import_summary"] == {
        "read": sum(a["import_summary"]["read"] for a in alone),
        "attached": sum(a["import_summary"]["attached"] for a in alone),
        "unattached_by_reason": {}}
    assert doc["findings_total"] == sum(a["findings_total"] for a in alone)
    assert valid(doc) == []
    meta = json.loads((project.root / doc["run_dir"] / "meta.json").read_text())
    assert (meta["parser"], meta["rc"]) == ("merge", 0)
    log = (project.root / doc["run_dir"] / "full.log").read_text()
    assert all(f"sha256 {h}" in log for h in hashes)


def test_green_imported_shards_merge_green_and_a_missing_one_never(project: Project) -> None:
    project.config("")
    shards = imported(project, "cobertura", COBERTURA, "cov")
    code, doc = merged(project, "--check", "cov", "--expect", "2", *shards)
    assert (code, doc["status"], doc["rc"]) == (0, "pass", None)
    assert doc["origin"]["imported"]["variant"] == "coverage-04"
    assert doc["import_summary"]["read"] == (doc["import_summary"]["attached"]
                                             + sum(doc["import_summary"]
                                                   ["unattached_by_reason"].values()))
    code, doc = merged(project, "--check", "cov", "--expect", "3", *shards)
    assert (code, doc["status"], doc["rc"]) == (1, "error", None)
    assert "2 shard(s) given, 3 expected (missing)" in doc["status_reason"]
    assert valid(doc) == []


def test_no_shard_arriving_is_an_imported_error_only_with_a_shard_read(project: Project) -> None:
    project.config("")
    shards = imported(project, "cobertura", COBERTURA[:1], "cov")
    code, doc = merged(project, "--check", "cov", "--expect", "2", *shards, "gone/run")
    assert (code, doc["status"]) == (1, "error")
    assert doc["origin"]["imported"]["files"] == 1
    assert "shard gone/run: not found" in " ".join(doc["notes"])


def test_an_unconfigured_name_with_no_import_is_refused_as_before(project: Project) -> None:
    project.config("")
    proc = project.ckdn("merge", "--check", "nothing", "--expect", "1", "gone/run")
    assert proc.returncode == 2
    assert "unknown check 'nothing'" in proc.stderr
    assert project.run_dirs() == []


def test_a_shard_in_error_or_mismatch_makes_the_merge_an_error(project: Project) -> None:
    project.config("")
    green = imported(project, "cobertura", COBERTURA[:1], "cov")
    empty = project.root / "empty.xml"
    empty.write_text('<coverage line-rate="1" lines-valid="0" lines-covered="0" version="1">'
                     "<packages/></coverage>")
    bad = project.digest(project.ckdn("import", "cobertura", str(empty), "--as", "cov"))
    assert bad["status"] == "error"
    code, doc = merged(project, "--check", "cov", *green, bad["run_dir"])
    assert (code, doc["status"], doc["rc"]) == (1, "error", None)
    assert f"shard {bad['run_dir']}: error:" in doc["status_reason"]


def test_a_native_shard_among_imported_ones_is_a_problem_never_green(project: Project) -> None:
    project.config("""
        [check.cov]
        command = "true"
        parser = "generic"
        """)
    native = project.digest(project.ckdn("run", "cov"))["run_dir"]
    shards = imported(project, "cobertura", COBERTURA, "cov-imports")
    for shard in shards:  # stored under another name; copied in as runs of "cov"
        digest = json.loads((project.root / shard / "digest.json").read_text())
        digest["check"] = "cov"
        (project.root / shard / "digest.json").write_text(json.dumps(digest))
    code, doc = merged(project, "--check", "cov", "--expect", "3", native, *shards)
    assert (code, doc["status"], doc["rc"]) == (1, "error", None)
    assert doc["origin"]["imported"]["files"] == 2
    assert f"shard {native}: a run ckdn ran, among imported shards" in doc["status_reason"]
    assert valid(doc) == []


def test_the_same_file_imported_twice_is_one_shard_given_twice(project: Project) -> None:
    project.config("")
    shards = imported(project, "cobertura", COBERTURA[:1] * 2, "cov")
    code, doc = merged(project, "--check", "cov", "--expect", "2", *shards)
    assert (code, doc["status"]) == (1, "error")
    assert f"shard {shards[1]}: the same imported file as {shards[0]}" in doc["status_reason"]


def test_a_planted_import_summary_that_does_not_add_up_is_unusable(project: Project) -> None:
    project.config("")
    shards = imported(project, "cobertura", COBERTURA, "cov")
    path = project.root / shards[1] / "digest.json"
    digest = json.loads(path.read_text())
    digest["import_summary"]["read"] += 1
    path.write_text(json.dumps(digest))
    code, doc = merged(project, "--check", "cov", *shards)
    assert (code, doc["status"]) == (1, "error")
    assert "import_summary does not add up" in doc["status_reason"]
    assert doc["import_summary"]["read"] == 1  # the shard left out of the sum


def test_a_merged_import_flows_through_show_status_diff_and_annotate(project: Project) -> None:
    project.config(f"""
        [check.tests]
        import = {{format = "junit", path = "{JUNIT[0]}"}}
        """)  # configured, so `ckdn status` knows it; each job's file is imported as it
    shards = [project.digest(project.ckdn("run", "tests"))["run_dir"],
              *imported(project, "junit", JUNIT[1:], "tests")]
    _code, doc = merged(project, "--check", "tests", "--expect", "2", *shards)
    shown = json.loads(project.ckdn("show", "tests", "--json").stdout)
    assert shown["run_dir"] == doc["run_dir"]
    assert shown["origin"]["imported"]["files"] == 2
    status = project.ckdn("status", "tests", "--json")
    assert status.returncode != 0
    row = json.loads(status.stdout)["checks"][0]
    assert (row["run_dir"], row["status"], row["green"]) == (doc["run_dir"], "fail", False)
    diff = project.ckdn("diff", shards[0], doc["run_dir"], "--json")
    assert diff.returncode == 1, diff.stderr  # the other job's failure is new to the first's
    said = json.loads(diff.stdout)
    assert said["counts"] == {"fixed": 0, "moved": 0, "new": 1, "unchanged": 1}  # kept prints
    assert [f["id"] for f in said["new"]] == ["sum adds wrong::sum adds wrong"]
    for fmt, label in (("text", "imported junit (mixed, from mixed)"),
                       ("github", "tests (imported)"), ("sarif", "imported junit"),
                       ("codequality", "[imported]"), ("summary", "imported junit")):
        out = project.ckdn("annotate", "--format", fmt, doc["run_dir"])
        assert out.returncode == 0, out.stderr
        assert label in out.stdout, fmt


def test_a_gate_that_requires_native_runs_refuses_a_merged_import(project: Project) -> None:
    project.config("""
        [run]
        baseline = "ckdn.baseline.json"
        gate_requires_native = true
        """)
    shards = imported(project, "cobertura", COBERTURA, "cov")
    proc = project.ckdn("merge", "--gate", "--check", "cov", "--expect", "2", *shards)
    assert proc.returncode == 1, proc.stderr
    doc = project.digest(proc)
    assert doc["status"] == "pass"  # the files' own words: green, and still no gate
    assert doc["gate"]["status"] == "fail"
    assert "gate_requires_native" in doc["gate"]["reason"]
    assert valid(doc) == []


# the importers' reasons, and names a planted shard may hold (more than a digest keeps)
_REASONS = st.sampled_from(["no_name", "no_location", "outside_project", "below_fail_levels"]
                           ) | st.text(max_size=3)


@st.composite
def _summary(draw: st.DrawFn) -> dict[str, Any]:
    attached = draw(st.integers(0, 10**9))
    reasons = draw(st.dictionaries(_REASONS, st.integers(1, 10**9), max_size=25))
    return {"read": attached + sum(reasons.values()), "attached": attached,
            "unattached_by_reason": reasons}


@given(st.lists(_summary(), max_size=30))
def test_summed_import_summaries_keep_read_equal_to_attached_plus_unattached(
        summaries: list[dict[str, Any]]) -> None:
    whole = merge_import_summaries(summaries)
    assert whole["read"] == whole["attached"] + sum(whole["unattached_by_reason"].values())
    assert whole["read"] == sum(s["read"] for s in summaries)
    assert all(count >= 1 for count in whole["unattached_by_reason"].values())
    assert len(whole["unattached_by_reason"]) <= REASONS_KEPT  # all of them in the digest


@given(st.lists(st.tuples(st.sampled_from(["junit", "ctrf"]), st.binary(max_size=8)),
                min_size=1, max_size=6))
def test_merged_origins_name_what_all_agree_on_and_hash_the_set(
        files: list[tuple[str, bytes]]) -> None:
    origins = [{"format": fmt, "variant": "v", "producer": "p", "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest()} for fmt, data in files]
    whole = merge_origins(origins)
    assert whole["format"] == (files[0][0] if len({f for f, _ in files}) == 1 else MIXED)
    assert (whole["variant"], whole["producer"]) == ("v", "p")
    assert (whole["files"], whole["bytes"]) == (len(files), sum(len(d) for _, d in files))
    assert merge_origins(origins[::-1])["sha256"] == whole["sha256"]
