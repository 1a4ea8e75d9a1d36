"""ckdn's MCP server (``ckdn-mcp``, extra ``checkdown[mcp]``): a fourth host beside the CLI,
pytest, nox and tox, over the same door (``ckdn.app``).

The configured checks become tools (docs/mcp.md): run a check or alias, read its
digest, page through its evidence in bounded windows, diff two runs. Only this
package imports the MCP SDK; the core never does, and without the extra the
command says how to install it.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """The ``ckdn-mcp`` entry point."""
    from mcp_ckdn._main import (
        main as serve,  # lazy: the entry point; importing the package stays free
    )

    return serve(sys.argv[1:] if argv is None else argv)
