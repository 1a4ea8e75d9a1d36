"""Generated corpora for the redactor: real-looking secrets per rule, and near misses.

Every secret is built from the provider's documented shape with a seeded random
generator (never a real credential; nothing here was ever issued), and set in
the kind of line a tool prints around it (an assertion, a logger, a traceback,
a curl trace, a config dump). The near misses are what logs are full of and
must come out unchanged: hashes, commit ids, UUIDs, base64 test data, long
pytest node ids, paths, locations, exit codes, the words "token" and "password".
Shared by tests/core/redact and bench/bench_redact.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid
from dataclasses import dataclass
from urllib.parse import quote

SEED = 20261201
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Secret:
    """One secret in context: ``line`` holds ``secret``; ``rule`` must redact it."""

    rule: str
    line: str
    secret: str


#: The env of the corpus's checks: names that look secret, values that do not.
ENV_VALUES = {
    "DEPLOY_TOKEN": "dpl-7Hq2/xv+Rk9=wZ&Lm",  # URL- and JSON-special characters
    "DB_PASSWORD": 'c0rrect"horse\\battery',
    "SERVICE_API_KEY": "k3y-of-the-service-2026",
}


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": str(rng.randrange(10**9)), "iat": 1764547200,
                                  "name": _pick(rng, LOWER, 8)}).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random, kind: str, lines: int = 6) -> list[str]:
    body = base64.b64encode(rng.randbytes(48 * lines)).decode()
    rows = [body[i:i + 64] for i in range(0, len(body), 64)]
    label = f"{kind} PRIVATE KEY".strip()
    return [f"-----BEGIN {label}-----", *rows, f"-----END {label}-----"]


def secrets() -> list[Secret]:
    """At least one secret per rule, most several times in different contexts."""
    rng = random.Random(SEED)
    out: list[Secret] = []

    def add(rule: str, template: str, secret: str) -> None:
        out.append(Secret(rule, template.format(s=secret), secret))

    for prefix in ("AKIA", "ASIA"):
        key = prefix + _pick(rng, UPPER + DIGITS, 16)
        add("aws-access-key", "E       AssertionError: unexpected key {s} in request", key)
        add("aws-access-key", "DEBUG botocore.credentials: Found credentials: access_key={s}",
            key)
    for template in ("aws_secret_access_key = {s}", '"SecretAccessKey": "{s}",',
                     "AWS_SECRET_ACCESS_KEY={s}", "secret-access-key: '{s}'"):
        add("aws-secret-key", template, _pick(rng, B64, 40))
    for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        add("github-token", "remote: Invalid username or token {s}.", prefix
            + _pick(rng, ALNUM, 36))
    add("github-token", "GH_TOKEN={s} gh pr list", "github_pat_" + _pick(rng, ALNUM, 22) + "_"
        + _pick(rng, ALNUM, 59))
    add("gitlab-token", "fatal: authentication with glpat token failed: {s}", "glpat-"
        + _pick(rng, ALNUM + "-_", 20))
    for kind in "bpa":
        add("slack-token", "slack_sdk.errors.SlackApiError: invalid_auth for {s}",
            f"xox{kind}-{rng.randrange(10**11)}-{rng.randrange(10**12)}-{_pick(rng, ALNUM, 24)}")
    for prefix in ("sk_live_", "rk_live_"):
        add("stripe-key", "stripe.error.AuthenticationError: Invalid API Key provided: {s}",
            prefix + _pick(rng, ALNUM, 24))
    add("google-api-key", "requests.get('https://maps.googleapis.com/maps/api?key={s}')",
        "AIza" + _pick(rng, ALNUM + "-_", 35))
    add("npm-token", "npm ERR! 401 Unauthorized token {s}", "npm_" + _pick(rng, ALNUM, 36))
    add("npm-token", "//registry.npmjs.org/:_authToken={s}",
        str(uuid.UUID(int=rng.getrandbits(128))))
    add("pypi-token", "twine upload --password {s} dist/*", "pypi-AgEIcHlwaS5vcmc"
        + _pick(rng, B64URL, 120))
    for template in ("E       assert response.json() == {{'token': '{s}'}}",
                     "INFO auth: issued {s}"):
        add("jwt", template, _jwt(rng))
    add("authorization", "> GET /api HTTP/1.1\r\n> Authorization: Bearer {s}",
        _pick(rng, ALNUM + "-._~+/", 40))
    add("authorization", "headers={{'Authorization': 'Basic {s}'}}",
        base64.b64encode(f"ci:{_pick(rng, ALNUM, 16)}".encode()).decode())
    add("authorization", "curl: (22) The requested URL returned error: 401 (bearer {s})",
        _pick(rng, ALNUM, 32))
    for template in ("Cloning into 'x'... fatal: https://ci:{s}@git.example.com/org/repo.git",
                     "sqlalchemy.exc.OperationalError: postgres://app:{s}@db:5432/app",
                     "redis.exceptions.ConnectionError: redis://:{s}@cache:6379/0"):
        add("url-password", template, _pick(rng, ALNUM + "%!*", 18))
    return out


def pem_blocks() -> list[tuple[str, list[str]]]:
    """``(rule, lines)``: key blocks as tools print them (with and without a prefix)."""
    rng = random.Random(SEED + 1)
    out = []
    for kind in ("RSA", "EC", "OPENSSH", "ENCRYPTED", "", "DSA"):
        out.append(("private-key", _pem(rng, kind)))
    out.append(("private-key", ["E       " + line for line in _pem(rng, "RSA")]))
    out.append(("private-key", ["2026-12-01 12:00:00 INFO " + line
                                for line in _pem(rng, "EC", 3)]))
    return out


def env_secrets() -> list[Secret]:
    """The env values as printed raw and in each encoded form the redactor knows."""
    out: list[Secret] = []
    for value in ENV_VALUES.values():
        raw = value.encode()
        out.append(Secret("env", f"E       AssertionError: {value!s} != 'x'", value))
        out.append(Secret("env", f"GET /login?pw={quote(value, safe='')} 401",
                          quote(value, safe="")))
        escaped = json.dumps(value)[1:-1]
        out.append(Secret("env", f'{{"config": {{"secret": "{escaped}"}}}}', escaped))
        for offset in range(3):
            blob = base64.b64encode(b"p" * offset + raw + b"!tail").decode()
            first, last = -(-offset * 8 // 6), (offset + len(raw)) * 8 // 6
            out.append(Secret("env", f"data: {blob}", blob[first:last]))
    return out


def near_misses() -> list[str]:
    """Lines that must come out exactly as they went in."""
    rng = random.Random(SEED + 2)
    sha1 = [hashlib.sha1(rng.randbytes(8)).hexdigest() for _ in range(20)]
    sha256 = [hashlib.sha256(rng.randbytes(8)).hexdigest() for _ in range(20)]
    lines = [f"commit {h}" for h in sha1]
    lines += [f"[main {h[:7]}] fix the parser; {h[:12]} reverted" for h in sha1]
    lines += [f"sha256:{h}  dist/pkg-1.0-py3-none-any.whl" for h in sha256]
    lines += [f"Successfully built pkg-{h[:10]}" for h in sha256]
    lines += [f"request_id={uuid.UUID(int=rng.getrandbits(128))}" for _ in range(20)]
    lines += [str(uuid.UUID(int=rng.getrandbits(128))).upper() for _ in range(10)]
    for size in (3, 16, 24, 30, 45, 48, 64, 100, 300):
        lines.append(f"E       assert decode({base64.b64encode(rng.randbytes(size)).decode()!r})"
                     " == b''")
    lines += [
        "tests/test_api.py::TestAuth::test_login_rejects_a_wrong_password[user-password-expired]"
        " FAILED",
        "tests/test_tokens.py::test_parse_token[ghp_short-gho_-not-a-token] PASSED",
        "tests/test_hash.py::test_digest[sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
        "a495991b7852b855]",
        "tests/integration/test_secrets_manager.py::TestRotation::test_rotates_the_api_key_and_"
        "keeps_the_old_one_for_an_hour[aws-us-east-1-AKIA-prefix] PASSED [ 42%]",
        "src/secret_manager/keys.py:12:5: F401 'os' imported but unused",
        "/home/ci/.cache/pip/wheels/3f/ab/0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d/",
        "/usr/lib/python3/site-packages/botocore/data/sts/2011-06-15/service-2.json",
        "src/app/auth/token_store.py:88: error: Incompatible return value type",
        "ERROR: Bearer token missing",
        "Authorization: required",
        "basic usage: tool [options]",
        "the password is incorrect",
        "see https://example.com:8080/docs/auth#tokens",
        "git@github.com:org/repo.git",
        "ssh://git@github.com/org/repo",
        "Looking in indexes: https://pypi.org/simple, https://pypi-mirror.example.com/simple",
        "npm_config_cache=/tmp/npm-cache",
        "eyJhbGciOiJIUzI1NiJ9 is a JWT header alone",
        "make: *** [Makefile:12: test] Error 2",
        "Process completed with exit code 137.",
        "=================== 3 failed, 120 passed, 2 skipped in 4.12s ===================",
        "\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y - assert 1 == 2",
        "@reproduce_failure('6.100.0', b'AXicY2BgYGAAAAAEAAE=')",
        "Falsifying example: test_roundtrip(data=b'\\x00\\x01', key='AKIA')",
        "docker.io/library/python@sha256:" + sha256[0],
        "KEY_ID=1234 PASSWORD_MIN_LENGTH=12",
        "the key 'token' is missing from the response",
        '{"token_type": "bearer", "expires_in": 3600}',
    ]
    return lines
