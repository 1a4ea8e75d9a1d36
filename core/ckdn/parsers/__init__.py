"""The parser registry: built-in names first, then the ``ckdn.parsers`` entry points."""

from __future__ import annotations

import sys

from ckdn.errors import ConfigError, suggest

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.parsers.base import Parser

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "TEST_PARSERS", "get_parser", "known_parsers"]

# Built-ins are named by import path and imported only when a check uses them, so
# ``ckdn run`` pays for exactly the parsers its config names. Entry points are
# discovered only when a configured name is not built in (``importlib.metadata``
# is not cheap), and a built-in name can never be shadowed by a plugin.

ENTRY_POINT_GROUP = "ckdn.parsers"
#: The parsers whose checks write a JUnit report of every test into the run dir
#: (a shard merge and ``ckdn diff`` compare tests by it; their runs record their tree).
TEST_PARSERS = ("pytest", "coverage")

#: name -> "module:Class" of every built-in parser.
BUILTIN: dict[str, str] = {
    "generic": "ckdn.parsers.base:GenericParser",  # the default: no module of its own
    "pytest": "ckdn.parsers.junit:PytestParser",
    "coverage": "ckdn.parsers.coverage_report:CoverageParser",
    "ruff": "ckdn.parsers.ruff_json:RuffParser",
    "ty": "ckdn.parsers.ty_text:TyParser",
    "mypy": "ckdn.parsers.mypy_output:MypyParser",
    "pyright": "ckdn.parsers.pyright_json:PyrightParser",
    "reformat": "ckdn.parsers.reformat:ReformatParser",
    "pip_audit": "ckdn.parsers.pip_audit:PipAuditParser",
    "bandit": "ckdn.parsers.bandit:BanditParser",
    "pylint": "ckdn.parsers.pylint_json2:PylintParser",
    "sarif": "ckdn.parsers.sarif:SarifParser",
    "pre_commit": "ckdn.parsers.pre_commit:PreCommitParser",
}

_cache: dict[str, Parser] = {}


def known_parsers() -> list[str]:
    """Built-in parser names whose module is present (for messages and ``ckdn checks``)."""
    return sorted(name for name in BUILTIN if _builtin_available(name))


def _builtin_available(name: str) -> bool:
    import importlib.util  # here: `ckdn run` never lists the parsers, and it costs every run

    module = BUILTIN[name].partition(":")[0]
    return importlib.util.find_spec(module) is not None


def get_parser(name: str) -> Parser:
    """The parser registered under ``name``; ConfigError when there is none or it fails to load."""
    cached = _cache.get(name)
    if cached is not None:
        return cached
    target = BUILTIN.get(name)
    parser = _load_builtin(name, target) if target else _load_plugin(name)
    _cache[name] = parser
    return parser


def _instantiate(obj: Any) -> Any:
    return obj() if isinstance(obj, type) else obj


def _load_builtin(name: str, target: str) -> Parser:
    module_name, _, attr = target.partition(":")
    try:
        __import__(module_name)  # importlib.import_module, without importing importlib
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise ConfigError(f"parser '{name}' is not available in this version of ckdn") from exc
    module = sys.modules[module_name]
    parser: Parser = _instantiate(getattr(module, attr))
    return parser


def _load_plugin(name: str) -> Parser:
    # Imported here, the registry's one boundary: entry points are read only for a name
    # that is not built in (importlib.metadata costs more than a whole run).
    from importlib.metadata import entry_points

    matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not matches:
        names = sorted(set(BUILTIN) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
        hint = suggest(name, names) or f" (known: {', '.join(names)})"
        raise ConfigError(f"unknown parser '{name}'{hint}")
    ep = matches[0]
    try:
        loaded = _instantiate(ep.load())
    except Exception as exc:  # a plugin's import failure is a config error, never a traceback
        raise ConfigError(
            f"parser plugin '{name}' ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(getattr(loaded, "parse", None)):
        raise ConfigError(f"parser plugin '{name}' ({ep.value}) has no parse(ctx) method")
    parser: Parser = loaded
    return parser
