"""Counting findings per rule in bounded memory, for a summary's ``by_rule``."""

from __future__ import annotations

from ckdn.parsers.base import cap_line

__all__ = ["MAX_RULES", "RULE_WIDTH", "RuleCounts"]

# Consumers of the published parsers read per-rule counts (ruff's, SARIF's
# ``by_rule``), and a reader wants to see which rules dominate a red run without
# reading findings. A hostile report can name a new rule on every one of ten
# million results, so the table keeps the first :data:`MAX_RULES` distinct rules
# (each name cut to :data:`RULE_WIDTH` characters) and only counts what falls past
# them: a real run names a few dozen rules; ruff has under a thousand in all.

#: Distinct rules counted by name; results of any further rule are counted together.
MAX_RULES = 200
#: The longest rule name kept (real ids are short: ``E501``, ``python.lang.security...``).
RULE_WIDTH = 120


class RuleCounts:
    """Results per rule: the first :data:`MAX_RULES` rules by name, the rest as a count."""

    __slots__ = ("counts", "past")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.past = 0  # results whose rule came after the table was full

    def add(self, rule: str) -> None:
        counts = self.counts
        if rule in counts:
            counts[rule] += 1
            return
        name = cap_line(rule, RULE_WIDTH) if len(rule) > RULE_WIDTH else rule
        if name in counts:
            counts[name] += 1
        elif len(counts) < MAX_RULES:
            counts[name] = 1
        else:
            self.past += 1

    def summary(self) -> dict[str, object]:
        """``by_rule`` (by name: documents are written with sorted keys anyway) and
        ``by_rule_omitted`` when any result's rule did not fit the table."""
        ordered = dict(sorted(self.counts.items()))
        out: dict[str, object] = {"by_rule": ordered}
        if self.past:
            out["by_rule_omitted"] = self.past
        return out
