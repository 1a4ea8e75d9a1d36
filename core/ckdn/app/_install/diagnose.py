"""``ckdn doctor``: is this installation the program it claims to be, and would each
configured check run as its author thinks? Looked at statically (nothing runs), with the
command policy's own :func:`~ckdn.app._running.policy.verdict`, so doctor and run agree.
"""

from __future__ import annotations

import itertools
import os
import shutil
from importlib import metadata

import ckdn
from ckdn import DISTRIBUTION, __version__
from ckdn.app._project.lock import lock_path, verify
from ckdn.app._running.parsing import substitute
from ckdn.app._running.policy import child_env, verdict
from ckdn.config import CONFIG_NAME
from ckdn.errors import CkdnError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ckdn.config import Check, Config

__all__ = ["OTHER_DISTRIBUTION", "SCHEMA", "diagnose", "doctor_lines", "installation_problems",
           "installed", "report"]

SCHEMA = "ckdn.doctor/1"
ERROR, WARNING = "error", "warning"
#: Options that name a report the command must write, and the file a parser reads
#: when the option is left out (where it has one and needs it).
_ARTIFACT_OPTIONS = ("junit", "coverage_xml", "coverage_json", "report")
_DEFAULT_REPORTS = {"ruff": ("report", "ruff.json")}


def report(config: Config | None, installation: Sequence[str], installed: str, *,
           config_error: str | None = None) -> dict[str, Any]:
    problems: list[dict[str, Any]] = [_problem(ERROR, None, "installation", line)
                                      for line in installation]
    checks: list[dict[str, Any]] = []
    if config_error is not None:
        problems.append(_problem(ERROR, None, "config", config_error))
    if config is not None and config.path is None:  # the defaults: nothing to diagnose
        problems.append(_problem(ERROR, None, "config", _no_config(config.cwd)))
    if config is not None:
        for check in config.checks.values():
            found, policy = check_problems(config, check)
            problems.extend(found)
            checks.append(policy)
        problems.extend(_lock_problems(config))
    errors = sum(p["level"] == ERROR for p in problems)
    return {"schema": SCHEMA, "installation": installed,
            "config": None if config is None or config.path is None else config.path,
            "errors": errors, "warnings": len(problems) - errors,
            "problems": problems, "checks": checks}


def _no_config(cwd: str) -> str:
    """A project without a config has no checks: an ``ok`` would say they were looked at."""
    return (f"no {CONFIG_NAME} in {cwd} (looked for {os.path.join(cwd, CONFIG_NAME)}): no"
            f" check is configured; run `ckdn init` to write one, or pass --config")


def _problem(level: str, check: str | None, rule: str, message: str) -> dict[str, Any]:
    found: dict[str, Any] = {"level": level, "rule": rule, "message": message}
    if check is not None:
        found["check"] = check
    return found


