"""The stream's search plan finds every line a rule could touch, and its read-ahead
thread loses nothing.

A full.log is redacted only on the lines that hold a needle (an anchor or an env
secret's form), found by a rare byte or by a whole-needle pass, and a URL line
only when it also holds ``@``; a miss there is a secret left in the log, so the
plan is held to brute force on any bytes.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.redact import Redaction, RedactSettings
from ckdn.redact._stream import _ahead, lines_holding, redacted_chunks, rewrite
from ckdn.redact._text import Redactor
from tests.core.redact.corpus import ENV_VALUES, secrets

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def reader(data: bytes) -> Callable[[int], bytes]:
    pieces = [data, b""]
    return lambda _size: pieces.pop(0) if pieces else b""


def brute(raw: bytes, needles: list[bytes], pairs: list[tuple[bytes, bytes]]) -> set[int]:
    """Starts of the lines that hold a needle or both literals of a pair."""
    starts: set[int] = set()
    position = 0
    for line in raw.split(b"\n"):
        if any(needle in line for needle in needles) or any(
                first in line and second in line for first, second in pairs):
            starts.add(position)
        position += len(line) + 1
    return starts


def exact(raw: bytes, found: dict[int, int]) -> None:
    """Each line ``found`` names is a whole line of ``raw``."""
    for start, end in found.items():
        assert start == 0 or raw[start - 1:start] == b"\n"
        assert end == len(raw) or raw[end:end + 1] == b"\n"


ALPHABET = b"ab_:/@\nxyZ"
needle = st.binary(min_size=1, max_size=5).map(
    lambda raw: bytes(ALPHABET[byte % len(ALPHABET)] for byte in raw).replace(b"\n", b"a"))
haystack = st.binary(max_size=3000).map(
    lambda raw: bytes(ALPHABET[byte % len(ALPHABET)] for byte in raw))


@given(haystack, st.lists(needle, max_size=6), st.lists(st.tuples(needle, needle), max_size=2))
def test_every_line_holding_a_needle_or_a_pair_is_found(
        raw: bytes, needles: list[bytes], pairs: list[tuple[bytes, bytes]]) -> None:
    found = lines_holding(raw, needles, pairs)
    exact(raw, found)
    assert brute(raw, needles, pairs) <= set(found)


@given(st.integers(0, 4000), st.integers(1, 60), st.binary(min_size=4, max_size=40))
def test_a_needle_among_many_copies_of_its_bytes_is_found_either_way(
        filler: int, where: int, raw_needle: bytes) -> None:
    """A needle whose bytes are common in the range is found whole, a rare one by its
    byte: both ways find it."""
    target = bytes(65 + byte % 26 for byte in raw_needle)
    lines = [target[:2] * (filler // 50 + 1)] * 60
    lines[where % 60] = b"x " + target + b" y"
    raw = b"\n".join(lines)
    assert brute(raw, [target], []) <= set(lines_holding(raw, [target]))


def test_a_url_line_is_redacted_only_when_it_holds_a_password() -> None:
    redactor = Redaction(RedactSettings(), {}).redactor
    log = (b"GET https://example.org/simple/ 200\n" * 500
           + b"clone https://ci:hunter2-secret@git.example.org/repo.git\n"
           + b"see https://docs.example.org/a@b (@ after the host)\n")
    out = b"".join(redacted_chunks(reader(log), redactor))
    assert b"hunter2-secret" not in out
    assert b"[REDACTED:url-password]@git.example.org" in out
    assert out.count(b"GET https://example.org/simple/ 200\n") == 500
    assert b"see https://docs.example.org/a@b (@ after the host)\n" in out


def test_the_stream_redacts_each_line_as_the_digest_would() -> None:
    """The plan decodes a few lines only: every other line is left as it is, and each
    decoded one comes out as ``Redactor.text`` shows it."""
    lines = [case.line for case in secrets()] + [f"plain line {i} ok" for i in range(300)]
    log = ("\n".join(lines) + "\n").encode()
    out = b"".join(redacted_chunks(reader(log),
                                   Redaction(RedactSettings(), ENV_VALUES).redactor))
    whole = Redaction(RedactSettings(), ENV_VALUES).redactor
    assert out.decode() == "".join(whole.text(line) + "\n" for line in lines)


def test_the_stream_needles_hold_every_rule_anchor() -> None:
    redactor = Redactor(secrets=["s3cr3t-value-long"])
    needles = redactor.needles + [first for first, _ in redactor.pairs]
    for rule in redactor.rules:
        for anchor in rule.anchors:
            if rule.lowered:
                assert any(n in anchor.encode() for n in redactor.lowered_needles), anchor
            else:
                assert any(n in anchor.encode() for n in needles), anchor
    assert any(b"s3cr3t-value-long" in n or n in b"s3cr3t-value-long"
               for n in redactor.needles)


def test_read_ahead_keeps_order_and_raises_the_threads_error() -> None:
    def chunks() -> Iterator[bytes]:
        yield from (bytes([i]) * 10 for i in range(20))
        raise OSError(5, "Input/output error")

    got: list[bytes] = []
    with pytest.raises(OSError, match="Input/output error"):
        got.extend(_ahead(chunks()))
    assert got == [bytes([i]) * 10 for i in range(20)]


def test_read_ahead_stops_its_thread_when_the_consumer_stops() -> None:
    made: list[int] = []

    def endless() -> Iterator[bytes]:
        count = 0
        while True:
            made.append(count)
            count += 1
            yield b"x" * 100

    before = threading.active_count()
    ahead = _ahead(endless(), depth=2)
    assert next(ahead) == b"x" * 100
    ahead.close()  # the writer failed: the generator is closed
    assert threading.active_count() == before
    assert len(made) <= 5  # bounded: the thread ran at most depth ahead


def test_rewrite_gives_what_the_stream_gives_with_its_hash(tmp_path: Path) -> None:
    import hashlib

    log = tmp_path / "full.log"
    body = ("\n".join(case.line for case in secrets()) + "\n").encode() * 50
    log.write_bytes(body)
    written: list[bytes] = []

    def write(_path: str, chunks: Iterator[bytes]) -> None:
        written.extend(chunks)

    redactor = Redaction(RedactSettings(), ENV_VALUES).redactor
    sha, size = rewrite(str(log), write, redactor)
    out = b"".join(written)
    expected = b"".join(redacted_chunks(reader(body),
                                        Redaction(RedactSettings(), ENV_VALUES).redactor))
    assert out == expected
    assert (sha, size) == (hashlib.sha256(out).hexdigest(), len(out))
