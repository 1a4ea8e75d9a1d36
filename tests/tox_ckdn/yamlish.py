"""A reader for the block-style YAML subset GitHub workflows in the docs are written in.

PyYAML is not a dependency of this project, and a workflow only needs a small
part of YAML: block mappings, block sequences (of scalars or mappings), plain,
single- and double-quoted scalars, comments. Anything outside that subset
(flow collections, block scalars, anchors, tags, multi-line plain scalars) is
refused with the line number, so the docs stay within what this checks.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["YamlSubsetError", "load"]

_KEY = re.compile(r"(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*|\"[^\"]*\"|'[^']*'):(?:\s+|$)(?P<rest>.*)")
_UNSUPPORTED = ("{", "[", "|", ">", "&", "*", "!", "%", "@", "`")


class YamlSubsetError(ValueError):
    pass


class _Line:
    def __init__(self, number: int, indent: int, text: str) -> None:
        self.number = number
        self.indent = indent
        self.text = text


def load(text: str) -> Any:
    lines = _lines(text)
    if not lines:
        return None
    value, end = _block(lines, 0, lines[0].indent)
    if end != len(lines):
        raise YamlSubsetError(f"line {lines[end].number}: unexpected indentation")
    return value


def _lines(text: str) -> list[_Line]:
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError(f"line {number}: tab in indentation")
        stripped = _strip_comment(raw).rstrip()
        if stripped.strip():
            out.append(_Line(number, len(stripped) - len(stripped.lstrip()), stripped.strip()))
    return out


def _strip_comment(raw: str) -> str:
    quote = None
    for index, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"" and (index == 0 or raw[index - 1] in " :-"):
            quote = char
        elif char == "#" and (index == 0 or raw[index - 1] == " "):
            return raw[:index]
    return raw


def _block(lines: list[_Line], pos: int, indent: int) -> tuple[Any, int]:
    if lines[pos].text == "-" or lines[pos].text.startswith("- "):
        return _sequence(lines, pos, indent)
    return _mapping(lines, pos, indent)


def _sequence(lines: list[_Line], pos: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    while pos < len(lines) and lines[pos].indent == indent and (
            lines[pos].text == "-" or lines[pos].text.startswith("- ")):
        line = lines[pos]
        rest = line.text[1:].strip()
        if not rest:
            if pos + 1 >= len(lines) or lines[pos + 1].indent <= indent:
                raise YamlSubsetError(f"line {line.number}: empty sequence item")
            value, pos = _block(lines, pos + 1, lines[pos + 1].indent)
        elif _KEY.match(rest):
            inner = line.indent + (len(line.text) - len(rest))
            lines[pos] = _Line(line.number, inner, rest)
            value, pos = _mapping(lines, pos, inner)
        else:
            value, pos = _scalar(rest, line.number), pos + 1
        items.append(value)
    return items, pos


def _mapping(lines: list[_Line], pos: int, indent: int) -> tuple[dict[str, Any], int]:
    mapping: dict[str, Any] = {}
    while pos < len(lines) and lines[pos].indent == indent:
        line = lines[pos]
        match = _KEY.fullmatch(line.text)
        if match is None:
            raise YamlSubsetError(f"line {line.number}: expected 'key: value': {line.text!r}")
        key = _scalar(match["key"], line.number)
        if key in mapping:
            raise YamlSubsetError(f"line {line.number}: duplicate key {key!r}")
        rest = match["rest"]
        pos += 1
        if rest:
            mapping[key] = _scalar(rest, line.number)
        elif pos < len(lines) and (lines[pos].indent > indent or (
                lines[pos].indent == indent and lines[pos].text.startswith("- "))):
            mapping[key], pos = _block(lines, pos, lines[pos].indent)
        else:
            mapping[key] = None
    if pos < len(lines) and lines[pos].indent > indent:
        raise YamlSubsetError(f"line {lines[pos].number}: unexpected indentation")
    return mapping, pos


def _scalar(text: str, number: int) -> Any:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if text.startswith(_UNSUPPORTED) or text.startswith(("'", '"')):
        raise YamlSubsetError(f"line {number}: not in the supported YAML subset: {text!r}")
    if text in ("true", "false"):
        return text == "true"
    if text in ("null", "~"):
        return None
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text
