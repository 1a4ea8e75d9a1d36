"""What the command line prints for people: the text views, on a terminal or into a file.

Apart from :mod:`ckdn.cli` (dispatch and the JSON documents) because only
``ckdn show``, ``ckdn annotate`` and ``ckdn run --format text`` need it. A
view's text is printed as it is: the view made every stored string inert
itself (:mod:`ckdn.reports`), and its only control bytes are the colours it was
asked for, which it is only on a terminal without ``NO_COLOR``.
"""

from __future__ import annotations

import os
import sys

from ckdn.errors import CkdnError, UsageError, os_reason

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import SimpleNamespace
    from typing import Any

    from ckdn.app import Config

__all__ = ["annotate", "colour", "show", "terminal", "text_view", "verb", "write"]


def verb(args: SimpleNamespace, config: Config, out: Callable[[str], None]) -> int:
    """``ckdn show`` or ``ckdn annotate``, as argparse read it."""
    if args.verb == "show":
        return show(config, args.run, as_stored=args.json, out=out)
    return annotate(config, args.run, args.format, getattr(args, "output", None))


def show(config: Config, ref: str | None, *, as_stored: bool,
         out: Callable[[str], None]) -> int:
    """``ckdn show``: the text view on a terminal, the indented JSON when piped, the stored
    JSON line with ``--json`` (``out`` prints a line inert, as the CLI prints documents)."""
    from ckdn.app import encode
    from ckdn.app.queries import read_run, render, report_text

    doc = read_run(config, ref)
    if as_stored:
        out(encode(doc).decode("utf-8"))
    elif terminal():
        write(report_text(config, doc, color=colour()))
    else:
        out(render(doc))
    return 0


def annotate(config: Config, ref: str | None, fmt: str, output: str | None) -> int:
    """``ckdn annotate [RUN] --format F [--output PATH]``; exit 0 (the view is the product)."""
    from ckdn.app.queries import annotate as project

    text = project(config, ref, fmt, color=fmt == "text" and output is None and colour())
    if output is None:
        write(text)
        return 0
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"--output {output}: cannot write: {os_reason(exc)}") from exc
    return 0


def text_view(config: Config, document: Mapping[str, Any]) -> None:
    """``ckdn run --format text``: the run's text view instead of its JSON line."""
    from ckdn.app.queries import report_text

    write(report_text(config, document, color=colour()))


def terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def colour() -> bool:
    """Colours only on a terminal, and never with ``NO_COLOR`` set (no-color.org) or on a
    dumb one."""
    return terminal() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def write(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader went away: the CLI says nothing more to it
    except OSError as exc:
        raise CkdnError(f"cannot write to stdout: {os_reason(exc)}") from exc
