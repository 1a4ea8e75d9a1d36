"""The rules: every generated secret goes, every near miss stays, markers read as markers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.redact import ANCHORS, LOWERED_ANCHORS, Redaction, RedactSettings, secret_name
from ckdn.redact._text import BUILTIN, PEM_ANCHOR
from tests.core.redact.corpus import ENV_VALUES, env_secrets, near_misses, pem_blocks, secrets

SECRETS = secrets() + env_secrets()
NEAR = near_misses()


def redaction(**options: object) -> Redaction:
    return Redaction(RedactSettings(**options), ENV_VALUES)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", SECRETS, ids=[f"{s.rule}-{i}" for i, s in enumerate(SECRETS)])
def test_every_generated_secret_is_replaced_by_its_rules_marker(case: object) -> None:
    secret = case.secret  # type: ignore[attr-defined]
    out = redaction().text(case.line)  # type: ignore[attr-defined]
    assert secret not in out
    assert f"[REDACTED:{case.rule}]" in out  # type: ignore[attr-defined]


@pytest.mark.parametrize("line", NEAR)
def test_a_near_miss_comes_out_exactly_as_it_went_in(line: str) -> None:
    assert redaction().text(line) == line


def test_every_rule_of_the_catalogue_has_a_generated_secret() -> None:
    rules = {rule.name for rule in BUILTIN} | {"env"}
    assert rules - {case.rule for case in SECRETS} == set()


def test_the_screen_knows_every_anchor_of_the_rules() -> None:
    cased = {a for rule in BUILTIN if not rule.lowered for a in rule.anchors} | {PEM_ANCHOR}
    lowered = {a for rule in BUILTIN if rule.lowered for a in rule.anchors}
    assert set(ANCHORS) == cased
    assert set(LOWERED_ANCHORS) == lowered


def test_only_the_credential_goes_the_key_name_and_the_header_stay() -> None:
    out = redaction().text("> Authorization: Bearer abcdefgh12345678 (aws_secret_access_key = "
                           + "A" * 40 + ")")
    assert out == ("> Authorization: Bearer [REDACTED:authorization] (aws_secret_access_key = "
                   "[REDACTED:aws-secret-key])")


def test_a_url_keeps_its_user_and_host() -> None:
    assert redaction().text("https://bob:hunter2@example.com/x") == \
        "https://bob:[REDACTED:url-password]@example.com/x"


@pytest.mark.parametrize(("rule", "lines"), pem_blocks(), ids=lambda v: str(v)[:20])
def test_a_key_block_is_redacted_line_for_line(rule: str, lines: list[str]) -> None:
    red = redaction()
    out = red.lines(["before", *lines, "after"])
    assert out[0] == "before"
    assert out[-1] == "after"
    assert len(out) == len(lines) + 2
    assert all("[REDACTED:private-key]" in line for line in out[1:-1])
    assert not any(body in "\n".join(out) for body in lines[1:-1])
    assert red.counts == {"private-key": 1}


def test_a_tail_that_starts_inside_a_key_still_hides_the_body_above_its_end() -> None:
    _, lines = pem_blocks()[0]
    tail = ["collected 3 items", *lines][4:]  # the BEGIN line and two body lines cut off
    out = redaction().lines(tail)
    assert out == ["[REDACTED:private-key]"] * len(tail)


def test_a_begin_without_end_takes_its_body_lines_and_no_ordinary_line() -> None:
    _, lines = pem_blocks()[0]
    out = redaction().lines([*lines[:3], "FAILED tests/test_x.py::test_y", "2 failed"])
    assert out[:3] == ["[REDACTED:private-key]"] * 3
    assert out[3:] == ["FAILED tests/test_x.py::test_y", "2 failed"]


def test_a_key_printed_as_a_repr_on_one_line_is_redacted_whole() -> None:
    _, lines = pem_blocks()[1]
    text = "E   assert key == " + repr("\n".join(lines))
    out = redaction().text(text)
    assert out == "E   assert key == '[REDACTED:private-key]'"


def test_an_allowlisted_value_stays() -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    assert redaction(allow=(key,)).text(f"key {key}") == f"key {key}"
    assert redaction().text(f"key {key}") == "key [REDACTED:aws-access-key]"


def test_a_configured_pattern_is_its_own_rule() -> None:
    red = redaction(patterns=(("corp-token", r"corp_[a-z0-9]{12}"),))
    assert red.text("use corp_0123456789ab now") == "use [REDACTED:corp-token] now"
    assert red.counts == {"corp-token": 1}


def test_the_high_entropy_rule_is_off_by_default_and_takes_random_tokens_when_on() -> None:
    token = "q7Xv9LmZ2pR4tY8wK1sD6fH3jN5bC0gA"
    assert redaction().text(f"id {token}") == f"id {token}"
    assert redaction(high_entropy=True).text(f"id {token}") == "id [REDACTED:high-entropy]"
    # a hash is hex: never high-entropy in the rule's sense
    sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert redaction(high_entropy=True).text(sha) == sha


def test_disabled_redaction_changes_nothing() -> None:
    off = redaction(enabled=False)
    for case in SECRETS:
        assert off.text(case.line) == case.line


def test_names_that_look_secret() -> None:
    assert all(secret_name(n) for n in ("GITHUB_TOKEN", "db_password", "AWS_SECRET_ACCESS_KEY",
                                        "SSH_KEY", "MYSQL_PASSWD"))
    assert not any(secret_name(n) for n in ("PATH", "HOME", "PWD", "CI", "LANG"))
    assert secret_name("SENTRY_DSN", ("*_DSN",))
    assert not secret_name("SENTRY_URL", ("*_DSN",))


def test_short_values_and_paths_are_not_env_secrets() -> None:
    env = {"API_KEY": "short", "SSH_KEY_PATH": "/home/u/.ssh/id", "TOKEN": "long-enough-1"}
    red = Redaction(RedactSettings(), env)
    assert red.values == ("long-enough-1",)
    assert red.text("short /home/u/.ssh/id long-enough-1") == \
        "short /home/u/.ssh/id [REDACTED:env]"


FRAGMENTS = [case.line for case in SECRETS[::3]] + NEAR[::5] + ["\n", " ", "ghp_", "://"]


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=8))
def test_redacting_twice_is_redacting_once(parts: list[str]) -> None:
    text = "".join(parts)
    once = redaction().text(text)
    again = redaction()
    assert again.text(once) == once
    assert again.counts == {}
    assert once.count("\n") == text.count("\n")
