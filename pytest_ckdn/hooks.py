"""Hooks the ckdn pytest plugin offers other plugins (added through ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin like any pytest hook. Both are
called only in a session that records a digest (``--ckdn-digest`` or
``ckdn_digest = true``), only in the controlling process under pytest-xdist,
and after pytest's final exit status is known (in ``pytest_unconfigure``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ckdn.app import ParseResult
    from ckdn.app.types import Digest

__all__ = ["pytest_ckdn_collect", "pytest_ckdn_digest"]


@pytest.hookspec
def pytest_ckdn_collect(result: ParseResult, config: pytest.Config) -> None:
    """Add to the session's facts before they are sealed.

    ``result`` is the :class:`ckdn.app.ParseResult` built from the
    session's hooks; an implementation may append to ``result.notes``,
    ``result.gate_failures`` (a failed gate turns exit code 0 into ``fail``) or
    add keys to ``result.summary``. Findings are pytest's to report: do not
    remove them. Under ``ckdn run`` this is what goes into the evidence file.
    """


@pytest.hookspec
def pytest_ckdn_digest(digest: Digest, config: pytest.Config) -> None:
    """See the finished ``ckdn.digest/2`` document, after it was written to disk.

    ``digest`` is the document as stored in ``digest.json`` (treat it as
    read-only). Not called under ``ckdn run``: there the outer run writes the
    digest.
    """
