"""ckdn._lite.record: records behave as the dataclasses they stand in for."""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import pickle
import textwrap
from pathlib import Path

import pytest

import ckdn
from ckdn._lite import Record, record
from ckdn.config import Check
from ckdn.parsers.base import Finding, ParseContext, ParseResult
from ckdn.reconcile import Exit, Verdict


def assign_order_problems(cls: type[Record]) -> list[str]:
    """Where ``cls.__init__`` hands ``_assign`` a value that is not its own field's.

    Each argument of the ``self._assign(...)`` call must mention the parameter of
    its position (``os.fspath(run_dir)`` is fine in the ``run_dir`` slot) and no
    other parameter. Reads the source (``inspect`` and ``ast``, never on a run's
    path); an ``__init__`` that does not call ``_assign`` has nothing to check.
    """
    init = cls.__dict__.get("__init__")
    if init is None:
        return []
    tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    fields = cls._fields
    problems: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "_assign"):
            continue
        if len(node.args) != len(fields) or node.keywords:
            problems.append(f"{cls.__qualname__}: _assign takes {len(fields)} positional values "
                            f"({', '.join(fields)}), given {len(node.args)}")
            continue
        for field, arg in zip(fields, node.args, strict=True):
            named = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)} & set(fields)
            if named != {field}:
                shown = ", ".join(sorted(named)) or "no field"
                problems.append(f"{cls.__qualname__}: the {field!r} slot of _assign gets {shown}")
    return problems


def test_records_compare_hash_and_show_their_fields() -> None:
    finding = Finding("t::x", "test_failure", "boom", location="t.py:3")
    assert finding == Finding(id="t::x", kind="test_failure", message="boom", location="t.py:3")
    assert finding != Finding("t::x", "test_failure", "boom")
    assert hash(finding) == hash(Finding("t::x", "test_failure", "boom", "t.py:3", ()))
    assert repr(finding) == ("Finding(id='t::x', kind='test_failure', message='boom', "
                             "location='t.py:3', detail=(), detail_omitted=0)")
    assert Verdict("pass", None) != ("pass", None)


def test_a_frozen_record_refuses_changes_as_a_frozen_dataclass_does() -> None:
    exit = Exit(3)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'rc'"):
        exit.rc = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del exit.rc


def test_a_mutable_record_changes_and_is_unhashable() -> None:
    result = ParseResult()
    result.notes.append("x")
    result.parser_ok = False
    assert result == ParseResult(parser_ok=False, notes=["x"])
    assert ParseResult().findings is not ParseResult().findings
    with pytest.raises(TypeError):
        hash(result)


def test_records_work_with_the_dataclasses_functions(tmp_path: Path) -> None:
    ctx = ParseContext(check="c", run_dir=tmp_path, cwd=tmp_path, rc=1)
    assert dataclasses.is_dataclass(ctx)
    assert [f.name for f in dataclasses.fields(ctx)] == [
        "check", "run_dir", "cwd", "rc", "options", "top", "max_snippet_lines", "tap"]
    changed = dataclasses.replace(ctx, options={"format": "json"})
    assert changed.options == {"format": "json"}
    assert changed.rc == 1
    assert dataclasses.asdict(Exit(2, notes=("n",)))["notes"] == ("n",)


def test_records_copy_pickle_and_match_by_position() -> None:
    check = Check("ruff", "ruff check", ("ruff", "check"), "ruff", timeout=9.0)
    assert copy.copy(check) == check
    exit = Exit(124, timed_out=True, notes=("late",))
    assert pickle.loads(pickle.dumps(exit)) == exit
    match Verdict("fail", "exit code 1"):
        case Verdict(status, reason):
            assert (status, reason) == ("fail", "exit code 1")


def test_a_subclass_of_a_record_is_as_frozen_as_its_base() -> None:
    class Collected(ParseResult):
        pass

    class Located(Finding):
        pass

    collected = Collected()
    collected.parser_ok = False
    assert collected.parser_ok is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        Located("i", "k", "m").id = "j"  # type: ignore[misc]


def test_a_record_whose_init_and_slots_differ_is_refused() -> None:
    with pytest.raises(TypeError, match="one slot per parameter"):

        @record
        class Broken(Record):  # pyright: ignore[reportUnusedClass]
            __slots__ = ("a",)
            a: int

            def __init__(self, b: int) -> None:
                self._assign(b)


# -- the positional _assign is checked -----------------------------------------------------


def every_record() -> list[type[Record]]:
    """Every record class ckdn defines (all its modules imported)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(ckdn.__path__, "ckdn."):
        if not info.name.endswith(".__main__"):  # that one runs the program
            importlib.import_module(info.name)
    found: list[type[Record]] = []
    pending = list(Record.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("ckdn.") and "__init__" in cls.__dict__:
            found.append(cls)
    return found


def test_every_record_hands_assign_its_fields_in_order() -> None:
    records = every_record()
    assert {"Exit", "Check", "Config", "ParseContext", "Outcome"} <= {r.__name__ for r in records}
    assert [problem for cls in records for problem in assign_order_problems(cls)] == []


def test_two_swapped_fields_are_caught() -> None:
    @record
    class Pair(Record):  # pyright: ignore[reportUnusedClass]
        __slots__ = ("left", "right")
        left: str
        right: str

        def __init__(self, left: str, right: str) -> None:
            self._assign(right, left)

    assert assign_order_problems(Pair) == [
        "test_two_swapped_fields_are_caught.<locals>.Pair: the 'left' slot of _assign gets right",
        "test_two_swapped_fields_are_caught.<locals>.Pair: the 'right' slot of _assign gets left",
    ]


def test_a_value_made_from_its_own_field_is_fine() -> None:
    @record
    class Paths(Record):  # pyright: ignore[reportUnusedClass]
        __slots__ = ("cwd", "options")
        cwd: str
        options: dict[str, str]

        def __init__(self, cwd: str, options: dict[str, str] | None = None) -> None:
            self._assign(str(cwd).strip(), {} if options is None else options)

    assert assign_order_problems(Paths) == []
