"""How far long work has come, as one line on standard error rewritten in place, only when standard error is a
terminal: nothing in CI logs, pipes or machine-readable output. Validation, the catalog and the site build show it
at the scale where they take minutes."""

from __future__ import annotations

import sys
import time
from types import TracebackType

INTERVAL_S = 0.25
"""Least time between two redraws of the line."""


class Progress:
    """``with Progress("checking", total) as p: ... p.advance()``: ``label: done/total (percent)``."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self.shown = 0
        self.on = total > 1 and sys.stderr.isatty()
        self._last = 0.0

    def __enter__(self) -> Progress:
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.on and (now - self._last >= INTERVAL_S or self.done >= self.total):
            self._last = now
            line = f"{self.label}: {self.done}/{self.total} ({100 * self.done // max(self.total, 1)} %)"
            sys.stderr.write("\r" + line.ljust(self.shown))
            sys.stderr.flush()
            self.shown = len(line)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * self.shown + "\r")  # the line is cleared: what is printed next stands alone
            sys.stderr.flush()
