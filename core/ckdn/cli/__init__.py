"""Command line: argument parsing and printing only; the work is in :mod:`ckdn.app`.

Every refusal is one line on stderr and exit 2 (argparse's own usage errors
included); stdout carries only the document a verb produces.

``ckdn run NAME`` is what agents and hooks call over and over, so that one
shape is read without argparse (:func:`ckdn._lite.argv.quick_run`), whose import
and parser construction cost more than the rest of the command line; everything
else, mistakes included, goes through argparse and gets its messages.
"""

from __future__ import annotations

import os
import sys

from ckdn._lite.argv import quick_run
from ckdn.errors import CkdnError, UsageError, one_line, os_reason

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import SimpleNamespace
    from typing import Any, NoReturn

    from ckdn.app import Config, Outcome

__all__ = ["main"]

EXIT_REFUSED = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The argparse reading of the command line (:mod:`ckdn.verbs`, loaded on demand)."""
    from ckdn.verbs import build_parser as build

    return build()


def _split_extra(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything after the first ``--`` goes to the tool, untouched by argparse."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _parse(argv: list[str]) -> SimpleNamespace:
    from types import SimpleNamespace

    return build_parser().parse_args(argv, namespace=SimpleNamespace())


def _cwd(args: SimpleNamespace) -> str:
    raw = getattr(args, "cwd", None) or os.environ.get("CKDN_CWD") or os.getcwd()
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        raise UsageError(f"--cwd {raw}: not a directory")
    return path


def _out(text: str) -> None:
    """Print ``text`` inert, line by line: what a stored file or a config holds never acts
    on the terminal (on a JSON line the escape is JSON's, so the document reads back)."""
    from ckdn.app import inert

    try:
        sys.stdout.write("\n".join(inert(line) for line in text.split("\n")) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader went away: `_main` says nothing more to it
    except OSError as exc:  # a full disk, a stdout closed meanwhile
        raise CkdnError(f"cannot write to stdout: {os_reason(exc)}") from exc


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
        args = quick_run(args_list) or _parse(args_list)
        if args.verb is None:
            build_parser().print_help()
            return EXIT_REFUSED
        return _dispatch(args, extra)
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
    import gc

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
    try:  # noqa: SIM105 - contextlib is not imported on the run path
        sys.stderr.write(f"ckdn: {one_line(message)}\n")
    except (OSError, ValueError, AttributeError):  # nowhere to say it: the exit code says it
        pass


def _dispatch(args: SimpleNamespace, extra: list[str]) -> int:
    verb = args.verb
    if extra and verb != "run":
        raise UsageError(f"`ckdn {verb}` takes no arguments after --")
    handler = {"run": _cmd_run, "show": _cmd_screen, "annotate": _cmd_screen,
               "diff": _cmd_diff, "list": _cmd_list,
               "checks": _cmd_checks,
               "gc": _cmd_gc, "init": _cmd_init, "schema": _cmd_schema,
               "doctor": _cmd_doctor, "baseline": _cmd_baseline,
               "merge": _cmd_merge, "lock-config": _cmd_lock_config,
               "verify-config": _cmd_verify_config}[verb]
    return handler(args, extra)


def _load(args: SimpleNamespace, *, required: bool = True) -> Config:
    from ckdn.app import load_config

    return load_config(_cwd(args), getattr(args, "config", None), required=required)


def _json_line(value: Any) -> str:
    from ckdn.app import encode

    return encode(value).decode("utf-8")


def _cmd_run(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn import app

    if args.extra:
        raise UsageError(f"unexpected argument {args.extra[0]!r}; put tool arguments after --")
    if args.all == bool(args.check):
        raise UsageError("name one check or alias, or pass --all")
    config = _load(args)
    if args.all:
        if extra:
            raise UsageError("extra arguments after -- are not accepted with --all")
        outcome = app.run_all(config, fail_fast=args.fail_fast)
    else:
        outcome = app.run(config, args.check, extra_args=extra, fail_fast=args.fail_fast)
    if not (args.quiet and outcome.status == "pass"):
        if getattr(args, "format", "json") == "text":
            from ckdn.screen import text_view

            text_view(config, outcome.document)
        else:
            _out(_json_line(outcome.document))
    return _exit(args, config, outcome)


def _exit(args: SimpleNamespace, config: Config, outcome: Outcome) -> int:
    if getattr(args, "gate", False):
        from ckdn import app

        if config.run.baseline is None:
            raise UsageError("--gate needs a baseline: set baseline under [run] in ckdn.toml")
        return app.gate_exit_code(outcome)
    return outcome.exit_code


def _cmd_merge(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn import app

    config = _load(args)
    if args.gate and config.run.baseline is None:
        raise UsageError("--gate needs a baseline: set baseline under [run] in ckdn.toml")
    outcome = app.merge_runs(config, args.check, args.runs, expect=args.expect)
    _out(_json_line(outcome.document))
    return _exit(args, config, outcome)


def _cmd_baseline(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn import app

    _out(_json_line(app.record_baseline(_load(args), args.check, prune=args.prune)))
    return 0


def _cmd_screen(args: SimpleNamespace, extra: list[str]) -> int:
    """``show`` and ``annotate``, the verbs that print a stored run (:mod:`ckdn.screen`)."""
    from ckdn.screen import verb

    return verb(args, _load(args, required=False), _out)


def _cmd_diff(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import diff_runs, render_diff

    doc = diff_runs(_load(args, required=False), args.a, args.b)
    _out(_json_line(doc) if args.json else render_diff(doc))
    return 1 if doc["counts"]["new"] else 0


def _cmd_list(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import list_runs, shown_runs_dir

    config = _load(args, required=False)
    rows = list_runs(config, args.n)
    if args.json:
        _out(_json_line({"runs": rows}))
        return 0
    if not rows:  # stdout carries only run lines; say it where a person looks
        sys.stderr.write(f"ckdn: no runs in {shown_runs_dir(config)} yet\n")
    for row in rows:
        _out(f"{row['run_id']}\t{row['check']}\t{row['status']}")
    return 0


def _cmd_checks(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import describe_checks

    rows = describe_checks(_load(args))
    if args.json:
        _out(_json_line({"checks": rows}))
        return 0
    for row in rows:
        if row["kind"] == "alias":
            fail_fast = "true" if row["fail_fast"] else "false"
            _out(f"{row['name']}\talias={','.join(row['members'])}\tfail_fast={fail_fast}")
        else:
            command = row["command"]
            if not isinstance(command, str):
                import shlex  # lazy: only an array-form command is shown joined

                command = shlex.join(command)
            _out(f"{row['name']}\tparser={row['parser']}\t{command}")
    return 0


def _cmd_gc(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import prune_runs, shown_runs_dir

    config = _load(args, required=False)
    keep = config.run.keep if args.keep is None else args.keep
    removed = prune_runs(config, args.keep, dry_run=args.dry_run)
    kept = (f"kept up to {keep} finished runs per check" if keep else
            "no limit by count ([run].keep = 0 means never prune by count; pass --keep N)")
    for path in removed if args.dry_run else ():
        _out(f"would remove {path}")
    did = "would remove" if args.dry_run else "removed"
    _out(f"{did} {len(removed)} run director{'y' if len(removed) == 1 else 'ies'}; "
         f"{kept} in {shown_runs_dir(config)}")
    return 0


def _cmd_init(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import write_skills, write_starter

    if args.skill is not None:
        for path in write_skills(args.skill, force=args.force):
            _out(f"wrote {path}")
        return 0
    path = write_starter(_cwd(args), getattr(args, "config", None), force=args.force)
    _out(f"wrote {path}; the runs dir ckdn makes keeps itself out of git")
    return 0


def _cmd_doctor(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.doctor import diagnose, doctor_lines
    from ckdn.errors import ConfigError

    config, refused = None, None
    try:
        config = _load(args, required=False)
    except ConfigError as exc:  # diagnosing the config is doctor's job: a finding, not exit 2
        refused = exc.message
    doc = diagnose(config, config_error=refused)
    failed = bool(doc["errors"] or (args.strict and doc["warnings"]))
    if args.json:
        _out(_json_line(doc))
        return 1 if failed else 0
    for line in doctor_lines(doc):
        _fail(line)
    if not failed:
        _out(f"ok: {doc['installation']}")
    return 1 if failed else 0


def _cmd_lock_config(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import lock_config

    config = _load(args)
    _out(f"wrote {lock_config(config, args.output)}: {len(config.checks)} checks,"
         f" {len(config.aliases)} aliases and [run] locked")
    return 0


def _cmd_verify_config(args: SimpleNamespace, extra: list[str]) -> int:
    from ckdn.app.queries import verify_config

    doc = verify_config(_load(args), locked=args.locked)
    if args.json:
        _out(_json_line({k: v for k, v in doc.items() if k != "lines"}))
    else:
        for line in doc["lines"]:
            _out(line)
    return 0 if doc["ok"] else 1


def _cmd_schema(args: SimpleNamespace, extra: list[str]) -> int:
    import json

    from ckdn.app.queries import load_schema, schema_ids

    if args.id is None:
        for sid in schema_ids():
            _out(sid)
        return 0
    _out(json.dumps(load_schema(args.id), indent=2, sort_keys=False))
    return 0
