"""The render process of ``evreg.claims.markdown.to_html_bounded``: ``serve(FD, PARENT, MEMORY)`` renders each page
sent on the connection at file descriptor ``FD`` (its text, extensions and the most bytes its HTML may take) and
answers ``1`` and the HTML, ``2`` when the HTML is over that size, or ``0`` when the renderer raised, until the other
end closes. It ends within half a second of the process ``PARENT`` that started it, even in the middle of a page
(nothing waits for it then), and takes at most ``MEMORY`` bytes of address space."""

from __future__ import annotations

import os
import resource
import threading
import time
from multiprocessing.connection import Connection

from evreg.claims.markdown import to_html


def serve(fd: int, parent: int, memory: int) -> None:
    threading.Thread(target=_end_with, args=(parent,), daemon=True).start()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (memory if hard == resource.RLIM_INFINITY else min(memory, hard), hard))
    conn = Connection(fd)
    while True:
        try:
            text, extensions, limit = conn.recv()
        except EOFError:
            return
        try:
            html = to_html(text, extensions).encode("utf-8", "surrogatepass")
            reply = b"1" + html if len(html) <= limit else b"2"
        except Exception:  # any renderer error (MemoryError included): a page that did not render, told the caller
            reply = b"0"
        html = b""  # not held while waiting for the next page (the reply holds its own copy)
        conn.send_bytes(reply)


def _end_with(parent: int) -> None:
    """End this process once ``parent`` has (it is then another process's child). A parent-death signal would be
    tied to the thread that started this process, and a thread of the parent may start it and end."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
