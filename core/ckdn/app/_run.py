"""Running a check or an alias end to end: the pipeline ``ckdn run`` is.

One atomic run is a pipeline of small steps::

    lock + run dir -> spawn -> parse -> reconcile -> meta -> digest -> publish -> prune

the last four being :func:`~ckdn.app._seal.seal`. An alias runs its members in
order and stores one aggregate. A host may run everything under its own names
(``run_name``: tox runs ``pytest`` in env ``py312`` as ``pytest@py312``), with
its own base environment (``env``: a nox session's or tox env's variables) and
its own way to stop a run from another thread (``stop``).
"""

from __future__ import annotations

import os

from ckdn.app._seal import (
    Outcome,
    options_for,
    parse_run,
    seal,
    store_aggregate,
    store_for,
    substitute,
)
from ckdn.config import Alias, Check, Config
from ckdn.documents import Member, build_aggregate
from ckdn.errors import UsageError
from ckdn.parsers.base import ParseResult
from ckdn.reconcile import PASS, SKIPPED

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from ckdn.process import StopRequest

#: The aggregate name of ``ckdn run --all``.
ALL = "all"


def _same(name: str) -> str:
    return name


def run(config: Config, name: str, *, extra_args: Sequence[str] = (),
        fail_fast: bool | None = None, env: Mapping[str, str] | None = None,
        stop: StopRequest | None = None, run_name: Callable[[str], str] = _same) -> Outcome:
    """Run a check or an alias by name.

    ``env`` replaces ``os.environ`` as the base environment; ``stop`` lets a host
    stop the run from another thread, as Ctrl-C would; ``run_name`` maps a check
    or alias name to the name its runs are stored under (its run dirs, its lock,
    its digest's ``check``).
    """
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
                         stop=stop, run_name=run_name)
    return run_check(config, target, extra_args=extra_args, env=env, stop=stop,
                     as_name=run_name(target.name))


def run_all(config: Config, *, fail_fast: bool | None = None) -> Outcome:
    """``ckdn run --all``: every atomic check in config order, all of them unless told to stop."""
    if not config.checks:
        raise UsageError(f"{_config_name(config)} defines no checks; add a [check.NAME] table")
    return run_alias(config, ALL, list(config.checks.values()), bool(fail_fast))


def _config_name(config: Config) -> str:
    return os.path.basename(config.path) if config.path else "the configuration"


def child_env(check: Check, name: str, run_dir: str,
              base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours, the check's ``env`` (with ``{run_dir}``), the ckdn markers."""
    env = dict(os.environ if base is None else base)
    env.update({key: substitute(value, run_dir) for key, value in check.env.items()})
    env["CKDN_RUN_DIR"] = run_dir
    env["CKDN_CHECK"] = name
    return env


def run_check(config: Config, check: Check, *, extra_args: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              as_name: str | None = None) -> Outcome:
    """One atomic check, end to end, stored under ``as_name`` (default: its own name)."""
    from ckdn.process import run_process

    name = check.name if as_name is None else as_name
    store = store_for(config)
    with store.begin(name) as rd:
        run_dir = rd.path
        argv = [substitute(a, run_dir) for a in (*check.argv, *extra_args)]
        ran = run_process(argv, cwd=config.cwd, env=child_env(check, name, run_dir, env),
                          log_path=os.path.join(run_dir, "full.log"), timeout=check.timeout,
                          label=name, stop=stop)
        result = (parse_run(config, name, check.parser, run_dir, ran.exit.rc,
                            options=options_for(check, run_dir), top=check.top)
                  if ran.exit.started else ParseResult())
        with _EvidenceFirst():
            return seal(config, store, rd, check=name, parser=check.parser, argv=argv,
                        exit=ran.exit, result=result, started_at=ran.started_at,
                        finished_at=ran.finished_at, log_sha256=ran.log_sha256,
                        log_bytes=ran.log_bytes, top=check.top)


def run_alias(config: Config, alias: str, members: Sequence[Check], fail_fast: bool, *,
              env: Mapping[str, str] | None = None, stop: StopRequest | None = None,
              run_name: Callable[[str], str] = _same) -> Outcome:
    """Run members in order; the aggregate is printed and stored in its own run dir."""
    results: list[Member] = []
    halt = False
    for check in members:
        name = run_name(check.name)
        if halt:
            results.append(Member(check=name, status=SKIPPED))
            continue
        outcome = run_check(config, check, env=env, stop=stop, as_name=name)
        doc = outcome.digest
        results.append(Member(check=name, status=doc["status"], rc=doc["rc"],
                              run_dir=doc["run_dir"]))
        # Ctrl-C (or the host's stop) ends the whole alias whatever fail_fast says.
        halt = (fail_fast and doc["status"] != PASS) or bool(doc.get("interrupted"))
    aggregate = build_aggregate(alias=run_name(alias), members=results)
    return Outcome(aggregate, int(aggregate["rc"]), store_aggregate(config, aggregate))


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
