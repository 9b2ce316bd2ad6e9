"""The HTML a reader's browser gets from a hand-written page, held to an allowlist: elements, attributes and URL
schemes a page may carry, read from the tree an HTML5 parser (Lexbor, through selectolax) builds, as a browser
builds it: entities decoded, attributes as the browser sees them, ``<template>`` content inert.

Anything else is a problem, found by name (``problems``), and the sanitizer ``nh3`` (ammonia, on html5ever) is
the net: a page it would change by the same allowlist is refused even when no named problem explains why
(``changed_by_sanitizer``). The text a reader sees (``shown_text``) is computed from the same tree with one
visibility rule, so the figure check reads what the reader sees."""

from __future__ import annotations

import collections
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evreg.claims import figures
from evreg.claims.figures import CLOSE, EDGE, OPEN, unmarked

BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl", "dt",
        "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "ol", "p",
        "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
"""Elements a browser lays out as blocks (or breaks): the text on either side is not one run."""
INLINE = frozenset(
    {
        "a", "abbr", "b", "bdi", "cite", "code", "del", "dfn", "em", "i", "img", "ins", "kbd", "mark", "q", "s",
        "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr", "col", "colgroup",
    }
)  # fmt: skip
"""Elements whose text runs on with its neighbours'."""
CODE = frozenset({"code", "pre"})
"""Elements whose text is code the page shows, not prose: a figure there is no claim (as in Markdown's code). Keys
and sample output (``kbd``, ``samp``) are prose, as the build reads them."""
TAGS = BLOCKS | INLINE
"""The elements a hand-written page may hold: what Python-Markdown and the site's extensions write, and plain
text markup. No script, style, frame, form, media, SVG or MathML, no custom elements, no ``template``."""
GLOBAL_ATTRIBUTES = frozenset({"id", "class", "title", "lang", "dir"})
ATTRIBUTES: dict[str, frozenset[str]] = {
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "td": frozenset({"colspan", "rowspan", "align"}),
    "th": frozenset({"colspan", "rowspan", "align", "scope"}),
    "ol": frozenset({"start", "type", "reversed"}),
    "li": frozenset({"value"}),
    "details": frozenset({"open"}),
    "time": frozenset({"datetime"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
    "q": frozenset({"cite"}),
    "blockquote": frozenset({"cite"}),
    "del": frozenset({"cite", "datetime"}),
    "ins": frozenset({"cite", "datetime"}),
}
"""Attributes a page's elements may carry beyond ``GLOBAL_ATTRIBUTES``: no event handlers, no ``style``, no
``hidden``."""
URL_ATTRIBUTES = frozenset({"href", "src", "cite"})
URL_SCHEMES = frozenset({"http", "https", "mailto"})
"""Schemes a page's addresses may have (or none: relative to the site)."""
LOADED: frozenset[str] = frozenset()
"""Schemes what a page loads (an image) may have: none, it is the site's own."""
SHOWN_ATTRIBUTES = frozenset({"title", "alt"})
"""Attributes whose text a reader is shown (a tooltip, an image that does not load)."""

GENERATED_TAGS = TAGS | frozenset(
    {
        "article", "button", "input", "label", "svg", "g", "path", "polyline", "polygon", "line", "rect", "circle",
        "text", "tspan", "title",
    }
)  # fmt: skip
"""What the renderer's own pages may hold besides a hand-written page's elements: the comparison tables' controls
and the charts' SVG drawing elements (no script, ``foreignObject``, ``use`` or animation)."""
GENERATED_ATTRIBUTES = frozenset(
    {
        "role", "hidden", "type", "placeholder", "scope", "colspan", "rowspan", "viewbox", "transform", "fill",
        "stroke", "stroke-dasharray", "stroke-width", "text-anchor", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy",
        "r", "d", "points", "width", "height", "open",
    }
)  # fmt: skip
"""Attributes the renderer writes (with ``data-*`` and ``aria-*``), none of them an event handler or a style."""

_URL_NOISE = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_C0_AND_SPACE = "".join(map(chr, range(0x21)))


def browser_form(url: str) -> str:
    """``url`` (an attribute's decoded value) as a browser parses it: tabs and line breaks removed anywhere, leading
    and trailing C0 controls and spaces stripped (the URL standard)."""
    return _URL_NOISE.sub("", url).strip(_C0_AND_SPACE)


def url_scheme(url: str) -> str | None:
    """The scheme a browser reads in ``url``; None when it is relative."""
    m = _SCHEME.match(browser_form(url))
    return m.group(1).lower() if m else None


def url_problem(url: str, schemes: frozenset[str] = URL_SCHEMES) -> str | None:
    """Why ``url`` may not be carried, read as a browser reads it: a scheme outside ``schemes`` (none: only an
    address of the site itself, as for what a page loads), or ``//`` another host. The one reading of addresses for
    pages, stylesheets and the site's configuration."""
    scheme = url_scheme(url)
    if scheme is not None and scheme not in schemes:
        allowed = ", ".join(sorted(schemes))
        return f"scheme {scheme}: " + (f"not {allowed}" if schemes else "it loads from outside the site")
    bare = browser_form(url).replace("\\", "/")
    if bare.startswith("//"):
        return "another host"
    return None


@dataclass(frozen=True)
class Problem:
    """Something a page holds that the allowlist does not: ``piece`` names it as written in the tree."""

    kind: str  # "element", "attribute" or "url"
    piece: str
    token: str
    """What to look for in the page's source to find where it was written."""

    @property
    def styles(self) -> bool:
        """Whether it is style or drawing (it can show or hide text no check reads) rather than script or loading."""
        return self.token in ("style", "<style", "<svg", "hidden")


def _tree(html: str) -> Any:
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(f"<body>{html}</body>").body


def problems(html: str, generated: bool = False) -> Iterator[Problem]:
    """What the page's HTML holds beyond the allowlist, in the page's order; ``generated``: a page the renderer
    made, held to the renderer's wider allowlist (tables with controls, SVG charts) as a final net."""
    body = _tree(html)
    tags = GENERATED_TAGS if generated else TAGS
    if body is None:
        return
    in_cells = 0
    # a generated page (every page of the site) in the parser's own order; a hand-written one with the cells it is in
    nodes = ((n, False) for n in body.traverse(include_text=False)) if generated else _walk(body)
    for node, leaving in nodes:
        tag = node.tag
        if tag in ("td", "th"):
            in_cells += -1 if leaving else 1
        if leaving or tag in ("body", "-comment", "-text"):
            continue
        if tag == "table" and in_cells and not generated:  # a reader reads a row across its cells (``readings``)
            yield Problem("element", "<table> inside a table's cell", "<table")
            continue
        for name in ("colspan", "rowspan") if tag in ("td", "th") and not generated else ():
            if _span(node.attributes.get(name), None) > MAX_SPAN:
                yield Problem("attribute", f"{name} over {MAX_SPAN} on <{tag}>", name)
        if tag not in tags:
            yield Problem("element", f"<{tag}>", f"<{tag}")
            continue
        allowed = GLOBAL_ATTRIBUTES | ATTRIBUTES.get(tag, frozenset())
        if generated:
            allowed |= GENERATED_ATTRIBUTES
        for written, value in node.attributes.items():
            name = written.lower()  # SVG attributes keep their case in the tree (viewBox)
            if generated and name.startswith(("data-", "aria-")):
                continue
            if name not in allowed:
                yield Problem("attribute", f"{name} on <{tag}>", name)
            elif name in URL_ATTRIBUTES and (why := url_problem(value or "", LOADED if name == "src" else URL_SCHEMES)):
                yield Problem("url", f"{name}={value!r} on <{tag}> ({why})", value or name)


def clean(html: str) -> str:
    """The page's HTML as the sanitizer keeps it by the allowlist."""
    import nh3

    return nh3.clean(
        html,
        tags=set(TAGS),
        attributes={tag: set(names) for tag, names in {"*": GLOBAL_ATTRIBUTES, **ATTRIBUTES}.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel=None,
        strip_comments=False,
    )


def _shape(html: str) -> list[tuple[str, ...]]:
    """The tree as a list of its elements (with attributes) and texts, to compare two trees."""
    body = _tree(html)
    out: list[tuple[str, ...]] = []
    for node in body.traverse(include_text=True) if body is not None else ():
        if node.tag == "-text":
            out.append(("text", node.text_content or ""))
        elif node.tag != "-comment":
            out.append((node.tag, *sorted(f"{k}={v}" for k, v in node.attributes.items())))
    return out


def changed_by_sanitizer(html: str) -> bool:
    """Whether the sanitizer would change the page's tree (an element, attribute or text it drops)."""
    return _shape(clean(html)) != _shape(html)


def shown_text(html: str, apart: bool = False) -> list[str]:
    """The runs of prose a reader sees, in order: text nodes joined within inline elements, split at blocks and at
    code (``CODE``: shown as code, not read as prose); and the text of attributes a reader is shown (``title``,
    ``alt``) as runs of their own. Comments and ``<template>`` content are not shown. ``apart``: each inline
    element's edges marked (``figures.EDGE``), as a style may set the element off (``figures.either_way``)."""
    body = _tree(html)
    return _runs(body, apart) if body is not None else []


@dataclass
class Readings:
    """What a page shows, read every way a reader may read it (``readings``): ``texts``, each reading a list of
    marked texts (``shown_text(html, apart=True)``) for ``figures.either_way``; and ``columns``, (figure, where,
    unit) of each number in a table's column whose header (or caption) states a unit, and of a value alone below a
    title that names one (``the column 'Decode (tok/s)'``, ``the title 'Decode tok/s'``)."""

    texts: list[list[str]]
    columns: list[tuple[str, str, str]]


def readings(html: str) -> Readings:
    """The texts a page shows: its runs; its tables and definition lists read cell by cell (``_grids``); and, when it
    has superscripts or subscripts, both again with them left out (a footnote's mark or an index between a metric and
    its value: ``TTFT<sup>1</sup> 274``, ``TTFT<sub>50</sub> 274``). One parse of the page."""
    body = _tree(html)
    if body is None:
        return Readings([], [])
    texts, columns = [_runs(body, True)], collections.Counter[tuple[str, str, str]]()
    for scripts in (True, False) if body.css_first("sup, sub") is not None else (True,):
        if not scripts:
            texts.append(_runs(body, True, scripts=False))
        grid_texts, grid_columns = _grids(body, scripts)
        texts += grid_texts
        columns |= collections.Counter(grid_columns)  # a figure of both readings, as often as either has it
    return Readings(texts, list(columns.elements()))


MAX_SPAN = 100
"""The most columns or rows a hand-written page's table cell may span (``problems``; a reading clamps to it)."""
MAX_COLUMNS = 10 * MAX_SPAN
"""How many columns of a row a reading lays out (cells spanning rows into the next add up: each row of a table of
2,000 such cells grew by 100 columns)."""
CONTEXT = 40
"""How much of a neighbouring cell's or header's text a cell is read with (its end before the cell, its beginning
after it): a metric's name or a unit stands next to its number, and each cell is read a bounded number of times."""


TITLES = "h1, h2, h3, h4, h5, h6, summary, .admonition-title"
"""What titles the blocks below it (a heading, a collapsible block's summary, a note's title; ``_titled``)."""
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
TITLED_RUNS = 6
"""How many runs of text below a title are read after it (the first that show words or numbers: a paragraph, a list's
items, a definition's term and its definition)."""
TITLE_STEPS = 16
"""How many nodes after a title are looked at for them (empty ones too: comments, rules, images without words)."""
TITLE_CLIMB = 8
"""How many containers a title's reading climbs out of: for what follows a heading (``<div>## Decode tok/s</div>``
over ``52.3``), and for the titles of the notes and collapsible blocks around a title."""
_TITLE_READ = 2 * CONTEXT
"""How much of a title and of each node below it is read (``_runs(most=...)``): their beginnings. Each node is read
for the nearest title before it only (a reading stops at the next title), so a page is read once however its titles
nest."""
_NUMBER = re.compile(r"(?<![\w.])\d[\d.,]*")
_NUMBERS_ONLY = re.compile(r"[\s\d.,;:/()+\u2212\u2013\u2014~≈±-]*\d[\s\d.,;:/()+\u2212\u2013\u2014~≈±-]*")


def _titled(
    body: Any, scripts: bool, titled: dict[int, list[str]], columns: list[tuple[str, str, str]]
) -> dict[int, list[str]]:
    """A value right below a title, read as a definition after its term (``## Decode tok/s`` over ``52.3``; over ``###
    Run a`` over ``52.3``; a note titled ``Decode tok/s`` around one titled ``Run a``): each run of numbers alone
    among the first ``TITLED_RUNS`` runs of text below a title, among the title's next siblings and then its
    containers' (a heading inside a ``div`` titles what follows the ``div``), up to the next title (a note's title and
    a summary: within their own block); in a list or a definition list, a decimal alone (``- 52.3``, not ``- 8``:
    settings are counted in integers). It is read in the unit the nearest of the titles it is under names (as a
    column's figure, ``columns``), else after each of them (into ``titled``, by the title's place: 0 the nearest). A
    run with words of its own (``Batch size: 32``, ``Run a: 52.3``) is the page's text to read. Returns the titles of
    each table among them, by the table's node id (``_read_table`` reads its cells so)."""
    tables: dict[int, list[str]] = {}
    headings: dict[int, str] = {}  # the headings the page is under at this title, by level
    for title in body.css(TITLES):  # in the page's order
        head = _title_text(title, scripts)
        if title.tag in HEADINGS:
            level = HEADINGS.index(title.tag)
            headings = {n: h for n, h in headings.items() if n < level} | {level: head}
            heads = list(dict.fromkeys(reversed(headings.values())))
        else:
            heads = list(dict.fromkeys([head, *_enclosing_titles(title, scripts), *reversed(headings.values())]))
        read = 0
        for below in itertools.islice(_following(title, TITLE_CLIMB if title.tag in HEADINGS else 0), TITLE_STEPS):
            if below.tag in HEADINGS or _is_title(below):
                break
            if below.tag == "table":
                tables.setdefault(below.mem_id, heads)
                read += 1
                runs: list[str] = []
            elif below.tag == "-text":
                runs = [unmarked(below.text_content or "")]
            else:
                runs = _runs(below, True, scripts, within=below.tag != "dl", most=_TITLE_READ, untitled=True)
            for run in runs:
                if read >= TITLED_RUNS or not any(ch.isalnum() for ch in figures.joined(run)):
                    continue
                listed = below.tag in ("ul", "ol", "dl")  # an item or a definition: its own words may name it
                _value_below(run, heads, not listed, not listed, titled, columns)
                read += 1
            if read >= TITLED_RUNS or (below.tag != "-text" and _holds_title(below)):
                break
    return tables


_DECIMAL = re.compile(r"\d[.,]\d")
_LEADING_NUMBER = re.compile(r"\s*[+\u2212-]?\d")
_DATE = re.compile(r"\s*\d{4}-\d\d-\d\d\s*")


def _value_below(
    run: str,
    heads: list[str],
    block: bool,
    in_unit: bool,
    titled: dict[int, list[str]],
    columns: list[tuple[str, str, str]],
) -> None:
    """A run of numbers alone below the titles ``heads`` (nearest first) read in the unit the nearest title that
    names one names (``in_unit``), else after each title; ``block``: a block of its own, where an integer alone is
    read too, and a run that begins with a number is read after each title when one names a unit (``TTFT (ms)`` over
    ``274 on one card``, unless the run shows a figure of its own; the grammar reads ``Decode tok/s`` over ``3 runs``
    as a count). A table's cells are read so in rows of numbers alone: a row that names its values
    (``temperature | 0.7``) is read by its own words. See ``_titled``."""
    if OPEN in run:
        return  # a superscript's or subscript's text: the reading without them reads the run (``readings``)
    shown = figures.joined(run)
    named = next(((h, u) for h in map(figures.joined, heads) if (u := figures.named_unit(h))), None)
    alone = _NUMBERS_ONLY.fullmatch(shown) is not None and _DATE.fullmatch(shown) is None
    if alone and not (block or _DECIMAL.search(shown)):
        return
    if alone and in_unit and named:
        columns += [(figure, f"the title {named[0]!r}", named[1]) for figure in _in_unit(run, named[1])]
    elif alone or (block and named and _LEADING_NUMBER.match(shown) and not figures.find_figures(shown, shown=True)):
        for depth, head in enumerate(heads):
            titled[depth].append(f"{head} {_clip(run)}")


def _title_text(title: Any, scripts: bool) -> str:
    """A title's beginning, its numbers written as ``n`` (``_titled``)."""
    return _NUMBER.sub("n", " ".join(_runs(title, True, scripts, within=True, titled=True, most=_TITLE_READ)))


def _is_title(node: Any) -> bool:
    """Whether ``node`` is a summary or a note's title (a heading is one by its tag)."""
    classes = (node.attributes.get("class") or "").split() if node.tag == "p" else []
    return node.tag == "summary" or "admonition-title" in classes


def _holds_title(node: Any) -> bool:
    """Whether a title is inside ``node`` (its reading stopped there)."""
    return node.css_first(TITLES) is not None


def _enclosing_titles(title: Any, scripts: bool) -> list[str]:
    """The titles of the notes and collapsible blocks around a note's title or a summary, nearest first."""
    found = []
    block = title.parent
    for _ in range(TITLE_CLIMB):
        block = block.parent if block is not None else None
        if block is None or block.tag == "body":
            break
        first = next((c for c in block.iter() if c.tag != "-text"), None)
        if first is not None and _is_title(first):
            found.append(_title_text(first, scripts))
    return found


def _following(node: Any, climb: int) -> Iterator[Any]:
    """The nodes after ``node``: its next siblings, then its parent's, up to ``climb`` containers up (not the
    body)."""
    for _ in range(climb + 1):
        below = node.next
        while below is not None:
            if below.tag != "-comment":
                yield below
            below = below.next
        node = node.parent
        if node is None or node.tag == "body":
            return


def _grids(body: Any, scripts: bool) -> tuple[list[list[str]], list[tuple[str, str, str]]]:
    """Tables and definition lists as a reader reads them, cell by cell, as an HTML5 parser lays them out (spans
    included): a table's caption and header rows (its leading rows of header cells, else its first row, with a row
    of units alone below them) across their cells; each other cell after its column's header, and between its left
    neighbour (and its row's first cell) and that header (``| Metric | Value |`` over ``| TTFT | 274 |`` reads
    ``Value 274`` and ``TTFT 274 Value``; ``| Phase | Tokens |`` over ``| Prefill | 512 |`` reads
    ``Prefill 512 Tokens``, a count), or, when the header or caption states a unit, its numbers in that unit
    (``column``); a definition after its first and its last term; and the blocks below a title after it
    (``_titled``). Returns the readings (the cells and definitions; the runs and cells below titles, after the
    nearest title, after the next nearest, and so on, and the numbers alone in a title's unit: one reading each, so a
    figure the page's text holds once is counted once), each joined by paragraph ends, and the column figures."""
    columns: list[tuple[str, str, str]] = []
    tables: dict[int, tuple[Any, list[Any]]] = {}  # a table's rows, each in the table nearest it, in one pass
    for tr in body.css("tr"):
        table = tr.parent
        while table is not None and table.tag != "table":
            table = table.parent
        tables.setdefault(table.mem_id if table is not None else 0, (table, []))[1].append(tr)
    out: list[str] = []
    titled: dict[int, list[str]] = collections.defaultdict(list)
    titles = _titled(body, scripts, titled, columns)
    for table, rows in tables.values():
        heads = titles.get(table.mem_id, []) if table is not None else []
        _read_table(table, rows, scripts, out, columns, heads, titled)
    for dl in body.css("dl"):
        terms: list[str] = []
        defined = False
        for child in dl.iter():
            if child.tag == "dt":
                terms, defined = ([], False) if defined else (terms, defined)
                terms.append(" ".join(_runs(child, True, scripts, within=True)))
            elif child.tag == "dd" and terms:
                defined = True
                text = _clip(" ".join(_runs(child, True, scripts, within=True)))
                out += [f"{_tail(term)} {text}" for term in dict.fromkeys([terms[0], terms[-1]])]
    readings = [list(dict.fromkeys(out)), *titled.values()]  # a value below a title as often as it is typed
    return [["\n\n".join(reading)] for reading in readings if reading], columns


def _read_table(
    table: Any,
    rows: list[Any],
    scripts: bool,
    out: list[str],
    columns: list[tuple[str, str, str]],
    titles: list[str],
    titled: dict[int, list[str]],
) -> None:
    """``_grids`` of one table's rows (its own: a table in a cell is refused on a hand-written page); ``titles``: the
    titles above it (``_titled``), each cell also read after each (into ``titled``) and before its column's header
    (``## Decode tok/s`` over ``| Run | Result |``, ``| a | 52.3 |`` reads ``Decode tok/s 52.3 Result``; over
    ``| Run | Cards |``, ``| a | 2 |`` reads ``Decode tok/s 2 Cards``, a count)."""
    captions = [c for c in table.iter() if c.tag == "caption"] if table is not None else []
    caption = " ".join(_runs(captions[0], True, scripts, within=True)) if captions else ""
    caption_unit = figures.marked_header_unit(caption)
    header: list[str] = []
    units: dict[str, str | None] = {}  # a header's text -> the unit it states
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows) of a cell above that spans into the next rows
    in_header = True
    for n, tr in enumerate(rows):
        cells = [c for c in tr.iter() if c.tag in ("td", "th")]
        laid, carried = _laid_out(cells, carried, scripts)
        texts = [text for text, _, _ in laid]
        if in_header and (
            n == 0
            or (cells and all(c.tag == "th" for c in cells))
            or (
                not any(ch.isdigit() for t in texts for ch in figures.joined(t))
                and any(map(figures.marked_header_unit, texts))
            )
        ):  # a header row, or a row of units alone below one
            shown = list(dict.fromkeys(t for t, own, _ in laid if own))
            out.append(" ".join([_tail(caption), *shown]))
            labelled = not titles or _names_values(shown)
            for cell in shown if not labelled else ():
                _value_below(cell, titles, False, True, titled, columns)
            out += [f"{_tail(above)} {_clip(text)}" for above, text in zip(header, texts, strict=False) if above]
            pairs = itertools.zip_longest(header, texts, fillvalue="")
            header = [_clip(" ".join(p for p in pair if p)) for pair in pairs]
            continue
        in_header = False
        labelled = not titles or _names_values(texts)
        for col, (text, own, last) in enumerate(laid):
            if not own:
                continue
            # under the header of the first and of the last column it spans, once under each header text
            for over in dict.fromkeys(header[at] if at < len(header) else "" for at in (col, last)):
                if over not in units:
                    units[over] = figures.marked_header_unit(over)
                if units[over] or caption_unit:  # its numbers in the header's unit, or the caption's
                    unit, name = (units[over], over) if units[over] else (caption_unit, caption)
                    where = f"the column {figures.joined(name)!r}"
                    columns += [(figure, where, str(unit)) for figure in _in_unit(text, str(unit))]
                    continue
                cell = _clip(text)
                out += [f"{_tail(over)} {cell}", f"{_tail(caption)} {cell}"]
                if titles and not labelled:  # a row that names its values (``temperature | 0.7``) is read by them
                    _value_below(text, titles, False, True, titled, columns)
                for before in dict.fromkeys([laid[col - 1][0] if col else "", laid[0][0] if col > 1 else ""]):
                    out.append(f"{_tail(before)} {cell} {_head(over)}")


def _names_values(cells: list[str]) -> bool:
    """Whether a row has a cell of words (``temperature | 0.7``): its values are read by them, not by a title above."""
    return any(not _NUMBERS_ONLY.fullmatch(figures.joined(t)) for t in cells if t.strip())


def _laid_out(
    cells: list[Any], carried: dict[int, tuple[str, int]], scripts: bool
) -> tuple[list[tuple[str, bool, int]], dict[int, tuple[str, int]]]:
    """A row's cells by column, as a browser lays them out: (text, whether the cell begins here, the last column it
    spans), a cell spanning columns in each of them and one from a row above in its column; and the columns cells
    of this row and those above span into the next rows. Spans are clamped to ``MAX_SPAN``, a row to its first
    ``MAX_COLUMNS`` columns (the page's text reads the rest)."""
    out: list[tuple[str, bool, int]] = []
    below = {c: (text, n - 1) for c, (text, n) in carried.items() if n > 1}

    def from_above() -> None:
        while len(out) in carried:
            out.append((carried[len(out)][0], False, len(out)))

    for cell in cells:
        from_above()
        text = " ".join(_runs(cell, True, scripts, within=True))
        wide, tall = (_span(cell.attributes.get(name)) for name in ("colspan", "rowspan"))
        first = len(out)
        for k in range(wide):
            if len(out) >= MAX_COLUMNS:
                break
            if tall > 1:
                below[len(out)] = (text, tall - 1)
            out.append((text, k == 0, first + wide - 1))
    from_above()
    if len(out) > MAX_COLUMNS:
        out = out[:MAX_COLUMNS]
    return out, {c: v for c, v in below.items() if c < MAX_COLUMNS}


def _span(value: str | None, most: int | None = MAX_SPAN) -> int:
    """A colspan or rowspan as a browser reads it (its leading digits; 1 if none or 0), clamped to ``most``."""
    digits = re.match(r"\s*(\d+)", value or "")
    n = max(1, int(digits.group(1)[:6])) if digits else 1
    return n if most is None else min(most, n)


def _in_unit(text: str, unit: str) -> list[str]:
    """The figures of a cell under a column in ``unit``, read joined and set apart (``v<b>52</b>`` shows 52)."""
    found = [f.text for f in figures.column_figures(figures.joined(text), unit)]
    if figures.unmarked(text) != text:
        found += [f.text for f in figures.column_figures(figures.apart(text), unit) if f.text not in found]
    return found


def _clip(text: str) -> str:
    """A cell's text as read beside its neighbours: whole, or its beginning and its end when it is long (its middle
    is read in the page's text)."""
    return text if len(text) <= 8 * CONTEXT else f"{_head(text, 4 * CONTEXT)}\n\n{_tail(text, 4 * CONTEXT)}"


def _tail(text: str, n: int = CONTEXT) -> str:
    """The last words of ``text`` (about ``n`` characters)."""
    return text if len(text) <= n else text[-n:].split(" ", 1)[-1]


def _head(text: str, n: int = CONTEXT) -> str:
    """The first words of ``text`` (about ``n`` characters)."""
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0]


_BETWEEN_MARKS = re.compile(r"[\s,;\x00]*")
"""What may stand between two superscripts or subscripts that make one list of marks (``<sup>1</sup>, <sup>2</sup>``).
"""


def _runs(
    top: Any,
    apart: bool,
    scripts: bool = True,
    within: bool = False,
    titled: bool = False,
    most: int | None = None,
    untitled: bool = False,
) -> list[str]:
    """``shown_text`` of the tree under ``top``; without its superscripts and subscripts unless ``scripts`` (marks
    one after another left out together with the commas between them: ``TTFT<sup>1</sup>,<sup>2</sup> 274`` reads
    ``TTFT 274``); ``within``: without the tables and definition lists inside it (a cell's or a definition's own
    text: a hand-written page may hold no table in a cell, ``problems``; a list is read in its own terms; so each node
    is read for one cell or definition however deep they nest); ``titled``: without a heading's permalink
    (``TITLES``); ``most``: about that many characters, its beginning; ``untitled``: up to the first title in it (a
    title's reading of what is below it, ``_titled``)."""
    runs: list[str] = []
    current: list[str] = []
    after_mark: int | None = None  # where in ``current`` the text after a superscript or subscript left out begins

    def flush() -> None:
        nonlocal after_mark
        text = " ".join("".join(current).split())
        if text:
            runs.append(text)
        current.clear()
        after_mark = None

    skip = frozenset({"-comment", *(("table", "dl") if within else ())})
    in_code = hidden = size = 0
    for node, leaving in _walk(top, skip):  # a block's end splits the text as its start does
        tag = node.tag
        if not scripts and tag in ("sub", "sup"):  # left out: a footnote's mark, an index
            between = "".join(current[after_mark:]) if after_mark is not None else None
            if not leaving and not hidden and between is not None and _BETWEEN_MARKS.fullmatch(between):
                current[after_mark:] = [" "] if between.strip(",;\x00") else []  # a space stays one
            hidden += -1 if leaving else 1
            if leaving and not hidden:
                after_mark = len(current)
            continue
        if titled and tag == "a" and "headerlink" in (node.attributes.get("class") or "").split():
            hidden += -1 if leaving else 1  # a heading's permalink, which the theme shows on hover
            continue
        if hidden:
            continue
        size += 1  # a node counts as a character: an empty element nested a thousand deep is read so far, no farther
        if (most is not None and size > most) or (untitled and (tag in HEADINGS or _is_title(node))):
            break
        if tag == "-text":
            text = "" if in_code else unmarked(node.text_content or "")
            current.append(text)
            size += len(text)
            continue
        if (tag in BLOCKS and tag != "br") or tag in CODE:
            flush()
        elif apart:  # a line break too: the build reads it as an inline element
            current.append(EDGE if tag not in ("sub", "sup") else CLOSE if leaving else OPEN)
        if tag in CODE:
            in_code += -1 if leaving else 1
        if leaving:
            continue
        for name in sorted(SHOWN_ATTRIBUTES & set(node.attributes)):
            value = node.attributes[name]
            if value and value.strip():
                runs.append(" ".join(value.split()))
    flush()
    return runs


def _walk(top: Any, skip: frozenset[str] = frozenset()) -> Iterator[tuple[Any, bool]]:
    """(node, leaving) of the tree under ``top`` in document order, depth first without recursion: each element as it
    is entered and as it is left, each text node once (leaving False); the nodes whose tag is in ``skip`` are left out
    with all they hold."""
    stack: list[tuple[Any, bool]] = [(top, False)]
    while stack:
        node, leaving = stack.pop()
        if node.tag in skip:
            continue
        yield node, leaving
        if not leaving and node.tag != "-text":
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(list(node.iter(include_text=True))))
