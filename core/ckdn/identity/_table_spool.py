"""The spool of a run whose identities go into a table (a baseline gate, a diff scope), which
also takes a finding as a parser's fields: past the digest's top, no Finding is built.
"""

from __future__ import annotations

from ckdn.identity._findings_file import MAX_TEXT, FindingsSpool
from ckdn.identity._writer import (
    _CODE_KEPT,
    _MESSAGE_KEPT,
    _MESSAGES_KEPT,
    _POSITION_LIMIT,
    _RULES_KEPT,
    _path_escape,
    _quoted,
    _rule_parts,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

    from ckdn.identity._fingerprint import IdentityTable

__all__ = ["TableSpool"]


class TableSpool(FindingsSpool):
    """:class:`~ckdn.identity.FindingsSpool` with :meth:`located`: a finding's line written
    from its fields, the same bytes :meth:`add` writes of the Finding they make."""

    __slots__ = ("_messages", "_quoted_path", "_rules", "_shown")

    def __init__(self, path: str, shown: Callable[[str], str] | None = None) -> None:
        super().__init__(path, shown)
        self._shown = shown
        #: as :class:`~ckdn.identity.FindingsWriter` keeps them: code -> (kind, rule, quoted
        #: kind, code's escape); the last path and its escape; messages as written (bounded)
        self._rules: dict[str, tuple[str, str | None, str, str]] = {}
        self._quoted_path: tuple[str, str | None] = ("", None)
        self._messages: dict[str, str] = {}

    def located(self, table: IdentityTable, path: str, row: int,  # noqa: PLR0917
                col: int, code: str, kind: str, message: str) -> bytes | None:
        """The finding ``path:row:col:code`` of ``kind`` at ``path:row:col`` added to
        ``table`` and spooled; its key, or None (nothing done) for fields the general
        path must take as a Finding (a code or path the id would not give back)."""
        rule = self._rules.get(code)
        if rule is None or rule[0] is not kind:
            rule = self._rule(kind, code)
        seen, escaped = self._quoted_path
        if path != seen:
            escaped = _path_escape(path)
            self._quoted_path = (path, escaped)
        _, ruled, kind_json, code_json = rule
        if ruled is None or escaped is None or type(row) is not int or type(col) is not int \
                or not (0 < row < _POSITION_LIMIT and 0 < col < _POSITION_LIMIT):
            return None
        key = table.located(path, row, ruled, message)
        self.count += 1
        if self._handle is None:
            return key
        message_json = self._messages.get(message)
        if message_json is None:
            message_json = self._message_json(message)
        buffer = self._buffer
        buffer.append(f'","id":"{escaped}:{row}:{col}:{code_json}","kind":{kind_json},'
                      f'"line_hash":"{key[:16].hex()}","location":"{escaped}:{row}:{col}",'
                      f'"message":{message_json}}}')
        if len(buffer) >= 4096:
            self._flush()
        return key

    def _message_json(self, message: str) -> str:
        """The message as the file writes it: redacted, cut, quoted (a short one cached, a
        bounded number of them: a report can vary them all)."""
        messages = self._messages
        shown = message if self._shown is None else self._shown(message)
        message_json = _quoted(shown[:MAX_TEXT])
        if len(message) <= _MESSAGE_KEPT:
            if len(messages) >= _MESSAGES_KEPT:
                messages.clear()
            messages[message] = message_json
        return message_json

    def _rule(self, kind: str, code: str) -> tuple[str, str | None, str, str]:
        rule = _rule_parts(kind, code)
        if len(code) <= _CODE_KEPT:
            rules = self._rules
            if len(rules) >= _RULES_KEPT:
                rules.clear()
            rules[code] = rule
        return rule
