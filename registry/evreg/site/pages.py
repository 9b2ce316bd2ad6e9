"""Site pages, generated from the catalog as HTML (never committed).

``render_pages(Pages(db))`` is pure: catalog in, ``{path: Page}`` out. Generated pages never pass
through Markdown: MkDocs gets a front-matter stub, and the plugin (``evreg.site.build``)
puts the page's HTML in place of the stub's rendering. So record text has exactly one
rendering rule in every context -- body text, table cells, headings, SVG text, attributes,
tooltips: ``esc`` (HTML-escaped characters, nothing else). Every number that states a
measurement goes through ``Pages.cite`` (the citation path); record prose goes through
``Pages.prose`` (escaped text plus resolved citations).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html import escape, unescape
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

import duckdb
import orjson

from evreg.catalog.tables import EvidenceRow, FindingRow, Meta, ProvenanceRow, RecordRow, rows_of
from evreg.claims import citations, coverage
from evreg.core.layout import family_scoped, slug
from evreg.core.vocab import load as load_vocab
from evreg.core.vocab import promotable
from evreg.core.vocab import states as state_vocab
from evreg.records.models import NAME_KEYS, claims_in, revisions_of
from evreg.site import charts, compare, grid

if TYPE_CHECKING:
    from collections.abc import Iterable

    from evreg.core.findings import Code  # the rule docs are handed in: rendering runs no rule code


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


def _external(ev: EvidenceRow, source: Any) -> str:
    """An external evidence reference: linked to its source repository at the pinned commit, when pinned."""
    url = source_url(source, ev.path)
    if not url:
        return f"<code>{esc(ev.path)}</code> in {esc(ev.source)}, no pinned commit (not copied here; not checked)"
    return (  # the row's kind says external; the link holds the commit in full
        f'<a href="{esc(url)}"><code>{esc(ev.path)}</code></a> in {esc(ev.source)} at commit '
        f"<code>{esc(source['commit'][:12])}</code> (not copied here; not checked)"
    )


def m_anchor(mid: str, sample: str = "") -> str:
    """The id of a measurement's section (``m-ID``) or of one of its samples' rows (``m-ID--decode-tok-s-0``, from
    ``sample_anchor``): an id never holds ``--``, so no two are alike."""
    return f"m-{mid}--{sample}" if sample else f"m-{mid}"


_TAGS = re.compile(r"<[^>]+>")


def id_terms(record_id: str) -> str:
    """A record id's parts, hidden, for a search entry's title. The theme's search splits a typed query at
    hyphens (lunr's query lexer keeps its own separator) while the index keeps ids whole, so the query
    ``q36-q4km-tp1-kv-f16-context`` looks for ``q36*``, ``q4km*`` ... and ranked the measurement's section
    below entries that merely begin with those parts; with its parts in its title it ranks first."""
    parts = record_id.split("-")
    return f"<span hidden> {escape(' '.join(parts))}</span>" if len(parts) > 1 else ""


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
    _ids: Counter[str] = field(default_factory=Counter)
    _index: list[list[Any]] = field(default_factory=list)  # [id, level, heading text, first paragraph's text]

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


TRUST_LABELS = ("", "", "hardware ", "runtime ")
"""How a tooltip names a part of a trust line when it gives only some of them."""


class Pages:
    """The catalog as the pages read it: typed rows of its tables (``evreg.catalog.tables``), by what they belong to."""

    def __init__(self, db: Path) -> None:
        con = duckdb.connect(str(db), read_only=True)
        try:
            self.records: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
            self.where: dict[tuple[str, str], RecordRow] = {}
            for rec in rows_of(con, RecordRow, "key"):
                key = f"{rec.family}/{rec.id}" if family_scoped(rec.kind) else rec.id
                # The record as validated, for its free-form fields (prose, config, views, contracts),
                # which no table column holds.
                self.records[rec.kind][key] = orjson.loads(rec.content)
                self.where[(rec.kind, key)] = rec._replace(content="")  # type: ignore[attr-defined]  # parsed above
            self.evidence: dict[str, list[EvidenceRow]] = defaultdict(list)
            for ev in rows_of(con, EvidenceRow, "key"):
                self.evidence[ev.file].append(ev)
            self.provenance: dict[str, list[ProvenanceRow]] = defaultdict(list)
            for change in rows_of(con, ProvenanceRow, "path, seq"):
                self.provenance[change.path].append(change)
            self.defects = [f for f in rows_of(con, FindingRow, "file, pointer") if f.baselined]
            self.meta = {m.key: m.value for m in rows_of(con, Meta, "key")}
        finally:
            con.close()
        families = self.records.get("family", {})
        lists = self.records.get("catalog", {}).values()
        listed = [f["id"] for c in lists for f in c["families"] if f["id"] in families]
        order = [*dict.fromkeys(listed), *sorted(set(families) - set(listed))]  # the family list's order, then by id
        self.records["family"] = {fid: families[fid] for fid in order}
        self.measurements = {**self.records.get("run-measurement", {}), **self.records.get("series-measurement", {})}
        self.superseded_by = {m["supersedes"]: mid for mid, m in self.measurements.items() if m.get("supersedes")}
        self.home = {mid: measurement_home(self.measurement_where(mid)) for mid in self.measurements}
        self.featured_by: dict[str, str] = {}  # measurement id -> the first packet that features it
        for pid, pk in self.records.get("packet", {}).items():
            fm = pk.get("featured_metric")
            if isinstance(fm, dict) and isinstance(fm.get("measurement_id"), str):
                self.featured_by.setdefault(fm["measurement_id"], pid)
        self._parts: dict[str, tuple[str, str, str, str]] = {}  # trust_parts, worked out once per measurement
        self.in_packet: dict[str, list[str]] = defaultdict(list)  # packet id -> its measurements
        self.loose: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements in no packet
        self.of_family: dict[str, list[str]] = defaultdict(list)  # family id -> its measurements
        for mid in self.measurements:
            row = self.measurement_where(mid)
            self.of_family[str(row.family)].append(mid)
            (self.in_packet[row.packet] if row.packet else self.loose[str(row.family)]).append(mid)
        self.by_family: dict[str, dict[str | None, dict[str, dict[str, Any]]]] = {}  # site._family_records
        self.contract_counts: dict[int, Counter[str]] = {}  # a contract's cells by state (site._contract_counts)
        self.base = ""
        self.here = ""  # the URL path of the page being rendered (relative to the site root)
        self.said: tuple[str, str, str, str] | None = None  # the trust line stated once for the grid being rendered
        self._titles: dict[tuple[str, tuple[str, str, str, str] | None], str] = {}

    # -- the citation path ----------------------------------------------------------------

    def m_url(self, mid: str, anchor: str = "") -> str:
        """The URL of a measurement's section (or, with ``anchor``, of one of its samples' rows) on its page:
        ``packets/PACKET/#m-ID``, or ``families/FAMILY/measurements/#m-ID`` for one filed in no packet."""
        home = self.home.get(mid, "measurements/")
        frag = m_anchor(mid, anchor)
        return f"#{frag}" if home == self.here else f"{self.base}{home}#{frag}"

    def trust_parts(self, mid: str) -> tuple[str, str, str, str]:
        """A measurement's state, its packet's grades (and which packet), hardware and runtime, as plain text."""
        if (parts := self._parts.get(mid)) is None:
            parts = self._parts[mid] = self._trust_parts(mid)
        return parts

    def _trust_parts(self, mid: str) -> tuple[str, str, str, str]:
        m = self.measurements.get(mid, {})
        pid = self.packet_of(mid)
        pk = self.records.get("packet", {}).get(pid or "", {})
        grades = [
            f"{'EVID' if axis == 'evidence' else 'CAP'} {g.get('grade')}"
            for axis, g in (pk.get("grades") or {}).items()
            if isinstance(g, dict)
        ]
        hardware = m.get("hardware") or pk.get("hardware") or "hardware not recorded"
        runtime = m.get("runtime") or pk.get("runtime") or "runtime not recorded"
        return (
            str(m.get("state", "unknown state")),
            (" ".join(grades) or "ungraded") + (f" (packet {pid})" if pid else " (no packet)"),
            " ".join(str(hardware).split()),
            " ".join(str(runtime).split()),
        )

    def trust(self, mid: str) -> str:
        """What a reader needs beside a measured number (plain text, a citation's tooltip): the measurement's
        state, its packet's grades, hardware and runtime."""
        return " · ".join(self.trust_parts(mid))

    def trust_line(self, mid: str) -> str:
        """The same as HTML, for the line under a measurement's heading (hardware and runtime are names)."""
        state, grades, hardware, runtime = self.trust_parts(mid)
        return f"{esc(state)} · {esc(grades)} · {self.text(hardware, 'hardware')} · {self.text(runtime, 'runtime')}"

    @contextlib.contextmanager
    def stated(self, page: Page, mids: list[str], what: str) -> Iterator[None]:
        """Render a grid or chart citing ``mids``: the trust line (state, grades, hardware, runtime) most of its
        numbers share is stated once above it, and a number's tooltip gives only the parts of its own line that
        differ (``trust_tip``; a tooltip per cell was a sixth of the 100k site's coverage pages)."""
        lines = Counter(self.trust_parts(mid) for mid in mids if mid in self.measurements)
        if lines:
            state, grades, hardware, runtime = said = lines.most_common(1)[0][0]
            shared = (
                f"{esc(state)} · {esc(grades)} · {self.text(hardware, 'hardware')} · {self.text(runtime, 'runtime')}"
            )
            page.p(f"Every {what} links to its measurement; unless its tooltip says otherwise, it is {shared}.")
            self.said = said
        try:
            yield
        finally:
            self.said = None

    def trust_tip(self, mid: str) -> str:
        """A number's trust line for its tooltip: in full, or under a line stated once (``stated``) only the parts of
        its own that differ, hardware and runtime named."""
        if self.said is None:
            return self.trust(mid)
        own = self.trust_parts(mid)
        return " · ".join(  # "hardware not recorded" names itself
            part if part.startswith(label) else label + part
            for label, part, said in zip(TRUST_LABELS, own, self.said, strict=True)
            if part != said
        )

    def packet_of(self, mid: str) -> str | None:
        """The packet a measurement belongs to: its folder's, else the packet that features it."""
        if mid in self.measurements and self.measurement_where(mid).packet:
            return self.measurement_where(mid).packet
        return self.featured_by.get(mid)

    def cite(
        self,
        mid: str,
        metric: str,
        index: int | None = None,
        x: float | None = None,
        decimals: int | None = None,
        unit: bool = True,
        flags: frozenset[str] = frozenset(),
        tooltip: bool = True,
    ) -> str:
        """The one way a measured number reaches a page: resolved, formatted and linked. ``tooltip=False`` where
        the number's state, grade, hardware and runtime are visible beside it (a comparison table's row)."""
        c = citations.citation(mid, metric, index, x, decimals, unit, flags)
        resolved = self._resolve(c)
        if isinstance(resolved, str):
            raw = citations.citation_text(mid, metric, index, x, decimals, unit, flags)
            return f'<mark class="evreg-unresolved" title="{attr(resolved)}">{attr(raw)}</mark>'
        href = self.m_url(mid, sample_anchor(metric, citations.selector(index, x)))
        # Beside every number: its state, grade, hardware and runtime (a tooltip on hover, shown on keyboard
        # focus by the stylesheet); a number in its own measurement's section stands under that line already, and
        # in a grid the tooltip gives only what differs from the parts the grid states once (``Pages.stated``).
        title = self._title(mid) if tooltip and not href.startswith("#") else ""
        return f'<a class="evreg-cite" href="{href}"{title}>{escape(resolved.text)}</a>'

    def _title(self, mid: str) -> str:
        """The title attribute of a citation of ``mid`` (its trust line; under a stated line, what differs), made
        once per measurement and stated line: a comparison page cites 500,000 numbers at 100,000 measurements."""
        key = (mid, self.said)
        if (title := self._titles.get(key)) is None:
            tip = self.trust_tip(mid)
            title = self._titles[key] = f' title="{attr(tip if self.said else mid + " · " + tip)}"' if tip else ""
        return title

    def _resolve(self, c: citations.Form | citations.CitationError) -> Any:
        """One citation resolved against the measurements (``citations.resolve``), or why it is not."""
        return str(c) if isinstance(c, citations.CitationError) else citations.resolve(c, self.measurements)

    def sample(self, mid: str, metric: str, index: int | None = None, x: float | None = None) -> Cell:
        """A stored sample or point in its own measurement's table: the number, resolved and formatted as a citation
        of it is, in a cell carrying the anchor every citation of it links to (a link there would point at itself)."""
        c = citations.citation(mid, metric, index, x)
        resolved = self._resolve(c)
        if isinstance(resolved, str):
            raw = citations.citation_text(mid, metric, index, x)
            return Cell("", f'<mark class="evreg-unresolved" title="{attr(resolved)}">{attr(raw)}</mark>')
        anchor = m_anchor(mid, sample_anchor(metric, citations.selector(index, x)))
        return Cell(f' class="evreg-sample" id="{anchor}"', escape(resolved.text))

    def prose(self, text: Any, key: str = "", cell: bool = False) -> str:
        """Record prose (under ``key``): escaped text, citations resolved and linked, typed figures marked as orphans
        (``evreg.records.models.claims_in``: in a name, a memory size is part of the name; in a coverage ``cell``, a
        bare decimal is a value of the arm), as validation finds them."""
        if not isinstance(text, str):
            return ""
        out, last = [], 0
        for c in citations.parse(text):
            if isinstance(c, citations.CitationError):
                continue
            out.append(self.literal(text[last : c.start], key, cell))
            out.append(self.form(c))
            last = c.end
        out.append(self.literal(text[last:], key, cell))
        return "".join(out)

    def form(self, c: citations.Form) -> str:
        """One figure form as readers see it: a linked citation, or a setting, quote or derived figure marked as
        what it is (not a measurement, quoted from evidence, computed from two stored values)."""
        if isinstance(c, citations.Citation):
            shown = self.cite(c.measurement, c.metric, c.index, c.x, c.decimals, c.unit, c.flags)
            if "compare" in c.flags:
                shown += ' <small class="evreg-compare">(a comparison: another scope\'s run)</small>'
            return shown
        if isinstance(c, citations.Setting):
            title = "A specification or setting, not a measurement"
            return f'<span class="evreg-setting" title="{title}">{esc(c.text)}</span>'
        if isinstance(c, citations.Quote):
            title = f"Quoted from this record's evidence file at {c.locator} (re-read by validation)"
            return f'<span class="evreg-quote" title="{attr(title)}">{esc(c.text)}</span>'
        resolved = citations.resolve(c, self.measurements)
        if isinstance(resolved, str):
            return f'<mark class="evreg-unresolved" title="{attr(resolved)}">{esc(c.raw)}</mark>'
        verb = "change from" if c.op == "change" else "ratio to"
        title = (
            f"Derived: {c.a.measurement}.{c.a.metric}{c.a.selector} {verb} {c.b.measurement}.{c.b.metric}{c.b.selector}"
        )
        if self.said is not None:  # under a stated line (``stated``): what of its two measurements' lines differs
            for mid in dict.fromkeys((c.a.measurement, c.b.measurement)):
                title += f"; {mid}: {tip}" if (tip := self.trust_tip(mid)) else ""
        href = self.m_url(c.a.measurement, sample_anchor(c.a.metric, c.a.selector))
        return f'<a class="evreg-derived" href="{href}" title="{attr(title)}">{esc(resolved.text)}</a>'

    def text(self, value: Any, key: str = "") -> str:
        """Any stored value under ``key`` as readers see it: a string as prose (every string a record holds is
        prose unless it is a token, ``evreg.records.models.is_prose``) -- a name's memory size is part of the name --,
        anything else as its JSON."""
        if not isinstance(value, str):
            return esc(json.dumps(value, ensure_ascii=False))
        if key in NAME_KEYS:
            return f'<span class="evreg-name">{self.prose(value, key)}</span>'
        return self.prose(value)

    def literal(self, text: str | None, key: str = "", cell: bool = False) -> str:
        """Text with no citations (under ``key``, in a coverage ``cell`` or not): escaped, typed figures marked as
        orphans."""
        text = text or ""
        out, last = [], 0
        for fig in claims_in(key, text, cell):
            out.append(esc(text[last : fig.start]))
            out.append(
                f'<mark class="evreg-orphan" title="A typed figure, not a citation: a baselined defect of '
                f'the source data">{esc(text[fig.start : fig.end])}</mark>'
            )
            last = fig.end
        out.append(esc(text[last:]))
        return "".join(out)

    # -- small pieces ---------------------------------------------------------------------------

    def measurement_where(self, mid: str) -> RecordRow:
        """The catalog row of a measurement of either kind."""
        return self.where.get(("run-measurement", mid)) or self.where[("series-measurement", mid)]

    def link(self, kind: str, rid: str, text: str | None = None) -> str:
        if kind == "measurement":
            return f'<a href="{esc(self.m_url(rid))}">{esc(text or rid)}</a>'
        folder = {"packet": "packets", "family": "families"}[kind]
        return f'<a href="{self.base}{folder}/{esc(rid)}/">{esc(text or rid)}</a>'

    def state(self, state: str, meaning: bool = True) -> str:
        """A state's badge; its meaning on hover, unless a legend beside it says it (a grid's cells)."""
        title = f' title="{escape(state_vocab().get(state, {}).get("meaning", ""))}"' if meaning else ""
        return f'<span class="evreg-state evreg-state-{escape(state)}"{title}>{escape(state)}</span>'

    def grade_badge(self, axis: str, grade: dict[str, Any] | None) -> str:
        if not grade:
            return ""
        name = "EVID" if axis == "evidence" else "CAP"
        return (
            f'<span class="evreg-grade evreg-grade-{escape(str(grade.get("grade")))}" '
            f'title="{esc(grade.get("scope", ""))}">{name} {esc(grade.get("grade"))}</span>'
        )

    def evidence_list(self, page: Page, file: str, family: str) -> None:
        """The record's evidence: a local file links to its copy published with the site (its sha256 beside it);
        an external one to its source repository at the commit the family pins (when it pins one)."""
        rows = self.evidence.get(file, [])
        if not rows:
            page.note("No evidence references.")
            return
        sources = self.records.get("family", {}).get(family, {}).get("sources") or {}
        out = []
        for ev in rows:
            if ev.ref_kind == "external":
                what = _external(ev, sources.get(ev.source) if isinstance(sources, dict) else None)
            elif ev.ref_kind == "url":
                what = f"link: <code>{esc(ev.ref)}</code>"  # a reference, shown as written
            elif ev.present and ev.sha256:
                what = f'<a href="{self.base}{esc(evidence_url(ev.sha256, ev.path))}"><code>{esc(ev.path)}</code></a>'
            else:
                what = f"<code>{esc(ev.path)}</code>" + ("" if ev.present else " (missing)")
            digest = f"<code>{esc(ev.sha256)}</code> ({esc(ev.bytes)} bytes)" if ev.sha256 else "—"
            out.append([f"<code>{esc(ev.pointer)}</code>", what, esc(ev.ref_kind), digest])
        page.table(["Where", "Evidence", "Kind", "sha256"], out)

    def history(self, page: Page, file: str) -> None:
        rows = self.provenance.get(file, [])
        if not rows:
            page.note("No git history for this record (not committed yet).")
            return
        names = {"A": "added", "M": "changed", "D": "deleted"}
        if len(rows) == 1:  # most records: a sentence, not a table (a quarter of the bytes)
            c = rows[0]
            page.p(
                f"{esc(names.get(c.change, c.change)).capitalize()} in commit <code>{esc(c.commit[:12])}</code> "
                f"by {esc(c.author)}, {esc(c.date[:10])}."
            )
            return
        page.table(
            ["Change", "Commit", "Author", "Date"],
            [
                [
                    esc(names.get(c.change, c.change)),
                    f"<code>{esc(c.commit[:12])}</code>",
                    esc(c.author),
                    esc(c.date[:10]),
                ]
                for c in rows
            ],
        )


