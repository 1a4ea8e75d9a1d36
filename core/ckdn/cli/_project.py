"""Which project a verb works on: ``--cwd`` and ``--config`` (or their variables) read once.

Every verb but ``schema`` starts here, so a mistake in either option is worded
the same way whichever verb was asked for.
"""

from __future__ import annotations

import os

from ckdn.app import load_config as load
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from types import SimpleNamespace

    from ckdn.app import Config

__all__ = ["GLOBAL_OPTIONS", "load_config", "project_dir", "require_baseline"]

#: Options every verb takes, with a value; ``--config=PATH`` works too (the verbs read
#: without argparse, ``run`` and ``import``, read them so).
GLOBAL_OPTIONS = ("--config", "--cwd")


def project_dir(args: SimpleNamespace) -> str:
    """``--cwd``, else ``$CKDN_CWD``, else the current directory: where checks run."""
    raw = getattr(args, "cwd", None) or os.environ.get("CKDN_CWD") or os.getcwd()
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise UsageError(f"--cwd {raw}: not a directory")
    return path


def load_config(args: SimpleNamespace, *, required: bool = True) -> Config:
    """The project's config (``required=False``: the defaults when there is no file)."""
    return load(project_dir(args), getattr(args, "config", None), required=required)


def require_baseline(config: Config) -> None:
    """``--gate`` judges by the baseline gate, which needs a baseline to judge by."""
    if config.run.baseline is None:
        raise UsageError("--gate needs a baseline: set baseline under [run] in ckdn.toml")
