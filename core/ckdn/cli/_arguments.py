"""The command line's verbs and options, as argparse reads them (for :mod:`ckdn.cli`).

Apart from :mod:`ckdn.cli` because only a command line other than ``ckdn run
NAME`` needs it (that one is read by :func:`ckdn._lite.argv.quick_run`), and so
that the CLI's dispatch and printing stay one small module.
"""

from __future__ import annotations

from ckdn import DISTRIBUTION, __version__
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

__all__ = ["ANNOTATE_FORMATS", "build_parser"]

#: ``ckdn annotate --format`` (the views of :mod:`ckdn.reports`; a test holds the two equal).
ANNOTATE_FORMATS = ("text", "github", "summary", "sarif", "codequality")


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse  # lazy: `ckdn run NAME` never needs it

    class _Parser(argparse.ArgumentParser):
        """argparse, but a usage error is one line and exit 2, like every other refusal."""

        def error(self, message: str) -> NoReturn:
            raise UsageError(f"{message} (see `{self.prog} --help`)")

    return _Parser


def _global_options() -> argparse.ArgumentParser:
    import argparse

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, metavar="PATH",
                        help="config file (default: $CKDN_CONFIG, else ./ckdn.toml)")
    common.add_argument("--cwd", default=argparse.SUPPRESS, metavar="DIR",
                        help="directory checks run in and paths resolve from "
                             "(default: $CKDN_CWD, else the current directory)")
    return common


def _views(sub: Any, common: argparse.ArgumentParser) -> None:
    """``ckdn show`` and ``ckdn annotate``, the verbs that print a stored run (apart, so that
    build_parser stays one screen)."""
    p = sub.add_parser("show", parents=[common], help="show a stored digest (text on a "
                       "terminal, indented JSON when piped)")
    p.add_argument("run", nargs="?", help="run directory name or path (default: latest)")
    p.add_argument("--json", action="store_true", help="print the stored JSON as is")

    p = sub.add_parser("annotate", parents=[common],
                       help="a stored run as text, GitHub annotations or step summary, SARIF "
                            "or GitLab Code Quality (runs nothing)")
    p.add_argument("run", nargs="?", help="run directory name or path (default: latest)")
    p.add_argument("--format", required=True, choices=ANNOTATE_FORMATS,
                   help="the view (docs/reports.md)")
    p.add_argument("--output", "-o", default=None, metavar="PATH",
                   help="write the view to PATH instead of stdout (a CI step's SARIF file)")


def build_parser() -> argparse.ArgumentParser:
    import argparse

    common = _global_options()
    parser_class = _parser_class()
    parser = parser_class(prog="ckdn", parents=[common],
                          description="Deterministic check runner and log digester.")
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=parser_class)

    p = sub.add_parser("run", parents=[common], help="run a check or an alias; digest on stdout")
    p.add_argument("check", nargs="?", help="atomic check or alias name")
    p.add_argument("--all", action="store_true", help="run every atomic check")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print nothing when the status is pass")
    p.add_argument("--fail-fast", action=argparse.BooleanOptionalAction, default=None,
                   help="stop an alias at its first non-green member (alias default: its "
                        "fail_fast; --all default: no)")
    p.add_argument("--gate", action="store_true",
                   help="exit code follows the baseline gate: 0 pass, 1 fail (else the run's)")
    p.add_argument("--format", choices=("json", "text"), default="json",
                   help="stdout: the document as one JSON line (default), or text for people")
    p.add_argument("extra", nargs="*", help=argparse.SUPPRESS)

    p = sub.add_parser("baseline", parents=[common],
                       help="run a check or alias and record its findings in [run].baseline")
    p.add_argument("check", help="atomic check or alias name")
    p.add_argument("--prune", action="store_true", help="drop fixed findings; add none")

    _views(sub, common)

    p = sub.add_parser("diff", parents=[common], help="compare two runs of one check by "
                       "fingerprint (exit 1 when B has new findings)")
    p.add_argument("a", help="earlier run: dir name or path, latest, or -N (N runs before B)")
    p.add_argument("b", help="later run: dir name or path, or latest")
    p.add_argument("--json", action="store_true", help="the ckdn.diff/1 document")

    p = sub.add_parser("merge", parents=[common], help="seal shard runs of one check as one "
                       "run; digest on stdout (never green for missing or disagreeing shards)")
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="a shard: its run dir (or its digest.json) copied from the job that "
                        "ran it, or a run id here")
    p.add_argument("--check", required=True, metavar="NAME", help="the check the shards ran")
    p.add_argument("--expect", type=int, default=None, metavar="N",
                   help="how many shards there must be (fewer or more: not green)")
    p.add_argument("--gate", action="store_true",
                   help="exit code follows the baseline gate: 0 pass, 1 fail (else the merge's)")

    p = sub.add_parser("list", parents=[common], help="recent runs, newest first")
    p.add_argument("-n", type=int, default=10, metavar="N", help="how many (default 10)")
    p.add_argument("--json", action="store_true", help="one JSON array")

    p = sub.add_parser("checks", parents=[common], help="configured checks and aliases")
    p.add_argument("--json", action="store_true", help="one JSON array")

    p = sub.add_parser("gc", parents=[common], help="prune old run directories")
    p.add_argument("--keep", type=int, default=None, metavar="N",
                   help="finished runs to keep per check (default: [run].keep)")
    p.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")

    p = sub.add_parser("init", parents=[common], help="write a starter ckdn.toml")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--skill", metavar="DIR", default=None,
                   help="instead, install the agent skill into DIR (DIR/verified-fix-loop/)")

    p = sub.add_parser("doctor", parents=[common], help="check this installation and the "
                       "configured checks, running nothing (exit 1 on an error)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.add_argument("--json", action="store_true", help="one ckdn.doctor/1 JSON line")

    p = sub.add_parser("lock-config", parents=[common],
                       help="write ckdn.lock.toml: a hash of every setting that decides a verdict")
    p.add_argument("-o", "--output", default=None, metavar="PATH",
                   help="where to write it (default: beside the config)")

    p = sub.add_parser("verify-config", parents=[common],
                       help="compare the config with ckdn.lock.toml (exit 1 on a difference)")
    p.add_argument("--locked", action="store_true", help="a missing lock file fails too")
    p.add_argument("--json", action="store_true", help="one JSON line")

    p = sub.add_parser("schema", parents=[common], help="print a packaged JSON Schema")
    p.add_argument("id", nargs="?", help="schema id, e.g. ckdn.digest/2 (default: list ids)")
    return parser