def render_pages(
    p: Pages, downloads: list[tuple[str, str, int]] | None = None, codes: Iterable[Code] = ()
) -> dict[str, Page]:
    """Every generated page of the site, made in this process: path (under docs_dir) -> Page (the build makes the
    same pages from the same jobs, the record pages in workers: ``sitebuild.SitePlugin``)."""
    return dict(make(p, job) for job in [*site_jobs(p, downloads, codes), *record_jobs(p)])


Job = tuple[str, Callable[..., "Page"], tuple[Any, ...]]
"""A page to make: its path, the function that makes it from the catalog and that function's arguments."""


def make(p: Pages, job: Job) -> tuple[str, Page]:
    """One page, made with its links relative to where it is published."""
    path, fn, args = job
    p.base, p.here = page_base(path), page_url(path)
    return path, fn(p, *args)


def record_jobs(p: Pages) -> list[Job]:
    """The pages of records -- each family's page, its measurements filed in no packet and its many matrices, each
    packet's, each coverage contract's --: most of a large site, each made from the catalog alone, so in any order
    and in any process."""
    families = p.records.get("family", {})
    return [  # the family-level pages first: the largest, so workers start on them
        *((f"families/{fid}/measurements.md", _loose_measurements, (fid,)) for fid in p.loose),
        *((f"families/{fid}.md", _family, (fid,)) for fid in families),
        *(
            (f"families/{fid}/coverage.md", _family_matrices, (fid,))
            for fid in families
            if len(_family_records(p, "coverage-view", fid)) > FAMILY_MATRICES
        ),
        *((f"packets/{pid}.md", _packet, (pid,)) for pid in p.records.get("packet", {})),
        *((f"coverage/{key}.md", _contract_page, (key,)) for key in p.records.get("coverage-contract", {})),
    ]


