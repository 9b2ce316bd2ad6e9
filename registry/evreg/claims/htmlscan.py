"""What a hand-written page under site/ and the site's stylesheets show a reader, read for the checks of those pages:
the page as Python-Markdown renders it with its citations left out (the build renders them), the tags in it that
could forge citation markup, run script or show or hide text, the values of its front matter as MkDocs reads it, the
strings and pulled-in text of stylesheets, and where in the page's Markdown each rendered piece was typed. The rules
make findings of what this module reads; the page's own lines are read by ``markdown.prose``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evreg.claims import citations, figures, markdown


def rendered(text: str, extensions: list[Any]) -> str:
    """The HTML a page renders to, its citations, settings, quotes and derived figures left out (checked line by
    line, in the Markdown); ``markdown.RenderTooSlow`` when it does not render within the time a page may take."""
    return markdown.to_html_bounded(markdown.with_forms(text, without_forms), extensions)


def without_forms(part: str) -> str:
    """A piece of prose with its citations, settings, quotes and derived figures left out (checked line by line)."""
    pieces, last = [], 0
    for form in citations.parse(part):
        if not isinstance(form, citations.CitationError):
            pieces.append(part[last : form.start])
            last = form.end
    return "".join(pieces) + part[last:]


FORGED = "forged"
SCRIPT = "script"
STYLE = "style"


def unsafe_tags(content: str) -> Iterator[tuple[str, str]]:
    """(kind, piece) of every tag Python-Markdown wrote in rendered HTML (not code it shows as text) that holds
    citation markup only the renderer makes (``FORGED``; the piece is the class), script (``SCRIPT``) or style
    (``STYLE``), in the page's order and, within a tag, in that order."""
    for tag in markdown.html_tags(content):
        if forged := markdown.FORGED.search(tag):
            yield FORGED, forged.group().rsplit("=", 1)[-1].strip("\"' ")
        if m := markdown.SCRIPT.search(tag):
            yield SCRIPT, m.group().strip()
        if m := markdown.STYLE.search(tag):
            yield STYLE, m.group().strip()


def front_matter_figures(text: str) -> Iterator[tuple[Any, str]]:
    """(key, figure) of every figure in a page's YAML front matter as MkDocs reads it (its title is the page's heading
    and navigation entry): the values MkDocs shows, after YAML has decoded them (``"\\x35\\x32.3"`` is 52.3)."""
    from mkdocs.utils.meta import get_data

    meta = get_data(text)[1]
    for key, value in meta.items() if isinstance(meta, dict) else ():
        for figure in figures.find_figures(str(value)) if isinstance(value, str | int | float) else ():
            yield key, figure.text


CSS_PULL = re.compile(r"\b(?:attr|counters?)\s*\(", re.I)
"""CSS that shows text taken from elsewhere (``attr()``, ``counter()``), which no check reads."""
CSS_STRING = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\])*+)\1""")
"""A CSS string: a backslash escapes the character after it, as CSS reads it (read also as a character of its own,
``'a"' + '\\' * 34`` took seconds: each backslash could be read two ways)."""


def css_unescaped(text: str) -> str:
    """A CSS string as shown: ``\\35 2`` is 52."""
    return re.sub(
        r"\\([0-9a-fA-F]{1,6})\s?|\\(.)", lambda m: chr(int(m.group(1), 16)) if m.group(1) else m.group(2), text
    )


def css_pulls(line: str) -> Iterator[tuple[int, str]]:
    """(1-based column, text) of every pull of text from elsewhere in a line of a stylesheet."""
    for m in CSS_PULL.finditer(line):
        yield m.start() + 1, m.group()


def css_string_figures(line: str) -> Iterator[tuple[int, str]]:
    """(1-based column of its string, figure) of every figure a string in a line of a stylesheet shows (``content``)."""
    for m in CSS_STRING.finditer(line):
        for figure in figures.find_figures(css_unescaped(m.group(2))):
            yield m.start() + 1, figure.text


class Where:
    """Where in a page's Markdown each of a sequence of rendered pieces (in the order the page shows them) was typed:
    the next prose line at or after the previous piece that holds it, else the next that holds its first word (a
    figure split over lines or by markup), else the first such line anywhere, else line 1. Code lines are skipped:
    a rendered piece is never in code."""

    def __init__(self, text: str) -> None:
        self.lines = [(n, "" if code else line.lower()) for n, line, code in markdown.lines(text)]
        self.at = (0, 0)  # (index into lines, column) where the next search starts

    def __call__(self, shown: str) -> tuple[int, int]:
        words = shown.split()
        for needle in dict.fromkeys([shown.lower(), words[0].lower() if words else ""]):
            for start in (self.at, (0, 0)):
                found = self._find(needle, *start) if needle else None
                if found is not None:
                    i, column = found
                    self.at = (i, column + len(needle))
                    return self.lines[i][0], column + 1
        return 1, 1

    def _find(self, needle: str, first: int, column: int) -> tuple[int, int] | None:
        for i in range(first, len(self.lines)):
            at = self.lines[i][1].find(needle, column if i == first else 0)
            if at >= 0:
                return i, at
        return None
