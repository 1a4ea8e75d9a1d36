"""docs/merge.md's imported shards: the documented commands, run in an empty project, print
the documented digest (its origin's hash and size aside)."""

from __future__ import annotations

import glob
import json
import shlex

from tests.project import Project
from tests.tox_ckdn.realtox import ROOT, examples

PAGE = examples("merge.md")


def test_the_imported_merge_example_is_what_ckdn_prints(project: Project) -> None:
    project.config("")
    commands = [shlex.split(line.removeprefix("$ "))
                for line in PAGE["imported-merge.console"].splitlines()]
    assert [argv[:2] for argv in commands] == [["ckdn", "import"]] * 2 + [["ckdn", "merge"]]
    for argv in commands[:2]:
        argv[3] = str(ROOT / argv[3])  # the fixture, from the repository
        assert project.ckdn(*argv[1:]).returncode == 1
    merge = commands[2]
    shards = sorted(glob.glob(merge[-1], root_dir=project.root))
    assert len(shards) == 2
    digest = project.digest(project.ckdn(*merge[1:-1], *shards))
    origin = dict(digest["origin"]["imported"])
    del origin["sha256"], origin["bytes"]
    got = {"status": digest["status"], "rc": digest["rc"], "imported": origin,
           "import_summary": digest["import_summary"],
           "findings_total": digest["findings_total"]}
    assert got == json.loads(PAGE["imported-merge.json"])
