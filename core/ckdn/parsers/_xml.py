"""Hardened, streaming XML reading for report parsers (JUnit, Cobertura)."""

from __future__ import annotations

from xml.parsers import expat

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (or pathlib) at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import NoReturn

__all__ = ["CHUNK", "MAX_DEPTH", "TEXT_CHUNK", "TOKEN_CAP", "XmlError", "XmlReader",
           "is_namespaced", "require_plain_names"]

# Reports come from tools the project runs, which means from code we do not
# trust to be well-behaved: a report could declare entities (an expansion bomb),
# point at external entities (file or network reads), or be gigabytes long. So
# this reader talks to expat directly instead of building a tree:
#
# * any ``<!DOCTYPE`` is refused outright, so no entity can ever be declared,
#   expanded or fetched; parameter-entity parsing is switched off besides;
# * elements are never kept: a subclass sees start/end events and, only while it
#   asks for it, character data in bounded chunks, so memory does not grow with
#   the number of testcases or the size of one failure text;
# * the file is fed in fixed-size chunks, never read whole;
# * what expat must hold whole is bounded: a single token (a start tag with its
#   attributes, a comment, a processing instruction) still unfinished after
#   :data:`TOKEN_CAP` bytes is refused (expat would buffer all of it, and before
#   2.6 rescan it on every chunk: quadratic), and so is nesting deeper than
#   :data:`MAX_DEPTH` elements (expat keeps every open element);
# * a name with a colon (namespaced or mangled) is refused, checked once a chunk over
#   the names expat interned in it, and that table is emptied after each chunk.
#
# Any refusal or well-formedness error surfaces as :class:`XmlError`, which the
# parsers turn into ``parser_ok=False`` with a note.

#: Bytes fed to expat per call.
CHUNK = 1 << 16
#: Largest piece of character data handed to :meth:`XmlReader.on_text` at once.
TEXT_CHUNK = 1 << 16
#: The most bytes of one unfinished token expat may hold (a pytest failure's ``message``
#: attribute quotes an assertion: real ones are far below it).
TOKEN_CAP = 4 * 1024 * 1024
#: The most elements open at once (JUnit nests four or five, Cobertura seven).
MAX_DEPTH = 256


class XmlError(ValueError):
    """The report is not well-formed XML, or uses a feature refused for safety."""


class _Refused(Exception):
    """Raised from inside an expat callback to abort parsing at once."""


def _refuse(what: str) -> NoReturn:
    raise _Refused(what)


def is_namespaced(tag: str, attrs: dict[str, str]) -> bool:
    """Whether an element uses XML namespaces (prefixed name or ``xmlns`` declarations)."""
    if ":" in tag:
        return True
    return any(key == "xmlns" or key.startswith("xmlns:") for key in attrs)


def require_plain_names(tag: str, attrs: dict[str, str]) -> None:
    """Refuse a name a namespace-aware reader (ElementTree) would refuse or read apart.

    Reports are plain XML; a colon in an element or attribute name is either a
    namespace (refused by :func:`is_namespaced` where a parser checks) or a
    mangled name such as ``:ame``, which ElementTree calls not well-formed.
    """
    if ":" in tag:
        _refuse(f"element name {tag[:40]!r} (a colon: namespaced or mangled)")
    for key in attrs:
        if ":" in key:
            _refuse(f"attribute name {key[:40]!r} (a colon: namespaced or mangled)")


