"""A stop asked of the process (``SIGTERM``: a CI job cancelled, a ``timeout``, a service manager) ends it as an
interrupt does: the exception unwinds the work, and every ``finally`` removes what the work began (a site's staging
folder, a build's packs, a temporary file), where the signal's default would kill it on the spot. A short step that
must not be cut in two (putting a site in place of the old one) holds stops until it ends (``held``)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

STOPPED = 128 + signal.SIGTERM
"""The exit status of a process stopped by ``SIGTERM``, as a shell reports one the signal killed."""

_held = 0
_pending: list[int] = []


def on_stop() -> None:
    """Make ``SIGTERM`` raise ``SystemExit(STOPPED)`` in this process (and the processes it forks) from now on. Only
    the main thread sets a handler; elsewhere this does nothing."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)


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