def site_jobs(p: Pages, downloads: list[tuple[str, str, int]] | None = None, codes: Iterable[Code] = ()) -> list[Job]:
    """The site's own pages: home, the indexes, the comparisons, quarantine, defects, downloads, the reference."""
    families = sorted({key.split("/", 1)[0] for key in p.records.get("coverage-contract", {})})
    metrics = compare.headline_metrics(p)
    return [
        ("index.md", _home, ()),
        ("families/index.md", _families_index, ()),
        ("packets/index.md", _packets_index, ()),
        ("measurements/index.md", _measurements_index, ()),
        ("coverage/index.md", _contracts_index, (None,)),  # every folder URL has a page
        *((f"coverage/{fid}/index.md", _contracts_index, (fid,)) for fid in families),
        ("compare/index.md", _comparisons, (metrics,)),
        *((compare.page_path(metric), _comparison, (metric,)) for metric in metrics),
        ("quarantine.md", _quarantine, ()),
        ("defects.md", _defects, ()),
        ("downloads.md", _downloads, (downloads or [],)),
        ("methodology/grades.md", _grades_page, ()),
        ("methodology/rules.md", _rules_page, (list(codes),)),
        ("schema.md", _schema_page, ()),
    ]


# -- pages ------------------------------------------------------------------------------------


def _home(p: Pages) -> Page:
    states = Counter(m["state"] for m in p.measurements.values())
    grades = Counter(
        g["grade"]
        for pk in p.records.get("packet", {}).values()
        for g in [(pk.get("grades") or {}).get("evidence")]
        if g
    )
    page = Page("Evidence registry")
    page.h(1, "Evidence registry for LLM inference results")
    page.p(
        "Every number here is a receipt: it links to the measurement that produced it, and the measurement "
        "names its exact weights, quantized artifact, runtime, hardware, configuration, workload and evidence."
    )
    page.h(2, "What the registry holds")
    page.p(
        f"{len(p.records.get('family', {}))} families, {len(p.records.get('packet', {}))} packets and "
        f"{len(p.measurements)} measurements."
    )
    page.table(["State", "Measurements"], [[p.state(s), str(n)] for s, n in sorted(states.items())])
    page.table(["Evidence grade (EVID)", "Packets"], [[esc(g), str(n)] for g, n in sorted(grades.items())])
    page.h(2, "Declared headlines")
    page.p(
        "Headlines are declared by each family (its featured results and primary packet), never computed as a maximum."
    )
    for fid, fam in p.records.get("family", {}).items():
        page.h(3, p.link("family", fid, fam.get("display_name") or fam["name"]))
        _featured_rows(p, page, fam)
        if fam.get("primary_packet_id"):
            page.p(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}")
    added = []
    for pid, _pk in p.records.get("packet", {}).items():
        hist = p.provenance.get(p.where[("packet", pid)].file)
        if hist:
            added.append((hist[0].date, pid, hist[0].author))
    page.h(2, "Recently added packets")
    page.table(
        ["Packet", "Added", "By"],
        [
            [p.link("packet", pid), esc(date[:10]), esc(author)]
            for date, pid, author in sorted(added, reverse=True)[:10]
        ],
    )
    return page


