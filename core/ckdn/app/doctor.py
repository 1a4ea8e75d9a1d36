"""The door for ``ckdn doctor``: is this installation the program it claims to be, and would
the configured checks run as their author thinks? Nothing runs; only doctor pays for it.
"""

from __future__ import annotations

from ckdn.app._install.diagnose import (
    OTHER_DISTRIBUTION,
    diagnose,
    doctor_lines,
    installation_problems,
    installed,
)

__all__ = ["OTHER_DISTRIBUTION", "diagnose", "doctor_lines", "installation_problems",
           "installed"]
