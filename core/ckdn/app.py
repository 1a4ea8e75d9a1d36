"""The application layer: running a check or an alias end to end, and queries over runs.

Every adapter (CLI, pytest plugin, nox, tox) comes through here and never
reaches around it. One atomic run is a pipeline of small steps::

    lock + run dir -> spawn -> parse -> reconcile -> meta -> digest -> publish -> prune

and :func:`seal` is the tail of that pipeline on its own, so a host that produced
the log and the facts itself (the pytest plugin) leaves exactly the same
evidence as ``ckdn run``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ckdn._record import Record, record
from ckdn.config import Alias, Check, Config
from ckdn.errors import UsageError
from ckdn.parsers.base import ParseContext, ParseResult
from ckdn.reconcile import PASS, SKIPPED, Exit, exit_code, reconcile
from ckdn.store import RunDir, Store

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ckdn.stop import StopRequest

__all__ = [
    "ALL",
    "Outcome",
    "headline",
    "parse_safely",
    "red_members",
    "run",
    "run_alias",
    "run_check",
    "seal",
]

#: The aggregate name of ``ckdn run --all``.
ALL = "all"
#: At most this many artifact names are listed in a digest.
MAX_ARTIFACTS = 100


@record
class Outcome(Record):
    """What a run produced: the document printed on stdout and the process exit code."""

    __slots__ = ("document", "exit_code", "run_dir")
    document: dict[str, Any]
    exit_code: int
    run_dir: str | None

    def __init__(self, document: dict[str, Any], exit_code: int,
                 run_dir: str | None = None) -> None:
        self._assign(document, exit_code, run_dir)

    @property
    def status(self) -> str:
        return str(self.document["status"])


def store_for(config: Config) -> Store:
    return Store(config.run.runs_dir, config.cwd)


def run(config: Config, name: str, *, extra_args: Sequence[str] = (),
        fail_fast: bool | None = None, env: Mapping[str, str] | None = None,
        stop: StopRequest | None = None) -> Outcome:
    """Run a check or an alias by name; ``env`` and ``stop`` as for :func:`run_check`."""
    target = config.get(name)
    if isinstance(target, Alias):
        if extra_args:
            raise UsageError(
                f"extra arguments after -- are not accepted for alias '{name}'; "
                f"pass them to one of its checks ({', '.join(target.members)})"
            )
        members = [config.checks[m] for m in target.members]
        return run_alias(config, name, members,
                         target.fail_fast if fail_fast is None else fail_fast, env=env,
                         stop=stop)
    return run_check(config, target, extra_args=extra_args, env=env, stop=stop)


def run_all(config: Config, *, fail_fast: bool | None = None) -> Outcome:
    """``ckdn run --all``: every atomic check in config order, all of them unless told to stop."""
    if not config.checks:
        raise UsageError(f"{_config_name(config)} defines no checks; add a [check.NAME] table")
    return run_alias(config, ALL, list(config.checks.values()), bool(fail_fast))


def _config_name(config: Config) -> str:
    return os.path.basename(config.path) if config.path else "the configuration"


def substitute(value: str, run_dir: str) -> str:
    return value.replace("{run_dir}", run_dir)


def child_env(check: Check, run_dir: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours, the check's ``env`` (with ``{run_dir}``), the ckdn markers."""
    env = dict(os.environ if base is None else base)
    env.update({key: substitute(value, run_dir) for key, value in check.env.items()})
    env["CKDN_RUN_DIR"] = run_dir
    env["CKDN_CHECK"] = check.name
    return env


def options_for(check: Check, run_dir: str) -> dict[str, Any]:
    """Parser options with ``{run_dir}`` substituted in every string."""
    out: dict[str, Any] = {}
    for key, value in check.options.items():
        if isinstance(value, str):
            value = substitute(value, run_dir)
        elif isinstance(value, list):
            value = [substitute(v, run_dir) if isinstance(v, str) else v for v in value]
        out[key] = value
    return out


