"""docs/baseline.md's examples are what ckdn prints on the page's own scenario."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.core.identity.test_baseline_gate import DIRTY, dirty  # noqa: F401 - the fixture
from tests.project import Project

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "baseline.md").read_text()


def blocks(kind: str) -> list[str]:
    found = re.findall(rf"^( *)```{kind}\n(.*?)^ *```", PAGE, re.S | re.M)
    return ["\n".join(line[len(indent):] for line in body.splitlines()).strip()
            for indent, body in found]


def test_the_pages_outputs_are_what_ckdn_prints(dirty: Project) -> None:  # noqa: F811
    consoles = blocks("console")
    recorded = dirty.ckdn("baseline", "ruff").stdout.strip()
    assert consoles[0] == f"$ ckdn baseline ruff\n{recorded}"
    assert blocks("json")[0] == (dirty.root / "ckdn.baseline.json").read_text().strip()
    (dirty.root / "app.py").write_text(DIRTY + "\n\ndef again():\n    return unused_name\n")
    digest = json.loads(dirty.ckdn("run", "ruff").stdout)
    shown = {key: digest[key] for key in ("baseline", "gate")}
    assert json.loads(blocks("json")[1]) == shown
    (dirty.root / "app.py").write_text(DIRTY.replace("import sys\n", "") +
                                       "\n\ndef again():\n    return unused_name\n")
    pruned = dirty.ckdn("baseline", "ruff", "--prune").stdout.strip()
    assert consoles[1] == f"$ ckdn baseline ruff --prune\n{pruned}"