def check_problems(config: Config, check: Check) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The problems of one atomic check, and its policy verdict (``ckdn.doctor/1``'s ``checks``)."""
    name = check.name
    if check.imported is not None:  # no command: the file it imports is what can be missing
        source = check.imported.path
        missing_file = ([] if os.path.isfile(source) else
                        [_problem(ERROR, name, "not-found", f"{source}: the file to import "
                                                           "is not there")])
        return missing_file, {"name": name, "policy": config.run.command_policy,
                              "verdict": "allowed"}
    run_dir = os.path.join(config.run.runs_dir, f"DOCTOR-{name}")  # where a run would write
    argv = [substitute(a, run_dir) for a in check.argv]
    env = child_env(config, check, name, run_dir)
    found: list[dict[str, Any]] = []
    missing = _missing_program(argv[0], env, config.cwd)
    if missing is not None:
        found.append(_problem(ERROR, name, "not-found", missing))
    found.extend(_problem(WARNING, name, "artifact", text) for text in _artifacts(check))
    found.extend(_problem(WARNING, name, "flags", text) for text in _flags(check))
    blocked = verdict(config, check, argv, run_dir, env)
    policy: dict[str, Any] = {"name": name, "policy": config.run.command_policy,
                              "verdict": "allowed" if blocked is None else "blocked"}
    if blocked is not None:
        policy["reason"] = blocked
        found.append(_problem(ERROR, name, "policy", blocked + " (ckdn run would exit 126)"))
    return found, policy


def _missing_program(program: str, env: dict[str, str], cwd: str) -> str | None:
    if "/" in program:
        path = os.path.join(cwd, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return None
        return f"program {program!r} is not an executable file (from {cwd})"
    search = env.get("PATH", os.defpath)
    if shutil.which(program, path=search) is not None:
        return None
    return (f"program {program!r} is not found on the check's PATH; install it, or name it"
            f" with its path")


def _words(argv: Sequence[str]) -> set[str]:
    """The argv's flags, with ``--flag=value`` also as ``--flag``."""
    words = set(argv)
    words.update(a.split("=", 1)[0] for a in argv if a.startswith("--") and "=" in a)
    return words


def _artifacts(check: Check) -> list[str]:
    wanted = [(key, check.options[key]) for key in _ARTIFACT_OPTIONS
              if isinstance(check.options.get(key), str)]
    default = _DEFAULT_REPORTS.get(check.parser)
    if not wanted and default is not None:
        wanted = [default]
    out = []
    for key, value in wanted:
        base = os.path.basename(value.replace("{run_dir}", ""))
        if base and not any(base in arg for arg in check.argv):
            given = "" if key in check.options else " (the parser's default)"
            out.append(f"{key} = {value!r}{given}, but no argument of the command names"
                       f" {base!r}: the parser will not find the report")
    return out


def _mypy_json(argv: Sequence[str]) -> bool:
    pairs = itertools.pairwise(argv)
    return ("--output=json" in argv or "-Ojson" in argv
            or any(a in ("--output", "-O") and b == "json" for a, b in pairs))


def _flags(check: Check) -> list[str]:
    argv = check.argv
    words = _words(argv)
    parser = check.parser
    if parser == "mypy":
        json_format = check.options.get("format") == "json"
        if json_format and not _mypy_json(argv):
            return ['format = "json" but the command lacks --output json: mypy prints text']
        if not json_format and _mypy_json(argv):
            return ['the command prints JSON (--output json) but format is not "json"']
    if parser == "pyright" and "--outputjson" not in words:
        return ['parser "pyright" reads --outputjson, which the command lacks']
    if parser == "reformat" and not words & {"--check", "--diff"}:
        return ['parser "reformat" needs --check (or --diff): without it the formatter'
                " rewrites the files and exits 0"]
    if parser in ("pytest", "coverage") and not words & {
            "--junitxml", "--junit-xml", "--ckdn-digest"}:
        return [f"parser {parser!r} reads a JUnit report or the ckdn pytest plugin's"
                " evidence; the command has neither --junitxml {run_dir}/junit.xml nor"
                " --ckdn-digest"]
    return []


def _lock_problems(config: Config) -> list[dict[str, Any]]:
    if not os.path.exists(lock_path(config)):
        if config.run.require_lock:
            return [_problem(ERROR, None, "lock", f"[run].require_lock is set but there is no"
                             f" {os.path.basename(lock_path(config))}; run `ckdn lock-config`")]
        return []
    try:
        differences = verify(config)
    except CkdnError as exc:  # a refused lock file: its one line
        return [_problem(ERROR, None, "lock", exc.message)]
    level = ERROR if config.run.require_lock or differences.required else WARNING
    return [_problem(level, None, "lock", line) for line in differences.lines()]


def diagnose(config: Config | None, *, config_error: str | None = None) -> dict[str, Any]:
    """The ``ckdn doctor --json`` report (``ckdn.doctor/1``, docs/cli.md): this installation's
    problems, then every configured check's (``config`` None: no config file, or the one
    line it was refused with as ``config_error``)."""
    return report(config, installation_problems(), installed(), config_error=config_error)


#: The unrelated distribution that owns the same package name.
OTHER_DISTRIBUTION = "ckdn"


def doctor_lines(doc: dict[str, Any]) -> list[str]:
    """The text form of a report's problems, one line each (an installation problem as its
    own sentence, as before doctor looked at checks)."""
    lines = []
    for problem in doc["problems"]:
        if problem["rule"] == "installation":
            lines.append(problem["message"])
            continue
        where = f"[check.{problem['check']}] " if "check" in problem else ""
        lines.append(f"{problem['level']}: {where}{problem['message']}")
    return lines


def installed() -> str:
    """``checkdown 0.1.0 (ckdn package at /.../ckdn)``."""
    where = os.path.dirname(ckdn.__file__ or "?")
    return f"{DISTRIBUTION} {__version__} (ckdn package at {where})"


def installation_problems() -> list[str]:
    """One line per thing wrong with this installation; empty when there is nothing."""
    problems: list[str] = []
    try:
        ours = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        ours = None
        problems.append(f"no {DISTRIBUTION} distribution is installed for this ckdn package "
                        f"({installed()}); run it from a checkout's venv or `pip install "
                        f"{DISTRIBUTION}`")
    if ours is not None and ours != __version__:
        problems.append(f"the ckdn package says {__version__} but the installed {DISTRIBUTION} "
                        f"is {ours}: another install overwrote its files; reinstall with "
                        f"`pip install --force-reinstall {DISTRIBUTION}`")
    try:
        other = metadata.version(OTHER_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        other = None
    if other is not None:
        problems.append(f"the unrelated `{OTHER_DISTRIBUTION}` distribution {other} is installed "
                        f"too and owns the same `ckdn` package; `pip uninstall "
                        f"{OTHER_DISTRIBUTION}`, then `pip install --force-reinstall "
                        f"{DISTRIBUTION}`")
    return problems
