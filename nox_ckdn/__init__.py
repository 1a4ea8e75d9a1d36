"""nox integration for ckdn: every configured check becomes a nox session run through ckdn.

nox has no plugin system, so this is a library the noxfile imports::

    import nox_ckdn

    nox_ckdn.sessions()          # one session per check and alias: nox -t ckdn runs them

and, inside a hand-written session, ``nox_ckdn.run(session, "ruff")`` runs one
check with that session's virtualenv first on ``PATH`` and returns its digest.
ckdn does the running, parsing and reconciling; this package only translates
the session's context and reports the outcome through nox (docs/nox.md).
"""

from __future__ import annotations

from nox_ckdn._register import sessions
from nox_ckdn._run import install, run

__all__ = ["install", "run", "sessions"]
