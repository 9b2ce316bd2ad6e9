"""A stop asked of the process (``SIGTERM``: a CI job cancelled, a ``timeout``, a service manager) ends it as an
interrupt does: the exception unwinds the work, and every ``finally`` removes what the work began (a site's staging
folder, a build's packs, a temporary file), where the signal's default would kill it on the spot. A short step that
must not be cut in two (putting a site in place of the old one) holds stops until it ends (``held``).

The processes it forks (workers) keep the signal's default: their pool stops them with it, and a handler inherited
through a fork can lose a signal sent before the child first runs (Python drops the signals its handlers caught
before the fork completes), which left a pool waiting forever for a worker it had stopped. ``SIGTERM`` is blocked
across each fork, so one sent meanwhile waits in the child until the default is back, and then ends it."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

STOPPED = 128 + signal.SIGTERM
"""The exit status of a process stopped by ``SIGTERM``, as a shell reports one the signal killed."""

_held = 0
_pending: list[int] = []
_forks: list[bool] = []  # whether the fork hooks are registered (once per process, they cannot be removed)
_TERM = {signal.SIGTERM}


def on_stop() -> None:
    """Make ``SIGTERM`` raise ``SystemExit(STOPPED)`` in this process from now on, and not in the processes it forks.
    Only the main thread sets a handler; elsewhere this does nothing."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
        if not _forks:
            _forks.append(True)
            os.register_at_fork(before=_block, after_in_parent=_unblock, after_in_child=_child)


def _block() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, _TERM)


def _unblock() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _TERM)


def _child() -> None:
    """In a forked child: the signal's default, then the signal unblocked (one sent since the fork then ends it)."""
    with contextlib.suppress(ValueError):  # not the child's main thread: it keeps the handler
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _unblock()


def _stop(signum: int, frame: FrameType | None) -> None:
    if _held:
        _pending.append(signum)
        return
    raise SystemExit(STOPPED)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold a stop asked during the block until it ends; then stop."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            _pending.clear()
            raise SystemExit(STOPPED)
