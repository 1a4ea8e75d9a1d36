"""The door for ``ckdn status``: does each check's latest run hold for the tree now? Apart from
:mod:`ckdn.app.queries` (which exports the same names) because hooks ask it at every stop, and
the rest of the questions cost more to import than the answer does.
"""

from __future__ import annotations

from ckdn.app._stored.freshness import SCHEMA_STATUS, STATES, render_status, status

__all__ = ["SCHEMA_STATUS", "STATES", "render_status", "status"]
