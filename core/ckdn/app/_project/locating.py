"""Where a long-lived host (``ckdn-mcp``) finds its project: the config and the working
directory, in the CLI's order, written once as data so what a server advertises is what it does.
"""

from __future__ import annotations

import os

from ckdn.config import CONFIG_ENV, CONFIG_NAME, load_config
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ckdn.config import Config

#: The environment variable naming the working directory, as ``--cwd`` does.
CWD_ENV = "CKDN_CWD"

#: ``(how it is shown, where it comes from)``, first found wins: ``flag`` a command-line
#: option, ``env`` an environment variable, ``default`` the fallback.
CONFIG_SOURCES = (("--config", "flag"), (f"${CONFIG_ENV}", "env"),
                  (f"./{CONFIG_NAME} (in the working directory)", "default"))
CWD_SOURCES = (("--cwd", "flag"), (f"${CWD_ENV}", "env"), ("the process's cwd", "default"))


def resolution_order() -> str:
    """One line saying both orders, from the tuples the resolver walks."""
    config = " -> ".join(shown for shown, _ in CONFIG_SOURCES)
    cwd = " -> ".join(shown for shown, _ in CWD_SOURCES)
    return f"config: {config}; working directory: {cwd}"


def _first(sources: tuple[tuple[str, str], ...], flag: str | None, env_value: str | None,
           ) -> tuple[str | None, str]:
    for shown, where in sources:
        if where == "flag" and flag:
            return flag, shown
        if where == "env" and env_value:
            return env_value, shown
    return None, sources[-1][0]


def locate_cwd(flag: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The working directory: ``--cwd``, else ``$CKDN_CWD``, else the process's cwd;
    UsageError (one line) when it is not a directory."""
    env = os.environ if environ is None else environ
    raw, shown = _first(CWD_SOURCES, flag, env.get(CWD_ENV))
    if raw is None:
        return os.getcwd()
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise UsageError(f"{shown} {raw}: not a directory; name the project's directory")
    return path


def locate_config(cwd: str, flag: str | None = None) -> Config:
    """The project's config: ``--config``, else ``$CKDN_CONFIG``, else ``cwd/ckdn.toml``
    (the config room's :func:`~ckdn.config.config_path`, in the order
    :data:`CONFIG_SOURCES` shows; a test holds the two together). The file must exist:
    a server without a config has no checks to offer."""
    return load_config(cwd, flag)
