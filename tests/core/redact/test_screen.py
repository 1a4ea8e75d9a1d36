"""The screen before the redactor (``Redaction.may_hold``) never lets a secret through.

A rule's link (``https://docs.astral.sh/ruff/rules/...`` in every ruff finding's detail) holds
the url-password rule's anchor ``://`` but not the ``@`` that rule requires; unless the text
was cut before its end, the screen says it holds nothing, and the redactor (its module and
``re``) is not loaded for it.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ckdn.redact import Redaction

LINK = "https://docs.astral.sh/ruff/rules/unused-import"
PIECES = ["://", "@", ":", "/", " ", "user", "hunter2hunter2", "https", "host.example",
          "ghp_" + "A1b2" * 9, "password=", "x", "\n", LINK]


def test_a_rules_link_needs_no_redactor_unless_the_text_was_cut() -> None:
    redaction = Redaction()
    assert not redaction.may_hold(LINK, edge=False)
    assert redaction.may_hold(LINK, edge=True)  # cut: its "@" may be past the cut
    assert redaction.may_hold(LINK)  # a caller that does not know: the safe guess
    assert redaction.text(f"F401 {LINK}") == f"F401 {LINK}"


def test_a_url_password_is_still_found_whole_and_cut() -> None:
    redaction = Redaction()
    whole = "clone https://user:hunter2hunter2@host.example/repo"
    assert redaction.may_hold(whole, edge=False)
    assert "hunter2hunter2" not in redaction.text(whole)
    cut = "clone https://user:hunter2hunter2"  # the rest past the digest's cut
    assert redaction.may_hold(cut, edge=True)
    assert "hunter2hunter2" not in redaction.text(cut, edge=True)
    assert "hunter2hunter2" not in "".join(redaction.lines(["ok", cut], edges=[False, True]))


@given(st.lists(st.sampled_from(PIECES), max_size=12), st.booleans())
def test_what_the_screen_passes_the_redactor_would_not_change(pieces: list[str],
                                                              edge: bool) -> None:
    redaction = Redaction()
    text = "".join(pieces)
    if not redaction.may_hold(text, edge=edge):
        assert redaction.redactor.text(text, edge) == text
