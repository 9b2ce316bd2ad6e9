"""The HTML a reader's browser gets from a hand-written page, held to an allowlist: elements, attributes and URL
schemes a page may carry, read from the tree an HTML5 parser (Lexbor, through selectolax) builds, as a browser
builds it: entities decoded, attributes as the browser sees them, ``<template>`` content inert.

Anything else is a problem, found by name (``problems``), and the sanitizer ``nh3`` (ammonia, on html5ever) is
the net: a page it would change by the same allowlist is refused even when no named problem explains why
(``changed_by_sanitizer``). The text a reader sees (``shown_text``) is computed from the same tree with one
visibility rule, so the figure check reads what the reader sees."""

from __future__ import annotations

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
    in_cells = 0
    for node, leaving in _walk(body) if body is not None else ():
        tag = node.tag
        if tag in ("td", "th"):
            in_cells += -1 if leaving else 1
        if leaving or tag in ("body", "-comment", "-text"):
            continue
        if tag == "table" and in_cells and not generated:  # a reader reads a row across its cells (``readings``)
            yield Problem("element", "<table> inside a table's cell", "<table")
            continue
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


def readings(html: str) -> list[list[str]]:
    """The texts a page shows, each reading a list of marked texts (``shown_text(html, apart=True)``): its runs; its
    tables and definition lists read cell by cell (``_grid_texts``); and, when it has superscripts or subscripts,
    both again with them left out (a footnote's mark or an index between a metric and its value:
    ``TTFT<sup>1</sup> 274``, ``TTFT<sub>50</sub> 274``). One parse of the page."""
    body = _tree(html)
    if body is None:
        return []
    found = [_runs(body, True), _grid_texts(body, True)]
    if body.css_first("sup, sub") is not None:
        found += [_runs(body, True, scripts=False), _grid_texts(body, True, scripts=False)]
    return found


def _grid_texts(body: Any, apart: bool, scripts: bool = True) -> list[str]:
    """Tables and definition lists as a reader reads them, cell by cell: a table's header row (its first row of
    header cells, else its first row) across its cells, and each other cell after its column's header and between
    its row's first cell and that header (``| Metric | Value |`` over ``| TTFT | 274 |`` reads ``Value 274`` and
    ``TTFT 274 Value``; ``| Phase | Tokens |`` over ``| Prefill | 512 |`` reads ``Prefill 512 Tokens``, a count);
    a definition after its term. The texts are kept apart by a paragraph's end."""
    rows: dict[int, list[list[str]]] = {}
    heads: dict[int, list[str]] = {}
    for tr in body.css("tr"):
        table = tr.parent
        while table is not None and table.tag != "table":
            table = table.parent
        key = table.mem_id if table is not None else 0
        cells = [c for c in tr.iter() if c.tag in ("td", "th")]
        texts = [" ".join(_runs(c, apart, scripts, within=True)) for c in cells]
        if key not in heads and (all(c.tag == "th" for c in cells) or key not in rows):
            heads[key] = texts
            rows.setdefault(key, [])
        else:
            rows.setdefault(key, []).append(texts)
    out = [" ".join(head) for head in heads.values()]
    for key, of_table in rows.items():
        head = heads.get(key, [])
        for texts in of_table:
            for i, cell in enumerate(texts[1:], 1):
                over = head[i] if i < len(head) else ""
                if not figures.marked_header_unit(over):  # else read under its header's unit (``column_figures``)
                    out += [f"{over} {cell}", f"{texts[0]} {cell} {over}"]
    for dd in body.css("dd"):
        term = dd.prev
        while term is not None and term.tag not in ("dt", "dd"):
            term = term.prev
        if term is not None and term.tag == "dt":
            out.append(" ".join([*_runs(term, apart, scripts), *_runs(dd, apart, scripts)]))
    return ["\n\n".join(out)] if out else []


def _runs(top: Any, apart: bool, scripts: bool = True, within: bool = False) -> list[str]:
    """``shown_text`` of the tree under ``top``; without its superscripts and subscripts unless ``scripts``; ``within``:
    without the tables inside it (a cell's own text: a hand-written page may hold no table in a cell, ``problems``,
    and each node is read for one cell however deep a generated page's tables nest)."""
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        text = " ".join("".join(current).split())
        if text:
            runs.append(text)
        current.clear()

    skip = frozenset({"-comment", *(() if scripts else ("sub", "sup")), *(("table",) if within else ())})
    in_code = 0
    for node, leaving in _walk(top, skip):  # a block's end splits the text as its start does
        tag = node.tag
        if tag == "-text":
            current.append("" if in_code else unmarked(node.text_content or ""))
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
