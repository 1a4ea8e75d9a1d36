"""Start-up stand-ins: small pieces that do one stdlib module's job on ``ckdn run``'s path."""

from __future__ import annotations

import errno
import os
import sys
from _operator import attrgetter  # the C module under operator: no operator.py to load

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable, Mapping, Sequence
    from typing import (
        Any,
        ClassVar,
        NoReturn,
        Protocol,
        Self,
        TypeVar,
        dataclass_transform,
        overload,
    )

    R = TypeVar("R", bound="Record")

    class Process(Protocol):
        """What the runner needs of a started child (``Popen`` has it too)."""

        pid: int
        returncode: int | None

        def wait(self) -> int: ...
else:
    import _signal as signal  # the C module `signal` wraps in enums: no enum, functools

    def dataclass_transform(**_options: object) -> object:
        """The decorator is for type checkers only; importing typing for it costs start-up."""
        return lambda function: function


__all__ = ["Record", "Spawned", "canonical", "encoded_size", "read_plain", "record", "rmtree",
           "spawn", "split_command"]

# ``ckdn run`` on a trivial check must cost little more than starting Python, and
# a few stdlib modules cost more to import than the whole run's work. Each
# stand-in here obeys one rule:
#
# 1. it names the stdlib piece it stands in for, and does exactly that piece's
#    job for the inputs it accepts;
# 2. a differential test holds it to that piece on generated input
#    (tests/core/lite/);
# 3. it has a fallback: what it does not handle it hands to the stdlib piece, so
#    the answer (or the error) is always the stdlib's.
#
# =================  ==========================  =======================================
# stand-in           stands in for               falls back to it for
# =================  ==========================  =======================================
# ``record``         ``dataclasses.dataclass``   ``fields``/``replace``/``asdict``
# ``toml``           ``tomllib.loads``           anything beyond plain TOML
# ``canonical``      ``json.dumps`` (canonical)  (the escaper, where ``_json`` is absent)
# ``argv``           ``shlex.split``             a quoted or escaped command
# ``spawn``          ``subprocess.Popen``        another cwd, no ``/proc``, a closed fd
# ``rmtree``         ``shutil.rmtree``           no descriptor-relative removal
# =================  ==========================  =======================================
#
# Nothing here knows a check, a parser or a document; every room may use them.


# -- ``record``: value classes that behave like dataclasses without importing dataclasses

# The stand-in for ``@dataclass(frozen=True, slots=True)`` (differential tests:
# tests/core/lite/test_record.py). No fallback is needed at run time; what a record
# cannot do itself (``dataclasses.fields``, ``replace``, ``asdict``) it hands to
# :mod:`dataclasses` through a dataclass built on demand.
#
# ``import dataclasses`` pulls in :mod:`inspect` (and with it ``ast``, ``dis`` and
# ``tokenize``), and every ``@dataclass`` compiles its methods with ``exec`` when
# its module is imported: together they were most of what ``ckdn run`` cost
# beyond starting Python. A record is a :class:`Record` subclass decorated with
# :func:`record`; it writes its own ``__init__``, whose parameters are its fields
# in order (checked when the class is made: one slot in ``__slots__`` per
# parameter). It gets the rest of a dataclass from here:
#
# * ``==`` field by field between instances of the same class, a ``repr`` of the
#   form ``Name(field=value, ...)``, ``__match_args__``, pickling and copying;
# * frozen by default: assigning or deleting a field raises
#   :class:`dataclasses.FrozenInstanceError` (imported only then) and instances
#   hash by their fields; ``@record(frozen=False)`` is mutable and unhashable;
# * :func:`dataclasses.fields`, :func:`dataclasses.replace`,
#   :func:`dataclasses.asdict` and :func:`copy.replace` keep working:
#   ``__dataclass_fields__`` is built (importing :mod:`dataclasses`) the first
#   time something asks for it. Those fields carry names and types, not defaults.
#   (pytest's field-by-field diff is for generated ``__eq__`` only: a failed
#   comparison of records shows the two reprs instead.)
#
# A subclass without the decorator inherits all of it, fields and frozenness
# included, as a plain subclass of a dataclass does. Type checkers see
# :func:`record` as :func:`dataclasses.dataclass` (:func:`typing.dataclass_transform`),
# so assigning to a field of a frozen record is a type error there too.

