"""Hypothesis strategies for hostile evidence: garbage, torn and damaged real outputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hypothesis import strategies as st

from ckdn.testing._cases import RecordedCase

__all__ = ["contradictions", "exit_codes", "foreign_lines", "garbage", "line_soup", "mutations",
           "truncations", "usage_lines"]

# None of these is a hand-written imitation of a tool's output: garbage is
# generated (any bytes, any text, lines of other tools' real outputs shuffled),
# and damage is done to real recorded outputs (cut short, bytes overwritten,
# inserted or deleted). The one exception is :func:`contradictions` and
# :func:`usage_lines`: the shapes in which the common tools say that something failed
# (pytest's summary, mypy's and ruff's counts, a formatter's verdict) or that they
# refused their command line (argparse's and click's usage line, named for the case's
# own tool), with drawn counts and names, to put beside a clean report. Importing this
# module needs ``hypothesis`` (the ``testing`` extra: ``pip install checkdown[testing]``).

#: Bytes that matter to the formats tools write: JSON and XML punctuation, digits,
#: line ends, escapes, NUL.
_STRUCTURAL = b'{}[]<>"\'\\:,./=-+ \t\r\n0123456789\x00\x1b'


def exit_codes() -> st.SearchStrategy[int]:
    """Exit codes, 0 most of all (the code a false green needs), and the usual failures."""
    return st.one_of(st.just(0), st.sampled_from([1, 2, 3, 4, 5, 16, 32, 101, 123, 124, 130]),
                     st.integers(min_value=-15, max_value=255))


def garbage(max_size: int = 2048) -> st.SearchStrategy[bytes]:
    """Bytes that are nobody's output: arbitrary bytes, arbitrary text, lines of text."""
    line = st.text(st.characters(codec="utf-8"), max_size=120)
    return st.one_of(
        st.binary(max_size=max_size),
        st.text(max_size=max_size // 4).map(lambda text: text.encode("utf-8", "surrogatepass")),
        st.lists(line, max_size=24).map(lambda lines: "\n".join(lines).encode()),
    )


def foreign_lines(cases: Iterable[RecordedCase], limit: int = 4000) -> list[bytes]:
    """The distinct lines of every output of ``cases`` (other tools' logs and reports)."""
    seen: dict[bytes, None] = {}
    for case in cases:
        for data in case.outputs().values():
            for line in data.splitlines():
                if len(seen) < limit:
                    seen.setdefault(line[:2000], None)
    return list(seen)


def line_soup(lines: Sequence[bytes]) -> st.SearchStrategy[bytes]:
    """Logs made of real lines of other tools, in any order and number."""
    if not lines:
        return garbage()
    return st.lists(st.sampled_from(lines), min_size=1, max_size=30).map(
        lambda picked: b"\n".join(picked) + b"\n")


def truncations(data: bytes) -> st.SearchStrategy[bytes]:
    """``data`` cut short: any strict prefix, the empty one included; cuts in the last
    64 bytes (where a verdict or a closing tag is) and at line ends come up often."""
    if not data:
        return st.nothing()
    ends = [index + 1 for index, byte in enumerate(data[:-1]) if byte == 0x0A]
    cuts = st.one_of(st.integers(min_value=0, max_value=len(data) - 1),
                     st.integers(min_value=max(0, len(data) - 64), max_value=len(data) - 1),
                     st.sampled_from(ends) if ends else st.just(0))
    return cuts.map(lambda cut: data[:cut])


def mutations(data: bytes, *, most: int = 5) -> st.SearchStrategy[bytes]:
    """``data`` with 1 to ``most`` bytes overwritten, inserted or deleted."""
    value = st.one_of(st.integers(min_value=0, max_value=255), st.sampled_from(_STRUCTURAL))
    edit = st.tuples(st.sampled_from(["set", "insert", "delete"]), st.floats(0, 1), value)
    return st.lists(edit, min_size=1, max_size=most).map(lambda edits: _apply(data, edits))


def _apply(data: bytes, edits: list[tuple[str, float, int]]) -> bytes:
    damaged = bytearray(data)
    for kind, where, value in edits:
        index = int(where * len(damaged))
        if kind == "insert":
            damaged.insert(index, value)
        elif damaged and kind == "set":
            damaged[min(index, len(damaged) - 1)] = value
        elif damaged:
            del damaged[min(index, len(damaged) - 1)]
    return bytes(damaged)


_WORD = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_COUNT = st.integers(min_value=1, max_value=999)


def _path(word: str) -> str:
    return f"src/{word}.py"


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


def contradictions() -> st.SearchStrategy[bytes]:
    """One line saying a run failed, as pytest, mypy, ruff, black or ruff format say it."""
    shapes = st.one_of(
        st.builds(lambda n, m, eq: (f"{'=' * eq} " if eq else "") + f"{n} failed, {m} passed"
                  f" in 0.{n % 100:02d}s" + (f" {'=' * eq}" if eq else ""),
                  _COUNT, st.integers(0, 999), st.sampled_from([0, 4, 30])),
        st.builds(lambda m, n: f"{m} passed, {n} error{_plural(n)} in 1.20s", st.integers(0, 99),
                  _COUNT),
        st.builds(lambda w, f: f"FAILED tests/test_{w}.py::test_{f} - AssertionError: assert 0",
                  _WORD, _WORD),
        st.builds(lambda n, k: f"Found {n} error{_plural(n)} in {k} file{_plural(k)} (checked"
                  f" {k + 3} source files)", _COUNT, _COUNT),
        st.builds(lambda n: f"Found {n} error{_plural(n)}.", _COUNT),
        st.builds(lambda w, n: f"{_path(w)}:{n}: error: Name \"{w}\" is not defined"
                  "  [name-defined]", _WORD, _COUNT),
        st.builds(lambda w: f"would reformat {_path(w)}", _WORD),
        st.builds(lambda n, m: f"{n} file{_plural(n)} would be reformatted, {m} files would be"
                  " left unchanged.", _COUNT, st.integers(0, 99)),
        st.builds(lambda w: f"Would reformat: {_path(w)}", _WORD),
    )
    return shapes.map(lambda line: line.encode("utf-8"))


def usage_lines(tool: str) -> st.SearchStrategy[bytes]:
    """``tool``'s own refusal of its command line, as argparse or click prints it."""
    name = tool or "tool"
    return st.sampled_from([
        f"usage: {name} [-h] [--version] [options] [FILES ...]\n"
        f"{name}: error: unrecognized arguments: --no-such-flag\n",
        f"usage: {name} [-h] [-v] [-V] [more options; see below]\n",
        f"Usage: {name} [OPTIONS] COMMAND [ARGS]...\nTry '{name} --help' for help.\n\n"
        "Error: No such option: --no-such-flag\n",
    ]).map(lambda text: text.encode("utf-8"))
