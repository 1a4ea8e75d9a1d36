"""Parser options, for every parser at once: which each takes, and how a bad one is refused.

The conformance kit (test_conformance.py, ``options_are_validated``) holds every
registered parser to refusing an unknown option and a value of the wrong kind;
this file pins the rest once for all of them: the options each parser declares
(a name another parser uses is not silently taken, pylint has no ``fail_under``)
and the words a refusal uses, one line per kind of mistake.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ckdn.parsers import BUILTIN
from ckdn.parsers import get_parser as registered
from ckdn.parsers.base import BaseParser, Option, OptionError


def get_parser(name: str) -> BaseParser:
    parser = registered(name)
    assert isinstance(parser, BaseParser)
    return parser


#: parser -> its options and their kinds (the docs page of each parser lists them).
DECLARED: dict[str, dict[str, str]] = {
    "generic": {},
    "pytest": {"junit": "str", "allow_no_tests": "bool"},
    "coverage": {"junit": "str", "allow_no_tests": "bool", "coverage_xml": "str",
                 "coverage_json": "str", "fail_under": "number", "precision": "int",
                 "missing_lines_preview": "int"},
    "ruff": {"report": "str", "allow_no_files": "bool", "legacy_location": "bool"},
    "ty": {"allow_no_files": "bool"},
    "mypy": {"format": "str"},
    "pyright": {"allow_no_files": "bool"},
    "reformat": {"allow_no_files": "bool"},
    "pip_audit": {"report": "str", "allow_skipped": "bool_or_names",
                  "allow_all_skipped": "bool"},
    "bandit": {"report": "str", "allow_skipped": "bool"},
    "pylint": {"report": "str", "score_fail_under": "number", "allow_skipped": "bool"},
    "sarif": {"report": "str", "fail_levels": "str_list"},
    "pre_commit": {"allow_all_skipped": "bool"},
}


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_parser_declares_exactly_its_documented_options(name: str) -> None:
    parser = get_parser(name)
    assert {key: option.kind for key, option in parser.OPTIONS.items()} == DECLARED[name]


def test_options_with_choices_and_bounds_keep_them() -> None:
    assert get_parser("mypy").OPTIONS["format"].choices == ("text", "json")
    assert get_parser("sarif").OPTIONS["fail_levels"].choices == ("error", "warning", "note",
                                                                    "none")
    fail_under = get_parser("coverage").OPTIONS["fail_under"]
    assert (fail_under.minimum, fail_under.maximum) == (0, 100)
    assert get_parser("coverage").OPTIONS["precision"].minimum == 0


#: (option, value, the refusal's words): one line per kind of mistake.
REFUSALS: list[tuple[Option, Any, str]] = [
    (Option("str"), 1, "option 'x' must be a string, not an integer"),
    (Option("str", choices=("text", "json")), "xml",
     "option 'x' must be one of 'text', 'json', not 'xml'"),
    (Option("bool"), "yes", "option 'x' must be true or false, not a string"),
    (Option("int", minimum=0), 1.5, "option 'x' must be an integer, not a float"),
    (Option("int", minimum=0), -1, "option 'x' must be >= 0, not -1"),
    (Option("int"), True, "option 'x' must be an integer, not a boolean"),
    (Option("number", minimum=0, maximum=100), 101, "option 'x' must be <= 100, not 101"),
    (Option("number"), math.nan, "option 'x' must be a finite number, not nan"),
    (Option("number"), "80", "option 'x' must be a number, not a string"),
    (Option("number"), True, "option 'x' must be a number, not a boolean"),
    (Option("str_list"), "error", "option 'x' must be a list of strings"),
    (Option("str_list", choices=("error",)), ["critical"],
     "option 'x' must be one of 'error', not 'critical'"),
    (Option("bool_or_names"), "yes",
     "option 'x' must be true, false or a list of package names, not a string"),
    (Option("bool_or_names"), ["idna", "not a name"],
     "option 'x' must be true, false or a list of package names, not an array "
     "('not a name' is not a package name)"),
    (Option("bool_or_names"), ["-idna"],
     "option 'x' must be true, false or a list of package names, not an array "
     "('-idna' is not a package name)"),
    (Option("bool_or_names"), [1],
     "option 'x' must be true, false or a list of package names, not an array "
     "(1 is not a package name)"),
]


@pytest.mark.parametrize(("option", "value", "message"), REFUSALS,
                         ids=[message for _, _, message in REFUSALS])
def test_a_bad_option_value_is_refused_in_one_line_naming_it(option: Option, value: Any,
                                                             message: str) -> None:
    with pytest.raises(OptionError) as err:
        option.check("x", value)
    assert (err.value.key, err.value.message) == ("x", message)


def test_an_unknown_option_is_refused_with_the_options_the_parser_takes() -> None:
    takes = r" \(it takes: allow_skipped, report, score_fail_under\)$"
    with pytest.raises(OptionError, match=r"^parser 'pylint' takes no option 'fail_under'" + takes):
        get_parser("pylint").validate_options({"fail_under": 8})
    with pytest.raises(OptionError, match=r"^parser 'generic' takes no option 'report' "
                                          r"\(it takes none\)$"):
        get_parser("generic").validate_options({"report": "x"})


def test_good_values_of_every_kind_are_accepted() -> None:
    get_parser("coverage").validate_options({
        "fail_under": 79.5, "precision": 2, "junit": "j.xml", "coverage_xml": "c.xml",
        "coverage_json": "c.json", "allow_no_tests": False, "missing_lines_preview": 0})
    get_parser("coverage").validate_options({"fail_under": 80})
    get_parser("sarif").validate_options({"fail_levels": ["error", "warning"]})
    get_parser("mypy").validate_options({"format": "json"})
    for allow in (True, False, [], ["idna", "Foo_Bar", "zope.interface", "a", "x-1"]):
        get_parser("pip_audit").validate_options({"allow_skipped": allow})
