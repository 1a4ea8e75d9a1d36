"""A verb's two ends: the project it works on (``--cwd``, ``--config``, read once) and what it
prints (stdout carries only the document, every line inert). Every verb starts from both.
"""

from __future__ import annotations

import os
import sys

from ckdn.app import encode, inert
from ckdn.app import load_config as load
from ckdn.errors import CkdnError, UsageError, one_line, os_reason

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from types import SimpleNamespace
    from typing import Any

    from ckdn.app import Config

__all__ = ["GLOBAL_OPTIONS", "colour", "json_line", "load_config", "note", "print_document",
           "print_line", "project_dir", "require_baseline", "terminal", "write_text"]

# -- the project ------------------------------------------------------------------------
# Which project a verb works on: ``--cwd`` and ``--config`` (or their variables) read once.
#
# Every verb but ``schema`` starts here, so a mistake in either option is worded
# the same way whichever verb was asked for.

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


# -- the output -------------------------------------------------------------------------
# What the verbs print, and how: stdout carries only the document, every line inert.
#
# A stored file or a config may hold anything; a text view is printed as made (it made
# its strings inert itself, and colours only on a terminal without ``NO_COLOR``).


def print_line(text: str) -> None:
    """Print ``text`` inert, line by line: what a stored file or a config holds never acts
    on the terminal (on a JSON line the escape is JSON's, so the document reads back)."""
    write_text("\n".join(inert(line) for line in text.split("\n")) + "\n")


def json_line(value: Any) -> str:
    """``value`` as the one canonical JSON line a document is printed as."""
    return encode(value).decode("utf-8")


def print_document(value: Any) -> None:
    """A document on stdout: one canonical JSON line."""
    print_line(json_line(value))


def write_text(text: str) -> None:
    """``text`` on stdout as it is (a view made it inert already)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader went away: `ckdn.cli.main` says nothing more to it
    except OSError as exc:  # a full disk, a stdout closed meanwhile
        raise CkdnError(f"cannot write to stdout: {os_reason(exc)}") from exc


def write_output(text: str, path: str | None) -> None:
    """``text`` into the file ``path`` (``--output``), or on stdout without one."""
    if path is None:
        write_text(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"--output {path}: cannot write: {os_reason(exc)}") from exc


def note(message: str) -> None:
    """A line for the person, on stderr, so that stdout keeps only the document."""
    try:  # noqa: SIM105 - contextlib is not imported on the run path
        sys.stderr.write(f"ckdn: {one_line(message)}\n")
    except (OSError, ValueError, AttributeError):  # nowhere to say it: the exit code says it
        pass


def terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def colour() -> bool:
    """Colours only on a terminal, and never with ``NO_COLOR`` set (no-color.org) or on a
    dumb one."""
    return terminal() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
