"""tox's test harness without devpi-process: imported before ``tox.pytest``, it stands in for
``devpi_process`` where that is not installed.

``tox.pytest`` imports ``devpi_process.IndexServer`` at its top for one fixture,
``pypi_server``, that these tests never use. Installing it brought devpi-server and about
40 more packages into the dev extra, PasteDeploy among them, whose namespace ``.pth``
costs every Python start in the venv about 7 ms (the suite starts about 2,600).
"""

from __future__ import annotations

import importlib.util
import sys
import types

__all__ = ["STAND_IN", "IndexServer"]


class IndexServer:
    """``tox.pytest``'s ``pypi_server`` fixture, refused: no test here starts an index."""

    def __init__(self, *_args: object, **_kwargs: object) -> None:
        raise RuntimeError("tox's pypi_server fixture needs devpi-process, which the dev extra "
                           "does not install; no ckdn test starts a local index")


#: Whether the stand-in is in use (devpi-process is not installed).
STAND_IN = importlib.util.find_spec("devpi_process") is None
if STAND_IN:
    _module = types.ModuleType("devpi_process", __doc__)
    _module.IndexServer = IndexServer  # type: ignore[attr-defined]
    sys.modules.setdefault("devpi_process", _module)
