"""Hypothesis profiles for a parser's properties: ``ci`` (a fixed budget) and ``dev``."""

from __future__ import annotations

import os
from collections.abc import Mapping

from hypothesis import settings

__all__ = ["CI", "CI_EXAMPLES", "DEV", "load_profile", "register_profiles"]

# ``ci`` runs a fixed number of examples per property, the same examples on every
# run (``derandomize``), with no deadline and no example database: a CI run is
# reproducible and costs the same every time. ``dev`` keeps hypothesis's quick
# defaults for a local run. :func:`load_profile` registers both and loads the one
# the environment asks for: ``HYPOTHESIS_PROFILE`` by name, else ``ci`` when ``CI``
# is set (as CI services set it), else ``dev``. Importing this module needs
# ``hypothesis`` (the ``testing`` extra).

CI = "ci"
DEV = "dev"
#: Examples per property in the ``ci`` profile. The kit's five generated rules run
#: three of them on every parser (the garbage-report rule needs a report, the
#: contradicted-log rule a recorded clean run), so a parser gets at least
#: 3 x 750 = 2,250 generated cases (``bench/bench_conformance.py --cases 3000``: more).
CI_EXAMPLES = 750


def register_profiles() -> None:
    """Register ``ci`` and ``dev`` with hypothesis (it keeps the last of each name)."""
    settings.register_profile(CI, max_examples=CI_EXAMPLES, derandomize=True, deadline=None,
                              database=None, print_blob=True)
    settings.register_profile(DEV, max_examples=100)


def load_profile(environ: Mapping[str, str] | None = None) -> str:
    """Register the profiles and load the one ``environ`` asks for; its name."""
    env = os.environ if environ is None else environ
    register_profiles()
    in_ci = env.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    name = env.get("HYPOTHESIS_PROFILE") or (CI if in_ci else DEV)
    settings.load_profile(name)
    return name
