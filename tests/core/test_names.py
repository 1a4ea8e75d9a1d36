"""Run dir names and check names are read exactly as the patterns that define them read them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ckdn.config import load_config
from ckdn.errors import ConfigError
from ckdn.store._store import parse_name

RUN_NAME = re.compile(r"(\d{8}T\d{6}Z)(?:\.(\d{3,}))?-([^/\0]+)")
CHECK_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]{0,63}\Z")


@st.composite
def run_names(draw: st.DrawFn) -> str:
    digit = st.sampled_from("0123456789\u0663x")
    stamp = "".join(draw(st.lists(digit, min_size=8, max_size=8)))
    stamp += draw(st.sampled_from(["T", "t"])) + "".join(draw(st.lists(digit, min_size=6,
                                                                       max_size=6)))
    seq = draw(st.sampled_from(["", ".", ".01", ".001", ".0001", ".1x3", ".\u0663\u0663\u0663"]))
    label = draw(st.text(st.sampled_from("ab-./\0\n.Z"), max_size=5))
    return stamp + draw(st.sampled_from(["Z", "", "z"])) + seq + draw(st.sampled_from(["-", ""])
                                                                    ) + label


@pytest.mark.slow  # command 1 leaves it to the whole suite (ckdn.toml)
@given(st.one_of(run_names(), st.text(max_size=30)))
def test_run_dir_names_are_read_as_their_pattern_reads_them(name: str) -> None:
    match = RUN_NAME.fullmatch(name)
    expected = None if match is None else (match[1], int(match[2] or 0), match[3])
    assert parse_name(name) == expected


@given(st.text(st.sampled_from("aZ09_+.-/ é"), max_size=66))
def test_check_names_are_accepted_as_their_pattern_accepts_them(tmp_path_factory: Any,
                                                                name: str) -> None:
    root = tmp_path_factory.mktemp("names")
    (root / "ckdn.toml").write_text(f'[check.{json.dumps(name)}]\ncommand = "x"\n'
                                    'parser = "generic"\n')
    try:
        accepted = name in load_config(root).checks
    except ConfigError as exc:
        accepted = "invalid check name" not in exc.message
    assert accepted == bool(CHECK_NAME.match(name))
