"""Reports: one stored run projected for a reader other than an agent (docs/reports.md).

A family: one protocol (:class:`Reporter`), one module per format, one table of formats
(:data:`REPORTERS`). Standard library only, and never on ``ckdn run``'s path.
"""

from ckdn.reports._codequality import codequality
from ckdn.reports._escape import (
    decode_data,
    decode_property,
    escape_data,
    escape_property,
    markdown,
)
from ckdn.reports._formats import REPORT_FORMATS, REPORTERS, render_report
from ckdn.reports._github import GITHUB_LIMITS, github
from ckdn.reports._model import Checked, Report, headline, level_of, rule_id, where
from ckdn.reports._reporter import AnnotationLedger, Rendering, Reporter
from ckdn.reports._sarif import SARIF_LIMITS, sarif
from ckdn.reports._summary import SUMMARY_BYTES, summary
from ckdn.reports._text import text

__all__ = [
    "GITHUB_LIMITS",
    "REPORTERS",
    "REPORT_FORMATS",
    "SARIF_LIMITS",
    "SUMMARY_BYTES",
    "AnnotationLedger",
    "Checked",
    "Rendering",
    "Report",
    "Reporter",
    "codequality",
    "decode_data",
    "decode_property",
    "escape_data",
    "escape_property",
    "github",
    "headline",
    "level_of",
    "markdown",
    "render_report",
    "rule_id",
    "sarif",
    "summary",
    "text",
    "where",
]