def _featured_rows(p: Pages, page: Page, fam: dict[str, Any]) -> None:
    """A family's headline: each declared result with its state, grade, hardware and runtime beside it, and why
    it is not simply the best value the family holds."""
    rows = fam.get("featured_results") or _primary_headline(p, fam)
    if not rows:
        page.note("This family declares no headline, and its primary packet features no metric.")
        return
    if not fam.get("featured_results"):
        page.p("The headline is the primary packet's featured metric (the family declares no featured results).")
    table = []
    for fr in rows:
        mid = fr["measurement_id"]
        m = p.measurements.get(mid, {})
        pid = p.packet_of(mid)
        pk = p.records.get("packet", {}).get(pid or "", {})
        grade = " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items()) or "ungraded"
        table.append(
            [
                esc(fr["role"]),
                p.prose(fr["label"]),
                p.cite(mid, fr["metric"], fr.get("sample_index"), fr.get("point_x")),
                p.state(m["state"]) if m else "—",
                f"{grade} · {p.link('packet', pid, 'packet')}" if pid else grade,
                p.text(m.get("hardware") or pk.get("hardware") or "not recorded", "hardware")
                + (f" · {esc(pk['cards'])} cards" if pk.get("cards") else ""),
                p.text(m.get("runtime") or pk.get("runtime") or "not recorded", "runtime"),
                p.prose(fr.get("quality_label")),
                _why_not_best(p, fam["id"], fr),
            ]
        )
    page.table(
        ["Role", "Result", "Value", "State", "Grade (packet)", "Hardware", "Runtime", "Quality", "Better values"],
        table,
    )


def _lower_is_better(metric: str) -> bool:
    return citations.unit_of(metric) in ("ms", "s")


def _values(m: dict[str, Any], metric: str) -> Iterable[tuple[float, int | None, float | None]]:
    """Every value of ``metric`` a measurement stores: (value, sample index, point x)."""
    for i, v in enumerate((m.get("metrics") or {}).get(metric) or []):
        if isinstance(v, int | float) and not isinstance(v, bool):
            yield float(v), i, None
    for pt in m.get("points") or []:
        v = pt.get(metric) if isinstance(pt, dict) else None
        if isinstance(v, int | float) and not isinstance(v, bool) and isinstance(pt.get("x"), int | float):
            yield float(v), None, pt["x"]


SCOPE_KEYS = ("revision", "artifact_id", "quantization", "hardware", "runtime", "workload")


