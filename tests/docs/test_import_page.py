"""docs/import.md's examples, one per format, are what ``ckdn import`` prints for them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from ckdn.imports import FORMATS
from tests.project import Project

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "import.md").read_text()


def examples() -> list[tuple[list[str], dict[str, object]]]:
    consoles = re.findall(r"```console\n\$ (ckdn import [^\n]*)\n```\n\n```json\n(.*?)\n```",
                          PAGE, re.S)
    return [(shlex.split(command)[1:], json.loads(shown)) for command, shown in consoles]


def test_the_page_has_an_example_for_every_format_that_has_a_producer() -> None:
    assert {argv[1] for argv, _ in examples()} == set(FORMATS) - {"rdjsonl"}


def test_every_example_is_what_ckdn_prints(project: Project) -> None:
    project.config("")
    for argv, shown in examples():
        argv[2] = str(ROOT / argv[2])
        digest = project.digest(project.ckdn(*argv))
        origin = dict(digest["origin"]["imported"])
        del origin["sha256"], origin["bytes"]
        got: dict[str, object] = {"status": digest["status"], "rc": digest["rc"],
                                  "imported": origin,
                                  "import_summary": digest["import_summary"]}
        if "findings_total" in digest:
            got["findings_total"] = digest["findings_total"]
        assert got == shown, argv