class XmlReader:
    """Streams one XML file through expat; subclasses react to events.

    Override :meth:`on_start`, :meth:`on_end` and, if needed, :meth:`on_text`;
    call :meth:`capture_text` to switch character data on only inside the
    elements whose text matters (a report's whitespace between thousands of
    elements then costs nothing).
    """

    #: Element and attribute names with a colon are refused (reports are plain XML); an
    #: importer of other tools' files (Surefire's ``xsi:`` schema attribute) turns it off.
    plain_names = True
    #: A DOCTYPE without an internal subset (it names a DTD, declares nothing) is allowed
    #: and kept in :attr:`doctype`; off for the parsers, which never see one.
    bare_doctype = False
    doctype: tuple[str, str, str] | None = None

    def __init__(self) -> None:
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = TEXT_CHUNK
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._doctype
        parser.EntityDeclHandler = self._entity
        parser.UnparsedEntityDeclHandler = self._unparsed_entity
        parser.ExternalEntityRefHandler = self._external_entity
        parser.ProcessingInstructionHandler = self._instruction
        parser.StartElementHandler = self._first_start
        self._parser = parser
        self._expat_error = expat.ExpatError

    # -- hardening ---------------------------------------------------------------

    def _doctype(self, name: str, system_id: str | None, public_id: str | None,
                 has_internal_subset: int) -> None:
        # An importer may take a bare ``<!DOCTYPE coverage SYSTEM "...dtd">`` (Cobertura's
        # producers write one): it names the DTD and declares nothing; the DTD is never read
        # (parameter entities off, no external entity handler lets one in), and a DOCTYPE
        # with an internal subset (where entities are declared) is refused all the same.
        if self.bare_doctype and not has_internal_subset:
            self.doctype = (name, system_id or "", public_id or "")
            for interned in (name, system_id, public_id):  # not element names: a URL's colon
                self._parser.intern.pop(interned, None)  # type: ignore[arg-type]
            return
        _refuse("a DOCTYPE declaration (DTDs and entities are refused)")

    def _entity(self, *_args: object) -> None:
        _refuse("an entity declaration")

    def _unparsed_entity(self, *_args: object) -> None:
        _refuse("an unparsed entity declaration")

    def _external_entity(self, *_args: object) -> int:
        _refuse("an external entity reference")

    def _instruction(self, target: str, _data: str) -> None:
        # What a namespace-aware reader (ElementTree) refuses too: a mangled
        # declaration such as ``<?:ml version=...?>`` is not a report.
        if ":" in target:
            _refuse(f"processing instruction {target[:40]!r} (a colon is not allowed there)")

    # -- events ------------------------------------------------------------------

    def _first_start(self, tag: str, attrs: dict[str, str]) -> None:
        if self.plain_names:
            require_plain_names(tag, attrs)
        self._parser.StartElementHandler, self._parser.EndElementHandler = self.handlers()
        self.on_root(tag, attrs)
        self.on_start(tag, attrs)

    def handlers(self) -> tuple[Callable[[str, dict[str, str]], None], Callable[[str], None]]:
        """The start and end handlers past the root: the depth guard, then the subclass's
        own (names are checked once a chunk, not here: :meth:`_new_names`).

        A subclass whose files are mostly one element may return its own pair, that element
        handled inline; it keeps the depth guard (:meth:`too_deep` past :data:`MAX_DEPTH`)."""
        on_start, on_end = self.on_start, self.on_end
        depth = 1

        def start(tag: str, attrs: dict[str, str]) -> None:
            nonlocal depth
            depth += 1
            if depth > MAX_DEPTH:
                _refuse(f"elements nested deeper than {MAX_DEPTH}")
            on_start(tag, attrs)

        def end(tag: str) -> None:
            nonlocal depth
            depth -= 1
            on_end(tag)

        return start, end

    def too_deep(self) -> NoReturn:
        """Refuse the element being opened: more than :data:`MAX_DEPTH` are open."""
        _refuse(f"elements nested deeper than {MAX_DEPTH}")

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        """The root element opened (before :meth:`on_start` sees it); raise XmlError to refuse."""

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        """An element opened; ``attrs`` is a fresh dict the reader may keep."""

    def on_end(self, tag: str) -> None:
        """An element closed."""

    def on_text(self, data: str) -> None:
        """Character data while capture is on (at most ``TEXT_CHUNK`` chars a call)."""

    def capture_text(self, on: bool) -> None:
        """Deliver character data to :meth:`on_text` from now on (or stop)."""
        self._parser.CharacterDataHandler = self.on_text if on else None

    def position(self) -> str:
        """``line L, column C`` of the event being handled (1-based line, 0-based column)."""
        return f"line {self._parser.CurrentLineNumber}, column {self._parser.CurrentColumnNumber}"

    # -- driving -----------------------------------------------------------------

    def _new_names(self, fed: int) -> None:
        """Refuse a name with a colon among those of the chunk just parsed, then forget them.

        expat interns every element and attribute name it hands a handler, so its intern
        dict holds each name of the chunk once: one C search a chunk replaces one an event
        (they were a tenth of a read), and clearing it keeps it bounded by a chunk's names
        (a report of a million distinct names no longer holds them all).
        """
        names = self._parser.intern
        if ":" in "".join(filter(None, names)):  # expat interns a missing id as None
            name = next(name for name in names if ":" in name)
            raise XmlError(f"name {name[:40]!r} (a colon: namespaced or mangled) before byte "
                           f"{fed:,}")
        names.clear()

    def read(self, path: Path | str, *, fragment: str | None = None) -> None:
        """Parse ``path`` to the end; :class:`XmlError` when it is not acceptable XML.

        ``fragment``: the file is read as the content of one element of that name (a file
        of several top-level elements, after its XML declaration if it has one).
        ``OSError`` (unreadable file) propagates for the caller to report.
        """
        parser = self._parser
        fed = 0
        try:
            with open(path, "rb") as handle:
                if fragment is not None:
                    head = handle.read(CHUNK)
                    declared = head.find(b"?>") + 2 if head.lstrip().startswith(b"<?xml") else 0
                    parser.Parse(head[:declared] + f"<{fragment}>".encode(), False)
                    parser.Parse(head[declared:], False)
                while chunk := handle.read(CHUNK):
                    parser.Parse(chunk, False)
                    fed += len(chunk)
                    if self.plain_names:
                        self._new_names(fed)
                    # After a call, expat's index is where its unfinished token starts.
                    start = max(parser.CurrentByteIndex, 0)
                    if fed - start > TOKEN_CAP:
                        raise XmlError(f"a single XML token (a tag with its attributes, a "
                                       f"comment) of more than {TOKEN_CAP:,} bytes at byte "
                                       f"{start:,}: too large to read, refused")
                parser.Parse(f"</{fragment}>".encode() if fragment is not None else b"", True)
                if self.plain_names:
                    self._new_names(fed)
        except _Refused as exc:
            raise XmlError(f"{exc} at {self.position()}") from None
        except self._expat_error as exc:
            raise XmlError(str(exc)) from None
        except LookupError as exc:  # an encoding Python has no codec for
            raise XmlError(str(exc)) from None
