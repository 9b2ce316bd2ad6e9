"""The one sink for text a registry's contributor controls that ``evreg`` prints: file names, messages, and what
MkDocs and the libraries a build runs log. A control character is written as an escape, so a printed line never
splits in two, never rewrites the terminal and never reads as a CI workflow command (``::error ...`` must start a
line; a log line starts with its level)."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Control characters (C0, DEL, C1) and the Unicode line and paragraph separators."""


def visible(text: str) -> str:
    """``text`` with its control characters (newlines included) written as escapes."""
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _escaping_handler(level: int) -> logging.Handler:
    """A handler writing log records on standard error, one line each, ``LEVEL - message``, control characters
    escaped. (``logging`` is loaded here, by a command that runs MkDocs: it is a twentieth of the start-up of every
    other command.)"""
    import logging

    class EscapingHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                line = f"{record.levelname} - {visible(self.format(record))}\n"
                sys.stderr.write(line)
            except Exception:
                self.handleError(record)

    return EscapingHandler(level)


@contextlib.contextmanager
def escaped_logs(level: int = 30) -> Iterator[None]:
    """While it lasts, log records at ``level`` (``logging.WARNING``) or above that reach the root logger (MkDocs',
    which name pages and decoded link targets, and every library's that has no handler of its own) go through the
    escaping handler (``_escaping_handler``)."""
    import logging

    root = logging.getLogger()
    handlers, old_level = root.handlers[:], root.level
    root.handlers[:] = [_escaping_handler(level)]
    root.setLevel(level)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(old_level)
