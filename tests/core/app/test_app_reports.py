"""What hosts (nox, tox) say when a run is not green: one headline, then the red members."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ckdn.app import load_config
from ckdn.app.queries import headline, red_members
from tests.project import Project

if TYPE_CHECKING:
    from ckdn.app.types import Document


def group(project: Project) -> Document:
    project.config('[check.ok]\ncommand = "true"\nparser = "generic"\n'
                   '[check.bad]\ncommand = "false"\nparser = "generic"\n'
                   '[check.both]\nmembers = ["ok", "bad"]\n')
    return cast("Document", project.digest(project.ckdn("run", "both")))


def test_the_headline_of_an_aggregate_names_its_first_red_member(project: Project) -> None:
    doc = group(project)
    line = headline(doc)
    assert line.startswith("both fail (rc 1); first red member bad fail (rc 1), evidence in ")
    assert "\n" not in line


def test_the_headline_of_a_digest_carries_its_reason_and_evidence(project: Project) -> None:
    project.config('[check.bad]\ncommand = "false"\nparser = "generic"\n')
    doc = cast("Document", project.digest(project.ckdn("run", "bad")))
    assert "check" in doc
    assert headline(doc) == f"bad fail (rc 1): exit code 1; evidence in {doc['run_dir']}"


def test_red_members_yields_only_the_non_green_member_digests(project: Project) -> None:
    doc = group(project)
    found = list(red_members(load_config(project.root), doc))
    assert len(found) == 1
    run_dir, digest = found[0]
    assert digest is not None
    assert digest["check"] == "bad"
    assert digest["run_dir"] == run_dir


def test_a_missing_member_digest_is_reported_as_none(project: Project) -> None:
    doc = group(project)
    assert "alias" in doc
    red = next(m for m in doc["members"] if m["status"] == "fail")
    (project.root / red["run_dir"] / "digest.json").unlink()
    assert list(red_members(load_config(project.root), doc)) == [(red["run_dir"], None)]
