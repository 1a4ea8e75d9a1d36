"""ckdn.toml tables for the nox tests: small real commands run by this interpreter."""

from __future__ import annotations

import json

from tests.project import py


def check(name: str, code: str, *, extra: str = "") -> str:
    """A ``generic`` check running ``code``; ``extra`` adds TOML lines to its table."""
    return f"[check.{name}]\ncommand = {json.dumps(py(code))}\nparser = \"generic\"\n{extra}\n"


OK = check("ok", "print('fine')", extra='description = "always green"')
BAD = check("bad", "import sys; print('boom'); sys.exit(3)")
#: Writes its extra arguments and the environment it saw into its run dir.
ECHO = check("echo", (
    "import json, os, pathlib, sys; pathlib.Path(os.environ['CKDN_RUN_DIR'], 'seen.json')"
    ".write_text(json.dumps({'args': sys.argv[1:], 'path': os.environ.get('PATH', ''),"
    " 'foo': os.environ.get('FOO')}))"
), extra='requires = ["ruff==0.17.6", "pip-audit>=2"]')
BOTH = '[check.both]\nmembers = ["ok", "bad"]\nfail_fast = false\ndescription = "ok, then bad"\n'

ALL = OK + BAD + ECHO + BOTH
