"""The ``generic`` parser: exit code only. It is defined in :mod:`ckdn.parsers.base`, on
every run's path already (a module of its own cost every run an import); this name stays."""

from __future__ import annotations

from ckdn.parsers.base import GenericParser

__all__ = ["GenericParser"]
