"""The hardened readers the parsers share, for rooms beside them (the importers) that read
other tools' files with the same guards: streaming XML without DTDs, bounded JSON."""

from __future__ import annotations

from ckdn.parsers._jsonstream import VALUE_CAP, JsonStream, TooLarge
from ckdn.parsers._xml import MAX_DEPTH, TOKEN_CAP, XmlError, XmlReader

__all__ = ["MAX_DEPTH", "TOKEN_CAP", "VALUE_CAP", "JsonStream", "TooLarge", "XmlError",
           "XmlReader"]
