"""A command line as meta.json and `ckdn checks` show it: secret-looking values redacted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import ckdn
from ckdn.redact import Redaction, RedactSettings

H = "[REDACTED:argv]"


def shown(*argv: str, env: dict[str, str] | None = None) -> list[str]:
    return Redaction(RedactSettings(), env or {}).argv(argv)


@pytest.mark.parametrize(("argv", "expected"), [
    (["tool", "--token=abc123"], ["tool", f"--token={H}"]),
    (["tool", "--api-key", "abc123", "x"], ["tool", "--api-key", H, "x"]),
    (["tool", "--db_password=p@ss"], ["tool", f"--db_password={H}"]),
    (["env", "GITHUB_TOKEN=abc", "make"], ["env", f"GITHUB_TOKEN={H}", "make"]),
    (["mysql", "-phunter2", "db"], ["mysql", f"-p{H}", "db"]),
    (["mysql", "-p", "db"], ["mysql", "-p", "db"]),  # -p alone prompts; db is a database
    (["sshpass", "-p", "secret", "ssh", "host"], ["sshpass", "-p", H, "ssh", "host"]),
    (["redis-cli", "-a", "pw123", "ping"], ["redis-cli", "-a", H, "ping"]),
    (["curl", "-u", "bob:pw", "https://x"], ["curl", "-u", f"bob:{H}", "https://x"]),
    (["curl", "--user=bob:pw"], ["curl", f"--user=bob:{H}"]),
    (["docker", "login", "-p", "pw", "r.io"], ["docker", "login", "-p", H, "r.io"]),
    (["openssl", "enc", "-pass", "pass:pw"], ["openssl", "enc", "-pass", f"pass:{H}"]),
    (["git", "clone", "https://ci:pw123@git.example.com/r.git"],
     ["git", "clone", "https://ci:[REDACTED:url-password]@git.example.com/r.git"]),
    (["curl", "-H", "Authorization: Bearer abcdefgh1234"],
     ["curl", "-H", "Authorization: Bearer [REDACTED:authorization]"]),
    (["gh", "--repo", "x", "ghp_" + "a" * 36], ["gh", "--repo", "x", "[REDACTED:github-token]"]),
])
def test_a_secret_looking_value_is_redacted(argv: list[str], expected: list[str]) -> None:
    assert shown(*argv) == expected


@pytest.mark.parametrize("argv", [
    ["pytest", "-p", "no:cacheprovider", "-p", "pytest_cov", "tests/"],
    ["docker", "run", "-p", "8080:80", "image"],
    ["docker", "login", "--password-stdin", "r.io"],
    ["tool", "--token-file", "secrets/token.txt"],
    ["tool", "--no-password", "x"],
    ["git", "commit", "--author=Bob <bob@example.com>"],
    ["ruff", "check", "--output-format=json", "src/"],
    ["python", "-c", "print(1 == 1)"],
    ["mypy", "--config-file=pyproject.toml", "src/secret_store/"],
])
def test_an_ordinary_command_is_shown_as_it_is(argv: list[str]) -> None:
    assert shown(*argv) == argv


def test_an_env_secret_in_the_command_is_redacted() -> None:
    env = {"DEPLOY_TOKEN": "deploy-value-99"}
    assert shown("tool", "deploy-value-99", env=env) == ["tool", "[REDACTED:env]"]


def test_screening_a_plain_command_imports_no_regex_machinery() -> None:
    code = ("import sys; from ckdn.redact import Redaction; "
            "r = Redaction(); r.argv(['pytest', '-q', '-p', 'no:cacheprovider', 'tests/']); "
            "print(sorted(m for m in sys.modules if m == 're' or m.startswith('ckdn.redact.')))")
    core = str(Path(ckdn.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": core}).stdout
    assert out.strip() == "['ckdn.redact._settings']"  # what a secret is: no pattern, no re