_set = object.__setattr__


class _DataclassFields:
    """``__dataclass_fields__``, computed once per class from a dataclass built on demand."""

    def __get__(self, instance: object, owner: type[Record]) -> dict[str, Any]:
        # Imported here: dataclasses costs every run, and only code that introspects a
        # record (dataclasses.fields, replace, asdict) asks for its fields.
        import dataclasses
        import inspect  # dataclasses imports it anyway

        hints: dict[str, Any] = {}
        for klass in reversed(owner.__mro__):
            hints.update(inspect.get_annotations(klass))
        shadow = dataclasses.make_dataclass(
            owner.__name__, [(name, hints.get(name, "Any")) for name in owner._fields])
        fields: dict[str, Any] = getattr(shadow, "__dataclass_fields__")  # noqa: B009
        type.__setattr__(owner, "__dataclass_fields__", fields)
        return fields


def _no_values(obj: object) -> tuple[Any, ...]:
    return ()


class Record:
    """Base of ckdn's value classes; :func:`record` makes a subclass one."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    #: The field values of a record, as a tuple (an ``operator.attrgetter``, set by record).
    _values_of: ClassVar[Callable[[Any], tuple[Any, ...]]] = staticmethod(_no_values)
    __dataclass_fields__: ClassVar[Any] = _DataclassFields()

    def _assign(self, *values: object) -> None:
        """Set every field, in ``__init__`` parameter order (how a frozen record stores them).

        Positional on purpose (it is on every run's path); two swapped arguments
        would still type-check when the fields share a type, so
        :func:`assign_order_problems` reads every ``__init__`` and the test suite
        runs it over every record.
        """
        for name, value in zip(self._fields, values, strict=True):
            _set(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return self.__class__._values_of(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in self._fields])
        return f"{self.__class__.__qualname__}({shown})"

    def __getstate__(self) -> tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._assign(*state)

    def __replace__(self, **changes: Any) -> Self:
        return self.__class__(**{**dict(zip(self._fields, self._values(), strict=True)),
                                 **changes})


if TYPE_CHECKING:

    @overload
    def record(cls: type[R], /) -> type[R]: ...

    @overload
    def record(*, frozen: bool = True) -> Callable[[type[R]], type[R]]: ...


@dataclass_transform(frozen_default=True)
def record(cls: type[R] | None = None, /, *, frozen: bool = True
           ) -> type[R] | Callable[[type[R]], type[R]]:
    """Make a :class:`Record` subclass a record: ``@record`` or ``@record(frozen=False)``."""

    def make(cls: type[R]) -> type[R]:
        code = cls.__dict__["__init__"].__code__
        # The fields are the __init__ parameters, in their order, as a dataclass's are.
        fields = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
        slots: set[str] = set()
        for klass in cls.__mro__:
            names = klass.__dict__.get("__slots__", ())
            slots.update((names,) if isinstance(names, str) else names)
        if slots != set(fields):
            raise TypeError(f"{cls.__qualname__}: __init__ takes {fields}, but __slots__ "
                            f"are {sorted(slots)}; one slot per parameter")
        cls._fields = fields
        if len(fields) > 1:  # one name would give the value itself, not a tuple
            cls._values_of = staticmethod(attrgetter(*fields))
        else:
            cls._values_of = staticmethod(lambda obj: tuple(getattr(obj, n) for n in fields))
        type.__setattr__(cls, "__match_args__", fields)
        if frozen:
            type.__setattr__(cls, "__setattr__", _frozen_setattr)
            type.__setattr__(cls, "__delattr__", _frozen_delattr)
        else:
            type.__setattr__(cls, "__hash__", None)
        return cls

    return make if cls is None else make(cls)


def _frozen_setattr(self: Record, name: str, value: object) -> None:
    _refuse(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Record, name: str) -> None:
    _refuse(f"cannot delete field {name!r}")


def _refuse(message: str) -> NoReturn:
    """Raise dataclasses' own error, as a frozen dataclass would."""
    from dataclasses import FrozenInstanceError  # here: dataclasses costs every run

    raise FrozenInstanceError(message)


# -- ``toml``: plain TOML, what nearly every ``ckdn.toml`` is made of, without tomllib

# Importing ``tomllib`` also imports ``typing``, ``string`` and ``datetime`` and
# compiles its regular expressions: a fifth of what ``ckdn run`` cost on a trivial
# check. A ``ckdn.toml`` is plain: ``[table]`` headers and one-line ``key = value``
# pairs whose values are strings, integers, decimals, booleans, and one-line arrays
# and inline tables of those. :func:`read_plain` reads exactly that and returns
# None for anything else (a multi-line or escaped string, a dotted or quoted key on
# the left of ``=``, a date, an exponent, ``inf``, hex, an underscore in a number, a
# key or table defined twice, a malformed line...). The caller then hands the text
# to tomllib, whose answer, a value or an error, is the one that counts.
#
# So what is read here is what tomllib reads, and every error message about a
# config file is tomllib's: the stand-in for :func:`tomllib.loads`, with tomllib as
# its fallback; tests/core/lite/test_toml.py holds the two readers to each other on
# generated documents.

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
_WS = " \t"
#: Where a bare value (number, boolean) ends.
_VALUE_END = frozenset(" \t,]}#")


class _NotPlain(Exception):
    """The text is outside the plain subset (or not TOML at all): tomllib decides."""


def read_plain(text: str) -> dict[str, Any] | None:
    """The document tomllib would return for ``text``, or None when ``text`` is not plain."""
    try:
        return _Reader().document(text)
    except _NotPlain:
        return None


class _Reader:
    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        self.headers: set[tuple[str, ...]] = set()  # tables declared by a [header]
        self.inline: set[int] = set()  # ids of inline tables, which no header may extend

    def document(self, text: str) -> dict[str, Any]:
        table = self.root
        lines = text.split("\n")
        last = len(lines) - 1
        for number, line in enumerate(lines):
            if number < last and line.endswith("\r"):
                line = line[:-1]  # CRLF; a lone CR stays, and is refused below
            if not line.isprintable() and not line.replace("\t", "").isprintable():
                raise _NotPlain  # control characters: TOML allows none outside CRLF and tab
            i = _skip_ws(line, 0)
            if i == len(line) or line[i] == "#":
                continue
            if line[i] == "[":
                table, i = self.header(line, i)
            else:
                i = self.pair(line, i, table)
            _line_end(line, i)
        return self.root

    def header(self, line: str, i: int) -> tuple[dict[str, Any], int]:
        if line.startswith("[[", i):
            raise _NotPlain  # an array of tables
        path: list[str] = []
        i += 1
        while True:
            key, i = _key(line, _skip_ws(line, i), quoted=True)
            path.append(key)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ".":
                i += 1
                continue
            if i < len(line) and line[i] == "]":
                break
            raise _NotPlain
        declared = tuple(path)
        if declared in self.headers:
            raise _NotPlain
        self.headers.add(declared)
        table = self.root
        for key in path:
            child = table.setdefault(key, {})
            if not isinstance(child, dict) or id(child) in self.inline:
                raise _NotPlain
            table = child
        return table, i + 1

    def pair(self, line: str, i: int, table: dict[str, Any]) -> int:
        key, i = _key(line, i, quoted=False)
        i = _skip_ws(line, i)
        if i == len(line) or line[i] != "=":
            raise _NotPlain
        value, i = self.value(line, _skip_ws(line, i + 1), nested=True)
        if key in table:
            raise _NotPlain
        table[key] = value
        return i

    def value(self, line: str, i: int, *, nested: bool) -> tuple[Any, int]:
        """One value; ``nested`` allows an array or inline table (of scalars) here."""
        if i == len(line):
            raise _NotPlain
        first = line[i]
        if first in "\"'":
            return _string(line, i)
        if first == "[" and nested:
            return self.array(line, i + 1)
        if first == "{" and nested:
            return self.inline_table(line, i + 1)
        end = i
        while end < len(line) and line[end] not in _VALUE_END:
            end += 1
        return _scalar(line[i:end]), end

    def array(self, line: str, i: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        while True:
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == "]":
                return items, i + 1
            item, i = self.value(line, i, nested=False)
            items.append(item)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ",":
                i += 1
            elif i < len(line) and line[i] == "]":
                return items, i + 1
            else:
                raise _NotPlain  # the array goes on past this line, or is malformed

    def inline_table(self, line: str, i: int) -> tuple[dict[str, Any], int]:
        table: dict[str, Any] = {}
        self.inline.add(id(table))
        i = _skip_ws(line, i)
        if i < len(line) and line[i] == "}":
            return table, i + 1
        while True:
            key, i = _key(line, i, quoted=False)
            i = _skip_ws(line, i)
            if i == len(line) or line[i] != "=" or key in table:
                raise _NotPlain
            table[key], i = self.value(line, _skip_ws(line, i + 1), nested=False)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ",":
                i = _skip_ws(line, i + 1)  # a comma before "}" is an error for tomllib
            elif i < len(line) and line[i] == "}":
                return table, i + 1
            else:
                raise _NotPlain


def _skip_ws(line: str, i: int) -> int:
    while i < len(line) and line[i] in _WS:
        i += 1
    return i


def _line_end(line: str, i: int) -> None:
    i = _skip_ws(line, i)
    if i < len(line) and line[i] != "#":
        raise _NotPlain


def _key(line: str, i: int, *, quoted: bool) -> tuple[str, int]:
    """A bare key, or with ``quoted`` also a quoted one without escapes."""
    if quoted and i < len(line) and line[i] in "\"'":
        return _string(line, i)
    end = i
    while end < len(line) and line[end] in _BARE:
        end += 1
    if end == i:
        raise _NotPlain
    return line[i:end], end


def _string(line: str, i: int) -> tuple[str, int]:
    """A one-line basic string without escapes, or a one-line literal string."""
    quote = line[i]
    if line.startswith(quote * 3, i):
        raise _NotPlain  # multi-line
    end = line.find(quote, i + 1)
    if end < 0:
        raise _NotPlain
    text = line[i + 1:end]
    if quote == '"' and "\\" in text:
        raise _NotPlain  # escapes
    return text, end + 1


def _scalar(word: str) -> bool | int | float:
    """``true``, ``false``, a decimal integer, or a decimal with a fraction and no exponent."""
    if word == "true":
        return True
    if word == "false":
        return False
    body = word[1:] if word[:1] in ("+", "-") else word
    whole, dot, fraction = body.partition(".")
    if (not whole or not _DIGITS.issuperset(whole) or (len(whole) > 1 and whole[0] == "0")
            or (dot and (not fraction or not _DIGITS.issuperset(fraction)))):
        raise _NotPlain
    try:
        return float(word) if dot else int(word)
    except ValueError:  # more digits than int() converts
        raise _NotPlain from None


# -- ``canonical``: canonical JSON bytes without json, the stand-in for ``json.dumps``
# Stands in for ``json.dumps(value, sort_keys=True, separators=(",", ":"),
# ensure_ascii=False, allow_nan=False)``, encoded to UTF-8, and gives its bytes
# exactly (pinned by a differential property test in tests/core/lite/test_canonical.py).
# Why not json itself: importing it loads its decoder and scanner, about a tenth of
# a trivial ``ckdn run``, which only writes. Strings, the bulk of every document,
# go through the same C escaper ``json`` uses (``_json.encode_basestring``); where
# it is missing, the fallback is json.encoder's own Python escaper. A string with
# nothing to escape (printable, no quote, no backslash: nearly every one a green run
# writes) is quoted as it is, so ``_json``, a shared library, is not loaded before
# the check's command starts (``ckdn run`` loads it while the command runs).
#
# Lone surrogates (which the document builders already replace) become ``?``
# rather than an exception: writing evidence must not fail on one odd character.


_INF = float("inf")


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON bytes: sorted keys, no spaces, UTF-8, no trailing newline."""
    parts: list[str] = []
    _emit(value, parts.append)
    return "".join(parts).encode("utf-8", "replace")


def encoded_size(value: Any) -> int:
    """How many bytes :func:`canonical` makes of ``value``."""
    return len(canonical(value))


def _quote(text: str) -> str:
    """``text`` as a JSON string, as ``json.dumps(ensure_ascii=False)`` writes it."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'  # what the escaper gives for it, without loading it
    return _escaper()(text)


#: json's C escaper once loaded (json.encoder's Python one where ``_json`` is missing).
_escapers: list[Callable[[str], str]] = []


def _escaper() -> Callable[[str], str]:
    if not _escapers:
        try:
            from _json import encode_basestring as found  # here: a string that needs it
        except ImportError:  # pragma: no cover - CPython always has _json
            from json.encoder import encode_basestring as found  # its Python twin
        _escapers.append(found)
    return _escapers[0]


def _emit(value: Any, out: Callable[[str], object]) -> None:
    if isinstance(value, str):
        out(_quote(value))
    elif value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif isinstance(value, int):
        out(int.__repr__(value))
    elif isinstance(value, float):
        if not -_INF < value < _INF:  # NaN compares false too
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        out(float.__repr__(value))
    elif isinstance(value, dict):
        out("{")
        for index, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out(("," if index else "") + _quote(key) + ":")
            _emit(value[key], out)
        out("}")
    elif isinstance(value, list | tuple):
        out("[")
        for index, item in enumerate(value):
            if index:
                out(",")
            _emit(item, out)
        out("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# -- ``argv``: a check's ``command`` string split into argv without shlex (it imports re)
# A command with a quote or a backslash goes to shlex itself; tests/core/lite/test_argv.py
# holds the two equal on generated input.

#: What shlex treats specially in a posix split: quotes and the escape.
_SHLEX_SPECIAL = frozenset("'\"\\")
#: shlex's whitespace in posix mode (not str.split's: no \x0b, \x0c, \x1c-\x1f, ...).
_SHLEX_SPACE = " \t\r\n"


def split_command(command: str) -> list[str]:
    """``shlex.split(command)``: read here when nothing in it is quoted or escaped.

    Raises ``ValueError`` as shlex does (an unclosed quote, a trailing backslash).
    """
    if _SHLEX_SPECIAL.isdisjoint(command):
        for space in _SHLEX_SPACE[1:]:
            command = command.replace(space, " ")
        return [word for word in command.split(" ") if word]
    import shlex  # here, the fallback: only a command with quotes or backslashes needs it

    return shlex.split(command, posix=True)


# -- ``spawn``: a check's command started by ``posix_spawn`` where it can do the whole job

# The stand-in for :class:`subprocess.Popen` (differential tests:
# tests/core/lite/test_spawn.py, and every runner test runs through both paths by the
# ``spawn_path`` fixture); the fallback is ``Popen`` itself.
#
# Why not always :class:`subprocess.Popen`: importing :mod:`subprocess` pulls in
# threading, selectors and locale, about a sixth of what a trivial ``ckdn run``
# costs (bench/bench_startup.py). :func:`os.posix_spawn` is in the interpreter
# already, and with ``setsid`` and file actions it starts the child exactly as
# the runner asks ``Popen`` to:
#
# * its own session (``start_new_session=True``);
# * stdin from ``/dev/null``, stdout and stderr into the log;
# * no other descriptor inherited (``close_fds=True``): every inheritable one
#   listed in ``/proc/self/fd`` gets a close action;
# * SIGPIPE and SIGXFSZ back to their defaults, which Python ignores and exec
#   would keep ignored (``restore_signals=True``);
# * the program looked up on the ``PATH`` of the *child's* environment, trying
#   each directory in turn and reporting a permission error in preference to
#   "not found", as ``Popen`` does.
#
# One difference is glibc's and cannot be undone from here: its ``posix_spawn``
# leaves the two signals it reserves for itself (32 and 33, below ``SIGRTMIN``)
# ignored in the child, as it does for every program that spawns through it (Rust's
# ``Command``, Python's own ``subprocess`` in its ``posix_spawn`` mode). Programs
# built on glibc cannot use those signals anyway.
#
# ``posix_spawn`` cannot change directory (``posix_spawn_file_actions_addchdir``
# is not exposed before Python 3.13), so a child that runs elsewhere than ckdn's
# own directory, and any platform without ``/proc/self/fd``, goes through
# ``Popen``. Both paths raise the same :class:`OSError` subclasses with the same
# ``filename`` when nothing could be started.
#
# On Linux the child dies with ckdn (``PR_SET_PDEATHSIG``, SIGKILL) on every path:
# ``Popen`` runs ``prctl`` in the child between fork and exec while ckdn has one
# thread (Python code between fork and exec is unsafe with more); ``posix_spawn``
# runs no code of ours in the child, so there (and on ``Popen`` with threads) the
# child is started through util-linux's ``setpriv --pdeathsig KILL``, an exec
# trampoline that sets the signal and execs the program, found once per process
# (:func:`trampoline`; bench/bench_runner.py measures what it adds). The program is
# looked up first, as without it, so a missing or refused program still raises
# the same error. The signal reaches the child only; what it starts in a session
# of its own is stopped by the check's next run or ``ckdn gc``
# (``ckdn.process.stop_left_running``).

_Action = tuple[int | str, ...]  # one posix_spawn file action
_PR_SET_PDEATHSIG = 1

#: Where util-linux's ``setpriv`` may be; None: look (:func:`trampoline`), "": none.
_TRAMPOLINE_PLACES = ("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv")
_trampoline: str | None = None
#: Replaced by tests to exercise the ``Popen`` path in the current directory.
_use_posix_spawn = hasattr(os, "posix_spawn") and os.path.isdir("/proc/self/fd")
#: Python ignores these; a child would keep them ignored across exec.
_RESET_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))


class Spawned:
    """A child started by ``posix_spawn``: the part of ``Popen``'s interface the runner uses."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        """Reap the child; like ``Popen``, a signal death is ``-signum``."""
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                status = 0  # reaped elsewhere (a SIGCHLD handler of the host): as Popen does
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def spawn(args: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str],
          log_fd: int) -> Process:
    """Start ``args`` in ``cwd`` with ``log_fd`` as stdout and stderr, in a session of its own.

    Raises :class:`OSError` when the command could not be started.
    """
    if _use_posix_spawn and _is_current_dir(cwd):
        actions = _file_actions(log_fd)
        if actions is not None:
            try:
                return Spawned(_posix_spawn(args, env, actions))
            except OSError as error:
                if error.errno != errno.EBADF:  # a host thread closed a listed fd: Popen below
                    raise
    import subprocess  # here, the fallback: what the stand-in does not handle (docstring)

    dying = _dying_with_us()
    wrapper = trampoline() if dying is None else ""
    if wrapper:
        program = _found(args[0], env, os.fspath(cwd))
        if program is not None:
            args = [wrapper, *_PDEATHSIG, program, *args[1:]]
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=log_fd,
        stderr=log_fd,
        start_new_session=True,
        preexec_fn=dying,  # noqa: PLW1509 - only while ckdn has one thread
    )


#: What ``setpriv`` is told before the program: SIGKILL the program when ckdn dies.
_PDEATHSIG = ("--pdeathsig", "KILL", "--")


def trampoline() -> str:
    """util-linux's ``setpriv`` if this system has one (Linux), else "": looked up once."""
    global _trampoline  # noqa: PLW0603 - one answer per process
    if _trampoline is None:
        _trampoline = next((place for place in _TRAMPOLINE_PLACES
                            if os.access(place, os.X_OK)), "")
    return _trampoline


def _found(program: str, env: Mapping[str, str], cwd: str) -> str | None:
    """What to give the trampoline for ``program``: as named when it has a directory part
    (relative to ``cwd``, where the child starts), else the file exec would find on the
    child's ``PATH``; only a regular file we may execute (else None: started directly,
    so the error is exec's own)."""
    if os.path.dirname(program):
        return program if _executable_file(os.path.join(cwd, program)) else None
    for folder in _exec_path(env):
        path = os.path.join(folder, program)
        if os.path.exists(path):
            return path if _executable_file(path) else None  # else exec says why
    return None


def _dying_with_us() -> Callable[[], None] | None:
    """What the ``Popen`` child runs before exec on Linux: SIGKILL it when ckdn dies."""
    try:
        if os.listdir("/proc/self/task") != [str(os.getpid())]:
            return None  # another thread may hold a lock the child would then wait for
        import ctypes  # here: the Popen fallback only, which imports subprocess anyway

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, ImportError, AttributeError):  # not Linux
        return None
    prctl.argtypes = (ctypes.c_int, *[ctypes.c_ulong] * 4)
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # ckdn died before the line above: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return die_with_parent


