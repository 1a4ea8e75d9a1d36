"""The real ``tox`` executable in a subprocess, and the examples of a docs page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOX = Path(sys.executable).with_name("tox")

#: Run dir timestamps and tox's durations change from run to run.
_VOLATILE = (
    (re.compile(r"\d{8}T\d{6}Z(?:\.\d{3})?"), "<TIMESTAMP>"),
    (re.compile(r"\d+\.\d+(?:=setup\[\d+\.\d+\]\+cmd\[[\d.,]+\])? seconds"), "<DURATION> seconds"),
)


def tox_environment(wheels: Path | None = None) -> dict[str, str]:
    """The environment tox runs in: isolated from user config, none of our tools on PATH.

    ``wheels``: install from that directory only (no index), as pip's
    ``--find-links --no-index``, so an env is set up without the network.
    """
    ours = str(TOX.parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CKDN_", "TOX_"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != ours)
    env["TOX_USER_CONFIG_FILE"] = os.devnull
    if wheels is not None:
        env.update(PIP_FIND_LINKS=str(wheels), PIP_NO_INDEX="1")
    return env


def run_tox(root: Path, *args: str, wheels: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """tox as a user starts it (see :func:`tox_environment`), to the end; ``env``: more
    variables (a GitHub job's)."""
    return subprocess.run([str(TOX), *args], cwd=root, env={**tox_environment(wheels),
                                                          **(env or {})},
                          capture_output=True, text=True, timeout=600, check=False)


def start_tox(root: Path, *args: str) -> subprocess.Popen[str]:
    """tox as a user starts it, left running (to be sent signals)."""
    return subprocess.Popen([str(TOX), *args], cwd=root, env=tox_environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def examples(page: str) -> dict[str, str]:
    """The blocks of ``docs/<page>`` marked ``<!-- example: NAME -->``, by name."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- example: (.+?) -->\n```\w*\n(.*?)```", text, re.DOTALL))


def scrub(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def assert_shown(documented: str, out: str) -> None:
    """Every documented line is in the output, in the documented order (volatile parts aside)."""
    actual = iter(scrub(out).splitlines())
    for line in scrub(documented).splitlines():
        assert any(line == seen for seen in actual), f"not in the output, in order: {line!r}\n{out}"
