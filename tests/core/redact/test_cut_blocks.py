"""A key block whose start is outside the text shown (an evidence window, a log tail) and a
token the tool itself cut short (pytest's ``'ghp_A1b2...Q7r8'``) are still secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ckdn.app import load_config, run
from ckdn.app.queries import read_window
from ckdn.documents._logtail import read_log_tail
from ckdn.redact import Redaction
from tests.core.redact.corpus import pem_blocks
from tests.project import Project, py

#: A prefixed block (pytest's ``E   ``), long enough to page through.
BLOCK = ["E       " + line for line in pem_blocks()[0][1]] + pem_blocks()[1][1]


def _body(lines: list[str]) -> list[str]:
    return [line.strip().removeprefix("E").strip() for line in lines
            if "PRIVATE KEY" not in line]


def _run_printing(project: Project, text: str) -> tuple[object, str]:
    (project.root / "blob.txt").write_text(text)
    copy = py("import sys; sys.stdout.write(open('blob.txt').read()); sys.exit(1)")
    project.config(f"[check.out]\ncommand = {json.dumps(copy)}\nparser = \"generic\"\n"
                   "[run]\nlog_tail_lines = 5\n")
    config = load_config(str(project.root))
    outcome = run(config, "out")
    assert outcome.run_dir is not None
    return config, os.path.basename(outcome.run_dir)


def test_a_window_inside_a_key_block_shows_none_of_its_body(project: Project) -> None:
    lines = ["collected 3 items", *BLOCK, "1 failed"]
    config, name = _run_printing(project, "\n".join(lines) + "\n")
    body = _body(BLOCK)
    for offset in range(len(lines)):
        for limit in (1, 2, 3):
            window = read_window(config, name, offset=offset, limit=limit)  # type: ignore[arg-type]
            shown = "\n".join(window["lines"])
            assert [row for row in body if row in shown] == [], (offset, limit, shown)
    assert read_window(config, name, offset=0, limit=1)["lines"] == ["collected 3 items"]  # type: ignore[arg-type]
    assert read_window(config, name, offset=-1, limit=1)["lines"] == ["1 failed"]  # type: ignore[arg-type]


def test_a_tail_inside_a_key_whose_end_never_comes_shows_none_of_its_body(
        project: Project) -> None:
    key = pem_blocks()[0][1][:-1]  # the tool was killed while printing it
    _config, name = _run_printing(project, "\n".join(["start", *key]) + "\n")
    digest = json.loads((project.runs / name / "digest.json").read_text())
    shown = "\n".join(digest["log_tail"])
    assert [row for row in _body(key) if row in shown] == [], shown
    assert len(digest["log_tail"]) == 5


def test_the_tail_reader_finds_a_block_opened_above_it(tmp_path: Path) -> None:
    log = tmp_path / "full.log"
    key = pem_blocks()[0][1]
    log.write_text("\n".join(["a", *key[:-1], "ordinary line"]) + "\n")
    tail = read_log_tail(log, 4, redaction=Redaction())
    assert tail[-1] == "ordinary line"
    assert tail[:3] == ["[REDACTED:private-key]"] * 3


def test_a_tail_below_a_closed_block_is_left_as_it_is(tmp_path: Path) -> None:
    log = tmp_path / "full.log"
    key = pem_blocks()[0][1]
    rows = ["QUJDREVGR0hJSktMTU5PUA==", "plain"]  # base64 test data below a closed key
    log.write_text("\n".join(["a", *key, *rows]) + "\n")
    assert read_log_tail(log, 2, redaction=Redaction()) == rows


ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
TOKENS = {
    "github-token": ("ghp_", ALNUM, 36),
    "gitlab-token": ("glpat-", ALNUM, 20),
    "aws-access-key": ("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16),
    "npm-token": ("npm_", ALNUM, 36),
    "stripe-key": ("sk_live_", ALNUM, 24),
    "google-api-key": ("AIza", ALNUM, 35),
    "slack-token": ("xoxb-", ALNUM, 40),
    "pypi-token": ("pypi-AgEIcHlwaS5vcmc", ALNUM, 80),
}


def test_pytests_truncated_repr_of_a_github_token_is_redacted_whole() -> None:
    shown = Redaction().text("E       AssertionError: assert 'ghp_A1b2C3d4...2M3n4O5p6Q7r8' == url")
    assert shown == "E       AssertionError: assert '[REDACTED:github-token]' == url"


@given(rule=st.sampled_from(sorted(TOKENS)), data=st.data(),
       ellipsis=st.sampled_from(["...", "\u2026"]),
       frame=st.sampled_from(["E   assert '{}' == x", "{}", "token={}\n", "<{}>",
                              "E       -{}", "  where '{}' = f()"]))
def test_a_token_the_tool_cut_short_shows_none_of_its_characters(
        rule: str, data: st.DataObject, ellipsis: str, frame: str) -> None:
    prefix, alphabet, size = TOKENS[rule]
    body = data.draw(st.text(alphabet, min_size=size, max_size=size))
    head = data.draw(st.integers(0, size - 1))
    tail = data.draw(st.integers(0 if head else 1, size - head))
    cut = prefix + body[:head] + ellipsis + (body[size - tail:] if tail else "")
    shown = Redaction().text(frame.format(cut))
    assert f"[REDACTED:{rule}]" in shown, shown
    assert prefix not in shown
    kept = [piece for piece in (body[:head], body[size - tail:] if tail else "")
            if len(piece) >= 4 and piece in shown]
    assert kept == [], shown


def test_three_dots_after_a_word_that_is_no_token_stay() -> None:
    for text in ("Cloning into 'x'...", "waiting for tokens...", "collected 3 items ...",
                 "ghp_ ... a prefix alone"):
        assert Redaction().text(text) == text
