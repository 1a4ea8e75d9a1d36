"""Ctrl-C under tox reaches the check ckdn is running.

tox runs each env in a worker thread. On Ctrl-C its main thread calls the env's
``interrupt()``, which stops only the processes tox started itself; a check that
ckdn runs is not one of them, so without this tox would wait for it to end (its
``timeout`` at worst). For the time an env's checks run, the env's ``interrupt``
is wrapped so that it also sets a :class:`ckdn.stop.StopRequest`: the check's
process group is stopped as ``ckdn run`` stops it on Ctrl-C (rc 130,
``interrupted``, evidence written), and the env's remaining checks do not start.
tox has no plugin hook for interrupts; the wrapper is an attribute of that one env
object, removed when its checks are done.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ckdn.app.host import StopRequest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tox.tox_env.api import ToxEnv

__all__ = ["REASON", "stop_on_interrupt"]

#: The reason the interrupted check's note gives.
REASON = "tox was interrupted"


@contextlib.contextmanager
def stop_on_interrupt(tox_env: ToxEnv) -> Iterator[StopRequest]:
    """A stop request that tox's interrupt of ``tox_env`` sets, while the block runs."""
    with StopRequest() as stop:
        interrupt = tox_env.interrupt

        def interrupt_checks_too() -> None:
            stop.request(REASON)
            interrupt()

        setattr(tox_env, "interrupt", interrupt_checks_too)  # noqa: B010 - assigning to a method is a type error
        try:
            yield stop
        finally:
            delattr(tox_env, "interrupt")
