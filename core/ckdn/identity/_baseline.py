"""The baseline file, ``ckdn.baseline/1``: the findings a project has accepted, per check."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence

from ckdn.errors import ConfigError
from ckdn.evidence_files import NotRegular, open_regular, read_regular
from ckdn.identity._match import BaselineIndex
from ckdn.store import write_atomic

__all__ = ["POLICY", "SCHEMA_BASELINE", "BaselineFile", "decide", "read_baseline", "read_index",
           "worst_gate", "write_baseline"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import BinaryIO

    from ckdn.documents.types import GateDoc

# ``{"schema": "ckdn.baseline/1", "checks": {NAME: [fingerprint, ...]}}``: fingerprints
# sorted, keys sorted, indent 2, no timestamps, no paths, no counts, so a baseline
# regenerated on two branches merges without conflicts (git merges the sorted
# lines). ckdn's own state, with no packaged schema (seed 001): it is read
# strictly here, and a file that is not one is refused in one line naming it.
# Written atomically; a symlinked baseline has its target rewritten.

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

    doc = {"schema": SCHEMA_BASELINE,
           "checks": {name: sorted(checks[name]) for name in sorted(checks)}}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_baseline(path: str, checks: Mapping[str, Sequence[str]]) -> None:
    """Write the baseline atomically; through a symlink, its target. Raises ``OSError``."""

    write_atomic(os.path.realpath(path), encode_baseline(checks))


# -- the gate: the CI decision beside the status, never in place of it (seed 001) ------------

# Policy ``no_new_findings``: a run passes the gate when everything that made it
# red is known to the baseline. So the gate is
#
# * ``unavailable`` when the status is ``error`` or ``parse_mismatch`` (its
#   findings cannot be trusted to be complete), or when not every finding could
#   be classified;
# * ``fail`` on any policy gate failure (coverage ``fail_under``, pylint's score:
#   those are not findings a baseline can accept), on any new finding, and on a
#   red run with nothing to classify (an exit code alone: the gate cannot account
#   for it, so it never passes it);
# * ``pass`` otherwise: a green run, or a red one whose findings are all known.

POLICY = "no_new_findings"
_UNTRUSTED = ("error", "parse_mismatch")


def decide(status: str, rc: int, *, total: int, classified: int, new: int,
           gate_failures: int, first_new: str = "") -> GateDoc:
    """The digest's ``gate`` object."""
    if status in _UNTRUSTED:
        return _gate("unavailable", f"status is {status}: the run's evidence is not complete "
                                    "enough to compare with the baseline")
    if classified < total:
        return _gate("unavailable", f"{total - classified} of {total} finding(s) could not be "
                                    "classified")
    if gate_failures:
        return _gate("fail", f"{gate_failures} policy gate(s) failed (gate_failures): a "
                             "baseline accepts findings, not a missed threshold")
    if new:
        named = f" (first: {first_new})" if first_new else ""
        return _gate("fail", f"{new} new finding(s) not in the baseline{named}")
    if status != "pass" and total == 0:
        return _gate("fail", f"exit code {rc} with no finding to compare with the baseline")
    return {"status": "pass", "policy": POLICY}


def _gate(status: str, reason: str, policy: str = POLICY) -> GateDoc:
    return {"status": status, "policy": policy, "reason": reason}


_RANK = {"pass": 0, "unavailable": 1, "fail": 2}


def worst_gate(members: list[tuple[str, GateDoc | None]]) -> GateDoc:
    """An alias's gate: its worst member's (fail, then unavailable, then pass), the
    reason naming that member; a member that did not run (``None``: fail-fast skipped
    it) leaves at least ``unavailable``: the gate never passes what was not checked. The
    policy is the members' (``diff:SCOPE`` for a diff-scoped run)."""
    skipped = [name for name, gate in members if gate is None]
    ran = [(name, gate) for name, gate in members if gate is not None]
    policy = ran[0][1]["policy"] if ran else POLICY
    worst = max(ran, key=lambda pair: _RANK.get(pair[1]["status"], 2), default=None)
    if worst is not None and worst[1]["status"] == "fail":
        return _gate(worst[1]["status"], f"{worst[0]}: {worst[1].get('reason', 'gate failed')}",
                     policy)
    if skipped:
        return _gate("unavailable", f"{len(skipped)} member(s) did not run "
                                    f"(first: {skipped[0]})", policy)
    if worst is not None and worst[1]["status"] != "pass":
        return _gate(worst[1]["status"], f"{worst[0]}: {worst[1].get('reason', '')}", policy)
    return {"status": "pass", "policy": policy}


# -- one check's entries streamed into a packed index (a run's gate) --------------------------

#: The blocks a baseline is streamed in: a million entries never sit in memory as text.
BLOCK = 256 << 10
_TOKEN = re.compile(rb'[ \t\n\r]*("[^"\\\x00-\x1f]*"|[{}\[\]:,])')
_ENTRY = re.compile(rb'[ \t\n\r]*"([0-9a-f]{24}):(\d{1,9}):([0-9a-f]{12})"[ \t\n\r]*([,\]])')
_SPACE = re.compile(rb"[ \t\n\r]*")
_RUN = re.compile(rb'(?:[ \t\n\r]*"[0-9a-f]{24}:\d{1,9}:[0-9a-f]{12}"[ \t\n\r]*,)*')
_PARTS = re.compile(r'"([0-9a-f]{24}):(\d{1,9}):([0-9a-f]{12})"')
#: The occurrences most entries have, in the hex of their 4 bytes.
_OCCURRENCE = {str(number): f"{number:08x}" for number in range(64)}


