"""``ckdn run``: run a check, an alias or every check; the digest on stdout.

The verb agents and hooks call over and over, so its usual shape is read here
without argparse too (:func:`read_quickly`), held to argparse by a differential test.
"""

from __future__ import annotations

import os
import sys

from ckdn import app
from ckdn.cli._verb_io import (
    GLOBAL_OPTIONS,
    colour,
    load_config,
    print_document,
    require_baseline,
    write_text,
)
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace
else:  # types.SimpleNamespace without importing types, a module of its own
    SimpleNamespace = type(sys.implementation)

__all__ = ["GLOBAL_OPTIONS", "add_options", "change_request", "handle", "read_quickly"]


def add_options(parser: argparse.ArgumentParser) -> None:
    import argparse  # lazy: `ckdn run NAME` is read by read_quickly, never by argparse

    parser.add_argument("check", nargs="?", help="atomic check or alias name")
    parser.add_argument("--all", action="store_true", help="run every atomic check")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print nothing when the status is pass")
    parser.add_argument("--fail-fast", action=argparse.BooleanOptionalAction, default=None,
                        help="stop an alias at its first non-green member (alias default: its "
                             "fail_fast; --all default: no)")
    parser.add_argument("--gate", action="store_true",
                        help="exit code follows the gate (the baseline's, or the diff's): 0 "
                             "pass, 1 fail (else the run's; a gate error is never 0)")
    parser.add_argument("--diff", metavar="FILE|-",
                        help="gate by a unified diff (git, jj, hg, diff -u; - reads stdin)")
    parser.add_argument("--diff-base", metavar="REF",
                        help="gate by the change since `git merge-base REF HEAD`, work tree "
                             "included (ckdn runs git, and the check on the base)")
    parser.add_argument("--scope", choices=("touched", "added", "new-anywhere"),
                        help="which findings the change owns (default: [run].diff_scope, "
                             "touched); see docs/diff-gate.md")
    parser.add_argument("--format", choices=("json", "text"), default="json",
                        help="stdout: the document as one JSON line (default), or text for "
                             "people")
    parser.add_argument("--shard", default=None, metavar="auto|K/N",
                        help="run shard K of N of a pytest check (auto: from the CI's "
                             "variables); the plugin selects the tests as pytest collects them")
    parser.add_argument("--plan", default=None, metavar="FILE",
                        help="with --shard: the ckdn.plan/1 file (`ckdn plan`) that assigns "
                             "the tests")
    parser.add_argument("--rerun", action="store_true",
                        help="with --shard: this run reruns its shard; `ckdn merge --plan` "
                             "takes it in place of the shard's earlier run")
    parser.add_argument("extra", nargs="*", help=argparse.SUPPRESS)


def read_quickly(argv: list[str]) -> SimpleNamespace | None:
    """``run NAME`` with ``--quiet``/``-q``, ``--gate``, ``--config``, ``--cwd``: what argparse
    would read.

    None for any other command line (another verb, ``--all``, ``--fail-fast``, an
    abbreviation, ``--help``, a mistake): argparse reads that one.
    """
    args = SimpleNamespace(verb=None, check=None, all=False, quiet=False, fail_fast=None,
                           gate=False, format="json", shard=None, plan=None, rerun=False, extra=[],
                           diff=None, diff_base=None, scope=None)
    words = iter(argv)
    for word in words:
        if word in GLOBAL_OPTIONS:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            setattr(args, word[2:], value)
        elif word.startswith(("--config=", "--cwd=")):
            key, _, value = word[2:].partition("=")
            setattr(args, key, value)
        elif args.verb is None:
            if word != "run":
                return None
            args.verb = word
        elif word in ("--quiet", "-q"):
            args.quiet = True
        elif word == "--gate":
            args.gate = True
        elif args.check is None and not word.startswith("-"):
            args.check = word
        else:
            return None
    return args if args.check is not None else None


def change_request(args: SimpleNamespace) -> app.ChangeRequest | None:
    """The diff-scoped gate ``--diff``/``--diff-base``/``--scope`` ask for (None: none)."""
    diff, base, scope = args.diff, args.diff_base, args.scope
    if diff is None and base is None:
        if scope is not None:
            raise UsageError("--scope needs --diff FILE or --diff-base REF")
        return None
    return app.ChangeRequest(diff=diff, base=base, scope=scope)


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    if args.extra:
        raise UsageError(f"unexpected argument {args.extra[0]!r}; put tool arguments after --")
    if args.all == bool(args.check):
        raise UsageError("name one check or alias, or pass --all")
    if (args.plan is not None or args.rerun) and args.shard is None:
        raise UsageError(f"{'--plan' if args.plan is not None else '--rerun'} needs "
                         "--shard auto|K/N")
    change = change_request(args)
    config = load_config(args)
    if args.gate and change is None:  # refused before anything runs: exit 2 means nothing ran
        require_baseline(config)
    if args.shard is not None:
        if args.all:
            raise UsageError("--shard runs one pytest check, not --all")
        # lazy: sharding's modules stay off the path of a `ckdn run` without --shard
        from ckdn.app.shards import shard_arguments

        extra = [*shard_arguments(config, args.check, args.shard, args.plan, os.environ,
                                  rerun=args.rerun), *extra]
    if args.all:
        if extra:
            raise UsageError("extra arguments after -- are not accepted with --all")
        outcome = app.run_all(config, fail_fast=args.fail_fast, change=change, by_gate=args.gate)
    else:
        outcome = app.run(config, args.check, extra_args=extra, fail_fast=args.fail_fast,
                          change=change, by_gate=args.gate)
    if not (args.quiet and outcome.status == "pass"):
        if args.format == "text":
            from ckdn.app.queries import report_text  # lazy: only --format text renders a view

            write_text(report_text(config, outcome.document, color=colour()))
        else:
            print_document(outcome.document)
    if args.gate:
        return app.gate_exit_code(outcome)
    return outcome.exit_code
