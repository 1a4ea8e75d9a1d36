"""The ``ckdn`` command: the verb table, and the one policy for what reaches the terminal.

Each verb is one module of this package (its options and its handler), imported
only when its verb runs: :data:`VERBS` is the one place that knows them all.
"""

from __future__ import annotations

import gc
import os
import sys

from ckdn.errors import CkdnError, UsageError, one_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import ModuleType, SimpleNamespace
    from typing import NoReturn
else:  # types.SimpleNamespace without importing types, a module of its own
    SimpleNamespace = type(sys.implementation)

__all__ = ["EXIT_INTERRUPTED", "EXIT_REFUSED", "VERBS", "build_parser", "load_verb", "main"]

EXIT_REFUSED = 2
EXIT_INTERRUPTED = 130

#: Every verb, in ``ckdn --help``'s order: its module in this package (``add_options``
#: and ``handle``) and the line ``ckdn --help`` shows for it. A module is imported only
#: when its verb runs (``list`` and ``init`` are named apart from the builtin and
#: ``__init__``).
VERBS: dict[str, tuple[str, str]] = {
    "run": ("run", "run a check or an alias; digest on stdout"),
    "baseline": ("baseline", "run a check or alias and record its findings in [run].baseline"),
    "show": ("show", "show a stored digest (text on a terminal, indented JSON when piped)"),
    "annotate": ("annotate", "a stored run as text, GitHub annotations or step summary, SARIF "
                             "or GitLab Code Quality (runs nothing)"),
    "diff": ("diff", "compare two runs of one check by fingerprint (exit 1 when B has new "
                     "findings)"),
    "merge": ("merge", "seal shard runs of one check as one run; digest on stdout (never green "
                       "for missing or disagreeing shards)"),
    "status": ("status", "whether each check's latest run holds for the tree now: fresh, stale, "
                         "missing, unknown (exit 0 only when all are fresh passes)"),
    "plan": ("plan", "plan a pytest check's shards from the durations ckdn keeps; the "
                     "ckdn.plan/1 document on stdout"),
    "durations": ("durations", "update the durations ledger from the last whole runs of a "
                               "check (`ckdn durations update CHECK`)"),
    "list": ("list_runs", "recent runs, oldest first (the newest is the last line)"),
    "checks": ("checks", "configured checks and aliases"),
    "gc": ("gc", "prune old run directories"),
    "init": ("init_project", "write a starter ckdn.toml, or an agent's kit (--agent)"),
    "hook": ("hook", "what an agent's hooks run: edit (findings on red, exit 2) and stop"
                     " (blocks while `ckdn status` is not green)"),
    "doctor": ("doctor", "check this installation and the configured checks, running nothing "
                         "(exit 1 on an error)"),
    "lock-config": ("lock_config", "write ckdn.lock.toml: a hash of every setting that decides "
                                   "a verdict"),
    "verify-config": ("verify_config", "compare the config with ckdn.lock.toml (exit 1 on a "
                                       "difference)"),
    "schema": ("schema", "print a packaged JSON Schema"),
    "import": ("import_run", "store another tool's results file (JUnit, CTRF, TAP, SARIF, ...) "
                             "as a run, marked imported; digest on stdout"),
    "export": ("export", "a stored run as JUnit XML or CTRF JSON for a dashboard (runs "
                         "nothing)"),
}


def load_verb(verb: str) -> ModuleType:
    """The module of ``verb``, imported now: the CLI's one lazy boundary.

    ``__import__`` rather than ``importlib.import_module``: importing importlib
    loads ``warnings``, which ``ckdn run`` otherwise never needs.
    """
    name = f"{__name__}.{VERBS[verb][0]}"
    __import__(name)
    return sys.modules[name]


def build_parser() -> argparse.ArgumentParser:
    """The argparse reading of every command line but ``ckdn run NAME``; a verb's options
    are added (its module imported) only when argparse picks that verb."""
    from ckdn.cli import _arguments  # lazy: argparse is off `ckdn run NAME`'s path

    summaries = {verb: summary for verb, (_module, summary) in VERBS.items()}
    return _arguments.build_parser(summaries, lambda verb, parser:
                                   load_verb(verb).add_options(parser))