def _scope_difference(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The scope keys (and config keys) on which two measurements differ."""
    keys = [k for k in SCOPE_KEYS if a.get(k) != b.get(k)]
    ca, cb = a.get("config") or {}, b.get("config") or {}
    return keys + [f"config.{k}" for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]


def _why_not_best(p: Pages, fid: str, fr: dict[str, Any]) -> str:
    """Why the headline is not simply the family's best value of its metric: the best promotable and the best
    non-promotable values beyond it, each linked, with the reason it is not the headline."""
    mid, metric = fr["measurement_id"], fr["metric"]
    head = p.measurements.get(mid)
    where = (fr.get("sample_index"), fr.get("point_x"))
    own = next((v for v, i, x in _values(head or {}, metric) if (i, x) == where), None)
    if head is None or own is None:
        return "—"
    sign = -1.0 if _lower_is_better(metric) else 1.0
    best: dict[bool, tuple[float, str, int | None, float | None, str]] = {}
    for other in p.of_family.get(fid, []):
        m = p.measurements[other]
        superseded = f"it is superseded by {p.superseded_by[other]}" if other in p.superseded_by else None
        reason = promotable(m) or superseded
        for v, i, x in _values(m, metric):
            if sign * v <= sign * own:
                continue
            key = reason is not None
            if key not in best or sign * v > sign * best[key][0]:
                why = reason or _promotable_reason(m, head, other == mid)
                best[key] = (v, other, i, x, why)
    if not best:
        return "None: it is the best value of this metric in the family."
    out = []
    for key, label in ((False, "Best promotable"), (True, "Best not promotable")):
        if key in best:
            v, other, i, x, why = best[key]
            out.append(f"{label}: {p.cite(other, metric, i, x)} ({esc(why)})")
    return '<span class="evreg-why">' + "<br>".join(out) + "</span>"


def _promotable_reason(m: dict[str, Any], head: dict[str, Any], same: bool) -> str:
    if same:
        return "another sample of the same measurement; the family features the one it declares"
    diff = _scope_difference(m, head)
    if diff:
        return "another scope: " + ", ".join(diff[:4]) + (" …" if len(diff) > 4 else "")
    return "same scope; the family declares its headline, it is never computed as a maximum"


def _primary_headline(p: Pages, fam: dict[str, Any]) -> list[dict[str, Any]]:
    """The primary packet's featured metric as a family headline, as the lab's own pages show it."""
    pk = p.records.get("packet", {}).get(fam.get("primary_packet_id") or "", {})
    fm = pk.get("featured_metric")
    if not isinstance(fm, dict):
        return []
    keys = ("measurement_id", "metric", "sample_index", "point_x")
    return [{"role": "hero", "label": pk.get("label") or pk["id"], **{k: fm.get(k) for k in keys}}]


def _families_index(p: Pages) -> Page:
    page = Page("Families")
    page.h(1, "Model families")
    rows = []
    for fid, fam in p.records.get("family", {}).items():
        packets, ms = len(_family_records(p, "packet", fid)), len(p.of_family.get(fid, ()))
        rows.append(
            [p.link("family", fid, fam["name"]), str(len(fam.get("weight_revisions", []))), str(packets), str(ms)]
        )
    page.table(["Family", "Revisions", "Packets", "Measurements"], rows)
    return page


def _family_records(p: Pages, kind: str, fid: str) -> dict[str, dict[str, Any]]:
    """The records of ``kind`` in a family, by id (the records of a kind are sorted by family once: a family's pages
    ask for its views, contracts and packets, and each family asking every record of a kind was quadratic)."""
    if (by_family := p.by_family.get(kind)) is None:
        by_family = p.by_family[kind] = defaultdict(dict)
        for k, v in p.records.get(kind, {}).items():
            by_family[p.where[(kind, k)].family][k.split("/", 1)[1] if "/" in k else k] = v
    return by_family.get(fid, {})


def _family(p: Pages, fid: str) -> Page:
    fam = p.records["family"][fid]
    page = Page(fam["name"])
    page.h(1, esc(fam.get("display_name") or fam["name"]))
    if fam.get("summary"):
        page.p(p.prose(fam["summary"]))
    page.h(2, "Headline")
    _featured_rows(p, page, fam)
    if fam.get("primary_packet_id"):
        page.p(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}")
    _lineage(p, page, fam)
    ts = fam.get("transfer_scope")
    if isinstance(ts, dict):
        page.h(2, "Transfer scope")
        page.p(f"Status: {esc(ts.get('status', ''))}")
        page.p("<strong>Transfers between revisions:</strong>")
        page.ul([p.prose(t) for t in ts.get("transfers", [])])
        page.p("<strong>Does not transfer:</strong>")
        page.ul([p.prose(t) for t in ts.get("does_not_transfer", [])])
    page.h(2, "Packets")
    page.table(
        ["Packet", "Grades", "Status", "Revision · artifact"],
        [
            [
                p.link("packet", pid, pk.get("label") or pid),
                " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items()),
                esc(pk.get("status", "")),
                f"{esc(pk['revision'])} · {esc(pk.get('artifact_id', '—'))}",
            ]
            for pid, pk in _family_records(p, "packet", fid).items()
        ],
    )
    _family_views(p, page, fam, fid)
    closures = _family_records(p, "closure", fid)
    if closures:
        page.h(2, "Closures")
        _closure_rows(p, page, closures.values())
    return page


def _lineage(p: Pages, page: Page, fam: dict[str, Any]) -> None:
    """Weight revisions and their quantized artifacts, with pinned identities."""
    page.h(2, "Lineage")
    page.p("Weight revisions and their quantized artifacts. A measurement never transfers across revisions.")
    for _, rev in revisions_of(fam):
        pin = (
            f"<code>{esc(rev['revision'])}</code>"
            if rev.get("revision")
            else esc(rev.get("revision_status", "unpinned"))
        )
        page.h(3, esc(rev.get("label") or rev["id"]))
        page.p(
            f"Revision id <code>{esc(rev['id'])}</code> · {esc(rev.get('role', ''))} · "
            f"{esc(rev.get('repository', ''))} at {pin}"
        )
        rows = []
        for art in rev.get("quantized_artifacts", []):
            ident = []
            if art.get("revision"):
                ident.append(f"revision <code>{esc(art['revision'])}</code>")
            if art.get("file_sha256"):
                ident.append(f"file sha256 <code>{esc(art['file_sha256'])}</code>")
            if art.get("revision_status"):
                ident.append("unpinned: " + esc(art["revision_status"]))
            rows.append(
                [
                    f"{esc(art['label'])} <code>{esc(art['id'])}</code>",
                    esc(art["quantization"]),
                    esc(art["repository"]),
                    "<br>".join(ident) or "unpinned",
                ]
            )
        page.table(["Artifact", "Quantization", "Repository", "Pinned identity"], rows)


FAMILY_CHARTS = 40
"""The most charts a family page draws: its initial views first, then the others in order. A family of thousands of
measurements has hundreds of views (at 100,000 measurements a family page drew 300 charts, 4 MB); the rest are listed
with links to the measurements they plot, whose sections hold every point. Every real family draws all of its charts."""
FAMILY_MATRICES = 60
"""The most coverage matrices a family page shows; a family with more has them on its own page of matrices
(``families/FAMILY/coverage/``), linked from the family page."""


def _ordered_views(p: Pages, fam: dict[str, Any], fid: str) -> list[dict[str, Any]]:
    views = _family_records(p, "view", fid)
    order = fam.get("initial_view_ids") or []
    return [views[v] for v in [*[v for v in order if v in views], *[v for v in views if v not in order]]]


def _family_views(p: Pages, page: Page, fam: dict[str, Any], fid: str) -> None:
    """A family's charts (in its initial order, the first ``FAMILY_CHARTS`` drawn), coverage matrices (on a page of
    their own when there are more than ``FAMILY_MATRICES``) and coverage contracts."""
    views = _ordered_views(p, fam, fid)
    if views:
        page.h(2, "Charts")
        page.p(
            "Each point links to its measurement; hover for the value. Screened series are "
            "dashed and hollow: they are not measured curves."
        )
        for view in views[:FAMILY_CHARTS]:
            _view(p, page, view)
    if len(views) > FAMILY_CHARTS:
        _more_views(p, page, views[FAMILY_CHARTS:])
    cov = _family_records(p, "coverage-view", fid)
    if len(cov) > FAMILY_MATRICES:
        page.h(2, "Coverage matrices")
        page.p(
            f'{len(cov)} coverage matrices, on <a href="{p.base}families/{esc(fid)}/coverage/">their own page</a>. '
            "Every cell is explicit; <em>missing</em> means nobody measured it, never zero."
        )
    elif cov:
        page.h(2, "Coverage matrices")
        page.p("Every cell is explicit; <em>missing</em> means nobody measured it, never zero.")
        for view in cov.values():
            _coverage_view(p, page, view)
    contracts = _family_records(p, "coverage-contract", fid)
    if contracts:
        page.h(2, "Coverage contracts")
        page.table(
            ["Contract", "Cells by state"],
            [
                [
                    f'<a href="{p.base}coverage/{esc(fid)}/{esc(cid)}/">{esc(c["label"])}</a>',
                    ", ".join(f"{n} {esc(s)}" for s, n in sorted(_contract_counts(p, c).items())),
                ]
                for cid, c in contracts.items()
            ],
        )


def _more_views(p: Pages, page: Page, views: list[dict[str, Any]]) -> None:
    """Views past the drawn ones: title, metrics and each series with links to the measurements it plots."""
    page.h(2, "More charts")
    page.p(
        f"{len(views)} more views of this family, not drawn here: each series links to the measurements it plots, "
        "whose sections list every point."
    )
    rows = []
    for view in views:
        series = []
        for s in view["series"]:
            links = [p.link("measurement", mid) for mid in s["measurement_ids"] if mid in p.measurements]
            series.append(f"{esc(s.get('label') or 'series')}: {', '.join(links) or 'no measurement'}")
        rows.append([esc(view.get("title") or view["id"]), esc(", ".join(view["metrics"])), "<br>".join(series)])
    page.table(["View", "Metrics", "Series and their measurements"], rows)


def _family_matrices(p: Pages, fid: str) -> Page:
    """A family's coverage matrices, when there are too many for its page."""
    page = Page(f"Coverage matrices of {fid}")  # their headings were searchable on the family page
    page.h(1, f"Coverage matrices of {esc(fid)}")
    page.p(f"Family {p.link('family', fid)}. Every cell is explicit; <em>missing</em> means nobody measured it.")
    for view in _family_records(p, "coverage-view", fid).values():
        _coverage_view(p, page, view)
    return page


def _closure_rows(p: Pages, page: Page, closures: Any) -> None:
    page.table(
        ["State", "Scope", "Reason"],
        [
            [
                p.state(c["state"]),
                ", ".join(f"{esc(k)}={p.text(v)}" for k, v in c["selectors"].items()),
                p.prose(c["reason"]),
            ]
            for c in closures
        ],
    )


def _x_of(m: dict[str, Any], x_from: str) -> Any:
    node: Any = m
    for part in x_from.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _view(p: Pages, page: Page, view: dict[str, Any]) -> None:
    page.h(3, esc(view.get("title") or view["id"]))
    if view.get("subtitle"):
        page.p(p.prose(view["subtitle"]))
    charted = "point of " + ("these charts" if len(view["metrics"]) > 1 else "this chart")
    with p.stated(page, [mid for s in view["series"] for mid in s["measurement_ids"]], charted):
        for metric in view["metrics"]:
            _view_chart(p, page, view, metric)


def _view_chart(p: Pages, page: Page, view: dict[str, Any], metric: str) -> None:
    """One metric of a view, drawn: its series' points, each linked to its sample."""
    series = []
    for s in view["series"]:
        members = [(mid, p.measurements[mid]) for mid in s["measurement_ids"] if mid in p.measurements]
        state = members[0][1]["state"] if members else "missing"
        cs = charts.Series(s.get("label") or "series", state)
        for mid, m in members:
            if m.get("points"):
                for pt in m["points"]:
                    v = pt.get(metric)
                    if isinstance(v, int | float) and not isinstance(v, bool):
                        cs.dots.append(_dot(p, mid, metric, None, pt["x"], float(pt["x"]), float(v)))
            else:
                x = _x_of(m, s.get("x_from") or "config.tp")
                samples = (m.get("metrics") or {}).get(metric) or []
                if isinstance(x, int | float) and not isinstance(x, bool):
                    for i, v in enumerate(samples):
                        cs.dots.append(_dot(p, mid, metric, i, None, float(x), float(v)))
        series.append(cs)
    unit = citations.unit_of(metric)
    label = load_vocab("metrics")["metrics"].get(metric, {}).get("label", metric)
    page.add(
        charts.svg(
            series,
            view.get("x_label") or "x",
            f"{label} ({unit})" if unit else label,
            view.get("x_scale") == "log",
            not view.get("discrete"),
            view.get("title", ""),
        )
    )


@functools.lru_cache(maxsize=65536)
def sample_anchor(metric: str, selector: str) -> str:
    """The id of a sample's or point's row on its measurement page (``decode-tok-s-0``); a negative x keeps its sign
    (``@-1`` and ``@1`` are two rows)."""
    return slug(f"{metric}-{selector.replace('@-', '@minus-')}")


