"""Real commands that print secrets, run by the real `ckdn`: what a reader gets is clean.

The digest (printed and stored), `ckdn show` (text and JSON), meta.json's command,
`ckdn checks` and findings.jsonl hide every secret; full.log keeps them (raw
evidence) unless `[run.redact].full_log` asks otherwise.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys

import pytest

from tests.core.redact.corpus import pem_blocks, secrets
from tests.project import Project, py

CASES = secrets()
KEY = pem_blocks()[0][1]
ENV_SECRET = "s3cr3t-from-the-env-2026"
CHECK_SECRET = "check-own-password-value"
PRINTER = "\n".join([
    "import os, sys",
    f"for line in {[case.line for case in CASES]!r}: print(line)",
    f"print('\\n'.join({KEY!r}))",
    "print('from env:', os.environ['CI_DEPLOY_TOKEN'], os.environ['DB_PASSWORD'])",
    "sys.exit(3)",
])
CONFIG = f"""\
[run]
log_tail_lines = 200

[check.leaky]
command = {json.dumps(py(PRINTER) + " --api-token=tok-in-argv-123 -p no:cacheprovider")}
parser = "generic"
env = {{ DB_PASSWORD = "{CHECK_SECRET}" }}
"""
ENV = {"CI_DEPLOY_TOKEN": ENV_SECRET}
EVERY_SECRET = [case.secret for case in CASES] + KEY[1:-1] + [ENV_SECRET, CHECK_SECRET,
                                                              "tok-in-argv-123"]


def leaks(text: str) -> list[str]:
    return [secret for secret in EVERY_SECRET if secret in text]


@pytest.fixture
def leaky(project: Project) -> Project:
    project.config(CONFIG)
    proc = project.ckdn("run", "leaky", env=ENV)
    assert proc.returncode == 3, proc.stderr
    project.printed = proc.stdout  # type: ignore[attr-defined]
    return project


def test_the_printed_and_stored_digest_hide_every_secret(leaky: Project) -> None:
    printed = leaky.printed  # type: ignore[attr-defined]
    assert leaks(printed) == []
    stored = (leaky.runs / "latest" / "digest.json").read_text()
    assert leaks(stored) == []
    doc = json.loads(stored)
    assert doc["rc"] == 3
    assert doc["notes"][0].startswith("redacted ")
    for rule in {case.rule for case in CASES} | {"env", "private-key"}:
        assert f"{rule} " in doc["notes"][0], rule
    assert any("[REDACTED:github-token]" in line for line in doc["log_tail"])


def test_ckdn_show_hides_every_secret(leaky: Project) -> None:
    for args in (("show",), ("show", "--json")):
        proc = leaky.ckdn(*args, env=ENV)
        assert proc.returncode == 0, proc.stderr
        assert leaks(proc.stdout) == []
        assert "[REDACTED:" in proc.stdout


def test_meta_json_shows_the_command_with_its_secret_values_redacted(leaky: Project) -> None:
    meta = json.loads((leaky.runs / "latest" / "meta.json").read_text())
    assert leaks(json.dumps(meta)) == []
    assert meta["command"][0] == sys.executable
    assert meta["command"][-3:] == ["--api-token=[REDACTED:argv]", "-p", "no:cacheprovider"]
    assert meta["env_keys"] == ["DB_PASSWORD"]
    notes = json.loads((leaky.runs / "latest" / "digest.json").read_text())["notes"]
    assert any(note.startswith("meta.json command: redacted ") for note in notes)


def test_full_log_stays_raw_evidence(leaky: Project) -> None:
    raw = (leaky.runs / "latest" / "full.log").read_bytes()
    log = raw.decode()
    assert set(leaks(log)) == set(EVERY_SECRET) - {"tok-in-argv-123"}  # all printed ones
    meta = json.loads((leaky.runs / "latest" / "meta.json").read_text())
    assert meta["log_sha256"] == hashlib.sha256(raw).hexdigest()


def test_full_log_is_redacted_too_when_asked_and_meta_hashes_what_is_kept(
        project: Project) -> None:
    project.config(CONFIG.replace("[run]\n", "[run]\nredact = { full_log = true }\n"))
    proc = project.ckdn("run", "leaky", env=ENV)
    assert proc.returncode == 3, proc.stderr
    log = (project.runs / "latest" / "full.log").read_bytes()
    assert leaks(log.decode()) == []
    printed = [case.line for case in CASES] + KEY + ["from env"]
    assert log.count(b"\n") == "\n".join(printed).count("\n") + 1  # every line kept
    meta = json.loads((project.runs / "latest" / "meta.json").read_text())
    assert meta["log_sha256"] == hashlib.sha256(log).hexdigest()
    assert meta["log_bytes"] == len(log)
    # the tail is read from the redacted log, so the digest counts what the rewrite took
    notes = json.loads(proc.stdout)["notes"]
    (counted,) = [note for note in notes if note.startswith("full.log: redacted ")]
    rules = dict(part.rsplit(" ", 1) for part in counted.split("(", 1)[1][:-1].split(", "))
    for rule, count in rules.items():  # a key block is one secret, one marker a line
        if rule != "private-key":
            assert int(count) == log.count(f"[REDACTED:{rule}]".encode()), rule
    assert int(rules["private-key"]) == 1


def test_redaction_can_be_turned_off(project: Project) -> None:
    project.config(CONFIG.replace("[run]\n", "[run]\nredact = false\n"))
    proc = project.ckdn("run", "leaky", env=ENV)
    assert ENV_SECRET in proc.stdout
    assert "redacted" not in proc.stdout


def test_ckdn_checks_shows_no_secret_of_a_command(project: Project) -> None:
    project.config(CONFIG)
    for args in (("checks",), ("checks", "--json")):
        proc = project.ckdn(*args, env=ENV)
        assert proc.returncode == 0, proc.stderr
        assert leaks(proc.stdout) == []
        assert "--api-token=[REDACTED:argv]" in proc.stdout


def test_a_command_without_secrets_is_shown_as_configured(project: Project) -> None:
    project.config('[check.t]\ncommand = "pytest -p no:cacheprovider -q \'tests/a b.py\'"\n'
                   'parser = "generic"\n')
    proc = project.ckdn("checks", "--json")
    command = json.loads(proc.stdout)["checks"][0]["command"]
    assert command == "pytest -p no:cacheprovider -q 'tests/a b.py'"


TEST_FILE = '''\
def test_login():
    token = "ghp_''' + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2" + '''"
    assert token == "expected", f"bad token {token}"
'''


def test_a_real_pytest_runs_junit_messages_and_findings_file_are_redacted(
        project: Project) -> None:
    (project.root / "test_login.py").write_text(TEST_FILE)
    command = (f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider -p no:randomly"
               " -p no:hypothesispytest -p no:anyio --junitxml={run_dir}/junit.xml test_login.py")
    project.config(f'[check.tests]\ncommand = {json.dumps(command)}\nparser = "pytest"\n'
                   'junit = "{run_dir}/junit.xml"\n')
    proc = project.ckdn("run", "tests")
    assert proc.returncode == 1, proc.stderr
    token = "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    doc = project.digest(proc)
    assert token not in proc.stdout
    assert doc["findings"][0]["id"] == "test_login.py::test_login"  # ids are never touched
    assert "[REDACTED:github-token]" in doc["findings"][0]["message"]
    findings = (project.runs / "latest" / "findings.jsonl").read_text()
    assert token not in findings
    assert "[REDACTED:github-token]" in findings
    assert token in (project.runs / "latest" / "full.log").read_text()


def test_ckdn_show_redacts_a_run_stored_without_redaction_and_says_so(
        project: Project) -> None:
    project.config(CONFIG.replace("[run]\n", "[run]\nredact = false\n"))
    assert ENV_SECRET in project.ckdn("run", "leaky", env=ENV).stdout  # stored raw
    project.config(CONFIG)
    proc = project.ckdn("show", "--json", env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert leaks(proc.stdout) == []
    assert json.loads(proc.stdout)["notes"][0].startswith("redacted when shown: ")
    assert leaks(project.ckdn("show", env=ENV).stdout) == []


def test_ckdn_show_gives_a_redacted_run_back_unchanged(leaky: Project) -> None:
    stored = json.loads((leaky.runs / "latest" / "digest.json").read_text())
    shown = json.loads(leaky.ckdn("show", "--json", env=ENV).stdout)
    assert shown == stored


def test_every_redacted_document_keeps_its_schema(leaky: Project) -> None:
    from jsonschema import Draft202012Validator

    from ckdn.schema import load_schema

    latest = leaky.runs / "latest"
    for name, schema in (("digest.json", "ckdn.digest/2"), ("meta.json", "ckdn.meta/1")):
        doc = json.loads((latest / name).read_text())
        errors = list(Draft202012Validator(load_schema(schema)).iter_errors(doc))
        assert errors == [], (name, [e.message for e in errors])


def test_a_log_that_cannot_be_rewritten_stays_raw_and_the_digest_says_why(
        project: Project) -> None:
    code = ("import os; print('token ghp_' + 'a' * 36); "
            "p = os.path.join(os.environ['CKDN_RUN_DIR'], 'full.log'); "
            "os.rename(p, p + '.real'); os.symlink(p + '.real', p); raise SystemExit(1)")
    project.config('[run.redact]\nfull_log = true\n[check.swap]\n'
                   f'command = {json.dumps(py(code))}\nparser = "generic"\n')
    proc = project.ckdn("run", "swap")
    assert proc.returncode == 1, proc.stderr
    doc = project.digest(proc)
    assert any(note.startswith("full.log kept raw, not redacted: ") for note in doc["notes"])


def test_the_door_for_agents_reads_windows_and_documents_redacted(
        leaky: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the MCP server's get_evidence and get_digest answer: full.log stays raw on
    disk, its windows do not. The reader's environment is the runs' (the server starts
    them), and the check's own env comes from the config."""
    from ckdn.app import load_config
    from ckdn.app.queries import read_document, read_window

    monkeypatch.setenv("CI_DEPLOY_TOKEN", ENV_SECRET)
    config = load_config(str(leaky.root))
    window = read_window(config, None, offset=0, limit=200)
    assert leaks(json.dumps(window)) == []
    assert window["total_lines"] == len(CASES) + len(KEY) + 2  # one case holds a \r\n
    assert sum("[REDACTED:private-key]" in line for line in window["lines"]) == len(KEY)
    tail = read_window(config, None, offset=-4, limit=4)  # starts inside nothing but the key
    assert leaks(json.dumps(tail)) == []
    assert leaks(json.dumps(read_document(config, None))) == []