def _read(argv: list[str]) -> SimpleNamespace:
    """``ckdn run NAME``, the command agents and hooks call over and over, and ``ckdn import
    FORMAT FILE --as NAME`` are read by their verbs without argparse (whose import and
    set-up cost more than the rest of the command line); everything else, mistakes
    included, goes through argparse."""
    for verb in ("run", "import"):
        if verb in argv:
            args: SimpleNamespace | None = load_verb(verb).read_quickly(argv)
            if args is not None:
                return args
    return build_parser().parse_args(argv, namespace=SimpleNamespace())


def _split_extra(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything after the first ``--`` goes to the tool, untouched by argparse."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ckdn`` console script and ``python -m ckdn``.

    With no ``argv``, ckdn is the program: it runs without the cyclic collector
    and ends the process itself (:func:`_run_lightly`, :func:`_exit_now`). A host
    passing its own arguments gets the exit code back and keeps its interpreter
    as it was.
    """
    if argv is not None:
        return _main(list(argv))
    _run_lightly()
    if not _standard_streams():
        _fail("stdout is closed, and ckdn prints its document there; redirect it instead"
              " (to /dev/null to discard it)")
        return _exit_now(EXIT_REFUSED)
    return _exit_now(_main(sys.argv[1:]))


def _standard_streams() -> bool:
    """Give a closed stdin, stdout or stderr ``/dev/null``; False when stdout was closed.

    A descriptor 0-2 left closed would be the next file ckdn opens (a lock file,
    a log), and whatever is then written "to stdout" would land in it. A closed
    stderr only loses ckdn's one-line messages; a closed stdout would lose the
    document, which is what the command is for, so that one is refused.
    """
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    if 2 in closed:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - lives as long as the process
    return 1 not in closed


def _main(argv: list[str]) -> int:
    args_list, extra = _split_extra(argv)
    try:
        args = _read(args_list)
        if args.verb is None:
            build_parser().print_help()
            return EXIT_REFUSED
        if extra and args.verb != "run":
            raise UsageError(f"`ckdn {args.verb}` takes no arguments after --")
        code: int = load_verb(args.verb).handle(args, extra)
        return code
    except CkdnError as exc:
        _fail(exc.message)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``ckdn show | head``); nothing left to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:  # policy: one line, never a traceback (CKDN_DEBUG=1 shows it)
        if os.environ.get("CKDN_DEBUG"):
            raise
        what = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.filename \
            else f"{type(exc).__name__}: {exc}"
        _fail(f"internal error: {what} (rerun with CKDN_DEBUG=1 for the traceback, and "
              "report it if it is not about your system)")
        return EXIT_REFUSED


def _run_lightly() -> None:
    """No cyclic garbage collection in the short-lived ``ckdn`` process.

    Importing the modules a run needs allocates enough to trigger the cyclic
    collector over and over (about 5 ms of a trivial ``ckdn run``). ckdn's own
    data makes no reference cycles worth collecting (logs and reports are
    streamed; reference counting frees them), and ``bench/bench_junit.py`` /
    ``bench/bench_ruff.py`` show the same peak RSS with the collector off.
    """
    gc.disable()


def _exit_now(code: int) -> NoReturn:
    """End the ``ckdn`` process with ``code``, skipping the interpreter's teardown.

    Tearing down the hundred modules a run loaded (the standard library's
    ``re`` and ``enum`` most of all) cost 3-6 ms of a trivial ``ckdn run``
    (bench/bench_startup.py), about as much as the run's own work, and buys
    nothing: by now every file ckdn wrote is closed and its documents renamed
    into place. Only the standard streams may still hold bytes, so they are
    flushed first. The price, documented for parser plugins (docs/parsers.md):
    nothing registered to run at interpreter exit (``atexit``, non-daemon
    threads) runs in the ``ckdn`` process.
    """
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib is not imported on the run path
            stream.flush()
        except (OSError, ValueError, AttributeError):  # reader gone, stream closed or None
            pass
    os._exit(code)


def _fail(message: str) -> None:
    """A refusal: one line on stderr (the verbs' own notes: :func:`ckdn.cli._verb_io.note`)."""
    try:  # noqa: SIM105 - contextlib is not imported on the run path
        sys.stderr.write(f"ckdn: {one_line(message)}\n")
    except (OSError, ValueError, AttributeError):  # nowhere to say it: the exit code says it
        pass