def _dot(p: Pages, mid: str, metric: str, index: int | None, x: float | None, xv: float, v: float) -> charts.Dot:
    href = p.m_url(mid, sample_anchor(metric, citations.selector(index, x)))
    if href.startswith("#"):  # in the measurement's own chart: each value and its anchor are in the table below it
        return charts.Dot(xv, v, "", "")
    text = citations.format_value(v, metric)
    tip = p.trust_tip(mid)
    return charts.Dot(xv, v, href, f"{mid}: {text}" + (f" · {tip}" if tip else ""))


def _axis_key(axis: dict[str, Any] | None, default: str) -> str:
    return (axis or {}).get("key", default)


class Reasons:
    """A grid's reasons, each written once in a numbered list below it and referenced from its cells: a contract
    repeats one rule's reason in many cells (written into every cell, the reasons were most of the bytes of a 100k
    site's coverage pages)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.numbers: dict[str, int] = {}

    def ref(self, reason: str) -> str:
        """The cell's link to ``reason`` (HTML) in the list."""
        n = self.numbers.setdefault(reason, len(self.numbers) + 1)
        return f'<a class="evreg-why" href="#{self.prefix}-r{n}">why {n}</a>'

    def html(self) -> str:
        items = "".join(f'<li id="{self.prefix}-r{n}">{reason}</li>' for reason, n in self.numbers.items())
        return f'<ol class="evreg-reasons">{items}</ol>' if items else ""


def _cell(p: Pages, cell: dict[str, Any], reasons: Reasons) -> str:
    """A coverage cell's contents: its state in words (the cell's colour is its state's, whose meaning the grid's
    legend gives: a badge and its meaning in every cell were a fifth of the 100k site's coverage pages), label and
    links, and a link to its reason in the list below the grid."""
    parts = [f"<b>{esc(cell['state'])}</b>"]
    if cell.get("label"):
        parts.append(p.prose(cell["label"], cell=True))
    if cell.get("evidence_id") and f"m:{cell['evidence_id']}." not in str(cell.get("label")):  # else its figure links
        parts.append(f'<a href="{esc(p.m_url(cell["evidence_id"]))}">measurement</a>')
    if cell.get("packet_id"):
        parts.append(p.link("packet", cell["packet_id"], "packet"))
    if cell.get("reason"):  # shown in the list below the grid, out of reach of the line stated above it
        said, p.said = p.said, None
        try:
            parts.append(reasons.ref(p.prose(cell["reason"], cell=True)))
        finally:
            p.said = said
    return "<br>".join(parts)


def _coverage_view(p: Pages, page: Page, view: dict[str, Any]) -> None:
    row_axis = grid.Axis.of({"key": "row", **(view.get("row_axis") or {"label": "MTP", "prefix": "MTP"})})
    col_axis = grid.Axis.of({"key": "column", **(view.get("column_axis") or {"label": "TP", "prefix": "TP"})})
    row_axis.values, col_axis.values = list(view["rows"]), list(view["columns"])
    page.h(3, esc(view.get("label") or view["id"]))
    if view.get("fixed"):
        page.p(p.prose(view["fixed"]))

    def cell_of(r: Any, c: Any) -> dict[str, Any]:
        default = {"state": "missing", "label": "not listed"}
        return dict(view["cells"].get(f"{coverage.cell_key(r)}:{coverage.cell_key(c)}", default))

    reasons = Reasons(page.unique_id(f"why-{slug(str(view['id']))}"))  # ids differing by "." and "-" slug alike
    with p.stated(page, _cited(cell.get("label") for cell in view["cells"].values()), _GRID):  # reasons: below
        page.add(grid.matrix(row_axis, col_axis, cell_of, lambda cell: _cell(p, cell, reasons)))
    page.add(reasons.html())
    if view.get("decision_note"):
        page.p(p.prose(view["decision_note"]))


_GRID = "number in this grid"


def _cited(texts: Iterable[Any]) -> list[str]:
    """The measurements the citations in ``texts`` cite."""
    return [c.measurement for t in texts for c in citations.parse(str(t or "")) if isinstance(c, citations.Citation)]


def _contract_cells(c: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], Counter[str]]:
    cells: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for sel, matching in coverage.expand(c):
        merged = coverage.merge(matching)[0]
        merged.setdefault("state", "missing")
        cells.append((sel, merged))
    return cells, Counter(cell["state"] for _, cell in cells)


def _contract_counts(p: Pages, c: dict[str, Any]) -> Counter[str]:
    """A contract's cells by state, worked out once per build (the family page and two index pages show them)."""
    key = id(c)  # the record's dict, held by ``p.records`` for the whole build
    if key not in p.contract_counts:
        p.contract_counts[key] = coverage.state_counts(c)
    return p.contract_counts[key]


def _contracts_index(p: Pages, fid: str | None) -> Page:
    """The coverage contracts of one family, or of all."""
    page = Page("Coverage contracts" + (f" of {fid}" if fid else ""), search=False)
    page.h(1, "Coverage contracts" + (f" of {esc(fid)}" if fid else ""))
    rows = []
    for key, c in p.records.get("coverage-contract", {}).items():
        family, cid = key.split("/", 1)
        if fid in (None, family):
            counts = _contract_counts(p, c)
            rows.append(
                [
                    f'<a href="{p.base}coverage/{esc(family)}/{esc(cid)}/">{esc(c["label"])}</a>',
                    p.link("family", family),
                    ", ".join(f"{n} {esc(s)}" for s, n in sorted(counts.items())),
                ]
            )
    if rows:
        page.table(["Contract", "Family", "Cells by state"], rows)
    else:
        page.note("No coverage contracts.")
    return page


def _contract_page(p: Pages, key: str) -> Page:
    c = p.records["coverage-contract"][key]
    cells, counts = _contract_cells(c)
    page = Page(c["label"], search=False)
    page.h(1, esc(c["label"]))
    if c.get("description"):
        page.p(p.prose(c["description"]))
    page.p("Cells by state: " + ", ".join(f"{p.state(s)} {n}" for s, n in sorted(counts.items())))
    keys = [a["key"] for a in c["axes"]]
    by_key = {tuple(coverage.cell_key(sel[k]) for k in keys): cell for sel, cell in cells}
    reasons = Reasons(page.unique_id("why"))
    with p.stated(page, _cited(cell.get("label") for _, cell in cells), _GRID):  # its reasons are listed below it
        page.add(grid.contract(c, by_key, lambda cell: _cell(p, cell, reasons)))
    page.add(reasons.html())
    return page


def _packets_index(p: Pages) -> Page:
    page = Page("Packets")
    page.h(1, "Result packets")
    page.table(
        ["Packet", "Family", "Grades", "Status"],
        [
            [
                f"{p.link('packet', pid, pk.get('label') or pid)} <code>{esc(pid)}</code>",
                esc(p.where[("packet", pid)].family),
                " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items()),
                esc(pk.get("status", "")),
            ]
            for pid, pk in p.records.get("packet", {}).items()
        ],
    )
    return page


PACKET_SCOPE_FIELDS = (
    "revision",
    "artifact_id",
    "quantization",
    "runtime",
    "cards",
    "topologies",
    "status",
    "evidence_level",
)


def _packet(p: Pages, pid: str) -> Page:
    pk = p.records["packet"][pid]
    row = p.where[("packet", pid)]
    family, file = row.family, row.file
    page = Page(pk.get("label") or pid, boost=2)
    page.h(1, esc(pk.get("label") or pid))
    page.p(f"Packet <code>{esc(pid)}</code> of family {p.link('family', str(family))} · file <code>{esc(file)}</code>")
    page.h(2, "Scope")
    rows = [[esc(key), esc(pk[key])] for key in PACKET_SCOPE_FIELDS if key in pk]
    if pk.get("coverage"):
        rows.append(["coverage", ", ".join(esc(c) for c in pk["coverage"])])
    page.table(["Field", "Value"], rows)
    if pk.get("summary"):
        page.h(2, "Summary")
        page.p(p.prose(pk["summary"]))
    fm = pk.get("featured_metric")
    if fm:
        page.h(2, "Featured result")
        page.p(
            f"{esc(fm['metric'])}: "
            f"{p.cite(fm['measurement_id'], fm['metric'], fm.get('sample_index'), fm.get('point_x'))} "
            f"({esc(fm['workload'])})"
        )
    grades = pk.get("grades") or {}
    if grades:
        page.h(2, "Grades")
        page.table(
            ["Grade", "Scope", "Basis", "Reviewed", "Evidence"],
            [
                [
                    p.grade_badge(axis, g),
                    p.prose(g["scope"]),
                    p.prose(g["basis"]),
                    esc(g["reviewed_at"]),
                    "<br>".join(esc(e) for e in g.get("evidence", [])),
                ]
                for axis, g in grades.items()
            ],
        )
        page.p(f'What each letter requires: <a href="{p.base}methodology/grades/">the grade rubric</a>.')
    page.h(2, "Measurements")
    ms = p.in_packet.get(pid, [])
    if not ms:
        page.note("No measurements filed in this packet's folder.")
    for mid in ms:
        _measurement(p, page, mid)
    page.h(2, "Evidence")
    p.evidence_list(page, file, str(family))
    page.h(2, "Provenance")
    p.history(page, file)
    return page


