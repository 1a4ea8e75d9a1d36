"""Every test's outcome in a stored run, for a shard merge and ``ckdn diff``.

A digest lists failures only; what passed is in the run's JUnit report, which
checks of the ``pytest`` and ``coverage`` parsers write into their run dir (the
report those parsers read, named by the check's ``junit`` option). Read again,
streaming, for ids and outcomes (:func:`ckdn.parsers.outcomes.read_outcomes`).
A run without one (another parser, a ``pytest --ckdn-digest`` session, a digest
copied alone) has no outcomes to compare: ``None``, and the caller says so.
"""

from __future__ import annotations

from ckdn.app._pipeline import options_for
from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.config import Config

__all__ = ["run_outcomes"]


def run_outcomes(config: Config, name: str, run_dir: str, rc: int, *,
                  parser: str | None = None) -> dict[str, str] | None:
    """``{node id: outcome}`` of the run of check ``name`` in ``run_dir``, or ``None``.

    ``parser``: the run's own (its ``meta.json``), else the configured check's.
    UsageError, in one line, for a report that is there and cannot be read.
    """
    from ckdn.parsers.base import ArtifactError, ParseContext
    from ckdn.parsers.junit import DEFAULT_JUNIT
    from ckdn.parsers.outcomes import TEST_PARSERS, XmlError, read_outcomes

    check = config.checks.get(name)
    if parser is None and check is not None:
        parser = check.parser
    if parser not in TEST_PARSERS:
        return None
    options = options_for(check, run_dir) if check is not None else {}
    ctx = ParseContext(name, run_dir, config.cwd, rc, options)
    try:
        report = ctx.artifact("junit", DEFAULT_JUNIT)
    except ArtifactError as exc:
        raise UsageError(str(exc)) from None
    if not report.is_file():
        return None
    try:
        return read_outcomes(report, config.cwd)
    except (XmlError, OSError) as exc:
        raise UsageError(f"{report.name} cannot be read again: {exc}") from None