def run_check(config: Config, check: Check, *, extra_args: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None) -> Outcome:
    """One atomic check, end to end. ``env`` replaces ``os.environ`` as the base environment;
    ``stop`` lets a host stop it from another thread, as Ctrl-C would (:mod:`ckdn.stop`)."""
    from ckdn.parsers import get_parser
    from ckdn.runner import run_process

    parser = get_parser(check.parser)
    store = store_for(config)
    with store.begin(check.name) as rd:
        run_dir = rd.path
        argv = [substitute(a, run_dir) for a in (*check.argv, *extra_args)]
        ran = run_process(argv, cwd=config.cwd, env=child_env(check, run_dir, env),
                          log_path=os.path.join(run_dir, "full.log"), timeout=check.timeout,
                          label=check.name, stop=stop)
        ctx = ParseContext(
            check=check.name, run_dir=run_dir, cwd=config.cwd, rc=ran.exit.rc,
            options=options_for(check, run_dir), top=check.top or config.run.top,
            max_snippet_lines=config.run.max_snippet_lines,
        )
        result = parse_safely(parser, ctx) if ran.exit.started else ParseResult()
        with _EvidenceFirst():
            return seal(config, store, rd, check=check.name, parser=check.parser, argv=argv,
                        exit=ran.exit, result=result, started_at=ran.started_at,
                        finished_at=ran.finished_at, log_sha256=ran.log_sha256,
                        log_bytes=ran.log_bytes, top=check.top)


class _EvidenceFirst:
    """Ignore Ctrl-C while the evidence is written: a second press must not lose the digest.

    Only the main thread can touch signal handlers; elsewhere the host owns them.
    (A class, not ``contextlib.contextmanager``: ``ckdn run`` does not import contextlib.)
    """

    def __enter__(self) -> None:
        import signal

        self._restore: Any = None
        try:
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            return
        # None: a handler set outside Python, which cannot be put back; the default is closest
        self._restore = signal.SIG_DFL if previous is None else previous

    def __exit__(self, *exc_info: object) -> None:
        if self._restore is not None:
            import signal

            signal.signal(signal.SIGINT, self._restore)


def parse_safely(parser: Any, ctx: ParseContext) -> ParseResult:
    """Run a parser; one that raises or returns nonsense is a confused parser, never a pass.

    A plugin parser may not guard itself, so the app applies the same guard as
    the built-ins (:mod:`ckdn.parsers.guard`) and checks what comes back.
    """
    from ckdn.parsers.guard import guarded

    name = str(getattr(parser, "name", "?"))
    # The lambda looks ``parser.parse`` up inside the guard: a plugin without it is contained.
    result: Any = guarded(name, lambda c: parser.parse(c), ctx)  # noqa: PLW0108
    if not isinstance(result, ParseResult):
        return ParseResult(parser_ok=False, notes=[
            f"parser '{name}' returned {type(result).__name__}, not a ParseResult"])
    return result


def list_artifacts(run_dir: str) -> list[str]:
    """Names in the run dir a reader may open (dirs with a trailing slash), bounded."""
    try:
        entries = sorted(os.scandir(run_dir), key=lambda e: e.name)
    except OSError:
        return []
    names = [e.name + ("/" if e.is_dir() else "") for e in entries
             if e.name != "digest.json" and not e.name.startswith(".")]
    if len(names) > MAX_ARTIFACTS:
        extra = len(names) - MAX_ARTIFACTS
        names = [*names[:MAX_ARTIFACTS], f"... [+{extra} more]"]
    return names


