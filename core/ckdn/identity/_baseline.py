"""The baseline file, ``ckdn.baseline/1``: the findings a project has accepted, per check.

``{"schema": "ckdn.baseline/1", "checks": {NAME: [fingerprint, ...]}}``: fingerprints
sorted, keys sorted, indent 2, no timestamps, no paths, no counts, so a baseline
regenerated on two branches merges without conflicts (git merges the sorted
lines). ckdn's own state, with no packaged schema (seed 001): it is read
strictly here, and a file that is not one is refused in one line naming it.
Written atomically; a symlinked baseline has its target rewritten.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from ckdn.errors import ConfigError
from ckdn.regular import NotRegular, read_regular

__all__ = ["SCHEMA_BASELINE", "BaselineFile", "read_baseline", "write_baseline"]

SCHEMA_BASELINE = "ckdn.baseline/1"
#: A baseline larger than this is not read (a million fingerprints is about 50 MB).
MAX_BYTES = 256 << 20
_FINGERPRINT = re.compile(r"[0-9a-f]{24}:\d{1,9}:[0-9a-f]{12}")


class BaselineFile:
    """A read baseline: the fingerprints of each check, as lists (duplicates kept)."""

    __slots__ = ("checks", "path")

    def __init__(self, path: str, checks: dict[str, list[str]]) -> None:
        self.path = path
        self.checks = checks


def read_baseline(path: str, shown: str | None = None) -> BaselineFile:
    """The baseline at ``path``; :class:`ConfigError` naming ``shown`` if it is not one."""
    import json  # lazy: only a run with findings to classify reads the baseline

    name = shown or path
    try:
        data = read_regular(path, MAX_BYTES, follow=True)  # never blocks on a FIFO
    except FileNotFoundError:
        raise ConfigError(f"[run] baseline: {name} not found; record it with "
                          "`ckdn baseline CHECK` (or remove the key)") from None
    except NotRegular:
        raise ConfigError(f"[run] baseline: {name} is not a regular file; not read") from None
    except OSError as exc:
        raise ConfigError(f"[run] baseline: cannot read {name}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"[run] baseline: {name} is larger than {MAX_BYTES >> 20} MiB; "
                          "not read")
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise ConfigError(f"[run] baseline: {name} is not JSON ({exc}); regenerate it with "
                          "`ckdn baseline CHECK`") from None
    problem = _problem(doc)
    if problem:
        raise ConfigError(f"[run] baseline: {name} is not a {SCHEMA_BASELINE} file: {problem}; "
                          "regenerate it with `ckdn baseline CHECK`")
    return BaselineFile(path, {name: list(prints) for name, prints in doc["checks"].items()})


def _problem(doc: object) -> str:
    if not isinstance(doc, dict):
        return "not an object"
    if doc.get("schema") != SCHEMA_BASELINE:
        return f"schema is {doc.get('schema')!r}"
    if set(doc) != {"schema", "checks"}:
        return f"unexpected keys {sorted(set(doc) - {'schema', 'checks'})}"
    checks = doc["checks"]
    if not isinstance(checks, dict):
        return "checks is not an object"
    for name, prints in checks.items():
        if not isinstance(prints, list):
            return f"checks[{name!r}] is not a list"
        for entry in prints:
            if not isinstance(entry, str) or not _FINGERPRINT.fullmatch(entry):
                return f"checks[{name!r}] holds {str(entry)[:60]!r}, not a fingerprint"
    return ""


def encode_baseline(checks: Mapping[str, Sequence[str]]) -> bytes:
    """The file's bytes: sorted everywhere, one fingerprint per line, newline at the end."""
    import json

    doc = {"schema": SCHEMA_BASELINE,
           "checks": {name: sorted(checks[name]) for name in sorted(checks)}}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_baseline(path: str, checks: Mapping[str, Sequence[str]]) -> None:
    """Write the baseline atomically; through a symlink, its target. Raises ``OSError``."""
    from ckdn.store import write_atomic

    write_atomic(os.path.realpath(path), encode_baseline(checks))