def _is_current_dir(cwd: str | os.PathLike[str]) -> bool:
    where = os.fspath(cwd)
    try:
        if where == os.getcwd():
            return True
        here, there = os.stat("."), os.stat(where)
    except OSError:
        return False  # Popen reports what is wrong with it
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _file_actions(log_fd: int) -> list[_Action] | None:
    """Close every other inheritable descriptor, then wire stdin, stdout and stderr."""
    try:
        listed = os.listdir("/proc/self/fd")
    except OSError:
        return None
    actions: list[_Action] = []
    for name in listed:
        fd = int(name)
        if fd <= 2:
            continue
        try:
            inheritable = os.get_inheritable(fd)
        except OSError:
            continue  # the descriptor listdir itself used, closed by now
        if inheritable:
            actions.append((os.POSIX_SPAWN_CLOSE, fd))
    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    actions.append((os.POSIX_SPAWN_DUP2, log_fd, 1))
    actions.append((os.POSIX_SPAWN_DUP2, log_fd, 2))
    return actions


def _exec_path(env: Mapping[str, str]) -> list[str]:
    """``os.get_exec_path(env)`` for a str environment, without the :mod:`warnings`
    import it makes on every call (about a tenth of a millisecond of every run)."""
    path = env.get("PATH")
    return (os.defpath if path is None else path).split(os.pathsep)


