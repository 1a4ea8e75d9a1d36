"""Reports: one stored run projected for a reader other than an agent.

A person at a terminal (``text``), a pull request's annotations (``github``), a
job's step summary (``summary``), a code-scanning dashboard (``sarif``) and
GitLab's merge-request widget (``codequality``) each get their own view of the
same stored digest (or aggregate and its members). Each view is pure (it reads
what :class:`Report` holds and nothing else, runs nothing), deterministic (the
same run gives the same bytes) and bounded by the limits of the place it goes
to, every cut counted in the output itself ([reports](../../../docs/reports.md)).

Domain room, standard library only, loaded on demand: ``ckdn run`` never
imports it. It reads findings as :mod:`ckdn.identity` rows (a run's
``findings.jsonl``, or the digest's findings fingerprinted by the same one
function); the app assembles a :class:`Report` from the store.
"""

from __future__ import annotations

from ckdn._lite.lazy import lazy_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.reports._codequality import codequality
    from ckdn.reports._escape import (
        decode_data,
        decode_property,
        escape_data,
        escape_property,
        markdown,
    )
    from ckdn.reports._github import GITHUB_LIMITS, github
    from ckdn.reports._model import (
        FORMATS,
        Checked,
        Report,
        headline,
        level_of,
        rule_id,
        where,
    )
    from ckdn.reports._sarif import SARIF_LIMITS, sarif
    from ckdn.reports._summary import SUMMARY_BYTES, summary
    from ckdn.reports._text import text

_HOMES = {
    "codequality": "_codequality",
    "decode_data": "_escape", "decode_property": "_escape", "escape_data": "_escape",
    "escape_property": "_escape", "markdown": "_escape",
    "GITHUB_LIMITS": "_github", "github": "_github",
    "FORMATS": "_model", "Checked": "_model", "Report": "_model", "level_of": "_model",
    "headline": "_model",
    "rule_id": "_model", "where": "_model",
    "SARIF_LIMITS": "_sarif", "sarif": "_sarif",
    "SUMMARY_BYTES": "_summary", "summary": "_summary",
    "text": "_text",
}

__all__ = [
    "FORMATS",
    "GITHUB_LIMITS",
    "SARIF_LIMITS",
    "SUMMARY_BYTES",
    "Checked",
    "Report",
    "codequality",
    "decode_data",
    "decode_property",
    "escape_data",
    "escape_property",
    "github",
    "headline",
    "level_of",
    "markdown",
    "rule_id",
    "sarif",
    "summary",
    "text",
    "where",
]


__getattr__ = lazy_names(__name__, _HOMES, globals())