class _Unusual(Exception):
    """The file is not in the plain shape the stream reads: :func:`read_baseline` decides."""


def read_index(path: str, shown: str | None, check: str) -> BaselineIndex:
    """The entries of ``check`` in the baseline at ``path``, packed; the same refusals as
    :func:`read_baseline` (a file it would refuse, or one in a shape the stream does not
    read, such as escapes in a name, is read whole by it)."""
    try:
        with open(open_regular(path, follow=True), "rb") as handle:
            keys, tails = _Stream(handle).entries(check)
    except (OSError, _Unusual):
        entries = read_baseline(path, shown).checks.get(check, [])
        return BaselineIndex(entries)
    return BaselineIndex.packed(keys, tails)


class _Stream:
    """The baseline's tokens, read in :data:`BLOCK`-sized blocks (a token never longer)."""

    __slots__ = ("buffer", "done", "handle", "pos", "size")

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.buffer = b""
        self.pos = 0
        self.size = 0
        self.done = False

    def _more(self) -> None:
        """Another block after what is left; past the end, or with a token longer than a
        block, the file is not one the stream reads."""
        if self.done or len(self.buffer) - self.pos > BLOCK:
            raise _Unusual  # a torn file, or a giant token: read_baseline says which
        block = self.handle.read(BLOCK)
        self.size += len(block)
        if self.size > MAX_BYTES:
            raise _Unusual
        self.done = not block
        self.buffer = self.buffer[self.pos:] + block
        self.pos = 0

    def _next(self) -> re.Match[bytes]:
        while True:
            found = _TOKEN.match(self.buffer, self.pos)
            if found and (found.end() < len(self.buffer) or self.done):
                return found
            self._more()

    def token(self) -> bytes:
        found = self._next()
        self.pos = found.end()
        return found.group(1)

    def token_if(self, wanted: bytes) -> bool:
        """Take the next token if it is ``wanted``."""
        found = self._next()
        if found.group(1) != wanted:
            return False
        self.pos = found.end()
        return True

    def end(self) -> None:
        """Nothing but white space left."""
        while True:
            rest = _SPACE.match(self.buffer, self.pos)
            if rest is None or rest.end() != len(self.buffer):
                raise _Unusual
            self.pos = len(self.buffer)
            if self.done:
                return
            self._more()

    def entries(self, check: str) -> tuple[bytearray, bytearray]:
        """Every entry of the file checked as :func:`read_baseline` checks it; those of
        ``check`` packed (keys, secondaries)."""
        keys, tails = bytearray(), bytearray()
        if self.token() != b"{":
            raise _Unusual
        seen: set[bytes] = set()
        while True:
            name = self.token()
            if name in seen or self.token() != b":":
                raise _Unusual
            seen.add(name)
            if name == b'"schema"':
                if self.token() != b'"' + SCHEMA_BASELINE.encode() + b'"':
                    raise _Unusual
            elif name == b'"checks"':
                self._checks(check, keys, tails)
            else:
                raise _Unusual
            after = self.token()
            if after == b"}":
                break
            if after != b",":
                raise _Unusual
        if seen != {b'"schema"', b'"checks"'}:
            raise _Unusual
        self.end()
        return keys, tails

    def _checks(self, check: str, keys: bytearray, tails: bytearray) -> None:
        if self.token() != b"{":
            raise _Unusual
        names: set[str] = set()
        if self.token_if(b"}"):
            return
        while True:
            token = self.token()
            try:
                name = token[1:-1].decode("utf-8")
            except UnicodeDecodeError:
                raise _Unusual from None
            if not token.startswith(b'"') or name in names or self.token() != b":" \
                    or self.token() != b"[":
                raise _Unusual
            names.add(name)
            self._list(keys if name == check else None, tails)
            token = self.token()
            if token == b"}":
                return
            if token != b",":
                raise _Unusual

    def _list(self, keys: bytearray | None, tails: bytearray) -> None:
        """One check's list, after its ``[``: fingerprints only, packed into ``keys`` and
        ``tails`` when they are the run's check (a block's entries matched and split in C)."""
        if self.token_if(b"]"):
            return
        while True:
            buffer, pos = self.buffer, self.pos
            ran = _RUN.match(buffer, pos)  # entries each followed by a comma (or none)
            run = ran.end() if ran is not None else pos
            last = _ENTRY.match(buffer, run)
            end = last.end() if last is not None and last.group(4) == b"]" else run
            if keys is not None and end > pos:
                found = _PARTS.findall(buffer[pos:end].decode("ascii"))
                keys += bytes.fromhex("".join([primary + (_OCCURRENCE.get(occurrence)
                                                          or f"{int(occurrence):08x}")
                                               for primary, occurrence, _ in found]))
                tails += bytes.fromhex("".join([secondary for _, _, secondary in found]))
            self.pos = end
            if end > run:  # the list's last entry, and its ``]``
                return
            self._more()
