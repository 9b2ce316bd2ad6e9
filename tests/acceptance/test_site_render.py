"""Correct rendering, checked on the built site of this repository: every chart point and line inside its plot,
every legend entry with a visible series, no markup shown as text, the text around citations intact, an index page
for every folder URL; trust beside every number; a measurement is a section of its page and every link resolves;
record pages made by workers are the pages made in one process; and citations with filters inside hand-written
Markdown tables."""

from __future__ import annotations

import html
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from evreg.claims import figures
from evreg.site import family, measurements
from evreg.site.cite import Pages
from evreg.site.html import Page
from helpers import REPO, WIDE_MATRICES, WIDE_VIEWS, Reg, evreg

SVG = ""  # inline SVG in HTML: no namespace declared (the HTML parser gives it one)


_FIGURE = re.compile(r'<figure class="evreg-figure">.*?</figure>', re.S)


_CHART = re.compile(r'<svg class="evreg-chart".*?</svg>', re.S)


def pages(site: Path) -> Iterator[tuple[str, str]]:
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        if not rel.startswith(("assets/", "search/")):
            yield rel, page.read_text("utf-8")


def charts(site: Path) -> Iterator[tuple[str, ET.Element]]:
    for rel, text in pages(site):
        for svg in _CHART.findall(text):
            yield rel, ET.fromstring(svg)


def _box(el: ET.Element) -> tuple[float, float, float, float]:
    x, y = float(el.get("x", 0)), float(el.get("y", 0))
    return x, y, x + float(el.get("width", 0)), y + float(el.get("height", 0))


def _inside(x: float, y: float, box: tuple[float, float, float, float], slack: float = 0.05) -> bool:
    return box[0] - slack <= x <= box[2] + slack and box[1] - slack <= y <= box[3] + slack


@pytest.mark.slow
def test_every_chart_point_and_line_lies_inside_its_plot_area(repo_site: Path) -> None:
    """The plot area is the frame the axes span (from the bottom tick to the top tick); a point
    outside it is drawn beyond the axes or not at all. Every circle is wholly in the picture too."""
    n_charts = n_points = 0
    outside: list[str] = []
    for rel, svg in charts(repo_site):
        n_charts += 1
        plot = svg.find(f"{SVG}rect[@class='evreg-plot']")
        assert plot is not None, f"{rel}: a chart without its plot frame"
        frame = _box(plot)
        grid_path = next(g.get("d", "") for g in svg.iter(f"{SVG}path") if g.get("class") == "grid")
        grid = [float(y) for y in re.findall(r"M[-\d.]+ ([-\d.]+)H", grid_path)]
        assert grid and min(grid) >= frame[1] - 0.05 and max(grid) <= frame[3] + 0.05, rel  # ticks span the frame
        view = [float(v) for v in svg.get("viewBox", "").split()]
        for c in svg.iter(f"{SVG}circle"):
            n_points += 1
            x, y, r = float(c.get("cx", 0)), float(c.get("cy", 0)), float(c.get("r", 0))
            whole = view[0] <= x - r and x + r <= view[2] and view[1] <= y - r and y + r <= view[3]
            if not _inside(x, y, frame) or not whole:
                outside.append(f"{rel}: point at ({x}, {y})")
        for line in svg.iter(f"{SVG}polyline"):
            for pair in line.get("points", "").split():
                x, y = (float(v) for v in pair.split(","))
                if not _inside(x, y, frame):
                    outside.append(f"{rel}: line vertex at ({x}, {y})")
    assert n_charts >= 100 and n_points >= 1000, (n_charts, n_points)  # the real registry's charts were checked
    assert outside == [], f"{len(outside)} of {n_points} points outside their plot: {outside[:5]}"


