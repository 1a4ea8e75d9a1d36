"""A secret split by a cut or a chunk edge is redacted as if it were whole.

Every split offset is tried: the read chunks of a streamed full.log, the log
tail's width cut and its read chunks, a parser's cut message, the findings
file's cut.
"""

from __future__ import annotations

import io
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.documents import _logtail
from ckdn.documents._logtail import read_log_tail
from ckdn.documents.textcap import LINE_WIDTH, MESSAGE_WIDTH, Cut, clean_line
from ckdn.redact import Redaction, RedactSettings
from ckdn.redact._stream import redacted_chunks
from tests.core.redact.corpus import ENV_VALUES, env_secrets, near_misses, pem_blocks, secrets

LOG_LINES = [c.line for c in secrets()] + near_misses()[::4] + [
    line for _, block in pem_blocks()[:3] for line in block] + [c.line for c in env_secrets()]
LOG = ("\n".join(LOG_LINES) + "\n").encode()
#: One secret of each rule, the cases the cut tests walk through.
CUTS = list({case.rule: case for case in secrets() + env_secrets()}.values())


def redaction() -> Redaction:
    return Redaction(RedactSettings(), ENV_VALUES)


def stream(pieces: list[bytes], block: int = 1 << 20, max_line: int = 1 << 20) -> bytes:
    queue = [piece for piece in pieces if piece]  # an empty read is the end

    def read(_size: int) -> bytes:
        return queue.pop(0) if queue else b""

    return b"".join(redacted_chunks(read, redaction().redactor, block=block,
                                    max_line=max_line))


WHOLE = stream([LOG])


def test_the_streamed_log_hides_every_secret_and_keeps_every_line() -> None:
    assert WHOLE.count(b"\n") == LOG.count(b"\n")
    for case in secrets() + env_secrets():
        assert case.secret.encode() not in WHOLE
    for line in near_misses()[::4]:
        assert line.encode() in WHOLE


#: The log every offset is tried on: one secret of each rule, one key block and every
#: sixteenth near miss. Each try redacts the whole log, so the work grows with the square of
#: its size: the full corpus (LOG, 3.3x longer) is split at random offsets below instead.
SPLIT_LOG = ("\n".join([c.line for c in CUTS] + near_misses()[::16] + pem_blocks()[0][1])
             + "\n").encode()
SPLIT_WHOLE = stream([SPLIT_LOG])
#: Every offset, in parts the workers share.
PARTS = 2


def test_the_split_log_holds_a_secret_of_each_rule_and_a_key_block() -> None:
    rules = {case.rule for case in secrets() + env_secrets()}
    assert {case.rule for case in CUTS} == rules
    for case in CUTS:
        assert case.secret.encode() in SPLIT_LOG
        assert case.secret.encode() not in SPLIT_WHOLE
    assert b"-----BEGIN" in SPLIT_LOG
    assert b"-----BEGIN" not in SPLIT_WHOLE


@pytest.mark.parametrize("part", range(PARTS))
def test_a_log_split_in_two_at_every_offset_is_redacted_as_if_whole(part: int) -> None:
    for offset in range(part, len(SPLIT_LOG) + 1, PARTS):
        assert stream([SPLIT_LOG[:offset], SPLIT_LOG[offset:]]) == SPLIT_WHOLE, offset


@given(st.lists(st.integers(0, len(LOG)), max_size=12))
def test_a_log_read_in_any_pieces_is_redacted_as_if_whole(cuts: list[int]) -> None:
    edges = sorted({0, len(LOG), *cuts})
    assert stream([LOG[a:b] for a, b in pairwise(edges)]) == WHOLE


def test_a_key_block_across_read_blocks_is_redacted_as_if_whole() -> None:
    for block in (1, 7, 64, 333):
        assert stream([LOG[i:i + block] for i in range(0, len(LOG), block)],
                      block=block) == WHOLE


def test_invalid_utf8_comes_out_byte_for_byte() -> None:
    raw = b"\xff\xfe caf\xc3\xa9 \xc3 ok\n" * 3
    assert stream([raw[:5], raw[5:]]) == raw


def shown_fragments(shown: str, secret: str, least: int = 4) -> list[str]:
    """Pieces of ``secret`` of ``least`` characters or more that ``shown`` shows."""
    return [secret[i:i + least] for i in range(len(secret) - least + 1)
            if secret[i:i + least] in shown]


