"""Run-dir names: what a run dir is called, and what its name says about it."""

from __future__ import annotations

import os

from ckdn.errors import UsageError, quote

# A run dir is ``<runs_dir>/<UTC %Y%m%dT%H%M%SZ>-<check>``, e.g.
# ``20260707T101500Z-ruff``. A second run of the same check (or alias) in the
# same second is ``20260707T101500Z.001-ruff``, then ``.002`` ... The sequence
# number is one more than the highest already on disk for that second and label,
# not the first free one, so a name created after pruning removed earlier names of
# that second still sorts after the survivors. ``-`` sorts before ``.`` and the
# sequence is zero-padded to three digits, so plain string order is creation
# order for one label up to 999 runs in one second; ckdn itself orders by the
# parsed key (timestamp, sequence, name), which stays right beyond that.
#
# The one way a path is shown (relative to cwd when it lies under it) lives
# here too: a run dir is what digests, listings and refusals show most.

TIMESTAMP = "%Y%m%dT%H%M%SZ"
#: Leaves room for the timestamp, a sequence and ``.lock`` under NAME_MAX (255).
MAX_LABEL_BYTES = 200


def check_of(name: str) -> str:
    """The check (or alias) a run dir name belongs to: ``20260707T101500Z-ruff`` -> ``ruff``."""
    parsed = parse_name(name)
    if parsed is None:
        raise UsageError(
            f"{quote(name)} is not a run dir name; expected <YYYYmmddTHHMMSSZ>-<check>"
            " as listed by `ckdn list`"
        )
    return parsed[2]


def parse_name(name: str) -> tuple[str, int, str] | None:
    r"""``(stamp, seq, label)`` when ``name`` is ``<YYYYmmddTHHMMSSZ>[.<seq>]-<label>``, else None.

    What the pattern ``(\d{8}T\d{6}Z)(?:\.(\d{3,}))?-([^/\0]+)`` matches in full,
    read without compiling it (every run parses names; few need a regex).
    """
    stamp, rest = name[:16], name[16:]
    if not (stamp[8:9] == "T" and stamp[15:] == "Z" and stamp[:8].isdecimal()
            and stamp[9:15].isdecimal()):
        return None
    seq = 0
    if rest.startswith("."):
        digits, dash, label = rest[1:].partition("-")
        if not (dash and len(digits) >= 3 and digits.isdecimal()):
            return None
        seq = int(digits)
    elif rest.startswith("-"):
        label = rest[1:]
    else:
        return None
    if not label or "/" in label or "\0" in label:
        return None
    return stamp, seq, label


def run_name(stamp: str, seq: int, label: str) -> str:
    return f"{stamp}-{label}" if seq == 0 else f"{stamp}.{seq:03d}-{label}"


def validate_label(label: str) -> None:
    """A check or alias name becomes part of a file name; refuse any that cannot."""
    bad = (
        not label
        or label.startswith(".")
        or "/" in label
        or "\0" in label
        or (os.altsep is not None and os.altsep in label)
        or len(label.encode("utf-8", "surrogateescape")) > MAX_LABEL_BYTES
    )
    if bad:
        raise UsageError(
            f"check name {quote(label)} cannot name a run dir: it must be non-empty, not start"
            f" with '.', hold no '/' or NUL, and be at most {MAX_LABEL_BYTES} bytes;"
            " rename it in ckdn.toml"
        )


def shown_path(path: str, cwd: str) -> str:
    """``path`` (absolute, normalised) relative to ``cwd`` when it lies under it, else as is.

    How digests, listings and messages show a path: ``.agent-runs/...`` for the
    usual run dir, the full path for one elsewhere (never a ``../`` climb).
    """
    if path == cwd:
        return "."
    inside = cwd.rstrip(os.sep) + os.sep
    return path[len(inside):] if path.startswith(inside) else path
