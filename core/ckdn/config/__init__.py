"""``ckdn.toml``: finding it, reading it strictly, and the frozen values it becomes.

:func:`load_config` finds the file (``--config``, else ``$CKDN_CONFIG``, else
``ckdn.toml`` in the working directory) and validates all of it before anything
runs; :class:`Config` holds the ``[run]`` settings (:class:`RunSettings`), the
atomic checks (:class:`Check`) and the aliases (:class:`Alias`). The starter
file ``ckdn init`` writes is :data:`STARTER`, rendered from :data:`RECIPES`; they
are made on first use (``ckdn run`` never needs them, and they need :mod:`typing`).
"""

from ckdn.config._load import config_path, default_config, load_config
from ckdn.config._values import (
    CONFIG_ENV,
    CONFIG_NAME,
    HOST_SEPARATOR,
    Alias,
    Check,
    Config,
    RunSettings,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config._starter import RECIPES, STARTER, Recipe

__all__ = [
    "CONFIG_ENV",
    "CONFIG_NAME",
    "HOST_SEPARATOR",
    "RECIPES",
    "STARTER",
    "Alias",
    "Check",
    "Config",
    "Recipe",
    "RunSettings",
    "config_path",
    "default_config",
    "load_config",
]


def __getattr__(name: str) -> object:
    """The starter names, made on first use (PEP 562)."""
    if name in ("RECIPES", "STARTER", "Recipe"):
        from ckdn.config import _starter

        return getattr(_starter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
