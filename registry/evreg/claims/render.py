"""The render process of ``evreg.claims.markdown.to_html_bounded``: ``serve(FD)`` renders each page sent on the
connection at file descriptor ``FD`` (text and extensions) and answers ``1`` and the HTML, or ``0`` when the renderer
raised, until the other end closes."""

from __future__ import annotations

from multiprocessing.connection import Connection

from evreg.claims.markdown import to_html


def serve(fd: int) -> None:
    conn = Connection(fd)
    while True:
        try:
            text, extensions = conn.recv()
        except EOFError:
            return
        try:
            reply = b"1" + to_html(text, extensions).encode("utf-8", "surrogatepass")
        except Exception:  # any renderer error: a page that did not render, reported by the caller
            reply = b"0"
        conn.send_bytes(reply)
