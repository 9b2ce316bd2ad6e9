"""The hand-written pages under site/ and the site's stylesheets: citations and orphan figures line by line in the
Markdown, and in what a reader is shown (the page as Python-Markdown renders it, its front matter as MkDocs reads it,
the text stylesheets show), no script, no style and no hand-written citation markup. ``evreg.claims.htmlscan``
reads the pages and stylesheets; this module makes the findings."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evreg.check.rules import Rule
from evreg.claims import htmlscan, markdown, sanitize
from evreg.claims.siteconfig import site_extensions
from evreg.core import codes
from evreg.core.containment import PAGE_SUFFIXES, SITE_DIR, regular_files
from evreg.core.findings import Code, Finding
from evreg.core.jsonio import MAX_RECORD_BYTES
from evreg.store import Registry
from evreg_rules.index import index
from evreg_rules.prose import MAX_PER_FIELD, form_problems

PAGE_HTML = Code(
    "site-html-unsafe",
    "HTML outside the allowlist in a hand-written page",
    "Hand-written pages are Markdown and may hold plain HTML markup, held to an allowlist read from the tree an "
    "HTML5 parser builds (as a browser does): text and table elements, links (http, https, mailto or relative) "
    "and the site's own images; nothing that runs script, loads from another host, or is unknown to the allowlist "
    "(custom elements, template, frames, forms, media, event attributes).",
    "Write the content as Markdown or allowed markup, or link to a page; the site ships no page-specific script.",
    '<a href="javascript:alert(1)">x</a>',
)
PAGE_STYLE = Code(
    "site-style-unsafe",
    "Style in a hand-written page",
    "A style element or attribute in a hand-written page can show text no check reads (CSS content and attr()) or "
    "hide text the checks do read (a figure's unit set in a zero-size font), so a reader could see a figure that "
    "validation never saw.",
    "Drop the style; the site's own stylesheet styles every page.",
    '52.3<span style="font-size:0">x</span> tok/s',
)
PAGE_SLOW = Code(
    "site-page-too-slow",
    "A hand-written page that does not render in time",
    "Python-Markdown's inline patterns take time that grows faster than the page on some shapes (long runs of "
    "brackets or of link openings): such a page would hold validation and the build for hours, so a page must "
    "render within the time validation gives it.",
    "Break up the long run of brackets or tags (put code in a code block), or split the page.",
    '"[" * 20000',
)
FORGED = Code(
    "citation-forged",
    "Citation markup written by hand",
    "Only the renderer emits citation markup: it resolves the measurement, formats the value and links it. A "
    "hand-written element with the citation classes (evreg-cite, evreg-orphan, evreg-unresolved) would show "
    "a typed number styled as a receipt, and the build's orphan check trusts that markup.",
    "Write the citation {{ m:ID.METRIC[INDEX] }}; the renderer makes the markup.",
    '<span class="evreg-cite">52.3 tok/s</span>',
)


def check_site_pages(registry: Registry) -> Iterator[Finding]:
    """Citations, orphan figures and script of the hand-written pages under site/: citations line by line in the
    Markdown, everything a reader is shown in the page as Python-Markdown renders it (what the build publishes), its
    front matter as MkDocs reads it, and the text the stylesheets under site/ show."""
    measurements = index(registry).measurement_data
    if registry.source.label != "working tree":
        return
    root = Path(registry.root)
    extensions = site_extensions(root)
    # repr, not JSON: it tells NaN and the infinities from null, and a date from its ISO string
    config = repr(extensions).encode("utf-8", "surrogatepass")
    for rel in regular_files(root, SITE_DIR, PAGE_SUFFIXES):
        page = root / rel
        if page.stat().st_size > MAX_RECORD_BYTES:
            size = page.stat().st_size
            message = f"hand-written page of {size} bytes is over the {MAX_RECORD_BYTES} byte limit"
            yield codes.FILE_TOO_LARGE.at(rel, "", message, "split the page")
            continue
        text = page.read_text("utf-8", errors="replace")
        yield from _front_matter(rel, text)
        for n, line in markdown.prose(text):
            for code, message, fields in form_problems(line, "the page", measurements):
                yield _on_page(code, rel, n, 1, message, fields)
        # the rendering and its scans: a function of the page, its path, the configuration and (by the code
        # version every kept finding is keyed by) the code and the installed packages
        parts = [part.encode("utf-8", "surrogatepass") for part in (rel, text)] + [config]
        key = b"rendered-page" + b"".join(b"\0%d\0%s" % (len(part), part) for part in parts)
        yield from registry.kept(key, functools.partial(_rendered_findings, rel, text, extensions))
    yield from _site_styles(root)


def _front_matter(rel: str, text: str) -> Iterator[Finding]:
    """Figures in a page's YAML front matter as MkDocs reads it (``htmlscan.front_matter_figures``)."""
    for key, figure in htmlscan.front_matter_figures(text):
        message = f"figure {figure!r} in the front matter's {key!r} of a hand-written page is not a citation"
        yield _on_page(codes.ORPHAN_NUMBER, rel, *htmlscan.Where(text)(str(key)), message)