def seal(config: Config, store: Store, rd: RunDir, *, check: str, parser: str,
         argv: Sequence[str], exit: Exit, result: ParseResult,
         started_at: float, finished_at: float, log_sha256: str, log_bytes: int,
         top: int | None = None, notes: Iterable[str] = ()) -> Outcome:
    """Reconcile, write ``meta.json`` then ``digest.json`` (last, atomically), publish, prune."""
    from ckdn.digest import Bounds, build_digest, build_meta, encode

    verdict = reconcile(exit, result)
    shown = store.display(rd.path)
    meta = build_meta(check=check, run_dir=shown, argv=argv, cwd=str(config.cwd), exit=exit,
                      started_at=started_at, finished_at=finished_at, log_sha256=log_sha256,
                      log_bytes=log_bytes, parser=parser, status=verdict.status)
    store.write_atomic(os.path.join(rd.path, "meta.json"), encode(meta) + b"\n")
    settings = config.run
    bounds = Bounds(top=top or settings.top, max_snippet_lines=settings.max_snippet_lines,
                    log_tail_lines=settings.log_tail_lines)
    digest = build_digest(check=check, verdict=verdict, exit=exit, result=result, run_dir=shown,
                          artifacts=list_artifacts(rd.path),
                          log_path=os.path.join(rd.path, "full.log"),
                          bounds=bounds, notes=[*rd.notes, *exit.notes, *notes])
    store.write_atomic(os.path.join(rd.path, "digest.json"), encode(digest) + b"\n")
    store.publish(rd.path)
    store.prune(check, settings.keep, holding=rd if rd.locked else None)
    return Outcome(digest, exit_code(verdict.status, exit.rc), rd.path)


def run_alias(config: Config, alias: str, members: Sequence[Check], fail_fast: bool, *,
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None
              ) -> Outcome:
    """Run members in order; the aggregate is printed and stored in its own run dir."""
    from ckdn.digest import Member, build_aggregate, encode

    results: list[Member] = []
    halt = False
    for check in members:
        if halt:
            results.append(Member(check=check.name, status=SKIPPED))
            continue
        outcome = run_check(config, check, env=env, stop=stop)
        doc = outcome.document
        results.append(Member(check=check.name, status=doc["status"], rc=doc["rc"],
                              run_dir=doc["run_dir"]))
        # Ctrl-C (or the host's stop) ends the whole alias whatever fail_fast says.
        halt = (fail_fast and doc["status"] != PASS) or bool(doc.get("interrupted"))
    aggregate = build_aggregate(alias=alias, members=results)
    store = store_for(config)
    agg_dir = store.new_dir(alias)
    store.write_atomic(os.path.join(agg_dir, "aggregate.json"), encode(aggregate) + b"\n")
    store.prune(alias, config.run.keep)
    return Outcome(aggregate, int(aggregate["rc"]), agg_dir)


def headline(doc: Mapping[str, Any]) -> str:
    """One line saying what is not green and where its evidence is (for host failure messages)."""
    if "alias" in doc:
        first = next((m for m in doc["members"] if m["status"] not in (PASS, SKIPPED)), None)
        where = (f"; first red member {first['check']} {first['status']} (rc {first['rc']}),"
                 f" evidence in {first['run_dir']}" if first else "; a member did not run")
        return f"{doc['alias']} {doc['status']} (rc {doc['rc']}){where}"
    reason = f": {doc['status_reason']}" if doc.get("status_reason") else ""
    return f"{doc['check']} {doc['status']} (rc {doc['rc']}){reason}; evidence in {doc['run_dir']}"


def red_members(cwd: str | os.PathLike[str], doc: Mapping[str, Any]
                ) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """``(run_dir, digest)`` of each non-green member of an aggregate, in member order.

    The aggregate only routes; hosts show these member digests, which are what a
    reader acts on. ``None`` when a member's digest is missing or unreadable.
    """
    import json

    for entry in doc.get("members", ()):
        if entry["status"] in (PASS, SKIPPED):
            continue
        run_dir = entry["run_dir"]
        try:
            with open(os.path.join(cwd, run_dir, "digest.json"), "rb") as handle:
                member = json.loads(handle.read())
        except (OSError, ValueError):
            member = None
        yield run_dir, member if isinstance(member, dict) else None
