"""A `pytest --ckdn-digest` session redacts what its digest carries, as `ckdn run` does."""

from __future__ import annotations

import pytest

from tests.pytest_ckdn.sessions import Runner

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
KEY = "AKIA" + "Z7Y6X5W4V3U2T1S0"
TESTS = f'''
import os

def test_token():
    token = "{TOKEN}"
    assert token == "expected", "the API refused " + token

def test_env():
    print("key", "{KEY}", "and", os.environ["SERVICE_API_TOKEN"])
    assert False
'''


def test_the_plugins_digest_hides_messages_details_and_printed_secrets(
        pytester: pytest.Pytester, session: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_API_TOKEN", "plugin-env-secret-42")
    pytester.makepyfile(test_leak=TESTS)
    run = session()
    text = (run.run_dir / "digest.json").read_text()
    for secret in (TOKEN, KEY, "plugin-env-secret-42"):
        assert secret not in text
        assert secret not in run.result.stdout.str().splitlines()[-1]
    assert run.finding("test_leak.py::test_token")  # the id is never touched
    assert "[REDACTED:github-token]" in text
    assert run.digest["notes"][0].startswith("redacted ")