@pytest.mark.slow
def test_every_legend_entry_has_a_visible_series_and_every_series_an_entry(repo_site: Path) -> None:
    entries = 0
    for rel, text in pages(repo_site):
        for figure in _FIGURE.findall(text):
            svg = ET.fromstring(_CHART.findall(figure)[0])
            drawn = {
                g.get("data-series")
                for g in svg.iter(f"{SVG}g")
                if g.get("class") == "evreg-series" and g.find(f".//{SVG}circle") is not None
            }
            legend = re.findall(r'<li class="evreg-legend-entry" data-series="(\d+)"', figure)
            entries += len(legend)
            assert set(legend) == drawn and len(legend) == len(drawn), (rel, legend, drawn)
    assert entries >= 300, entries


class _Text(HTMLParser):
    """The text a reader sees: everything outside code, scripts, styles and SVG titles (tooltips)."""

    SKIP = frozenset({"code", "pre", "script", "style", "title", "textarea"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


MARKUP = re.compile(
    r"</?(?:a|span|mark|div|p|td|tr|th|table|svg|circle|text|em|strong|code|br|li|ul|img|script)\b[^<>]*>"
    r"|\bclass=\"|\{\{\s*m:"
)


def shown_text(page_html: str) -> str:
    main = page_html.split('<article class="md-content__inner md-typeset">', 1)[-1].split("</article>", 1)[0]
    parser = _Text()
    parser.feed(main)
    return " ".join(parser.parts)


@pytest.mark.slow
def test_no_page_shows_markup_or_a_citation_as_text(repo_site: Path) -> None:
    shown = {rel: MARKUP.findall(shown_text(text)) for rel, text in pages(repo_site)}
    assert len(shown) >= 150  # every page (measurements are sections of packet pages)
    assert {rel: found for rel, found in shown.items() if found} == {}


# A citation in prose stands apart from its words: "median 101.17 tok/s", never "median101.17tok/s".
# Only the notation of a capital letter and a number (D{{ ... | nounit }}: decode tok/s) joins them.
_CITED = re.compile(r'(.{0,40})<a class="evreg-cite"[^>]*>(.*?)</a>(.{0,40})', re.S)


_BLOCK = re.compile(r"</?(?!(?:a|span|mark|em|strong|code)\b)[a-z][a-z0-9]*[^>]*>")


def _plain(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", _BLOCK.sub(" ", fragment)))


def glued_citations(page_html: str) -> list[str]:
    body = _CHART.sub(" ", page_html)
    glued = []
    for m in _CITED.finditer(body):
        before, value, after = _plain(m.group(1)), _plain(m.group(2)), _plain(m.group(3))
        notation = re.search(r"(?:^|[^\w])(?:" + "|".join(figures.CODE_METRICS) + ")$", before) is not None
        if (before[-1:].isalnum() and not notation) or after[:1].isalnum():
            glued.append(f"{before[-12:]}[{value}]{after[:12]}".strip())
    return glued


@pytest.mark.slow
def test_text_around_citations_is_kept(repo_site: Path) -> None:
    assert glued_citations('<td>median<a class="evreg-cite" href="#">101.170</a>tok/s</td>') == ["median[101.170]tok/s"]
    assert glued_citations('<p>at D<a class="evreg-cite" href="#">48.4</a> · AR</p>') == []
    found = {rel: glued_citations(text) for rel, text in pages(repo_site)}
    assert {rel: g for rel, g in found.items() if g} == {}


@pytest.mark.slow
def test_every_folder_url_has_an_index_page(repo_site: Path) -> None:
    folders = {
        parent
        for page in repo_site.rglob("index.html")
        for parent in page.relative_to(repo_site).parents
        if not str(parent).startswith(("assets", "search"))
    }
    assert Path("coverage") in folders and Path("coverage/qwen-27b") in folders
    assert sorted(str(f) for f in folders if not (repo_site / f / "index.html").is_file()) == []


def test_citations_with_filters_render_inside_markdown_tables(reg: Reg) -> None:
    """A citation's filters are written with "|", the Markdown table's cell separator."""
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    page = reg.root / "site/contributing.md"
    page.write_text(
        page.read_text()
        + "\n| Run | Decode |\n|---|---|\n"
        + "| first | median {{ m:run-1.decode_tok_s[0] | 3 | nounit }} tok/s and more |\n"
        + "| second | D{{ m:run-1.decode_tok_s[1] | nounit }} · {{ m:run-1.decode_tok_s[0] | 1 }} |\n"
    )
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    built = (reg.root / "build/site/contributing/index.html").read_text()
    rows = re.findall(r"<tr>\s*<td>(first|second)</td>\s*<td>(.*?)</td>\s*</tr>", built, re.S)
    assert [name for name, _ in rows] == ["first", "second"], rows  # one cell each, not split at "|"
    assert _plain(rows[0][1]) == "median 30.210 tok/s and more"
    assert _plain(rows[1][1]) == "D30.25 · 30.2 tok/s"
    assert 'href="../packets/pkt/#m-run-1--decode-tok-s-0"' in rows[0][1]
    assert MARKUP.findall(shown_text(built)) == [] and glued_citations(built) == []


# -- trust beside every number -----------------------------------------------------------------------------------------


def _records(kinds: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    import json

    for path in sorted((REPO / "packets").rglob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        if isinstance(data, dict) and data.get("kind") in kinds:
            yield data


_SECTION = re.compile(r'<h([23]) id="m-([a-z0-9.-]+)">')


def measurement_sections(site: Path) -> dict[str, str]:
    """Measurement id -> the HTML of its section (on its packet's page, or its family's page of measurements
    in no packet), up to the next heading of its level or above."""
    out: dict[str, str] = {}
    pages = [*site.glob("packets/*/index.html"), *site.glob("families/*/measurements/index.html")]
    for page in pages:
        text = page.read_text("utf-8")
        for m in _SECTION.finditer(text):
            level = int(m.group(1))
            end = re.compile(rf"<h[1-{level}][ >]").search(text, m.end())
            out[m.group(2)] = text[m.start() : end.start() if end else len(text)]
    return out


@pytest.mark.slow
def test_measurement_sections_show_every_stored_field(repo_site: Path) -> None:
    """Hardware, runtime and identity hashes, every evidence locator, every sample annotation, and
    every other stored field (verbatim) are in the measurement's section."""
    checked = 0
    sections = measurement_sections(repo_site)
    for m in _records(("run-measurement", "series-measurement")):
        built = sections[str(m["id"])]
        text = " ".join(_plain(built).split())
        missing = []
        for key in ("hardware", "runtime", "workload"):
            if key in m and " ".join(str(m[key]).split()) not in text:
                missing.append(key)
        for key in ("identity", "runtime_identity"):
            value = m.get(key) or {}
            pairs = value.items() if isinstance(value, dict) else [("", value)]
            missing += [f"{key}.{k}" for k, v in pairs if " ".join(str(v).split()) not in text]
        missing += [f"locator {k}" for k, v in dict(m.get("evidence_locators") or {}).items() if v not in text]
        for note in m.get("sample_annotations") or []:
            missing += [f"annotation {k}" for k, v in note.items() if isinstance(v, str) and v not in text]
        if m.get("supersedes") and f'#m-{m["supersedes"]}"' not in built:
            missing.append("supersedes")
        from evreg.site.measurements import SHOWN_FIELDS

        missing += [f"field {k}" for k in m if k not in SHOWN_FIELDS and f"<code>{html.escape(k)}</code>" not in built]
        assert missing == [], (m["id"], missing)
        checked += 1
    assert checked >= 150, checked
    hero = sections["q38-a3561ef8-tp4-winner-overlay-graph-strict"]
    assert "upper observed endpoint, not independently replicated" in _plain(hero)


@pytest.mark.slow
def test_every_number_in_a_coverage_grid_carries_its_trust_line(repo_site: Path) -> None:
    """A grid states once the trust line most of its numbers share; each number's tooltip gives every part of its own
    line that differs (state, grade, hardware, runtime), so every part of every number's line is on the page."""
    p = Pages(REPO / "build/catalog.duckdb")
    cites = re.compile(r'<a class="evreg-cite" href="[^"#]*#m-([^"]+)--[^"]*"(?: title="([^"]*)")?>')
    checked, differing = 0, 0
    for page in sorted(repo_site.glob("coverage/*/*/index.html")):
        built = page.read_text("utf-8")
        stated = re.search(r"unless its tooltip says otherwise, it is (.*?)\.</p>", built)
        grid = built[stated.end() :] if stated else ""
        if not stated:
            assert cites.search(built) is None, page  # a grid with numbers states its line
            continue
        said = _plain(stated.group(1)).split(" · ")
        for mid, title in cites.findall(grid):
            tooltip = html.unescape(title)
            own = p.trust_parts(mid)
            assert all(part == said[i] or part in tooltip for i, part in enumerate(own)), (page, mid, tooltip, said)
            checked += 1
            differing += bool(tooltip)
    assert checked >= 300 and 0 < differing < checked, (checked, differing)
    # the same for the points of a family's charts (the line stated once per view, above its charts)
    points = re.compile(r'<a class="evreg-cite" href="[^"#]*#m-([^"]+)--[^"]*"><circle[^>]*/><title>([^<]*)</title>')
    checked = 0
    for page in sorted(repo_site.glob("families/*/index.html")):
        built = page.read_text("utf-8")
        for part in re.split(r"<h3 ", built)[1:]:  # a view: its heading, the stated line, its charts
            stated = re.search(r"unless its tooltip says otherwise, it is (.*?)\.</p>", part)
            if not stated:
                assert points.search(part) is None, page
                continue
            said = _plain(stated.group(1)).split(" · ")
            for mid, title in points.findall(part):
                tooltip = html.unescape(title)
                assert tooltip.startswith(f"{mid}: "), tooltip  # the point's measurement and value
                assert all(part == said[i] or part in tooltip for i, part in enumerate(p.trust_parts(mid))), tooltip
                checked += 1
    assert checked >= 300, checked


@pytest.mark.slow
def test_headline_tables_show_grade_hardware_and_runtime(repo_site: Path) -> None:
    """A headline value's state, grades and whether its evidence was checked are in the value's own cell; its packet,
    hardware and setup and runtime beside it."""
    for rel in ("index.html", "families/qwen-27b/index.html"):  # the families that declare a headline
        built = (repo_site / rel).read_text("utf-8")
        tables = [t for t in re.findall(r"<table>.*?</table>", built, re.S) if "<th>Role</th>" in t]
        assert tables, rel
        for table in tables:
            assert re.search(r"<th>Value</th><th>Packet</th><th>Hardware · setup</th><th>Runtime</th>", table), rel
            for row in re.findall(r"<tr><td>(?:hero|support)</td>.*?</tr>", table, re.S):
                cells = re.findall(r"<td>(.*?)</td>", row, re.S)
                value = cells[2]
                assert value.index("evreg-cite") < value.index('<span class="evreg-trust">'), (rel, value)
                assert "evreg-state" in value and ("evreg-grade" in value or "ungraded" in value), (rel, value)
                assert "checked" in _plain(value) or "no evidence" in _plain(value), (rel, value)
                assert _plain(cells[4]).strip() and _plain(cells[5]).strip(), (rel, cells)
                assert "Best " in _plain(cells[7]) or "None: it is the best" in _plain(cells[7]), (rel, cells[7])


def test_a_measurement_page_shows_its_supersession_chain_and_sample_annotations(reg: Reg) -> None:
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    hardware = "2x Example GPU 48 GB"  # the packet's, so its runs state it too (a run in its folder has its scope)
    for path in ("packets/fam/pkt/packet.json", "packets/fam/pkt/measurements/run-1.json"):
        reg.edit(path, lambda d: d.update(hardware=hardware))
    base = reg.read("packets/fam/pkt/measurements/run-1.json")
    for n, prev in (("a", None), ("b", "a"), ("c", "b")):
        reg.put(f"packets/fam/pkt/measurements/run-{n}.json", {**base, "id": f"run-{n}", "supersedes": f"run-{prev}"})
    reg.edit(
        "packets/fam/pkt/measurements/run-a.json",
        lambda d: d.pop("supersedes"),
    )
    reg.edit(
        "packets/fam/pkt/measurements/run-b.json",
        lambda d: d.update(
            sample_annotations=[{"metric": "decode_tok_s", "index": 0, "label": "upper endpoint", "note": "one run"}],
            evidence_locators={"decode_tok_s[0]": "/decode_tok_s/0", "decode_tok_s[1]": "/decode_tok_s/1"},
            lab_only={"kept": "verbatim"},
        ),
    )
    reg.commit("a chain of corrections")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    sections = measurement_sections(reg.root / "build/site")
    built = sections["run-b"]
    text = " ".join(_plain(built).split())
    assert "Supersession chain, oldest first: run-a → run-b (this) → run-c." in text
    assert "Superseded by run-c." in text
    assert "2x Example GPU 48 GB" in text and "/decode_tok_s/0" in text
    assert "upper endpoint · note: one run" in text
    assert "<code>lab_only</code>" in built and "verbatim" in text
    first = _plain(sections["run-a"])
    assert "Supersession chain, oldest first: run-a (this) → run-b → run-c." in " ".join(first.split())


@pytest.mark.slow
def test_a_family_without_featured_results_heads_with_its_primary_packets_featured_metric(repo_site: Path) -> None:
    """As the lab's pages do: phi-4 declares no featured_results; its primary packet features a Q4_K_M decode run."""
    import json

    family = json.loads((REPO / "packets/phi-4/family.json").read_text())
    primary = json.loads((REPO / f"packets/phi-4/{family['primary_packet_id']}/packet.json").read_text())
    assert "featured_results" not in family
    page = (repo_site / "families/phi-4/index.html").read_text("utf-8")
    assert "primary packet&#x27;s featured metric" in page or "primary packet's featured metric" in page
    mid = primary["featured_metric"]["measurement_id"]
    assert f"#m-{mid}" in page and "declares no headline" not in page
    declared = (repo_site / "families/qwen-27b/index.html").read_text("utf-8")  # featured_results of its own
    assert "featured metric (the family declares no featured results)" not in declared


@pytest.mark.slow
def test_a_bare_decimal_in_a_coverage_cell_is_marked_as_validation_finds_it(repo_site: Path) -> None:
    """A cell shows one measured arm, so its bare decimals are values (``models.in_cell``): the two the baseline
    accepts as orphans are marked on the site, the cited ones beside them are links."""
    built = "".join(h for _, h in pages(repo_site))
    for figure in ("32,683 MiB", "15.077"):
        assert re.search(rf'<mark class="evreg-orphan"[^>]*>{re.escape(figure)}</mark>', built), figure


@pytest.mark.slow
def test_a_run_logs_figures_are_shown_as_quotes(repo_site: Path) -> None:
    """The run log's out-of-memory figure on the closures it explains is shown as a quote of the log (marked as
    such, not linked like a measurement), and the build does not read it as an orphan."""
    assert any(re.search(r'class="evreg-quote"[^>]*>31\.39 GiB<', h) for _, h in pages(repo_site))


def test_settings_quotes_and_derived_figures_render_as_what_they_are(reg: Reg) -> None:
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    reg.edit(
        "packets/fam/pkt/measurements/run-1.json",
        lambda d: d.update(
            quality="on a {{ set:32 GiB }} card; the log says {{ e:/decode_tok_s/1 = 30.25 }}",
            caveat="{{ change:m:run-1.decode_tok_s[1] from m:run-1.decode_tok_s[0] | 2 }} between repeats",
        ),
    )
    reg.commit("forms")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    built = "".join(p.read_text("utf-8") for p in (reg.root / "build/site").rglob("*.html"))
    assert re.search(r'<span class="evreg-setting" title="[^"]*">32 GiB</span>', built)
    assert re.search(r'<span class="evreg-quote" title="[^"]*/decode_tok_s/1[^"]*">30.25</span>', built)
    assert re.search(r'<a class="evreg-derived" href="[^"]*" title="Derived: run-1[^"]*">\+0\.13%</a>', built)


# -- a measurement is a section of its page; every link resolves -------------------------------------------------------


def broken_links(site: Path) -> tuple[int, list[str]]:
    """Every link of every page of the site to the site itself, and every search result: the file exists, and so
    does the element its fragment names (a measurement's section, a sample's row)."""
    from urllib.parse import unquote, urljoin, urlparse

    ids: dict[Path, set[str]] = {}
    checked, bad = 0, []
    found = [e["location"] for e in json.loads((site / "search/search_index.json").read_text("utf-8"))["docs"]]
    links = [("index.html", html.escape(loc)) for loc in found]  # search results link from the site's root
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        links += [(rel, h) for h in re.findall(r'href="([^"]+)"', page.read_text("utf-8"))]
    for rel, href in links:
        url = urlparse(urljoin(f"http://site/{rel}", html.unescape(href)))
        if url.netloc != "site":
            continue
        target = site / unquote(url.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        checked += 1
        if not target.is_file():
            bad.append(f"{rel}: {href}")
        elif url.fragment and target.suffix == ".html":
            if target not in ids:
                ids[target] = set(re.findall(r'\bid="([^"]+)"', target.read_text("utf-8")))
            if url.fragment not in ids[target]:
                bad.append(f"{rel}: {href}")
    return checked, bad


@pytest.mark.slow
def test_every_link_of_the_site_resolves_to_its_page_and_anchor(repo_site: Path) -> None:
    checked, bad = broken_links(repo_site)
    assert checked > 5000 and bad == [], (checked, bad[:10])
    assert not (repo_site / "measurements" / "q36-q4km-tp1-kv-f16-context").exists()  # no page per measurement
    index = json.loads((repo_site / "search/search_index.json").read_text("utf-8"))["docs"]
    searchable = {e["location"].rsplit("#m-", 1)[1] for e in index if "#m-" in e["location"]}
    assert searchable == {str(m["id"]) for m in _records(("run-measurement", "series-measurement"))}
    cites = re.findall(r'href="([^"]*#m-[^"]+)"', (repo_site / "families/qwen-27b/index.html").read_text("utf-8"))
    assert cites and all("packets/" in h or "/measurements/#m-" in h for h in cites), cites[:5]


@pytest.mark.slow
def test_local_evidence_is_published_by_sha256_and_external_evidence_links_its_pinned_commit(
    repo_site: Path, reg: Reg
) -> None:
    import hashlib

    from helpers import EVIDENCE, EVIDENCE_BYTES

    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    sha = hashlib.sha256(EVIDENCE_BYTES).hexdigest()
    section = measurement_sections(reg.root / "build/site")["run-1"]
    link = re.search(rf'<a href="([^"]*evidence/{sha}/[^"]+)"><code>{re.escape(EVIDENCE)}</code></a>', section)
    assert link and sha in section, section
    published = (reg.root / "build/site/packets/pkt" / link.group(1)).resolve()
    assert published.read_bytes() == EVIDENCE_BYTES
    # the lab's records: an external path links to the source repository at the commit the family pins
    family = json.loads((REPO / "packets/phi-4/family.json").read_text("utf-8"))
    source = family["sources"]["neural-download"]
    page = (repo_site / f"packets/{family['primary_packet_id']}/index.html").read_text("utf-8")
    assert f'href="{source["repository"]}/blob/{source["commit"]}/' in page


@pytest.mark.slow
def test_a_family_page_summarises_a_large_family_and_links_the_rest(wide_compare_site: Path) -> None:
    """Past ``family.FAMILY_CHARTS`` views a family page lists the rest with the measurements they plot; past
    ``family.FAMILY_MATRICES`` coverage matrices they are on the family's own page of matrices, every one of them."""
    page = (wide_compare_site / "families/fam/index.html").read_text("utf-8")
    article = page[page.index("<article") : page.index("</article>")]
    assert article.count('<svg class="evreg-chart"') == family.FAMILY_CHARTS
    more = article[article.index('id="more-charts"') :]
    listed = re.findall(r"<tr><td>(View \d+|Decode by TP)</td>", more)
    assert len(listed) == WIDE_VIEWS + 1 - family.FAMILY_CHARTS and f"{len(listed)} more views" in more
    for title in listed:  # each listed view links the measurement its series plots, on its packet's page
        n = int(title.split()[1]) if title.startswith("View") else None
        target = f"run-w{n:02d}" if n is not None else "run-1"
        assert f'href="../../packets/pkt/#m-{target}">{target}</a>' in more
    assert "evreg-matrix" not in article and 'href="../../families/fam/coverage/"' in article
    matrices = (wide_compare_site / "families/fam/coverage/index.html").read_text("utf-8")
    assert matrices.count('<table class="evreg-matrix evreg-grid">') == WIDE_MATRICES + 1
    assert matrices.count('href="../../../packets/pkt/#m-run-1"') == WIDE_MATRICES + 1  # each cell's measurement


@pytest.mark.slow
def test_record_pages_made_in_worker_processes_are_the_pages_made_in_one(
    repo_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large site's record pages are made by forked workers in parts; the site is the same, byte for byte (pages,
    their order in the search index, orphan checks), as made in one process (this small site's way)."""
    monkeypatch.setenv("EVREG_WORKERS", "2")
    monkeypatch.setattr("evreg.site.build.RECORD_PART", 7)  # many parts, so workers interleave
    out = tmp_path / "site"
    result = evreg("build", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    files = sorted(p.relative_to(repo_site) for p in repo_site.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    differ = [f for f in files if (repo_site / f).read_bytes() != (out / f).read_bytes() and f.name != "sitemap.xml.gz"]
    assert differ == [], differ[:5]
    assert len([f for f in files if f.parts[0] == "packets"]) > 20


@pytest.mark.slow
def test_a_figure_a_worker_renders_outside_the_citation_path_fails_the_build(
    real: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The orphan check of record pages runs where they are made: a worker's finding stops the build. (On a copy with
    no earlier build: the renderer is patched here, not changed in its files, so the code version that keys the pages
    an earlier build kept does not change.)"""
    made = measurements.packet_page

    def leaky(p: Pages, pid: str) -> Page:  # a renderer that typed a figure (a bug it must not hide)
        page = made(p, pid)
        page.p("about 99.5 tok/s")
        return page

    monkeypatch.setattr(measurements, "packet_page", leaky)
    monkeypatch.setenv("EVREG_WORKERS", "2")
    result = evreg("build", "--out", str(tmp_path / "site"), cwd=real)
    assert result.returncode == 1 and not (tmp_path / "site").exists()
    assert "99.5 tok/s" in result.stdout + result.stderr and "packets/" in result.stdout + result.stderr


@pytest.mark.slow
def test_a_packet_page_is_found_by_its_title_and_its_measurements_only(repo_site: Path) -> None:
    """At 100,000 measurements a packet page's *Scope*, *Grades*, *Evidence* headings would be 250,000 search entries
    that match every search for those words; its title and measurements are what readers look for."""
    docs = json.loads((repo_site / "search/search_index.json").read_text())["docs"]
    packets = [d["location"] for d in docs if d["location"].startswith("packets/") and d["location"] != "packets/"]
    assert any("#" not in loc for loc in packets) and any("#m-" in loc for loc in packets)
    assert [loc for loc in packets if "#" in loc and "#m-" not in loc] == []
    assert any(d["location"].startswith("families/") and "#" in d["location"] for d in docs)  # others keep theirs


@pytest.mark.slow
def test_record_pages_keep_the_themes_language_palette_canonical_url_and_every_nav_entry(real: Path) -> None:
    """Record pages take the theme's html and body tags (its language and palette), a canonical URL of their own,
    every top-level nav entry (an untitled one by its page's title, an external one as it is); a view id that slugs
    as another's still gives its grid's reasons ids of their own."""
    config = (real / "mkdocs.yml").read_text("utf-8")
    config = config.replace("  font: false\n", "  font: false\n  language: de\n  palette:\n    scheme: slate\n")
    config = config.replace(
        "  - Contributing: contributing.md\n", "  - contributing.md\n  - Code: https://example.org/x/\n"
    )
    (real / "mkdocs.yml").write_text("site_url: https://example.org/reg/\n" + config, "utf-8")
    view = json.loads((real / "packets/qwen-27b/coverage/q36-q8-serving-slots.json").read_text("utf-8"))
    twin = {k: v for k, v in view.items() if k not in ("label", "decision_note")} | {"id": "q36-q8-serving.slots"}
    twin["cells"] = {key: {k: v for k, v in c.items() if k != "label"} for key, c in view["cells"].items()}
    (real / "packets/qwen-27b/coverage/q36-q8-serving.slots.json").write_text(json.dumps(twin, indent=2), "utf-8")
    result = evreg("build", cwd=real)
    assert result.returncode == 0, result.stdout + result.stderr
    page = (real / "build/site/families/qwen-27b/index.html").read_text("utf-8")
    assert '<html lang="de"' in page and 'data-md-color-scheme="slate"' in page and 'class="evreg-lean"' in page
    assert '<link rel="canonical" href="https://example.org/reg/families/qwen-27b/">' in page
    nav = page.split('<nav class="evreg-lean-nav')[1].split("</nav>")[0]
    assert '<a href="https://example.org/x/">Code</a>' in nav and '<a href="../../contributing/">Contributing' in nav
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and len([i for i in ids if i.startswith("why-q36-q8-serving-slots")]) > 1
    assert "shell--" not in (real / "build/site/sitemap.xml").read_text("utf-8")


@pytest.mark.slow
def test_a_point_field_that_is_not_a_number_is_shown_in_the_points_table(real: Path) -> None:
    """The points table holds every stored field of every point; the chart draws a metric's numbers only."""
    path = "packets/ornith-1-5/measurements/ornith-35b-context-depth.json"
    record = json.loads((real / path).read_text("utf-8"))
    for n, point in enumerate(record["points"]):
        point["p99_itl_ms"] = "timeout" if n == 0 else 20 + n
    (real / path).write_text(json.dumps(record, indent=2), "utf-8")
    result = evreg("build", cwd=real)
    assert result.returncode == 0, result.stdout + result.stderr
    page = (real / "build/site/families/ornith-1-5/measurements/index.html").read_text("utf-8")
    section = page.split('id="m-ornith-35b-context-depth"')[1].split('<div class="evreg-measurement"')[0:2][1]
    table = section.split("<h4>Points along")[1].split("</table>")[0]
    assert "<th>p99_itl_ms</th>" in table and "<td><code>timeout</code></td>" in table
    assert table.count('id="m-ornith-35b-context-depth--p99-itl-ms-') == len(record["points"]) - 1
    charts = re.findall(r'<figure class="evreg-figure">.*?</figure>', section.split("<h4>Points along")[0], re.S)
    p99 = next(c for c in charts if "(ms)" in c and "p99" in c.lower())
    assert p99.split("</svg>")[0].count("<circle ") == len(record["points"]) - 1  # (the legend's swatch after it)
