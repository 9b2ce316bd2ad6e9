"""The HTML of generated pages: the one escape for record text, the page being built, and the site's URLs and ids.

Generated pages never pass through Markdown: MkDocs gets a front-matter stub, and the plugin (``evreg.site.build``)
puts the page's HTML in place of the stub's rendering. So record text has exactly one rendering rule in every
context -- body text, table cells, headings, SVG text, attributes, tooltips: ``esc`` (HTML-escaped characters,
nothing else); ``esc_trimmed`` is the same for a whole value, without the white space at its ends.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape, unescape
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast
from urllib.parse import quote

from evreg.claims import citations, markdown, sanitize
from evreg.core.layout import slug

if TYPE_CHECKING:
    from evreg.catalog.tables import RecordRow


def esc(text: Any) -> str:
    """Record text as inert HTML text (and attribute values): whitespace collapsed, every
    character that means something to HTML escaped. Generated pages are never Markdown, so
    nothing else can give the text a meaning."""
    text = str(text)
    if not (text.isascii() and "  " not in text and _ASCII_SPACES.isdisjoint(text)):  # else nothing to collapse
        text = _SPACE.sub(" ", text)
    return escape(text)


_SPACE = re.compile(r"\s+")
_ASCII_SPACES = frozenset("\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
"""The ASCII characters other than the space that ``\\s`` matches."""


def esc_trimmed(text: Any) -> str:
    """A whole value (a table cell, a label, an attribute) as ``esc`` gives it, without the white space at its
    ends (a grid's and a comparison table's cells)."""
    return esc(str(text).strip())


def attr(text: Any) -> str:
    """Text for the markup of a citation, which also goes into hand-written Markdown pages: escaped as
    ``esc``, and ``|`` (a citation's filter separator) as a character reference, so that a citation
    inside a Markdown table stays in its cell."""
    return esc(text).replace("|", "&#124;")


def doc_text(text: Any) -> str:
    """Reference text of the tool itself (rule docs, schema descriptions): escaped, and the citation
    syntax it shows (``{{ ... }}``) set as code, as the hand-written pages do."""
    text = str(text)
    out, last = [], 0
    for start, end in citations.brace_spans(text):
        stop = len(text) if end < 0 else end
        out += [esc(text[last:start]), f"<code>{esc(text[start:stop])}</code>"]
        last = stop
    return "".join(out) + esc(text[last:])


def page_base(path: str) -> str:
    """Relative prefix from a page's URL to the site root (directory URLs)."""
    depth = path.count("/") + (0 if path.endswith("index.md") else 1)
    return "../" * depth


def page_url(path: str) -> str:
    """The URL path (from the site root) of the page built from ``path`` under docs_dir (directory URLs)."""
    stem = path.removesuffix(".md")
    return "" if stem == "index" else stem.removesuffix("index") if stem.endswith("/index") else f"{stem}/"


def measurement_home(row: RecordRow) -> str:
    """The page a measurement is a section of: its packet's, or its family's page of measurements filed in no
    packet. Its folder decides, so the URL is as stable as the file."""
    return f"packets/{row.packet}/" if row.packet else f"families/{row.family}/measurements/"


SAFE_SUFFIXES = frozenset({".json", ".jsonl", ".csv", ".tsv", ".txt", ".log", ".md", ".yaml", ".yml", ".parquet"})
"""Evidence published under a name with one of these endings keeps it; any other gets ``.txt`` added, so that no
evidence file (HTML, SVG) is served as a page that could run script on the site's origin."""


def evidence_url(sha256: str, path: str) -> str:
    """Where a local evidence file is published, by content (copies of one file are one file):
    ``evidence/SHA256/NAME``."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", path.rsplit("/", 1)[-1]).lstrip(".") or "evidence"
    if Path(name).suffix.lower() not in SAFE_SUFFIXES:
        name += ".txt"
    return f"evidence/{sha256}/{name}"


def source_url(source: Any, path: str) -> str | None:
    """An external evidence path in its source repository at the pinned commit (GitHub-style ``blob`` URL), or None
    when the source pins no commit or is not an https repository."""
    if not isinstance(source, dict):
        return None
    repo, commit = source.get("repository"), source.get("commit")
    if not (isinstance(repo, str) and repo.startswith("https://") and isinstance(commit, str) and commit):
        return None
    return f"{repo.rstrip('/')}/blob/{quote(commit, safe='')}/{quote(path.lstrip('/'))}"


def m_anchor(mid: str, sample: str = "") -> str:
    """The id of a measurement's section (``m-ID``) or of one of its samples' rows (``m-ID--decode-tok-s-0``, from
    ``sample_anchor``): an id never holds ``--``, so no two are alike."""
    return f"m-{mid}--{sample}" if sample else f"m-{mid}"


@functools.lru_cache(maxsize=65536)
def sample_anchor(metric: str, selector: str) -> str:
    """The id of a sample's or point's row on its measurement page (``decode-tok-s-0``); a negative x keeps its sign
    (``@-1`` and ``@1`` are two rows)."""
    return slug(f"{metric}-{selector.replace('@-', '@minus-')}")


def defect_anchor(code: str, file: str, pointer: str, message: str) -> str:
    """The id of an accepted defect's row on the page of known data defects (``defects/``): from what the finding
    says and where, so a page that links it needs no other page's ids."""
    digest = hashlib.sha256("\0".join((code, file, pointer, message)).encode()).hexdigest()[:12]
    return f"defect-{slug(code)}-{digest}"


_TAGS = re.compile(r"<[^>]+>")


def id_terms(record_id: str) -> str:
    """A record id's parts, hidden, for a search entry's title. The theme's search splits a typed query at
    hyphens (lunr's query lexer keeps its own separator) while the index keeps ids whole, so the query
    ``q36-q4km-tp1-kv-f16-context`` looks for ``q36*``, ``q4km*`` ... and ranked the measurement's section
    below entries that merely begin with those parts; with its parts in its title it ranks first."""
    parts = record_id.split("-")
    return f"<span hidden> {escape(' '.join(parts))}</span>" if len(parts) > 1 else ""


class Scan(NamedTuple):
    """What the scans found on a piece of a page, scanned as it was made (``scan_piece``): the figures shown that
    did not come through a citation, in its HTML and (data file, figure) in the rows it put in a data file, and the
    markup outside the renderer's allowlist."""

    figures: list[str]
    data: list[tuple[str, str]]
    problems: list[str]


def scan_piece(html: str, context: tuple[str, str] = ("", ""), data: Sequence[tuple[str, Sequence[str]]] = ()) -> Scan:
    """The scans of a piece of a page, as a whole page's scans would find it there: its HTML inside the elements
    around it in the page (``context``: a table's rows are parsed in a table, as in the page), and ``data``, the HTML
    of the rows it put in a data file, by file, row by row (``markdown.rows_figures``). The figure grammar reads
    across block elements: a piece's scan is the page's only where no text before or after it joins its own into a
    figure (a comparison's workload begins with the fixed words of its heading, ``Workload:``, and ends with a row's
    state cell)."""
    figures = markdown.html_figures(html)
    found = [(name, figure) for name, rows in data for figure in markdown.rows_figures(rows)]
    problems = [p.piece for p in sanitize.problems(context[0] + html + context[1], generated=True)]
    return Scan(figures, found, problems)


def kept_scan(piece: dict[str, Any]) -> Scan | None:
    """The scans a kept piece (JSON read back) holds beside its ``html``: None unless its ``html`` is a string and its
    ``figures``, ``data`` and ``problems`` are of the types ``scan_piece`` gives them."""
    html, figures, found, problems = (piece.get(k) for k in ("html", "figures", "data", "problems"))
    if not (
        isinstance(html, str)
        and isinstance(piece.get("lead", ""), str)
        and all(isinstance(x, list) and all(isinstance(v, str) for v in x) for x in (figures, problems))
        and isinstance(found, list)
        and all(isinstance(d, list) and len(d) == 2 and all(isinstance(v, str) for v in d) for d in found)
    ):
        return None
    return Scan(cast(list[str], figures), [(name, figure) for name, figure in found], cast(list[str], problems))


class Cell(NamedTuple):
    """A table cell with attributes of its own (`` class="..." id="..."``, escaped) around its HTML."""

    attrs: str
    html: str


@dataclass
class Page:
    """One generated page: its title (plain text), its HTML and its table of contents."""

    title: str
    search: bool = True
    boost: float | None = None
    parts: list[str] = field(default_factory=list)
    toc: list[dict[str, Any]] = field(default_factory=list)  # MkDocs toc tokens, nested by level
    scripts: list[str] = field(default_factory=list)  # URLs of the product's own scripts, loaded after the content
    data: dict[str, tuple[str, str]] = field(default_factory=dict)  # file beside the page -> (content, HTML it makes)
    checked: list[Scan] = field(default_factory=list)  # the scans of the pieces among its parts (``piece``)
    _pieces: set[int] = field(default_factory=set)  # which parts are pieces
    _ids: Counter[str] = field(default_factory=Counter)
    _index: list[list[Any]] = field(default_factory=list)  # [id, level, heading text, first paragraph's text]
    lead: str = ""  # the first paragraph's text of a page with no heading (a piece: ``Pages.piece``)

    def search_entries(self, url: str, sections: bool = True) -> list[dict[str, Any]]:
        """The page's search entries, as the theme's search index holds them: one per heading (its text, and
        the text of the paragraph under it), without parsing the page (at 100,000 measurements, parsing the
        pages was most of the build). Without ``sections``, only the page's title and its measurements' sections
        (a record page: its *Scope* or *Evidence* headings would be a result of every search for those words)."""
        entries = []
        for hid, level, title, text in self._index:
            if not sections and level > 1 and not hid.startswith("m-"):
                continue
            entry: dict[str, Any] = {"location": url if level == 1 else f"{url}#{hid}", "title": escape(title)}
            if hid.startswith("m-") and "--" not in hid:  # a measurement's section: findable by its id
                entry["title"] += id_terms(hid[2:])
            entry["text"] = escape(text)
            if self.boost:
                entry["boost"] = self.boost
            entries.append(entry)
        return entries

    @property
    def html(self) -> str:
        return "\n".join(self.parts) + "\n"

    def plain_title(self) -> str:
        """The title as MkDocs may show it: MkDocs puts it into templates unescaped, so it keeps only plain
        characters."""
        return " ".join(re.sub(r"[^\w\s.·→/+-]", " ", self.title).split()) or "Untitled"

    def stub(self) -> str:
        """The Markdown file MkDocs sees: front matter only (the plugin supplies the body)."""
        plain = self.plain_title()
        fm = "---\ntitle: " + json.dumps(plain, ensure_ascii=False) + "\n"
        if not self.search:
            fm += "search:\n  exclude: true\n"
        elif self.boost:
            fm += f"search:\n  boost: {self.boost}\n"
        return fm + "---\n"

    def h(self, level: int, inner: str, hid: str = "") -> None:
        """A heading (``inner`` is HTML) with a unique id (``hid`` when given: a measurement's anchor) and a
        permalink, listed in the toc."""
        text = " ".join(unescape(_TAGS.sub(" ", inner)).split())
        hid = hid or self.unique_id(slug(text) or "section")
        self.parts.append(
            f'<h{level} id="{hid}">{inner}<a class="headerlink" href="#{hid}" title="Permanent link">¶</a></h{level}>'
        )
        self._index.append([hid, level, text, ""])
        token = {"level": level, "id": hid, "name": escape(text), "children": []}  # toc titles are HTML
        siblings = self.toc
        while siblings and siblings[-1]["level"] < level:
            siblings = siblings[-1]["children"]
        siblings.append(token)

    def unique_id(self, base: str) -> str:
        """An id no other one this page gave out has: ``base``, else ``base-1``, ``base-2`` ..."""
        self._ids[base] += 1
        return base if self._ids[base] == 1 else f"{base}-{self._ids[base] - 1}"

    def p(self, inner: str) -> None:
        self.parts.append(f"<p>{inner}</p>")
        if self._index and not self._index[-1][3]:
            self._index[-1][3] = " ".join(unescape(_TAGS.sub(" ", inner)).split())[:300]
        elif not self._index and not self.lead:
            self.lead = " ".join(unescape(_TAGS.sub(" ", inner)).split())[:300]

    def sub(self, inner: str) -> None:
        """A heading inside a measurement's section: no id, not in the toc (a packet's toc lists its
        measurements, not their parts)."""
        self.parts.append(f"<h4>{inner}</h4>")

    def note(self, inner: str) -> None:
        self.parts.append(f"<p><em>{inner}</em></p>")

    def ul(self, items: list[str]) -> None:
        self.parts.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")

    def table(self, head: list[str], rows: Sequence[Sequence[str | Cell]], cls: str = "") -> None:
        """A table; ``head`` and every cell are HTML (a ``Cell`` with attributes of its own)."""
        attr = f' class="{cls}"' if cls else ""
        self.parts.append(
            f"<table{attr}><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join(
                "<tr>"
                + "".join(f"<td{c.attrs}>{c.html}</td>" if isinstance(c, Cell) else f"<td>{c}</td>" for c in row)
                + "</tr>"
                for row in rows
            )
            + "</tbody></table>"
        )

    def add(self, raw: str) -> None:
        """HTML made by the renderer (a chart, a matrix)."""
        self.parts.append(raw)

    def piece(self, raw: str, scan: Scan, lead: str = "") -> None:
        """HTML made by the renderer and scanned as it was made (``scan_piece``): a large page made of pieces kept by
        what they read (a comparison's workloads) is scanned piece by piece, the rest of it as a page is. ``lead``:
        its first paragraph's text, the search text of a heading the page has given none yet (as ``p``)."""
        self._pieces.add(len(self.parts))
        self.parts.append(raw)
        self.checked.append(scan)
        if self._index and not self._index[-1][3]:
            self._index[-1][3] = lead

    def unscanned_html(self) -> str:
        """The page's HTML without its pieces (``piece``): what the build's scans read of it."""
        return "\n".join(part for n, part in enumerate(self.parts) if n not in self._pieces) + "\n"