def _posix_spawn(args: Sequence[str], env: Mapping[str, str],
                 actions: list[_Action]) -> int:
    """Spawn, searching the child's ``PATH`` the way ``Popen`` does; the pid."""
    program = args[0]
    if os.path.dirname(program):
        candidates = [program]
    else:
        candidates = [os.path.join(folder, program) for folder in _exec_path(env)]
    first_refusal: OSError | None = None
    last: OSError = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    for path in candidates:
        try:
            os.stat(path)  # a cheap look first: most PATH entries do not have it
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
            continue
        except OSError:
            pass  # let exec say what is wrong
        wrapper = trampoline()
        try:
            if wrapper and _executable_file(path):  # dies with ckdn (the notes at the top)
                return os.posix_spawn(wrapper, [wrapper, *_PDEATHSIG, path, *args[1:]], env,
                                      file_actions=actions, setsid=True,
                                      setsigdef=_RESET_SIGNALS)
            return os.posix_spawn(path, list(args), env, file_actions=actions, setsid=True,
                                  setsigdef=_RESET_SIGNALS)
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
        except OSError as error:
            if error.errno == errno.EBADF:
                raise
            last = error
            first_refusal = first_refusal or error
    failure = first_refusal or last
    raise type(failure)(failure.errno, failure.strerror, program)


