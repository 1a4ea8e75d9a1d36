"""What an enabled session records, from pytest's options and ``ckdn.toml``.

Two modes. **Standalone** (``pytest --ckdn-digest``): the session is a ckdn run
of its own, with the ``[run]`` settings and the named check's options of
``ckdn.toml``. The file is the one ``--ckdn-config`` or ``$CKDN_CONFIG`` names
(relative to the invocation directory, as a config flag is), else
``ckdn.toml`` in pytest's **rootdir** (the project: node ids are relative to
it), else in the invocation directory; relative ``[run]`` paths are taken from
the directory that file was found in (the rootdir when named, or when there is
none and the defaults apply). So ``cd testing && pytest --ckdn-digest`` uses
the project's config and runs dir, not ``testing/.agent-runs``.

**Evidence** (pytest is itself the command of a ``ckdn run`` check, which exports
``CKDN_RUN_DIR`` and ``CKDN_CHECK``): the plugin writes its evidence into that run
dir and the outer run does everything else; the config is read as the outer run
found it (from the invocation directory, which is the outer run's). While such a
session records, it marks its environment (``CKDN_PYTEST_RECORDS``, the run dir):
a pytest session one of its tests starts sees the mark and records standalone
instead, so it can never write into, or over, the outer session's evidence.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ckdn.app import default_config, load_config
from ckdn.errors import CkdnError

if TYPE_CHECKING:
    from ckdn.app import Config

__all__ = ["NESTED_ENV", "RUN_DIR_ENV", "Settings", "resolve"]

RUN_DIR_ENV = "CKDN_RUN_DIR"
CHECK_ENV = "CKDN_CHECK"
CONFIG_ENV = "CKDN_CONFIG"
#: Set (to the outer run dir) while a session writes evidence into it.
NESTED_ENV = "CKDN_PYTEST_RECORDS"
_CONFIG_NAME = "ckdn.toml"


@dataclass(frozen=True, slots=True)
class Settings:
    check: str
    top: int
    snippet_lines: int
    fail_under: float | None
    #: Standalone: the loaded ckdn config. Evidence mode: None.
    ckdn: Config | None
    #: Evidence mode: the outer run dir. Standalone: None.
    evidence_dir: Path | None
    check_top: int | None = None
    allow_no_tests: bool = False
    notes: tuple[str, ...] = ()
    #: The check's ``missing_lines_preview`` (a coverage check's), for a missed gate.
    missing_lines_preview: int | None = None
    #: ``--ckdn-gate``: the exit status follows the baseline gate.
    gate: bool = False
    #: ``--ckdn-diff-base``: the ref whose merge base gates the session (the exit status
    #: then follows that gate).
    diff_base: str | None = None


def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(f"ckdn: {message}")


def _gate(config: pytest.Config, ckdn: Any, evidence_mode: bool) -> bool:
    """``--ckdn-gate``; refused without a baseline (and under ``ckdn run``, whose own
    ``--gate`` decides the exit code there)."""
    if not config.getoption("ckdn_gate"):
        return False
    if evidence_mode:
        raise _usage("--ckdn-gate under ckdn run: pass --gate to ckdn run instead")
    if ckdn.run.baseline is None and config.getoption("ckdn_diff_base") is None:
        raise _usage("--ckdn-gate needs a baseline: set baseline under [run] in ckdn.toml")
    return True


def _diff_base(config: pytest.Config, evidence_mode: bool) -> str | None:
    """``--ckdn-diff-base``; refused under ``ckdn run``, whose own ``--diff-base`` gates."""
    ref = config.getoption("ckdn_diff_base")
    if ref is None:
        return None
    if evidence_mode:
        raise _usage("--ckdn-diff-base under ckdn run: pass --diff-base to ckdn run instead")
    if not str(ref).strip():
        raise _usage("--ckdn-diff-base needs a ref (a branch, tag or commit)")
    return str(ref)


def _preview(value: Any) -> int | None:
    """A loaded config validated the option already (an int >= 0); anything else: default."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _fail_under(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not 0 <= value <= 100:
        raise _usage(f"{where} must be a number from 0 to 100, not {value!r}")
    return float(value)


def outer_run_dir() -> str | None:
    """The outer ``ckdn run``'s run dir this session hands its evidence to; None when
    there is none, or when an enclosing recorded session already writes there."""
    outer = os.environ.get(RUN_DIR_ENV) or None
    if outer is not None and os.environ.get(NESTED_ENV) == outer:
        return None
    return outer


def _standalone_config(config: pytest.Config, explicit: str | None) -> Config:
    """The config of a standalone session (see the module docstring); CkdnError when bad."""
    invocation = str(config.invocation_params.dir)
    root = str(config.rootpath)
    named = explicit if explicit is not None else os.environ.get(CONFIG_ENV) or None
    if named is not None:
        path = os.path.join(invocation, os.path.expanduser(named))
        if not os.path.lexists(path):
            source = "--ckdn-config" if explicit is not None else f"${CONFIG_ENV}"
            raise _usage(f"{named}: no such config file (named by {source})")
        return load_config(root, path)
    for where in dict.fromkeys((root, invocation)):
        if os.path.lexists(os.path.join(where, _CONFIG_NAME)):
            return load_config(where)
    return default_config(root)


def resolve(config: pytest.Config) -> Settings:
    """Settings for an enabled session; ``pytest.UsageError`` (one line, exit 4) on a bad config."""
    outer = outer_run_dir()
    explicit = config.getoption("ckdn_config")
    cwd = config.invocation_params.dir
    given = config.getoption("ckdn_check")
    name = str(given or "pytest")
    notes: list[str] = []
    if outer is not None:
        name = os.environ.get(CHECK_ENV) or name
        try:
            ckdn = load_config(cwd, explicit, required=False)
        except CkdnError as exc:
            # The outer `ckdn run` already validated its config; a file this
            # process cannot read only costs the check's bounds, not the run.
            ckdn = default_config(cwd)
            notes.append(f"pytest plugin used default settings: {exc}")
    else:
        try:
            ckdn = _standalone_config(config, explicit)
        except CkdnError as exc:
            raise _usage(str(exc)) from None
        if name in ckdn.aliases:
            raise _usage(f"--ckdn-check {name!r} names an alias; name an atomic check "
                         f"(one of: {', '.join(ckdn.checks) or 'none configured'})")
        if given is not None and ckdn.path is not None and name not in ckdn.checks:
            # A misspelt name would run without that check's gates (fail_under, top,
            # allow_no_tests) and could pass where the check fails: refuse it.
            try:
                ckdn.get(name)
            except CkdnError as exc:
                raise _usage(f"--ckdn-check: {exc}; the check's options (fail_under, top, "
                             "...) come from ckdn.toml") from None
    check = ckdn.checks.get(name)
    options = check.options if check is not None else {}
    option = config.getoption("ckdn_fail_under")
    fail_under = (_fail_under(option, "--ckdn-fail-under") if option is not None
                  else _fail_under(options.get("fail_under"), f"[check.{name}] fail_under"))
    check_top = check.top if check is not None else None
    return Settings(
        check=name, top=check_top or ckdn.run.top, snippet_lines=ckdn.run.max_snippet_lines,
        fail_under=fail_under, ckdn=None if outer is not None else ckdn,
        evidence_dir=Path(outer) if outer is not None else None, check_top=check_top,
        allow_no_tests=options.get("allow_no_tests") is True, notes=tuple(notes),
        missing_lines_preview=_preview(options.get("missing_lines_preview")),
        gate=_gate(config, ckdn, outer is not None),
        diff_base=_diff_base(config, outer is not None),
    )
