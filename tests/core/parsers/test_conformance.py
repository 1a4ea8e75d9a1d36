"""Every registered parser keeps ckdn's rules: the conformance kit over the built-ins.

The parsers come from the registry (``ckdn.parsers.BUILTIN``), so a new one runs
the kit the day it is registered; what the kit cannot know by itself (where a
parser reads its evidence, which other fixture families are its tool's output
too) is in :data:`SPECS`, and a registered parser without an entry fails.
The recorded cases are the real-tool fixtures (tests/fixtures/<parser>/); the
foreign corpus is every other family's. Under the ``ci`` hypothesis profile each
generated rule runs its full budget (tests/conftest.py loads the profile).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from hypothesis import settings

from ckdn.parsers import BUILTIN, get_parser
from ckdn.parsers.pytest_evidence import EVIDENCE_FILE
from ckdn.testing import Conformance, Setup, load_cases, project_cases
from ckdn.testing.conformance import GENERATED, RULES, Rule, generated_rules
from ckdn.testing.profiles import CI, CI_EXAMPLES

from .conftest import FIXTURES

COVERAGE_REPORTS = ("coverage.xml", "coverage.json", "junit.xml")
#: What the kit needs to know about each built-in parser: its reports (by default
#: name), its setups, the fixture families its tool's output is also in (``kin``).
SPECS: dict[str, dict[str, Any]] = {
    "generic": {"exit_code_only": True},
    "pytest": {"reports": ("junit.xml", EVIDENCE_FILE), "kin": ("coverage",)},
    # with a fail_under gate too: damaged totals must not get past the gate as a pass
    "coverage": {"setups": (Setup(reports=COVERAGE_REPORTS),
                            Setup({"fail_under": 50}, COVERAGE_REPORTS))},
    "ruff": {"reports": ("ruff.json",)},
    "ty": {},
    "mypy": {"setups": (Setup(), Setup({"format": "json"}))},
    "pyright": {},
    "reformat": {},
    "pip_audit": {"reports": ("pip-audit.json",)},
    "bandit": {"reports": ("bandit.json",)},
    "pylint": {"reports": ("pylint.json",)},
    "sarif": {"setups": (Setup(reports=("report.sarif",)), Setup({"report": "full.log"}))},
    # pre-commit prints one line per hook and no summary: a log cut at a line end
    # is a shorter complete run.
    "pre_commit": {"verdict_at_end": False},
}

#: Generated cases every parser gets under the ci profile, across the generated rules.
CI_CASES = 2000


@cache
def spec(name: str) -> Conformance:
    if name not in SPECS:
        pytest.fail(f"parser '{name}' is registered but has no entry in SPECS "
                    f"({__name__}): say which reports it reads")
    known = dict(SPECS[name])
    kin = known.pop("kin", ())
    family = FIXTURES / name
    cases = load_cases(family) if family.is_dir() else []
    return Conformance(get_parser(name), cases=cases,
                       foreign=project_cases(exclude={name, *kin}), **known)


def _id(rule: Rule) -> str:
    return rule.__name__


@pytest.mark.parametrize("rule", RULES, ids=_id)
@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_registered_parser_keeps_the_rule(name: str, rule: Rule) -> None:
    ran = rule(spec(name))
    if rule in GENERATED and settings().max_examples >= CI_EXAMPLES:
        # Hypothesis stops early when it runs out of distinct inputs: not here.
        assert ran >= CI_EXAMPLES or rule not in generated_rules(spec(name))


def test_every_registered_parser_has_its_fixtures_or_reads_no_evidence() -> None:
    for name in BUILTIN:
        assert spec(name).cases or spec(name).exit_code_only, name


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_the_ci_profile_gives_every_parser_2000_generated_cases(name: str) -> None:
    assert settings.get_profile(CI).max_examples == CI_EXAMPLES
    assert len(generated_rules(spec(name))) * CI_EXAMPLES >= CI_CASES
