"""What a hand-written page under site/ and the site's stylesheets show a reader, read for the checks of those pages:
the page as Python-Markdown renders it with its citations left out (the build renders them), the tags in it that
could forge citation markup, run script or show or hide text, the values of its front matter as MkDocs reads it, the
stylesheets as a CSS parser reads them, and where in the page's Markdown each rendered piece was typed. The rules
make findings of what this module reads; the page's own lines are read by ``markdown.prose``."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

from evreg.claims import citations, figures, markdown, sanitize


def rendered(text: str, extensions: list[Any]) -> str:
    """The HTML a page renders to, its citations, settings, quotes and derived figures left out (checked line by
    line, in the Markdown); ``markdown.RenderTooSlow`` when it does not render within the time a page may take. Each
    form stands as a placeholder while the page renders, as the build's markup stands there: a line that holds only a
    citation is no blank line (which would end a table or begin a code block), and then as a space."""
    text = text.replace(_PLACEHOLDER, "\ufffd")  # the page's own stays a character, as the build shows it
    html = markdown.to_html_bounded(markdown.with_forms(text, without_forms), extensions)
    return html.replace(_PLACEHOLDER, " ")


_PLACEHOLDER = "\ue000"
"""A character of the private use area: not white space, not a figure, left alone by Python-Markdown."""


def without_forms(part: str) -> str:
    """A piece of prose with its citations, settings, quotes and derived figures each a placeholder (checked line by
    line)."""
    pieces, last = [], 0
    for form in citations.parse(part):
        if not isinstance(form, citations.CitationError):
            pieces += [part[last : form.start], _PLACEHOLDER]
            last = form.end
    return "".join(pieces) + part[last:]


def page_figures(content: str) -> list[tuple[str, str]]:
    """(figure, where it is shown) of every figure a hand-written page's rendered HTML shows a reader, as validation
    and the build both read it (one definition: a page validation passes, the build publishes). A figure of any
    reading is a claim: the text as the build reads every page (``markdown.html_figures``), the readings of the tree
    an HTML5 parser builds (``sanitize.readings``: its text, its tables cell by cell, both without superscripts and
    subscripts), and the attributes a reader may be shown; and each number in a column whose header or caption states
    a unit (named as where it is shown). A figure several readings find is counted as often as the reading that finds
    it most often. The renderer's citations are left out first (the build reads a page with them)."""
    content = markdown.without_citations(content)
    read = sanitize.readings(content)
    texts = [
        markdown.html_figures(content),
        *(figures.either_way(reading) for reading in read.texts),
        markdown.attribute_figures(content),
    ]
    most: collections.Counter[str] = collections.Counter()
    for reading in texts:
        most |= collections.Counter(reading)
    ordered = dict.fromkeys(f for reading in texts for f in reading)
    found = [(figure, "on a hand-written page") for figure in ordered for _ in range(most[figure])]
    return found + [(figure, f"under {where} (in {unit})") for figure, where, unit in read.columns]


def forged_classes(content: str) -> Iterator[str]:
    """The citation classes (``evreg-cite``...) of every tag Python-Markdown wrote in rendered HTML (not code it shows
    as text): citation markup only the renderer makes."""
    for tag in markdown.html_tags(content):
        if forged := markdown.FORGED.search(tag):
            yield forged.group().rsplit("=", 1)[-1].strip("\"' ")


def front_matter_figures(text: str) -> Iterator[tuple[Any, str]]:
    """(key, figure) of every figure in a page's YAML front matter as MkDocs reads it (its title is the page's heading
    and navigation entry): the values MkDocs shows, after YAML has decoded them (``"\\x35\\x32.3"`` is 52.3)."""
    from mkdocs.utils.meta import get_data

    meta = get_data(text)[1]
    for key, value in meta.items() if isinstance(meta, dict) else ():
        for figure in figures.find_figures(str(value)) if isinstance(value, str | int | float) else ():
            yield key, figure.text


PULL = "pull"
IMPORT = "import"
REMOTE = "remote"
FIGURE = "figure"
_PULLS = frozenset({"attr", "counter", "counters"})
"""CSS functions that show text taken from elsewhere (an attribute, a counter), which no check reads."""
_LOADS = frozenset({"url", "src", "image", "image-set", "-webkit-image-set"})
"""CSS functions that load a resource."""


def stylesheet(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(line, column, kind, piece) of what a stylesheet under site/ may not do, read with a CSS parser (tinycss2):
    ``@import`` another stylesheet (``IMPORT``), load a resource that is not the site's own (``REMOTE``: a URL with
    a scheme or another host), show text taken from elsewhere (``PULL``: ``attr()``, ``counter()``), or show a figure
    in a string (``FIGURE``: ``content: "52 ms"``, escapes decoded as CSS decodes them)."""
    import tinycss2

    from evreg.claims.sanitize import LOADED, url_problem

    top = tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True)
    yield from _string_figures(top)
    stack = list(reversed(top))
    while stack:  # depth-first in the sheet's order, without recursion: blocks nest as deep as a sheet likes
        node = stack.pop()
        kind = node.type
        if kind == "at-rule" and node.lower_at_keyword == "import":
            yield node.source_line, node.source_column, IMPORT, "@import"
        if kind == "url" and url_problem(node.value, LOADED):
            yield node.source_line, node.source_column, REMOTE, f"url({node.value})"
        if kind == "function":
            name = node.lower_name
            if name in _PULLS:
                yield node.source_line, node.source_column, PULL, f"{name}()"
            if name in _LOADS:
                for arg in node.arguments:
                    if arg.type in ("string", "url") and url_problem(arg.value, LOADED):
                        yield node.source_line, node.source_column, REMOTE, f"{name}({arg.value})"
        for part in ("arguments", "content", "prelude"):  # pushed last-first: popped prelude first
            children = getattr(node, part, None) or ()
            yield from _string_figures(children)
            stack.extend(reversed(children))


def _string_figures(nodes: Any) -> Iterator[tuple[int, int, str, str]]:
    """Figures in the strings of one run of tokens, strings next to each other read as one (``content: "52" " ms"``
    shows ``52 ms``); and a string that shows a number at all (``content: "52.3"`` before a page's ``tok/s``):
    numbers reach a page only as citations."""
    run: list[Any] = []
    for node in [*nodes, None]:
        if node is not None and node.type == "string":
            run.append(node)
        elif node is not None and node.type == "whitespace" and run:
            continue
        elif run:
            shown = "".join(n.value for n in run)
            found = [f.text for f in figures.find_figures(shown)]
            if not found and any(ch.isdigit() for ch in shown):  # a number the page's text can give a unit to
                found = [shown]
            for figure in found:
                yield run[0].source_line, run[0].source_column, FIGURE, figure
            run = []


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
