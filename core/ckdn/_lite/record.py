"""Value classes that behave like dataclasses without importing :mod:`dataclasses`."""

from __future__ import annotations

import operator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, NoReturn, Self, TypeVar, dataclass_transform, overload

    R = TypeVar("R", bound="Record")
else:

    def dataclass_transform(**_options: object) -> object:
        """The decorator is for type checkers only; importing typing for it costs start-up."""
        return lambda function: function


__all__ = ["Record", "record"]

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
            cls._values_of = staticmethod(operator.attrgetter(*fields))
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
