"""Questions about a project's configured checks: what they are, what they need, their lock;
answered once for ``ckdn checks``, ``lock-config``, ``verify-config`` and the nox and tox hosts.
"""

from __future__ import annotations

import os
import shlex

from ckdn.app._install.setup import names_checkdown, this_checkdown
from ckdn.app._project.lock import lock_path, verify, write_lock
from ckdn.app._running.parsing import substitute
from ckdn.app._running.policy import child_env, verdict
from ckdn.app._running.steps import store_for
from ckdn.config import Alias
from ckdn.redact import Redaction

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ckdn.config import Check, Config

__all__ = ["PLUGIN_FLAG", "checks_of", "describe_checks", "lock_config", "requirements",
           "verify_config"]


def lock_config(config: Config, output: str | None = None) -> str:
    """``ckdn lock-config``: write ``ckdn.lock.toml`` (:mod:`ckdn.app._project.lock`); its path."""
    return write_lock(config, output)


def verify_config(config: Config, *, locked: bool = False,
                  lock_file: str | None = None) -> dict[str, Any]:
    """``ckdn verify-config``: the config against its lock file (``lock_file``, else the
    config's), and every check against the command policy (``--json``'s shape, docs/cli.md)."""
    path = lock_path(config) if lock_file is None else os.path.join(config.cwd, lock_file)
    shown = store_for(config).display(path)
    blocked = blocked_checks(config)
    refusals = [f"[check.{b['check']}] {b['reason']} (ckdn run would exit 126)" for b in blocked]
    if not os.path.exists(path):
        line = f"no lock file {shown}; `ckdn lock-config` writes one"
        return {"ok": not locked and not blocked, "lock": None, "changed": [], "missing": [],
                "extra": [], "blocked": blocked, "lines": [line, *refusals]}
    differences = verify(config, path)
    lines = [*differences.lines(), *refusals] or [f"ok: the config matches {shown}"]
    return {"ok": not differences and not blocked, "lock": shown, **differences.as_json(),
            "blocked": blocked, "lines": lines}


def blocked_checks(config: Config) -> list[dict[str, str]]:
    """Every check the command policy would refuse to start, with the reason (as doctor and
    ``ckdn run`` judge it, in the run dir a run would get)."""
    found = []
    for check in config.checks.values():
        if check.imported is not None:  # runs no command: nothing for the policy to judge
            continue
        run_dir = os.path.join(config.run.runs_dir, f"VERIFY-{check.name}")
        argv = [substitute(a, run_dir) for a in check.argv]
        reason = verdict(config, check, argv, run_dir,
                         child_env(config, check, check.name, run_dir))
        if reason is not None:
            found.append({"check": check.name, "reason": reason})
    return found


def describe_checks(config: Config) -> list[dict[str, Any]]:
    """Every check and alias, sorted by name, as ``ckdn checks --json`` lists them.

    An atomic check: ``name``, ``kind: "atomic"``, ``parser``, ``command`` (as
    configured: the string, or the array), ``timeout`` and ``options`` (its parser
    options) when set, plus ``description`` and ``requires``. An alias: ``name``,
    ``kind: "alias"``, ``members``, ``fail_fast``, ``description``. The values of a
    check's ``env`` are never shown: they may be secrets. Neither are the secret-looking
    values of a command (``--token=...``, a URL's password, a provider's token: the rules
    of ``[run].redact``, :mod:`ckdn.redact`): a command with one is shown re-joined from
    its redacted arguments.
    """
    rows: list[dict[str, Any]] = []
    for check in config.checks.values():
        row: dict[str, Any] = {"name": check.name, "kind": "atomic", "parser": check.parser,
                               "command": _shown_command(config, check)}
        if check.timeout is not None:
            row["timeout"] = check.timeout
        if check.options:
            row["options"] = dict(check.options)
        if check.description:
            row["description"] = check.description
        if check.requires:
            row["requires"] = list(check.requires)
        if check.imported is not None:  # a check made by no process: what it reads
            row["import"] = {"format": check.imported.format, "path": check.imported.path}
        rows.append(row)
    for alias in config.aliases.values():
        row = {"name": alias.name, "kind": "alias", "members": list(alias.members),
               "fail_fast": alias.fail_fast}
        if alias.description:
            row["description"] = alias.description
        rows.append(row)
    return sorted(rows, key=lambda row: str(row["name"]))


def _shown_command(config: Config, check: Check) -> str | list[str]:
    """A check's command as configured, unless a value in it looks secret."""
    redaction = Redaction(config.run.redact, {**os.environ, **check.env})
    shown = redaction.argv(check.argv)
    if shown == list(check.argv):
        return check.command if isinstance(check.command, str) else list(check.command)
    if isinstance(check.command, str):
        return shlex.join(shown)
    return shown


def checks_of(config: Config, name: str) -> list[Check]:
    """The atomic checks ``name`` stands for: itself, or an alias's members in order."""
    target = config.get(name)
    if isinstance(target, Alias):
        return [config.checks[member] for member in target.members]
    return [target]


#: A check whose command has this word runs ckdn's pytest plugin inside the env.
PLUGIN_FLAG = "--ckdn-digest"


def requirements(config: Config, names: Iterable[str], *, have: Iterable[str] = ()) -> list[str]:
    """The ``requires`` of these checks and aliases' members, in order, each once.

    A check whose command uses ``--ckdn-digest`` needs ckdn's pytest plugin where
    pytest runs (a tox env or nox session without it exits 4, "unrecognized
    arguments"), so the checkdown that is running is added (:func:`this_checkdown`)
    unless a ``requires`` or ``have`` (what the host installs anyway: a tox env's
    ``deps``) already names checkdown.
    """
    found: dict[str, None] = {}
    plugin = False
    for name in names:
        for check in checks_of(config, name):
            found.update(dict.fromkeys(check.requires))
            plugin = plugin or PLUGIN_FLAG in check.argv
    wanted = list(found)
    if plugin and not any(names_checkdown(req) for req in (*wanted, *have)):
        ours = this_checkdown()
        if ours is not None:
            wanted.append(ours)
    return wanted