def test_a_window_of_a_run_stored_without_redaction_is_redacted(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ckdn.app import load_config
    from ckdn.app.queries import read_document, read_window

    project.config(CONFIG.replace("[run]\n", "[run]\nredact = false\n"))
    project.ckdn("run", "leaky", env=ENV)
    project.config(CONFIG)
    monkeypatch.setenv("CI_DEPLOY_TOKEN", ENV_SECRET)
    config = load_config(str(project.root))
    assert leaks(json.dumps(read_window(config, None, limit=200))) == []
    doc = read_document(config, None)
    assert leaks(json.dumps(doc)) == []
    assert doc["digest"]["notes"][0].startswith("redacted when shown: ")


def test_ckdn_diff_shows_no_secret_of_findings_recorded_without_redaction(
        project: Project) -> None:
    (project.root / "test_login.py").write_text(TEST_FILE)
    command = (f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider -p no:randomly"
               " -p no:hypothesispytest -p no:anyio --junitxml={run_dir}/junit.xml test_login.py")
    check = (f'[check.tests]\ncommand = {json.dumps(command)}\nparser = "pytest"\n'
             'junit = "{run_dir}/junit.xml"\n')
    token = "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    project.config("[run]\nredact = false\n" + check)
    assert project.ckdn("run", "tests").returncode == 1
    (project.root / "test_login.py").write_text(TEST_FILE.replace("test_login", "test_other"))
    assert project.ckdn("run", "tests").returncode == 1
    assert token in (project.runs / "latest" / "findings.jsonl").read_text()  # stored raw
    project.config(check)
    proc = project.ckdn("diff", "-1", "latest", "--json")
    assert token not in proc.stdout, proc.stdout
    assert "[REDACTED:github-token]" in proc.stdout
