"""``ckdn.toml``: finding it, reading it strictly, and the frozen values it becomes.

The starter file ``ckdn init`` writes is :mod:`ckdn.config.starter` (``ckdn run`` never
needs it, and it needs :mod:`typing`).
"""

from ckdn.config._load import (
    CONFIG_ENV,
    CONFIG_NAME,
    HOST_SEPARATOR,
    IMPORT_FORMATS,
    Alias,
    Check,
    Config,
    ImportSource,
    RunSettings,
    config_path,
    default_config,
    load_config,
)

__all__ = [
    "CONFIG_ENV",
    "CONFIG_NAME",
    "HOST_SEPARATOR",
    "IMPORT_FORMATS",
    "Alias",
    "Check",
    "Config",
    "ImportSource",
    "RunSettings",
    "config_path",
    "default_config",
    "load_config",
]
