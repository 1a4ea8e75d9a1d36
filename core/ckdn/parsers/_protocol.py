"""The ``Parser`` protocol, as a :class:`typing.Protocol` (``ckdn.parsers.base.Parser``).

A module of its own because a Protocol needs :mod:`typing`, which ``ckdn run``
never loads: ``ckdn.parsers.base`` imports this only when ``Parser`` is asked for
(and for type checkers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ckdn.parsers.base import ParseContext, ParseResult

__all__ = ["Parser"]


@runtime_checkable
class Parser(Protocol):
    """A parser: a name and a ``parse`` that turns a finished run into facts.

    Optionally it also has ``validate_options(options)``, raising
    :class:`~ckdn.parsers.base.OptionError` for an option it does not take; without
    it, any option is accepted. :class:`~ckdn.parsers.base.BaseParser` gives both.
    """

    @property
    def name(self) -> str: ...

    def parse(self, ctx: ParseContext) -> ParseResult: ...


Parser.__module__ = "ckdn.parsers.base"  # where it is documented and imported from