def _site_styles(root: Path) -> Iterator[Finding]:
    """Stylesheets under site/ (``extra_css``), read with a CSS parser: a string's figures are orphans, and text
    taken from elsewhere (``attr()``, ``counter()``), another stylesheet (``@import``) or a resource of another host
    is refused."""
    messages = {
        htmlscan.PULL: (PAGE_STYLE, "{piece!r} in a stylesheet shows text no check reads"),
        htmlscan.IMPORT: (PAGE_STYLE, "{piece!r} in a stylesheet loads a stylesheet no check reads"),
        htmlscan.REMOTE: (PAGE_STYLE, "{piece!r} in a stylesheet loads from outside the site"),
        htmlscan.FIGURE: (
            codes.ORPHAN_NUMBER,
            "figure {piece!r} in a stylesheet's string is shown on pages and is not a citation (numbers reach a page "
            "only as citations)",
        ),
    }
    for rel in regular_files(root, SITE_DIR, ".css"):
        text = (root / rel).read_text("utf-8", errors="replace")
        for line, column, kind, piece in htmlscan.stylesheet(text):
            code, message = messages[kind]
            yield _on_page(code, rel, line, column, message.format(piece=piece), {"text": piece})


def _rendered_findings(rel: str, text: str, extensions: list[Any]) -> tuple[list[Finding], bool]:
    """``_rendered_page``'s findings, and whether they may be kept: not when the page ran out of time (it may render
    in time on a machine less busy)."""
    found = list(_rendered_page(rel, text, extensions))
    return found, not any(f.code == PAGE_SLOW.code for f in found)


def _rendered_page(rel: str, text: str, extensions: list[Any]) -> Iterator[Finding]:
    """What the page shows once rendered (its citations left out, as the build's are): figures, table columns in a
    unit, citation markup and script (in the tags Python-Markdown writes, not in code it shows as text). At most
    ``MAX_PER_FIELD`` findings of a code are located in the page, the rest counted in one more (locating each is a
    search of the page's lines: a page of 100,000 figures not typed as shown took minutes)."""
    try:
        content = htmlscan.rendered(text, extensions)
    except markdown.RenderTooSlow as exc:
        yield _on_page(
            PAGE_SLOW, rel, 1, 1, f"{exc}: nothing on it was checked", {"seconds": str(markdown.RENDER_SECONDS)}
        )
        return
    counts: Counter[Code] = Counter()

    def at(code: Code, where: htmlscan.Where, piece: str, message: str) -> Iterator[Finding]:
        counts[code] += 1
        if counts[code] <= MAX_PER_FIELD:
            yield _on_page(code, rel, *where(piece), message, {"text": piece})

    where = htmlscan.Where(text)
    for piece in htmlscan.forged_classes(content):
        yield from at(FORGED, where, piece, "hand-written citation markup: only the renderer makes it")
    where = htmlscan.Where(text)
    found = list(sanitize.problems(content))
    for problem in found:
        code = PAGE_STYLE if problem.styles else PAGE_HTML
        does = "can show or hide text no check reads" if problem.styles else "is outside what a page may hold"
        yield from at(code, where, problem.token, f"{problem.piece} on a hand-written page {does}")
    if not found and sanitize.changed_by_sanitizer(content):
        message = "the HTML sanitizer would change this page (markup outside the allowlist)"
        yield _on_page(PAGE_HTML, rel, 1, 1, message, {"text": "sanitizer"})
    where = htmlscan.Where(text)
    for figure, where_shown in htmlscan.page_figures(content):
        message = f"figure {figure!r} {where_shown} is not a citation"
        yield from at(codes.ORPHAN_NUMBER, where, figure, message)
    for code, n in counts.items():
        if n > MAX_PER_FIELD:
            yield _on_page(code, rel, 1, 1, f"... and {n - MAX_PER_FIELD} more {code.code} findings on this page")


def _on_page(
    code: Code, file: str, line: int, column: int, message: str, fields: dict[str, str] | None = None
) -> Finding:
    """A finding of ``code`` at a line and column of a hand-written page, with the code's own hint."""
    return code.at(file, "", message, line=line, column=column, fields=fields)


RULES = [
    Rule("site-citations", (PAGE_HTML, PAGE_STYLE, PAGE_SLOW, FORGED), check_site_pages),
]