def _executable_file(path: str) -> bool:
    """A regular file we may execute that the kernel can (an ELF binary, or a ``#!`` script
    whose interpreter is there): the trampoline would exec it; anything else is started
    directly, so a failure is exec's own error (rc 126/127, never started)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return False
        head = os.read(fd, 256)
    except OSError:
        return False
    finally:
        os.close(fd)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].split()
        if not words or not os.access(os.fsdecode(words[0]), os.X_OK):
            return False
    elif not head.startswith(b"\x7fELF"):
        return False
    return os.access(path, os.X_OK)


# -- ``rmtree``: a pruned run dir removed without ever following a symlink out of it

# The stand-in for :func:`shutil.rmtree` (differential tests:
# tests/core/lite/test_rmtree.py); the fallback is ``shutil.rmtree`` itself where
# descriptor-relative removal is not supported.
#
# Pruning deletes evidence, so it must delete only what is inside the run
# directory: the tree is walked by directory descriptor with ``O_NOFOLLOW``, and a
# symlink is unlinked, never entered. Every run that reaches ``keep`` prunes one
# run dir, and ``shutil`` loads zlib, bz2 and lzma: so the walk is written here.


#: Opens a directory and never a symlink to one; what the tree removal walks with.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Removal by directory descriptor, as shutil.rmtree does where it can (Linux, macOS).
_FD_REMOVAL = ({os.open, os.unlink, os.rmdir} <= os.supports_dir_fd
               and os.scandir in os.supports_fd)


def rmtree(path: str) -> None:
    """Remove a tree that a concurrent prune may be removing too.

    Every run prunes one, so this walks the tree itself rather than import
    :mod:`shutil` (which loads zlib, bz2 and lzma): by directory descriptor,
    never following a symlink out of the tree, like ``shutil.rmtree``. An entry
    that is already gone is not an error; any other failure raises ``OSError``.
    """
    if not _FD_REMOVAL:
        _rmtree_shutil(path)
        return
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return
    try:
        _clear_dir(fd)
    finally:
        os.close(fd)
    try:  # noqa: SIM105 - `ckdn run` does not import contextlib
        os.rmdir(path)
    except FileNotFoundError:
        pass


def _clear_dir(dir_fd: int) -> None:
    with os.scandir(dir_fd) as listing:
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
    for name, is_dir in entries:
        if not is_dir:
            try:  # noqa: SIM105 - `ckdn run` does not import contextlib
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            continue
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            continue
        try:
            _clear_dir(fd)
        finally:
            os.close(fd)
        try:  # noqa: SIM105 - `ckdn run` does not import contextlib
            os.rmdir(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass


def _rmtree_shutil(path: str) -> None:
    import shutil  # here, the fallback: only without descriptor-relative removal

    if sys.version_info >= (3, 12):

        def onexc(func: Callable[..., object], name: str, exc: BaseException) -> None:
            if not isinstance(exc, FileNotFoundError):
                raise exc

        shutil.rmtree(path, onexc=onexc)
    else:

        def onerror(func: Callable[..., object], name: str, info: tuple[object, ...]) -> None:
            exc = info[1]
            if not isinstance(exc, FileNotFoundError):
                assert isinstance(exc, BaseException)
                raise exc

        shutil.rmtree(path, onerror=onerror)
