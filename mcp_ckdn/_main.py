"""``ckdn-mcp``: the command an agent's MCP client starts (stdio only).

Without the extra (``checkdown[mcp]``) the SDK is missing, and the command says
in one line how to install it (exit 2), as every ckdn mistake is said.
"""

from __future__ import annotations

import argparse
import sys
from importlib.util import find_spec

from ckdn.app.queries import CWD_ENV, locate_cwd
from ckdn.errors import CkdnError

__all__ = ["INSTALL_HINT", "main"]

INSTALL_HINT = ("ckdn-mcp: the MCP SDK is not installed; install the extra:"
                " pip install 'checkdown[mcp]'")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ckdn-mcp", description="ckdn's MCP server (stdio): the configured checks as tools.")
    parser.add_argument("--config", metavar="FILE",
                        help="the ckdn.toml to read (default: $CKDN_CONFIG, else ./ckdn.toml)")
    parser.add_argument("--cwd", metavar="DIR",
                        help=f"the project's directory (default: ${CWD_ENV}, else the cwd)")
    parser.add_argument("--progress-seconds", type=float, default=5.0, metavar="S",
                        help="seconds between progress notifications while a check runs"
                             " (0.1 to 15; default 5)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin closes; 2 with one line on stderr for a mistake."""
    if find_spec("mcp") is None:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    args = _parser().parse_args(argv)
    try:
        if not 0.1 <= args.progress_seconds <= 15:
            raise CkdnError(f"--progress-seconds {args.progress_seconds}: not between 0.1 and 15")
        cwd = locate_cwd(args.cwd)
    except CkdnError as exc:
        print(f"ckdn-mcp: {exc}", file=sys.stderr)
        return 2
    # lazy: the server start, the one place the SDK is imported, after the check above
    from mcp_ckdn._server import build_server, serve_stdio

    serve_stdio(build_server(cwd, args.config, progress_every=args.progress_seconds))
    return 0
