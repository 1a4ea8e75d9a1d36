"""Setting a project up for ckdn: the starter config, the agent skills, and which
checkdown a host installs beside a ``--ckdn-digest`` check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sysconfig
from importlib import metadata, util

from ckdn import DISTRIBUTION
from ckdn.config import config_path
from ckdn.config.starter import starter
from ckdn.errors import UsageError
from ckdn.store import write_atomic

__all__ = ["SKILLS", "names_checkdown", "plugin_beside_pytest", "this_checkdown", "write_skills",
           "write_starter"]

#: The entry point (group pytest11) by which pytest loads ckdn's plugin.
_PLUGIN_MODULE = "pytest_ckdn.plugin"


def names_checkdown(requirement: str) -> bool:
    """A requirement that names this distribution (any spelling PEP 503 folds together)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match is not None and re.sub(r"[-_.]+", "-", match[1]).lower() == DISTRIBUTION


def this_checkdown() -> str | None:
    """A requirement that installs this same checkdown elsewhere; None without its metadata.

    Installed from a directory, an archive or a VCS URL (pip's ``direct_url.json``,
    an editable checkout included), it is that URL; else the exact version, from
    the index it came from.
    """
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    url = direct.get("url") if isinstance(direct, dict) else None
    if not isinstance(url, str) or not url:
        return f"{DISTRIBUTION}=={dist.version}"
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        url = f"{vcs['vcs']}+{url}@{vcs['commit_id']}"
    return f"{DISTRIBUTION} @ {url}"


def plugin_beside_pytest(path: str | None = None) -> bool:
    """Whether the ``pytest`` a check starts (first on ``path``, default ``$PATH``) loads
    ckdn's plugin: it is this environment's own script, and this environment has pytest and
    the plugin's entry point. Anything else (pipx, another venv, no pytest): False."""
    found = shutil.which("pytest", path=path)
    if found is None:
        return False
    scripts = os.path.realpath(sysconfig.get_path("scripts"))
    if os.path.realpath(os.path.dirname(os.path.abspath(found))) != scripts:
        return False
    if util.find_spec("pytest") is None:
        return False
    return any(entry.value == _PLUGIN_MODULE
               for entry in metadata.entry_points(group="pytest11"))


#: pre-commit's own config file, whose presence enables the starter's ``pre_commit`` check.
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"


def write_starter(cwd: str, explicit: str | None = None, *, force: bool = False) -> str:
    """``ckdn init``: write the starter ``ckdn.toml`` where ``ckdn run`` would look; its path.

    Its pytest check runs ckdn's plugin where the plugin runs inside that pytest
    (:func:`plugin_beside_pytest`), else writes a JUnit report (docs/configuration.md);
    its pre-commit check is enabled where the project configures pre-commit."""
    path = config_path(cwd, explicit)
    if os.path.exists(path) and not os.path.isfile(path):  # never replace a device or a FIFO
        raise UsageError(f"{path} exists and is not a regular file; name a ckdn.toml to write")
    if os.path.exists(path) and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")

    text = starter(plugin=plugin_beside_pytest(),
                   pre_commit=os.path.isfile(os.path.join(cwd, PRE_COMMIT_CONFIG)))
    try:  # atomically (a failed --force leaves no half config); a symlink's target is written
        write_atomic(os.path.realpath(path), text.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


#: The agent skills ``ckdn init --skill DIR`` installs (packaged in ``ckdn/skills/``).
SKILLS = ("verified-fix-loop",)


def write_skills(directory: str, *, force: bool = False) -> list[str]:
    """``ckdn init --skill DIR``: each packaged skill as ``DIR/<name>/SKILL.md``; their paths.

    All or nothing: an existing file is refused (without ``force``) before any is written.
    """
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "skills")
    targets = [(os.path.join(here, name, "SKILL.md"), os.path.join(directory, name, "SKILL.md"))
               for name in SKILLS]
    for _source, target in targets:
        if os.path.lexists(target) and not (force and os.path.isfile(target)):
            raise UsageError(f"{target} already exists; pass --force to overwrite it"
                             if os.path.isfile(target) else
                             f"{target} exists and is not a regular file; remove it first")

    written = []
    for source, target in targets:
        with open(source, "rb") as handle:
            body = handle.read()
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            write_atomic(os.path.realpath(target), body)
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
        written.append(target)
    return written
