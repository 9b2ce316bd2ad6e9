"""What counts as code in a hand-written Markdown page: the one definition validation (figures and
citations are looked for outside code) and the site build (citations are rendered outside code) share."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`[^`]*`)")


_PRE_OPEN = re.compile(r"<pre\b", re.I)
_PRE_CLOSE = re.compile(r"</pre\s*>", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_INDENTED = re.compile(r"^(?: {4}|\t)")


def _fence(line: str) -> str | None:
    """The fence a line opens or closes (its run of backticks or tildes), or None: a backtick fence's info string
    holds no backtick (```x``` is inline code, not a fence)."""
    m = _FENCE.match(line)
    if not m:
        return None
    run = re.match(r"`+|~+", line.lstrip()).group()  # type: ignore[union-attr]
    return None if run[0] == "`" and "`" in line.lstrip()[len(run) :] else run


def lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, is code) of every line. Code: a fence line and the lines between fences (a fence is
    closed by the same run, as Python-Markdown reads it: ``~~~`` and ```````` do not close a ``` fence), the lines
    of a ``<pre>`` block (opened outside inline code), and an indented code block (lines indented four spaces or
    a tab after a blank line, outside a list). ``"\\n".join`` of the lines gives the text back."""
    fence: str | None = None
    pre = indented = in_list = False
    blank = True
    for n, line in enumerate(text.split("\n"), 1):
        run = _fence(line)
        opens_pre = fence is None and not pre and bool(_PRE_OPEN.search(_INLINE_CODE.sub("", line)))
        if fence or pre or run:
            code = True
        else:
            indented = bool(_INDENTED.match(line)) and (indented or (blank and not in_list)) and bool(line.strip())
            code = indented or opens_pre
        if opens_pre and not _PRE_CLOSE.search(line):
            pre = True
        elif pre and _PRE_CLOSE.search(line):
            pre = False
        if run and not pre:
            if fence is None:
                fence = run
            elif run == fence and not line.lstrip()[len(run) :].strip():
                fence = None
        if line.strip() and not indented:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and line[:1] in (" ", "\t"))
        blank = not line.strip()
        yield n, line, code


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def cells(line: str) -> list[tuple[int, str]]:
    """(column in the line, text) of each cell of a Markdown table row."""
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", line)]
    return [(a + 1, line[a + 1 : b]) for a, b in itertools.pairwise(bars)]


def tables(text: str) -> Iterator[tuple[list[str], int, str]]:
    """(header cells, line number, row line) of every body row of every Markdown table outside code."""
    header: list[str] | None = None
    previous = ""
    for n, line in prose(text):
        if _TABLE_RULE.match(line) and _TABLE_ROW.match(previous):
            header = [t.strip() for _, t in cells(previous)]
        elif header is not None and _TABLE_ROW.match(line):
            yield header, n, line
        else:
            header = None
        previous = line


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