def _measurements_index(p: Pages) -> Page:
    """Where the measurements are: each one is a section of its packet's page, or of its family's page of
    measurements filed in no packet (a page per measurement does not scale to 100,000)."""
    page = Page("Measurements", search=False)
    page.h(1, "Measurements")
    page.p(
        "Each measurement is a section of its packet's page (<code>packets/PACKET/#m-ID</code>), or of its "
        "family's page of measurements filed in no packet (<code>families/FAMILY/measurements/#m-ID</code>). "
        "Search finds them by id."
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for mid in p.measurements:
        row = p.measurement_where(mid)
        counts[str(row.family)]["packet" if row.packet else "loose"] += 1
    rows = []
    for fid in [*p.records.get("family", {}), *sorted(set(counts) - set(p.records.get("family", {})))]:
        c = counts.get(fid)
        if not c:
            continue
        loose = f'<a href="{p.base}families/{esc(fid)}/measurements/">{c["loose"]}</a>' if c["loose"] else "0"
        rows.append([p.link("family", fid), str(c["packet"] + c["loose"]), str(c["packet"]), loose])
    page.table(["Family", "Measurements", "In packets", "In no packet"], rows)
    return page


def _loose_measurements(p: Pages, fid: str) -> Page:
    page = Page(f"Measurements of {fid} in no packet", search=True)
    page.h(1, f"Measurements of {esc(fid)} filed in no packet")
    page.p(f"Family {p.link('family', fid)}. Measurements in <code>packets/{esc(fid)}/measurements/</code>.")
    for mid in p.loose.get(fid, []):
        _measurement(p, page, mid)
    return page


IDENTITY_FIELDS = (
    "state",
    "revision",
    "artifact_id",
    "quantization",
    "variant",
    "hardware",
    "runtime",
    "runtime_family",
    "runtime_profile_id",
    "profile_id",
    "measurement_class",
    "promotion_status",
    "workload",
    "axis",
)
IDENTITY_MAPS = ("identity", "runtime_identity")
SHOWN_FIELDS = frozenset(
    {*IDENTITY_FIELDS, *IDENTITY_MAPS, "kind", "id", "config", "metrics", "points", "sample_annotations"}
    | {"quality", "caveat", "evidence", "evidence_sha256", "evidence_locators", "supersedes", "retired"}
)
"""The fields a measurement page shows in their own sections; every other stored field is listed verbatim."""


def _measurement(p: Pages, page: Page, mid: str) -> None:
    """A measurement as a section of its page (anchor ``m-ID``): a heading and one line with what a reader
    needs first (found by search: state, grades, hardware, runtime), then every other stored field (left out of the
    search index; a stored state, hardware or runtime that line shows as stored is not repeated)."""
    m = p.measurements[mid]
    row = p.measurement_where(mid)
    kind = "run-measurement" if ("run-measurement", mid) in p.where else "series-measurement"
    page.h(3 if row.packet else 2, f"Measurement <code>{esc(mid)}</code> {p.state(m['state'])}", m_anchor(mid))
    page.p(f"{esc(kind)} · {p.trust_line(mid)}")  # what search shows of the section
    page.add('<div class="evreg-measurement" data-search-exclude>')
    page.p(f"File <code>{esc(row.file)}</code>")
    if m.get("retired"):
        page.add(
            '<div class="admonition warning"><p class="admonition-title">Retired</p>'
            f"<p>{p.prose(m['retired'].get('reason'))}</p></div>"
        )
    _supersession(p, page, mid)
    state, _grades, hardware, runtime = p.trust_parts(mid)
    said = {"state": state, "hardware": hardware, "runtime": runtime}  # in the line under the heading, as stored
    rows = [
        [esc(k), p.text(m[k], k)]
        for k in IDENTITY_FIELDS
        if k in m and not (isinstance(m[k], str) and " ".join(m[k].split()) == said.get(k))
    ]
    for key in IDENTITY_MAPS:
        if isinstance(m.get(key), dict):
            rows += [[f"{key}.{esc(k)}", f"<code>{esc(v)}</code>"] for k, v in m[key].items()]
        elif key in m:  # a lab may write its runtime identity as text
            rows.append([esc(key), p.text(m[key], key)])
    rows += [[f"config.{esc(k)}", p.text(v)] for k, v in (m.get("config") or {}).items()]
    page.table(["Identity and config", "Value"], rows)
    if m.get("metrics"):
        _samples(p, page, mid, m)
    if m.get("points"):
        _series_points(p, page, mid, m)
    for key in ("quality", "caveat"):
        if m.get(key):
            page.p(f"<strong>{key.capitalize()}:</strong> {p.prose(m[key])}")
    page.sub("Evidence")
    p.evidence_list(page, row.file, str(row.family))
    _locators(page, m)
    _other_fields(page, m)
    page.sub("Provenance")
    p.history(page, row.file)
    page.add("</div>")


def _supersession(p: Pages, page: Page, mid: str) -> None:
    """The whole chain of corrections this measurement belongs to, oldest first."""
    chain, seen = [mid], {mid}
    while (prev := p.measurements.get(chain[0], {}).get("supersedes")) and prev not in seen:
        chain.insert(0, prev)
        seen.add(prev)
    while (nxt := p.superseded_by.get(chain[-1])) and nxt not in seen:
        chain.append(nxt)
        seen.add(nxt)
    if len(chain) == 1:
        return
    links = [f"<strong>{esc(c)}</strong> (this)" if c == mid else p.link("measurement", c) for c in chain]
    page.p("Supersession chain, oldest first: " + " → ".join(links) + ".")
    if chain[-1] != mid:
        page.p(f"Superseded by {p.link('measurement', chain[chain.index(mid) + 1])}.")


def _samples(p: Pages, page: Page, mid: str, m: dict[str, Any]) -> None:
    """Every sample with its evidence locator and the annotations stored for it."""
    notes: dict[tuple[str, int], list[str]] = defaultdict(list)
    for a in m.get("sample_annotations") or []:
        if isinstance(a, dict):
            extra = [f"{esc(k)}: {p.text(v, k)}" for k, v in a.items() if k not in ("metric", "index", "label")]
            notes[(a.get("metric", ""), a.get("index", -1))].append(
                f"<strong>{p.prose(a.get('label', ''))}</strong>" + (" · " + " · ".join(extra) if extra else "")
            )
    locators = m.get("evidence_locators") or {}
    page.sub("Samples")
    rows: list[list[str | Cell]] = []
    for metric, samples in m["metrics"].items():
        for i in range(len(samples)):
            loc = locators.get(f"{metric}[{i}]")
            rows.append(
                [
                    esc(metric),
                    str(i),
                    p.sample(mid, metric, i),
                    f"<code>{esc(loc)}</code>" if loc else "—",
                    "<br>".join(notes.get((metric, i), [])),
                ]
            )
    page.table(["Metric", "Sample", "Value", "Evidence locator", "Annotation"], rows)


def _locators(page: Page, m: dict[str, Any]) -> None:
    """Where in the evidence each series point was read (run samples show theirs beside the value)."""
    locators = {k: v for k, v in (m.get("evidence_locators") or {}).items() if "@" in k}
    if locators:
        page.table(
            ["Point", "Evidence locator"],
            [[f"<code>{esc(k)}</code>", f"<code>{esc(v)}</code>"] for k, v in locators.items()],
        )


def _other_fields(page: Page, m: dict[str, Any]) -> None:
    """Every stored field no section above shows, verbatim: nothing stored is hidden from a reader."""
    rest = {k: v for k, v in m.items() if k not in SHOWN_FIELDS}
    if not rest:
        return
    page.sub("Other stored fields")
    page.p("As stored in the record (JSON). Numbers here are not citations: they are not checked against evidence.")
    page.table(
        ["Field", "Stored value"],
        [[f"<code>{esc(k)}</code>", f"<code>{esc(json.dumps(v, ensure_ascii=False))}</code>"] for k, v in rest.items()],
        cls="evreg-stored",
    )


def _series_points(p: Pages, page: Page, mid: str, m: dict[str, Any]) -> None:
    """A series' charts (a metric's numbers, drawn bare) and its points' table, which holds every value drawn."""
    metric_vocab = load_vocab("metrics")["metrics"]
    stored = {k for pt in m["points"] for k in pt}
    for metric in [k for k in metric_vocab if k in stored]:
        series = charts.Series(
            mid,
            m["state"],
            [
                _dot(p, mid, metric, None, pt["x"], float(pt["x"]), float(pt[metric]))
                for pt in m["points"]
                if isinstance(pt.get(metric), int | float) and not isinstance(pt.get(metric), bool)
            ],
        )
        if len({d.x for d in series.dots}) < 2:  # one point is no curve: its row below holds it
            continue
        unit = citations.unit_of(metric)
        label = metric_vocab[metric]["label"]
        page.add(
            charts.svg(
                [series],
                m.get("axis") or "x",
                f"{label} ({unit})" if unit else label,
                m.get("axis") == "concurrency",
                True,
                mid,
            )
        )
    keys = [k for k in dict.fromkeys(k for pt in m["points"] for k in pt) if k not in ("x", "samples")]
    page.sub(f"Points along {esc(m.get('axis') or 'x')}")
    rows: list[list[str | Cell]] = []
    for pt in m["points"]:
        cells: list[str | Cell] = []
        for k in keys:  # every stored field of every point: a number is a sample (its anchor), anything else verbatim
            v = pt.get(k)
            if isinstance(v, int | float) and not isinstance(v, bool):
                cells.append(p.sample(mid, k, None, pt["x"]))
            elif v is None:
                cells.append("—")
            else:  # as stored (a hash, a status), as the other stored fields are shown
                cells.append(f"<code>{esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</code>")
        rows.append([esc(citations.fmt_x(pt["x"])), *cells, esc(pt.get("samples", ""))])
    page.table(["x", *(esc(k) for k in keys), "samples"], rows)


def _comparisons(p: Pages, metrics: list[str]) -> Page:
    page = Page("Comparisons")
    compare.index_page(p, page, metrics)
    return page


def _comparison(p: Pages, metric: str) -> Page:
    page = Page(f"Compare {compare.metric_title(metric)}", search=False)  # the index page is found; rows are not
    compare.metric_page(p, page, metric)
    return page


def _quarantine(p: Pages) -> Page:
    page = Page("Quarantine and closures")
    page.h(1, "Quarantine and closures")
    page.p("Observed but invalid for promotion, kept with the reason; and deliberate stops of lines of work.")
    page.h(2, "Quarantined measurements")
    page.table(
        ["Measurement", "Reason"],
        [
            [p.link("measurement", mid), p.prose(m.get("caveat") or m.get("quality") or "")]
            for mid, m in p.measurements.items()
            if m["state"] == "quarantined"
        ],
    )
    page.h(2, "Closures")
    _closure_rows(p, page, p.records.get("closure", {}).values())
    return page


def _defects(p: Pages) -> Page:
    page = Page("Known data defects")
    page.h(1, "Known data defects")
    page.p(
        "Findings on imported lab data that are genuine defects of that data. They are accepted in the "
        "reviewed baseline (<code>packets/baseline.json</code>) so that CI can pass, and shown here rather than "
        "hidden. Typed figures in prose are marked where they appear. The findings are grouped by the reason "
        "they were accepted for (one baseline entry can accept the same defect in many records)."
    )
    groups: dict[tuple[str, str], list[Any]] = {}
    for f in p.defects:
        groups.setdefault((f.code, f.baseline_reason or ""), []).append(f)
    for (code, reason), found in groups.items():
        page.p(f"<code>{esc(code)}</code> ({len(found)}) · <strong>Why accepted:</strong> {p.literal(reason)}")
        page.table(
            ["Where", "Finding"],
            [[f"<code>{esc(f.file)}</code> <code>{esc(f.pointer)}</code>", p.literal(f.message)] for f in found],
        )
    return page


def _downloads(p: Pages, files: list[tuple[str, str, int]]) -> Page:
    page = Page("Data downloads")
    page.h(1, "Data downloads")
    page.p(
        "The whole catalog, one file per table, as Parquet and as JSON Lines compressed with gzip "
        "(<code>.jsonl.gz</code>: <code>gzip -dc FILE.jsonl.gz</code> gives one JSON object per row; "
        "<code>evreg export parquet</code> writes the same files). "
        "The same rows the site is built from; query them with DuckDB, e.g. "
        "<code>duckdb -c \"SELECT * FROM 'samples.parquet' LIMIT 5\"</code>."
    )
    page.table(
        ["File", "Bytes", "sha256"],
        [
            [f'<a href="{esc(name)}">{esc(name)}</a>', str(size), f"<code>{esc(sha)}</code>"]
            for name, sha, size in files
        ],
    )
    if files:
        page.p('Checksums: <a href="SHA256SUMS">SHA256SUMS</a>')
    return page


def _grades_page(p: Pages) -> Page:
    rubric = load_vocab("rubric")
    page = Page("Grade rubric")
    page.h(1, "Grade rubric (EVID)")
    page.p(
        f"Rubric version {esc(rubric['version'])}, read from <code>registry/evreg/vocab/rubric.json</code>; "
        "the validator checks every declared grade against it (<code>grade-unsupported</code>)."
    )
    page.p(f"<strong>Attached evidence.</strong> {esc(rubric['attached_evidence'])}")
    page.table(
        ["Grade", "Meaning", "Requires"],
        [
            [esc(g), esc(spec["meaning"]), ", ".join(f"<code>{esc(c)}</code>" for c in spec["requires"])]
            for g, spec in rubric["grades"].items()
        ],
    )
    page.h(2, "Checks")
    page.table(["Check", "What it requires"], [[f"<code>{esc(c)}</code>", esc(t)] for c, t in rubric["checks"].items()])
    return page


def _rules_page(p: Pages, codes: list[Code]) -> Page:
    page = Page("Rule reference")
    page.h(1, "Rule reference")
    page.p("Every finding code the validator reports (<code>evreg explain CODE</code> prints the same).")
    for doc in sorted(codes, key=lambda d: d.code):
        page.h(2, esc(doc.code))
        page.p(f"<strong>{doc_text(doc.title)}.</strong> {doc_text(doc.why)}")
        page.p(f"<em>Fix:</em> {doc_text(doc.hint)}")
        if doc.example:
            page.p(f"<em>Fails, for example:</em> <code>{esc(doc.example)}</code>")
    return page


def _schema_page(p: Pages) -> Page:
    from evreg.records import schemas

    page = Page("Schema reference")
    page.h(1, "Schema reference")
    page.p(
        "One JSON Schema (draft 2020-12) per record kind, generated from the record models and committed in "
        "<code>schema/</code>. Unknown fields are kept. Editors: <code>schema/record.schema.json</code> applies "
        "the schema of a record's <code>kind</code>; <code>.vscode/settings.json</code> maps every record file to it."
    )
    for name, text in schemas.generate().items():
        if name == schemas.RECORD_SCHEMA:
            continue
        schema = json.loads(text)
        page.h(2, esc(name.removesuffix(".schema.json")))
        page.p(f"<code>schema/{esc(name)}</code> · <code>$id</code> <code>{esc(schema['$id'])}</code>")
        required = set(schema.get("required", []))
        page.table(
            ["Field", "Required", "Description"],
            [
                [f"<code>{esc(f)}</code>", "yes" if f in required else "", doc_text(spec.get("description", ""))]
                for f, spec in schema.get("properties", {}).items()
            ],
        )
    return page
