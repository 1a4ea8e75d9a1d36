"""The starter ``ckdn.toml`` that ``ckdn init`` writes: the whole recipe catalogue."""

from __future__ import annotations

from typing import NamedTuple

# Recipes are data (:data:`RECIPES`) so the test suite can run every recipe whose
# tool is installed; :data:`STARTER` is rendered from them. A recipe for a tool
# most projects do not have is written commented out, ready to enable.


class Recipe(NamedTuple):
    name: str
    parser: str
    command: str
    options: tuple[tuple[str, str], ...] = ()  # (key, TOML value) pairs
    enabled: bool = False
    comment: str = ""


RECIPES: tuple[Recipe, ...] = (
    Recipe("pytest", "pytest", "pytest -q --junitxml {run_dir}/junit.xml", enabled=True,
           comment="tests; the JUnit report is the evidence"),
    Recipe("coverage", "coverage",
           "pytest -q --junitxml {run_dir}/junit.xml --cov --cov-report=term-missing "
           "--cov-report=xml:{run_dir}/coverage.xml --cov-report=json:{run_dir}/coverage.json",
           options=(("fail_under", "80.0"),), comment="needs pytest-cov"),
    Recipe("ruff", "ruff",
           "ruff check --output-format json --output-file {run_dir}/ruff.json .", enabled=True),
    Recipe("format", "reformat", "ruff format --check .", comment="or: black --check ."),
    Recipe("mypy", "mypy", "mypy . --output json", options=(("format", '"json"'),),
           enabled=True, comment="mypy >= 1.11 for --output json"),
    Recipe("ty", "ty", "ty check"),
    Recipe("pyright", "pyright", "pyright --outputjson"),
    Recipe("pylint", "pylint", "pylint --output-format=json2:{run_dir}/pylint.json,text src",
           comment="pylint >= 3.0; optional score_fail_under = 9.0"),
    Recipe("bandit", "bandit", "bandit -r src -f json -o {run_dir}/bandit.json"),
    Recipe("pip_audit", "pip_audit", "pip-audit -f json -o {run_dir}/pip-audit.json",
           comment="needs its vulnerability service online"),
    Recipe("semgrep", "sarif",
           "semgrep scan --config semgrep.yml --metrics=off --disable-version-check --error "
           "--sarif-output={run_dir}/report.sarif .",
           options=(("report", '"report.sarif"'),),
           comment="any SARIF producer works; semgrep needs a local rule file offline"),
    Recipe("pre_commit", "pre_commit", "pre-commit run --all-files"),
)

#: The pytest recipe where ckdn's pytest plugin runs inside that pytest: the plugin's evidence
#: instead of pytest's JUnit writer, about half the CPU on a suite of fast tests
#: (docs/performance.md). ``ckdn init`` writes it only where the plugin is there to run.
PLUGIN_PYTEST = Recipe("pytest", "pytest", "pytest -q --ckdn-digest", enabled=True,
                       comment="tests; ckdn's pytest plugin records them (checkdown is installed "
                               "beside pytest); without it: pytest -q --junitxml "
                               "{run_dir}/junit.xml")

_HEADER = """\
# ckdn.toml: every check runs through `ckdn run NAME`; read the digest, not the log.
# Commands are split with shlex and run without a shell; {run_dir} is the run directory,
# where machine-readable reports belong. Enable a commented check by removing the #s.

[run]
runs_dir = ".agent-runs"   # ckdn writes a .gitignore into it
keep = 20                  # finished runs kept per check
top = 20                   # findings shown in a digest
max_snippet_lines = 12
log_tail_lines = 40
# The guard rails (docs/security.md), shown at their defaults or as examples:
# command_policy = "workspace"  # paths in commands stay in the project; or "allowlist", "off"
# require_lock = true           # refuse checks changed since `ckdn lock-config`
# max_age_days = 30             # remove finished runs older than this...
# max_bytes = 2147483648        # ...and the oldest while all of them pass 2 GiB
# inherit_env = false           # checks get PATH, HOME, LANG, TERM and their env only
"""


def _block(recipe: Recipe) -> str:
    lines = [f"[check.{recipe.name}]"]
    if recipe.comment:
        lines.insert(0, f"# {recipe.comment}")
    lines.append(f'command = "{recipe.command}"')
    lines.append(f'parser = "{recipe.parser}"')
    lines.extend(f"{key} = {value}" for key, value in recipe.options)
    if recipe.enabled:
        return "\n".join(lines)
    return "\n".join(line if line.startswith("#") else f"# {line}" for line in lines)


#: The pre-commit recipe of a project that has a ``.pre-commit-config.yaml``: enabled, so
#: ``ckdn run --all`` runs its hooks, but not in ``lint``, which its fixers would make edit files.
PROJECT_PRE_COMMIT = Recipe("pre_commit", "pre_commit", "pre-commit run --all-files",
                            enabled=True,
                            comment="this project has a .pre-commit-config.yaml; not in lint: "
                                    "its fixer hooks edit files")

#: Enabled recipes that stay out of the ``lint`` alias (tests; hooks that may edit files).
NOT_LINT = ("pytest", "pre_commit")


def render(recipes: tuple[Recipe, ...] = RECIPES) -> str:
    """The starter file text for ``recipes``."""
    blocks = [_HEADER, *(_block(r) for r in recipes)]
    enabled = [r.name for r in recipes if r.enabled and r.name not in NOT_LINT]
    members = ", ".join(f'"{n}"' for n in enabled)
    blocks.append(f"[check.lint]\nmembers = [{members}]   # add pylint, bandit, ... when enabled\n"
                  "# fail_fast = true              # default; false runs every member")
    return "\n\n".join(blocks) + "\n"


STARTER = render()


def starter(*, plugin: bool, pre_commit: bool = False) -> str:
    """The starter file text; ``plugin``: its pytest check runs ckdn's plugin (not JUnit XML);
    ``pre_commit``: the project has a pre-commit config, so its check is enabled."""
    if not plugin and not pre_commit:
        return STARTER
    chosen = {"pytest": PLUGIN_PYTEST} if plugin else {}
    if pre_commit:
        chosen["pre_commit"] = PROJECT_PRE_COMMIT
    return render(tuple(chosen.get(recipe.name, recipe) for recipe in RECIPES))
