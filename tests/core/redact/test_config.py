"""`[run].redact`: read strictly; every mistake one line naming the key, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ckdn.config import load_config
from ckdn.errors import ConfigError
from ckdn.redact import RedactSettings
from tests.project import Project

CHECK = '[check.ok]\ncommand = "true"\nparser = "generic"\n'


def settings(root: Path, run: str) -> RedactSettings:
    (root / "ckdn.toml").write_text(run + CHECK)
    return load_config(root).run.redact


def refused(root: Path, run: str) -> str:
    (root / "ckdn.toml").write_text(run + CHECK)
    with pytest.raises(ConfigError) as info:
        load_config(root)
    assert info.value.exit_code == 2
    message = str(info.value)
    assert "\n" not in message
    return message


def test_redaction_is_on_by_default_with_the_built_in_rules(tmp_path: Path) -> None:
    assert settings(tmp_path, "") == RedactSettings()
    assert RedactSettings().enabled
    assert not RedactSettings().full_log


def test_the_table_sets_every_key(tmp_path: Path) -> None:
    got = settings(tmp_path, '[run.redact]\nfull_log = true\nhigh_entropy = true\n'
                             'allow = ["AKIAIOSFODNN7EXAMPLE"]\nnames = ["*_DSN"]\n'
                             '[run.redact.patterns]\ncorp-token = "corp_[a-z0-9]{32}"\n')
    assert got == RedactSettings(full_log=True, high_entropy=True,
                                 allow=("AKIAIOSFODNN7EXAMPLE",), names=("*_DSN",),
                                 patterns=(("corp-token", "corp_[a-z0-9]{32}"),))


def test_redact_false_turns_it_off(tmp_path: Path) -> None:
    assert not settings(tmp_path, "[run]\nredact = false\n").enabled


@pytest.mark.parametrize(("run", "message"), [
    ('[run]\nredact = "yes"\n',
     "[run] redact: must be true, false or a table [run.redact], not 'yes'"),
    ("[run.redact]\nfull_logs = true\n",
     "[run.redact] unknown key 'full_logs'; did you mean 'full_log'?"),
    ('[run.redact]\nenabled = "no"\n', "[run.redact] enabled: must be true or false, not 'no'"),
    ("[run.redact]\nallow = [1]\n",
     "[run.redact] allow: must be an array of non-empty strings, not an array"),
    ('[run.redact]\nnames = "X"\n',
     "[run.redact] names: must be an array of non-empty strings, not 'X'"),
    ('[run.redact]\npatterns = ["x"]\n',
     "[run.redact] patterns: must be a table [run.redact.patterns] of rule name = regular "
     "expression, not an array"),
    ('[run.redact.patterns]\nCorp = "x"\n',
     "[run.redact.patterns] 'Corp': a rule name is lower-case letters, digits and '-' (at "
     "most 40); it is shown as [REDACTED:name]"),
    ('[run.redact.patterns]\ncorp = "corp_(["\n',
     "[run.redact.patterns] corp: not a valid regular expression: unterminated character set"
     " at position 6"),
    ('[run.redact.patterns]\ncorp = "x*"\n',
     "[run.redact.patterns] corp: matches the empty string, so it would match everywhere; "
     "make it need at least one character"),
    ("[run.redact.patterns]\ncorp = 3\n",
     "[run.redact.patterns] corp: must be a regular expression string, not 3"),
])
def test_a_mistake_is_one_line_naming_the_key(tmp_path: Path, run: str, message: str) -> None:
    assert refused(tmp_path, run) == f"ckdn.toml: {message}"


def test_ckdn_run_refuses_a_bad_pattern_with_exit_2_and_runs_nothing(project: Project) -> None:
    project.config('[run.redact.patterns]\ncorp = "("\n' + CHECK)
    proc = project.ckdn("run", "ok")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ckdn: ckdn.toml: [run.redact.patterns] corp: not a valid")
    assert proc.stderr.count("\n") == 1
    assert not project.run_dirs()
