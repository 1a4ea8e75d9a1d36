"""What pytest writes inside a JUnit report: node ids, and the text of a failure."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ckdn.parsers.base import Snippet, cap_line

# pytest's JUnit XML names a test by ``classname`` and ``name`` (``xunit1`` adds
# ``file``); :func:`node_id` rebuilds the pytest node id from them, the same id the
# pytest plugin gives. A ``<failure>`` holds pytest's whole failure text;
# :class:`FailureText` streams it and keeps only what a digest shows: the ``E``
# lines, the crash location, and the last line inside the test's own file.

#: ``path:line: rest`` - a traceback entry's location line in pytest's failure
#: text (long style ends with ``path:line: ExcType``; short style ``path:line: in f``).
_LOCATION = re.compile(r"((?:[A-Za-z]:)?[^:\s][^:]*):(\d+):(?: |$)")
#: ``E     File "path", line N`` - where a SyntaxError in collected code points.
_E_FILE = re.compile(r'E\s+File "([^"]+)", line (\d+)')
#: ``  File "path", line N, in name`` - an entry of a Python traceback (INTERNALERROR).
_PY_FILE = re.compile(r'  File "([^"]+)", line (\d+)')
#: ANSI escape sequences, raw or as pytest's visible ``#x1B`` escape of them.
_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-?]*[ -/]*[@-~]")
#: A partial line longer than this is kept cut; every kept line is capped anyway.
_CARRY_CAP = 4096
#: Classnames whose module/class split one report reader remembers at most.
_SPLITS_CAP = 4096


def clean(text: str) -> str:
    return _ANSI.sub("", text)


def first_line(text: str) -> str:
    line, _, _ = text.strip().partition("\n")
    return cap_line(clean(line.rstrip()))


class FailureText:
    """Scans one failure/error text as it streams in, keeping only what a digest shows.

    Keeps the ``E   ...`` lines (at most ``limit``, counting the rest), the last
    traceback location line (the crash location) and the last line number the
    traceback reports inside the test's own file.
    """

    __slots__ = ("carry", "crash", "e_extra", "e_lines", "last_e", "last_plain", "limit",
                 "python_entry", "test_file", "test_line")

    def __init__(self, test_file: str | None, limit: int) -> None:
        self.test_file = test_file
        self.limit = limit
        self.carry = ""
        self.e_lines: list[str] = []
        self.e_extra = 0
        self.last_e = ""
        self.crash: str | None = None
        self.test_line: int | None = None
        #: A Python traceback's (an INTERNALERROR's): its last ``File`` entry, last line.
        self.python_entry: tuple[str, int] | None = None
        self.last_plain = ""

    def feed(self, data: str) -> None:
        lines = (self.carry + data).split("\n")
        carry = lines.pop()
        self.carry = carry if len(carry) <= _CARRY_CAP else carry[:_CARRY_CAP]
        for line in lines:
            self._line(line)

    def close(self) -> None:
        if self.carry:
            self._line(self.carry)
            self.carry = ""

    def _line(self, line: str) -> None:
        if line[:2] == "E " or line == "E":
            line = line.rstrip()
            self.last_e = line
            if self.test_file is not None and line.startswith("E     File "):
                found = _E_FILE.match(line)
                if found is not None and _same_file(found.group(1), self.test_file):
                    self.test_line = int(found.group(2))
            if len(self.e_lines) < self.limit:
                self.e_lines.append(cap_line(clean(line)))
            else:
                self.e_extra += 1
            return
        if not line or line[0].isspace():
            if line.startswith('  File "'):
                found = _PY_FILE.match(line)
                if found is not None:
                    self.python_entry = (found.group(1), int(found.group(2)))
            return
        match = _LOCATION.match(line)
        if match is None:
            self.last_plain = cap_line(clean(line.rstrip()))
            return
        self.crash = line.rstrip()
        if self.test_file is not None and _same_file(match.group(1), self.test_file):
            self.test_line = int(match.group(2))

    def detail(self, max_lines: int, *, crash: bool = True) -> Snippet:
        """E lines then the crash location line (unless not ``crash``: a collection error's
        is inside pytest), at most ``max_lines`` in all, the rest counted."""
        shown = self.crash if crash else None
        if max_lines <= 0:
            return Snippet((), len(self.e_lines) + self.e_extra + (1 if shown else 0))
        lines = list(self.e_lines)
        extra = self.e_extra
        room = max_lines - (1 if shown else 0)
        if len(lines) > room:
            extra += len(lines) - room
            lines = lines[:room]
        if shown:
            lines.append(cap_line(clean(shown)))
        return Snippet(lines[:max_lines], extra)


def _same_file(path: str, test_file: str) -> bool:
    path = path.replace("\\", "/")
    return path == test_file or path.endswith("/" + test_file)


def _looks_like_class(part: str) -> bool:
    return part[:1].isupper()


def node_id(classname: str, name: str, file: str | None, cwd: Path | None = None,
            splits: dict[str, int] | None = None) -> tuple[str, str | None]:
    """The pytest node id of a JUnit testcase, and the test's file (``None`` if unknown).

    pytest writes ``classname`` as the dotted module path plus class names and
    ``name`` as the function name with its parameters. ``xunit1`` also gives the
    ``file``; ``xunit2`` does not, so the module/class boundary is the last run
    of capitalised parts (class names) unless ``cwd`` holds a file that says
    otherwise. A collection error has an empty ``classname`` and the dotted
    module path as ``name``. ``splits`` remembers that answer per ``classname``
    (a caller reading one report passes the same dict for every testcase, so the
    disk is asked once per class, not once per failure).
    """
    parts = classname.split(".") if classname else []
    if not parts:
        path = file or _module_path(name.split("."), cwd, collector=True)
        return path, path
    if file is None and classname == "pytest" and name == "internal":
        return "pytest::internal", None
    if file is not None:
        module = file.removesuffix(".py").replace("\\", "/").split("/")
        classes = _after(parts, module)
        if classes is None:
            classes = _trailing_classes(parts)
        return "::".join([file, *classes, name]), file
    split = splits.get(classname) if splits is not None else None
    if split is None:
        split = _split(parts, cwd, splits)
        if splits is not None:
            if len(splits) >= _SPLITS_CAP:
                splits.clear()
            splits[classname] = split
    path = _module_path(parts[:split], cwd, collector=False)
    return "::".join([path, *parts[split:], name]), path


def _after(parts: list[str], module: list[str]) -> list[str] | None:
    size = len(module)
    for start in range(len(parts) - size + 1):
        if parts[start:start + size] == module:
            return parts[start + size:]
    return None


def _trailing_classes(parts: list[str]) -> list[str]:
    split = len(parts)
    while split > 1 and _looks_like_class(parts[split - 1]):
        split -= 1
    return parts[split:]


def _split(parts: list[str], cwd: Path | None, known: dict[str, int] | None = None) -> int:
    """How many leading ``parts`` name the module (the rest are classes).

    Only findings that are kept get an id, so this looks at the disk at most
    ``top`` times a run.
    """
    guess = len(parts) - len(_trailing_classes(parts))
    if cwd is None or _is_file(cwd, "/".join(parts[:guess]) + ".py", known):
        return guess
    for size in range(len(parts), 0, -1):
        if _is_file(cwd, "/".join(parts[:size]) + ".py", known):
            return size
    return guess


def _is_file(cwd: Path, path: str, known: dict[str, int] | None) -> bool:
    """Whether ``cwd/path`` is a file, remembered in ``known`` (a report's ``splits``, under
    a key no classname has: the classes of one module ask for the same paths)."""
    if known is None:
        return os.path.isfile(os.path.join(cwd, path))
    key = "\0" + path
    found = known.get(key)
    if found is None:
        if len(known) >= _SPLITS_CAP:  # bounded: a report naming a new module per test
            known.clear()
        found = known[key] = int(os.path.isfile(os.path.join(cwd, path)))
    return bool(found)


def _module_path(parts: list[str], cwd: Path | None, *, collector: bool) -> str:
    path = "/".join(parts)
    if collector and cwd is not None and not (cwd / (path + ".py")).is_file() \
            and (cwd / path).is_dir():
        return path
    return path + ".py"
