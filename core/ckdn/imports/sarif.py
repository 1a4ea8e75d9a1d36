"""SARIF 2.1.0 from any producer, read by the ``sarif`` parser itself (its levels, rules and
refusals): an import of a scanner's log means what a check of it means, weaker."""

from __future__ import annotations

import os

from ckdn.imports._model import Imported, ImportRefused, Tally
from ckdn.parsers import get_parser
from ckdn.parsers.base import ParseContext

__all__ = ["read_sarif"]


def read_sarif(ctx: ParseContext, path: str) -> Imported:
    tally = Tally()
    levels = ctx.options.get("fail_levels", ("error",))
    inner = ParseContext(ctx.check, ctx.run_dir, ctx.cwd, 0,
                         {"report": os.path.basename(path), "fail_levels": list(levels)},
                         ctx.top, ctx.max_snippet_lines, ctx.tap)
    result = get_parser("sarif").parse(inner)
    summary = result.summary
    if not result.parser_ok and not summary:
        raise ImportRefused(result.notes[0] if result.notes else "not a SARIF 2.1.0 log")
    counts = summary.get("counts", {})
    below = int(counts.get("results", 0)) - result.total
    tally.attach(result.total)  # every result at fail_levels is a finding (the parser's rule)
    if below > 0:  # results at levels that are not findings: counted, kept out
        tally.leave("below_fail_levels", below)
    tools = [str(tool) for tool in summary.get("tools", [])]
    return Imported(format="sarif", variant="sarif-2.1.0", producer=",".join(tools[:3]),
                    result=result, cases=int(counts.get("runs", 0)), tally=tally)
