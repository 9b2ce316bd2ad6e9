"""What counts as code in a hand-written Markdown page: the one definition validation (figures and
citations are looked for outside code) and the site build (citations are rendered outside code) share."""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`[^`]*`)")


def lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, is code) of every line; a fence line and the lines between fences are code.
    ``"\\n".join`` of the lines gives the text back."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if _FENCE.match(line):
            fenced = not fenced
            yield n, line, True
        else:
            yield n, line, fenced


def spans(line: str) -> Iterator[tuple[str, bool]]:
    """(text, is inline code) pieces of a line outside fences; joined, they give the line back."""
    for i, piece in enumerate(_INLINE_CODE.split(line)):
        if piece:
            yield piece, i % 2 == 1


def prose(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines outside code, with inline code blanked (columns stay true)."""
    for n, line, code in lines(text):
        if not code:
            yield n, "".join(" " * len(t) if is_code else t for t, is_code in spans(line))
