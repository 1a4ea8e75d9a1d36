"""A host's own environment (a nox session's, a tox env's) is where its secrets come from.

nox and tox run checks through ``ckdn.app.run`` with their env as the base: a
secret in that env, not in ours, is what the child saw and printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ckdn import app
from tests.project import py

HOST_SECRET = "host-env-only-secret-77"


def test_a_secret_of_the_hosts_env_is_redacted_from_the_digest(tmp_path: Path) -> None:
    code = "import os; print('deploying with', os.environ['SESSION_TOKEN']); raise SystemExit(1)"
    (tmp_path / "ckdn.toml").write_text(f'[check.deploy]\ncommand = {json.dumps(py(code))}\n'
                                        'parser = "generic"\n')
    assert "SESSION_TOKEN" not in os.environ
    config = app.load_config(str(tmp_path))
    host_env = {**os.environ, "SESSION_TOKEN": HOST_SECRET}
    outcome = app.run(config, "deploy", env=host_env)
    text = json.dumps(outcome.document)
    assert HOST_SECRET not in text
    assert "[REDACTED:env]" in text
    stored = (Path(str(outcome.run_dir)) / "digest.json").read_text()
    assert HOST_SECRET not in stored
    assert HOST_SECRET in (Path(str(outcome.run_dir)) / "full.log").read_text()
