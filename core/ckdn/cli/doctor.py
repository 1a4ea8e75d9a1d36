"""``ckdn doctor``: this installation and the configured checks examined, running nothing."""

from __future__ import annotations

from ckdn.app.doctor import diagnose, doctor_lines
from ckdn.cli._verb_io import load_config, note, print_document, print_line
from ckdn.errors import ConfigError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

__all__ = ["add_options", "handle"]


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    parser.add_argument("--json", action="store_true", help="one ckdn.doctor/1 JSON line")


def handle(args: SimpleNamespace, extra: list[str]) -> int:
    config, refused = None, None
    try:
        config = load_config(args, required=False)
    except ConfigError as exc:  # diagnosing the config is doctor's job: a finding, not exit 2
        refused = exc.message
    doc = diagnose(config, config_error=refused)
    failed = bool(doc["errors"] or (args.strict and doc["warnings"]))
    if args.json:
        print_document(doc)
        return 1 if failed else 0
    for line in doctor_lines(doc):
        note(line)
    if not failed:
        print_line(f"ok: {doc['installation']}")
    return 1 if failed else 0