def private(case: object) -> str:
    """The part of a secret that is not a public prefix (``ghp_``, ``AKIA``...)."""
    secret: str = case.secret  # type: ignore[attr-defined]
    for prefix in ("github_pat_", "sk_live_", "rk_live_", "glpat-", "pypi-AgEIcHlwaS5vcmc",
                   "AKIA", "ASIA", "AIza", "npm_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
                   "xoxb-", "xoxp-", "xoxa-"):
        if secret.startswith(prefix):
            return secret[len(prefix):]
    return secret


@pytest.mark.parametrize("case", CUTS, ids=[c.rule for c in CUTS])
def test_a_tail_line_cut_at_its_width_shows_no_part_of_a_secret_at_any_offset(
        case: object, tmp_path: Path) -> None:
    secret: str = case.secret  # type: ignore[attr-defined]
    line: str = case.line  # type: ignore[attr-defined]
    at = line.index(secret)
    log = tmp_path / "full.log"
    for pad in range(max(0, LINE_WIDTH - len(line) - 2), LINE_WIDTH + 2):
        log.write_text("x" * pad + line + " and more text after it\n")
        shown = read_log_tail(log, 5, redaction=redaction())[0]
        assert shown_fragments(shown, private(case)) == [], (pad + at, shown)


@pytest.mark.parametrize("case", CUTS[:6], ids=[c.rule for c in CUTS[:6]])
def test_a_huge_tail_line_streamed_in_small_chunks_shows_no_part_of_a_secret(
        case: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_logtail, "_TAIL_IN_MEMORY", 0)  # stream every line
    secret: str = case.secret  # type: ignore[attr-defined]
    line: str = case.line  # type: ignore[attr-defined]
    log = tmp_path / "full.log"
    for chunk in (5, 16, 31):
        monkeypatch.setattr(_logtail, "_CHUNK_MIN", chunk)
        monkeypatch.setattr(_logtail, "_CHUNK_MAX", chunk)
        for pad in range(LINE_WIDTH - len(line), LINE_WIDTH + 1, 3):
            log.write_text("y" * pad + line + "z" * 5000 + "\n")
            shown = read_log_tail(log, 1, redaction=redaction())[0]
            assert shown_fragments(shown, private(case)) == [], (chunk, pad, shown)
            assert shown.endswith(" chars]")
            assert secret not in shown


@pytest.mark.parametrize("case", CUTS, ids=[c.rule for c in CUTS])
def test_a_message_a_parser_cut_shows_at_most_three_characters_of_a_secret(
        case: object) -> None:
    from ckdn.documents._digest import redacted

    secret: str = case.secret  # type: ignore[attr-defined]
    line: str = case.line  # type: ignore[attr-defined]
    end = line.index(secret) + len(secret)
    for keep in range(line.index(secret), end + 1):
        message = Cut(line[:keep], len(line) - keep)
        shown = clean_line(redacted(redaction(), message, MESSAGE_WIDTH), MESSAGE_WIDTH)
        assert shown_fragments(shown, private(case)) == [], (keep, shown)


def test_the_unredacted_tail_would_have_shown_the_secret(tmp_path: Path) -> None:
    """The cut tests above can fail: without a redaction the fragment is there."""
    case = CUTS[0]
    log = tmp_path / "full.log"
    log.write_text("x " * ((LINE_WIDTH - 14) // 2) + case.secret + "\n")
    assert shown_fragments(read_log_tail(log, 1)[0], private(case)) != []


def test_a_findings_file_message_cut_at_its_limit_shows_no_part_of_a_secret() -> None:
    from ckdn.app._running.parsing import message_screen
    from ckdn.identity import MAX_TEXT

    shown = message_screen(redaction())
    assert shown is not None
    for case in CUTS:
        for pad in range(MAX_TEXT - len(case.line), MAX_TEXT + 1, 7):
            message = "m" * pad + case.line
            kept = shown(message)[:MAX_TEXT]
            assert shown_fragments(kept, private(case)) == [], (case.rule, pad)


def test_stream_pieces_of_a_line_longer_than_the_limit_cut_at_a_separator() -> None:
    line = (b"word " * 4000) + b"ghp_" + b"A1b2" * 9 + b" end\n"
    out = stream([line], block=1000, max_line=9000)
    assert b"ghp_A1b2" not in out
    assert out.count(b"word ") == 4000
    assert io.BytesIO(out).read().endswith(b" end\n")
