"""A package's names loaded when first asked for (PEP 562), from the module each lives in.

A domain room's ``__init__`` names everything it offers, but a passing run must not
pay for hashing, patterns or git it never uses: the package maps each name to its
home module and hands :func:`lazy_names`'s function to ``__getattr__``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_names"]


def lazy_names(package: str, homes: Mapping[str, str],
               namespace: MutableMapping[str, object]) -> Callable[[str], object]:
    """The ``__getattr__`` of ``package``: ``homes[name]`` is the submodule ``name`` lives
    in; a name found is stored in ``namespace`` (the package's globals), so it is looked
    up once."""
    def find(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return find
