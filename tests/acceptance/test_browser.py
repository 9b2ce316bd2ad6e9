"""The published site in a real headless Chromium (Debian's), driven by Playwright."""

from __future__ import annotations

import copy
import csv
import functools
import http.server
import io
import os
import re
import shutil
import threading
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evreg.core.evidence import is_evidence_key
from evreg.site import charts
from helpers import REPO, WIDE_RUNS, WORKLOAD, F, Reg, evreg

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not Path(CHROMIUM).exists():
    if os.environ.get("EVREG_REQUIRE_BROWSER"):
        raise RuntimeError("EVREG_REQUIRE_BROWSER is set but Debian's chromium is not installed")
    pytest.skip("Debian chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")

EVIL_LABEL = "<img src=x onerror=alert(1)>"
EVIL_SUMMARY = "<script>alert(1)</script> [click](javascript:alert(2)) {% if true %}jinja{% endif %}"


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="session")
def real_site(repo_site: Path) -> Iterator[str]:
    server, url = serve(repo_site)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reg = Reg(tmp_path_factory.mktemp("fixture") / "reg")
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    bad = reg.read(f"{F}/pkt/measurements/run-1.json")
    bad.update(
        id="run-q", state="quarantined", caveat="Cache was not zero.", config={"tp": 2, "mtp": 0, "natural_eos": True}
    )
    reg.put(f"{F}/measurements/run-q.json", bad)
    reg.edit(
        f"{F}/coverage/matrix.json",
        lambda d: d["cells"]["0:2"].update(state="quarantined", evidence_id="run-q", label="cache not zero"),
    )
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(label=EVIL_LABEL, summary=EVIL_SUMMARY))
    reg.commit("fixture with a quarantined cell and hostile text")
    out = reg.root / "build/site"
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    server, url = serve(out)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    yield from _opened(browser, 1280)


def _opened(browser: object, width: int) -> Iterator[object]:
    """A page of ``width`` px that records dialogs and fails the test on any request outside the site."""
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    external: list[str] = []
    pg.on("request", lambda r: external.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:")) else None)
    yield pg
    assert external == [], f"the site requested outside resources: {external[:5]}"
    context.close()


def sample_of(link: object) -> str:
    """The anchor of the sample a citation link points at (``m-MEASUREMENT--METRIC-SELECTOR``)."""
    return (link.get_attribute("href") or "").split("#", 1)[1]  # type: ignore[attr-defined]


def measurement_of(anchor: str) -> str:
    return anchor.removeprefix("m-").rsplit("--", 1)[0]


def test_home_to_family_to_packet_and_a_cited_number_to_its_measurement(real_site: str, page: object) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(real_site)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    page.locator("article a[href$='families/qwen-27b/']", has_text="Qwen 27B").first.click()
    page.wait_for_url("**/families/qwen-27b/")
    page.screenshot(path=str(ARTIFACTS / "family.png"))
    page.locator("table a[href*='packets/qwen36-27b-autoround-int4-tp2/']").first.click()
    page.wait_for_url("**/packets/qwen36-27b-autoround-int4-tp2/")
    page.screenshot(path=str(ARTIFACTS / "packet.png"), full_page=True)
    cite = page.locator("a.evreg-cite").first
    value, target = cite.inner_text(), sample_of(cite)
    cite.click()
    page.wait_for_url(f"**#{target}")  # the measurement's section on its packet's page, at the cited sample
    assert page.locator(f"[id='{target}']").inner_text() == value  # the sample the number is
    assert page.get_by_text("neural-download", exact=False).count() > 0  # its evidence, marked external


TRUST_ON_FOCUS = """a => getComputedStyle(a, '::after').content"""
HIGHLIGHT = """() => { const t = document.querySelector(':target'); const row = t && t.closest('tr');
  return [t ? t.id : null, row ? getComputedStyle(row.querySelector('td')).backgroundColor : null]; }"""


def test_reader_path_headline_to_grade_hardware_measurement_and_evidence(real_site: str, page: object) -> None:
    """A reader's path: headline -> grade and hardware (0 clicks: the same row) -> the measurement, its cited sample
    highlighted (1 click) -> its evidence (2 clicks; the lab's evidence is a link to its source repository at
    the pinned commit, not followed offline)."""
    clicks = 0
    page.goto(real_site)
    row = page.locator("article table tr", has=page.locator("td", has_text="hero")).first
    cells = row.locator("td")
    assert "evreg-grade" in cells.nth(2).inner_html() and cells.nth(4).inner_text().strip()  # grade, hardware
    cite = cells.nth(2).locator("a.evreg-cite")
    trust = cite.get_attribute("title") or ""
    assert " · lab-measured · EVID " in trust or " · community-measured · EVID " in trust, trust
    cite.focus()  # a keyboard reader sees the same line
    assert trust in cite.evaluate(TRUST_ON_FOCUS)
    mid = measurement_of(sample_of(cite))
    cite.click()
    clicks += 1
    page.wait_for_url(f"**/packets/**#m-{mid}--*")
    anchor, background = page.evaluate(HIGHLIGHT)
    assert anchor == page.url.split("#", 1)[1] and background == "rgb(255, 243, 176)", (anchor, background)
    section = page.locator(f"[id='m-{mid}'] + p")  # the line under the heading: state, grade, hardware, runtime
    assert "EVID" in section.inner_text() or "ungraded" in section.inner_text()
    evidence = page.locator(f"xpath=//h3[@id='m-{mid}']/following::div[1]//a[contains(@href, '/blob/')]").first
    assert "b70-optimization-lab/blob/" in (evidence.get_attribute("href") or "")
    clicks += 1  # following it leaves the site for the source repository
    print(f"reader's path: headline -> grade and hardware 0 clicks -> measurement {clicks - 1} -> evidence {clicks}")
    assert clicks == 2


def test_local_evidence_opens_from_its_measurement(fixture_site: str, page: object) -> None:
    page.goto(fixture_site + "families/fam/")
    page.locator("article table a.evreg-cite[href*='#m-run-1--']").first.click()
    page.wait_for_url("**/packets/pkt/#m-run-1--*")
    link = page.locator("xpath=//h3[@id='m-run-1']/following::div[1]//a[contains(@href, 'evidence/')]").first
    link.click()
    assert "decode_tok_s" in page.locator("body").inner_text()  # the evidence file itself, in 2 clicks


@pytest.mark.parametrize("width", [1280, 1400, 390])
def test_screenshots_of_home_a_family_a_model_and_a_comparison(real_site: str, browser: object, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    pages = (("home", ""), ("family", "families/qwen-27b/"), ("model", "models/qwen3-8-27b/"))
    for name, path in (*pages, ("compare-top", "compare/decode-tok-s/")):
        pg.goto(real_site + path)
        shot = ARTIFACTS / f"{name}-{width}.png"
        pg.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
    context.close()


def test_chart_points_link_to_their_measurements(real_site: str, page: object) -> None:
    page.goto(real_site + "families/qwen-27b/")
    point = page.locator("svg.evreg-chart a.evreg-cite").last  # drawn last: nothing lies on top of it
    href, mid = point.get_attribute("href") or "", measurement_of(sample_of(point))
    tooltip = point.locator("title").text_content() or ""
    # the trust line the chart's points share, stated once above the view's charts
    said = point.locator("xpath=ancestor::figure/preceding-sibling::p[contains(., 'unless its tooltip')][1]")
    said_text = said.inner_text()
    # Points of neighbouring series may overlap; activate this one exactly as a click would.
    with page.expect_navigation():
        point.evaluate("a => a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))")
    assert mid in page.url and href.split("#")[0].strip("./") in page.url
    shown = page.locator(f"td.evreg-sample[id='{href.split('#')[1]}']").inner_text()  # the sample, highlighted
    assert tooltip.startswith(f"{mid}: {shown}")  # the value, then what differs from its chart's stated line
    states = ("lab-measured", "community-measured", "lab-screened", "quarantined", "estimated")
    assert any(f"it is {s} · " in said_text or f" · {s}" in tooltip for s in states), (said_text, tooltip)


def test_quarantined_cell_shows_as_quarantined(fixture_site: str, page: object) -> None:
    page.goto(fixture_site + "families/fam/")
    cell = page.locator("table.evreg-matrix td.evreg-cell-quarantined")
    assert cell.count() == 1
    assert "quarantined" in cell.inner_text() and "cache not zero" in cell.inner_text()
    assert page.locator("table.evreg-matrix td.evreg-cell-lab-measured").count() == 1


def test_hostile_record_text_renders_as_text(fixture_site: str, page: object) -> None:
    page.goto(fixture_site + "packets/pkt/")
    page.wait_for_timeout(300)
    assert page.dialogs == []
    body = page.locator("article").inner_text()
    assert EVIL_LABEL in body and "<script>alert(1)</script>" in body and "{% if true %}jinja{% endif %}" in body
    assert page.locator("article img[src='x'], article script").count() == 0
    assert page.locator("article a[href^='javascript']").count() == 0
    page.goto(fixture_site + "packets/")
    page.wait_for_timeout(300)
    assert page.dialogs == []


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("qwen36-27b-q8-tp2", "packets/qwen36-27b-q8-tp2/"),
        # A measurement by its id, at its section: the theme's search splits the typed id at its hyphens, so the
        # section's index entry carries the id's parts too (evreg.site.html.id_terms).
        ("q36-q4km-tp1-kv-f16-context", "families/qwen-27b/measurements/#m-q36-q4km-tp1-kv-f16-context"),
    ],
)
def test_search_finds_packets_and_measurements_by_id_offline(
    real_site: str, page: object, query: str, found: str
) -> None:
    page.goto(real_site)
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    hrefs: list[str] = []
    for attempt in range(60):
        # The search worker loads its index in the background and answers each keystroke asynchronously:
        # retype now and then (the index may not have been ready), and read the results once they settle.
        if attempt % 8 == 0:
            box.fill("")
            box.type(query)
        page.wait_for_timeout(500)
        hrefs = page.evaluate("[...document.querySelectorAll('.md-search-result a')].map(a => a.getAttribute('href'))")
        if any(h.endswith(found) for h in hrefs):
            break
    assert any(h.endswith(found) for h in hrefs), hrefs


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize(
    "path",
    ["", "families/qwen-27b/", "packets/qwen36-27b-autoround-int4-tp2/", "families/qwen-27b/measurements/"],
)
def test_pages_have_no_horizontal_overflow(real_site: str, browser: object, width: int, path: str) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(real_site + path)
    overflow = pg.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    context.close()
    assert overflow <= 0, f"{path} at {width}px overflows by {overflow}px"


# -- charts, legends and text as a reader sees them -------------------------------------------

CHART_GEOMETRY = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const within = (b, f) => b[0] >= f[0] - 1 && b[1] >= f[1] - 1 && b[2] <= f[2] + 1 && b[3] <= f[3] + 1;
  const meet = (a, b) => a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5;
  const bad = [];
  const figures = [...document.querySelectorAll('figure.evreg-figure')];
  figures.forEach((fig, n) => {
    const svg = fig.querySelector('svg.evreg-chart'), f = box(fig), s = box(svg);
    const plot = box(svg.querySelector('rect.evreg-plot'));
    for (const c of svg.querySelectorAll('circle')) {
      const b = box(c), cx = (b[0] + b[2]) / 2, cy = (b[1] + b[3]) / 2;
      if (!within([cx, cy, cx, cy], plot) || !within(b, s)) bad.push(`figure ${n}: point outside its plot`);
    }
    const labels = [...svg.querySelectorAll('g.xlabel text')];
    if (!labels.length) bad.push(`figure ${n}: no x labels`);
    labels.forEach((t, i) => {
      if (!within(box(t), s)) bad.push(`figure ${n}: x label ${t.textContent} cut off`);
      if (i && meet(box(labels[i - 1]), box(t))) bad.push(`figure ${n}: x labels ${t.textContent} overlap`);
    });
    const entries = fig.querySelectorAll('li.evreg-legend-entry');
    if (!entries.length) bad.push(`figure ${n}: no legend`);
    for (const li of entries) {
      const mark = li.querySelector('.evreg-swatch');  // its series' colour, drawn by the stylesheet
      if (!mark || !getComputedStyle(mark).getPropertyValue('--c').trim() || !within(box(mark), box(li)))
        bad.push(`figure ${n}: legend entry without its series' mark`);
      if (!within(box(li), f) || li.scrollWidth > li.clientWidth + 1) bad.push(`figure ${n}: legend entry cut off`);
      if (meet(box(li), s)) bad.push(`figure ${n}: legend entry over the chart`);
    }
    if (n + 1 < figures.length && meet(f, box(figures[n + 1]))) bad.push(`figure ${n}: overlaps the next chart`);
  });
  return [figures.length, bad];
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_chart_points_labels_and_legends_are_drawn_where_a_reader_sees_them(
    real_site: str, browser: object, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    checked = 0
    for path in (
        "families/qwen-27b/",
        "families/qwen3-6-35b-a3b/",
        "families/qwen-27b/measurements/",
        "packets/qwen38-27b-autoround-int4-tp1-f01e-mtp4-eager-f16-screened-grade-d/",  # a 64-character id
    ):
        pg.goto(real_site + path)
        count, bad = pg.evaluate(CHART_GEOMETRY)
        assert count > 0 and bad == [], (path, width, bad[:5])
        checked += count
    context.close()
    assert checked >= 50


SHOWN_MARKUP = """() => {
  const main = document.querySelector('article').cloneNode(true);
  main.querySelectorAll('code, pre, script, style, title').forEach(e => e.remove());
  const text = main.textContent;
  const tag = /<\\/?(a|span|mark|div|p|td|tr|table|svg|circle|em|strong|li|img)\\b[^<>]*>/g;
  const found = [...(text.match(tag) || []), ...(text.match(/class="|\\{\\{\\s*m:/g) || [])];
  return found;
}"""


def test_no_page_shows_markup_as_text(real_site: str, page: object) -> None:
    """One page of every kind, the hand-written ones (citations inside Markdown) and those with
    citations in tables; acceptance/test_site_render.py checks every page's text without a browser."""
    for rel in (
        "",
        "families/",
        "families/qwen-27b/",
        "families/qwen3-6-35b-a3b/",
        "packets/qwen36-27b-autoround-int4-tp2/",
        "families/qwen-27b/measurements/",
        "measurements/",
        "coverage/",
        "coverage/qwen-27b/qwen36-tp1-llamacpp-sycl-target-matrix/",
        "quarantine/",
        "defects/",
        "methodology/",
        "methodology/rules/",
        "contributing/",
        "schema/",
    ):
        page.goto(real_site + rel, wait_until="domcontentloaded")  # type: ignore[attr-defined]
        assert page.evaluate(SHOWN_MARKUP) == [], rel  # type: ignore[attr-defined]


# -- comparison tables and coverage grids ---------------------------------------------------------

ORDER = """tier => [...document.querySelectorAll('tbody.evreg-tier')]
  .filter(b => b.dataset.tier === tier)[0].querySelectorAll('tr')
  .values().map(tr => tr.classList.contains('evreg-tier-head') ? 'head' : tr.dataset.measurement).toArray()"""
VISIBLE = """() => [...document.querySelectorAll('tr.evreg-row')].filter(tr => tr.offsetParent !== null)
  .map(tr => tr.dataset.measurement)"""


@pytest.fixture(scope="module")
def compare_url(compare_site: Path) -> Iterator[str]:
    server, url = serve(compare_site)
    yield url + "compare/decode-tok-s/"
    server.shutdown()


@pytest.fixture
def tab(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)  # type: ignore[attr-defined]
    yield context.new_page()
    context.close()


def test_sorting_reorders_rows_only_within_their_workload(compare_url: str, tab: object) -> None:
    tab.goto(compare_url)  # type: ignore[attr-defined]
    ranked = ["head", "run-2", "run-1", "run-3", "run-q", "run-s"]
    assert tab.evaluate(ORDER, WORKLOAD) == ranked  # type: ignore[attr-defined]
    value = tab.locator("thead th", has_text="Value")  # type: ignore[attr-defined]
    value.locator("button").click()
    assert value.get_attribute("aria-sort") == "ascending"
    assert tab.evaluate(ORDER, WORKLOAD) == ["head", "run-3", "run-1", "run-2", "run-s", "run-q"]  # type: ignore[attr-defined]
    value.locator("button").click()
    assert tab.evaluate(ORDER, WORKLOAD) == ["head", "run-q", "run-s", "run-2", "run-1", "run-3"]  # type: ignore[attr-defined]
    # the longer-context run stays in its own workload, whatever the order
    assert tab.evaluate(ORDER, f"{WORKLOAD} · active_context_tokens = 100000") == ["head", "run-long"]  # type: ignore[attr-defined]
    tab.locator("thead th", has_text="Rank").locator("button").click()  # type: ignore[attr-defined]
    order = tab.evaluate(ORDER, WORKLOAD)  # type: ignore[attr-defined]
    assert order[:4] == ["head", "run-2", "run-1", "run-3"] and set(order[4:]) == {"run-q", "run-s"}  # unranked last


def test_filters_hide_rows_and_empty_workloads(compare_url: str, tab: object) -> None:
    tab.goto(compare_url)  # type: ignore[attr-defined]
    shown = tab.locator(".evreg-shown")  # type: ignore[attr-defined]
    assert shown.inner_text() == "8 of 8 rows shown"
    tab.locator("select[aria-label='Filter by State']").select_option("quarantined")  # type: ignore[attr-defined]
    assert tab.evaluate(VISIBLE) == ["run-q"] and shown.inner_text() == "1 of 8 rows shown"  # type: ignore[attr-defined]
    assert tab.locator("tbody.evreg-tier:visible").count() == 1  # type: ignore[attr-defined]
    tab.locator("select[aria-label='Filter by State']").select_option("")  # type: ignore[attr-defined]
    tab.locator(".evreg-ranked-only").check()  # type: ignore[attr-defined]
    assert set(tab.evaluate(VISIBLE)) == {"run-1", "run-2", "run-3", "run-long", "sweep-1"}  # type: ignore[attr-defined]
    tab.locator(".evreg-filter-text").fill("100000")  # type: ignore[attr-defined]  # matches the workload's heading
    assert tab.evaluate(VISIBLE) == ["run-long"]  # type: ignore[attr-defined]


def test_download_holds_exactly_the_rows_shown(compare_url: str, tab: object) -> None:
    tab.goto(compare_url)  # type: ignore[attr-defined]
    tab.locator(".evreg-ranked-only").check()  # type: ignore[attr-defined]
    tab.locator("thead th", has_text="Value").locator("button").click()  # type: ignore[attr-defined]
    visible = tab.evaluate(VISIBLE)  # type: ignore[attr-defined]
    with tab.expect_download() as info:  # type: ignore[attr-defined]
        tab.locator(".evreg-download").click()  # type: ignore[attr-defined]
    download = info.value
    assert download.suggested_filename == "decode_tok_s.csv"
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text("utf-8"))))
    assert [r["measurement"] for r in rows] == visible and len(rows) == 6
    first = rows[0]
    assert first["workload"] == WORKLOAD and first["Value (tok/s)"].startswith("29.00 tok/s") and first["Rank"] == "3"
    assert "lab-measured ungraded · evidence checked" in first["Value (tok/s)"]  # its trust, in the value's cell
    assert first["State"] == "lab-measured" and first["url"].endswith(
        "/packets/pkt/#m-run-3--decode-tok-s-0"
    )  # its section, sample row
    assert {r["measurement"] for r in rows}.isdisjoint({"run-q", "run-s"})


FORMULAS = ('=HYPERLINK("https://evil.example/x","see")', "+SUM(1,1)", "-2+3", "@SUM(A1)", " =1+1", "\t=1")


def test_a_downloaded_comparison_starts_no_formula(tmp_path: Path, tab: object) -> None:
    """Hardware names, runtimes and labels a spreadsheet would run as formulas reach the comparison table as text,
    and its download writes each with a leading quote (one CSV cell rule): no cell of the file starts a formula."""
    from helpers import build_compare_registry

    reg = build_compare_registry(tmp_path / "reg")
    for path in sorted((reg.root / "packets").rglob("*.json")):
        data = reg.read(path.relative_to(reg.root).as_posix())
        if isinstance(data, dict) and data.get("kind") in ("packet", "run-measurement", "series-measurement"):
            data["hardware"] = FORMULAS[0]  # every packet and run states the same hardware: one scope
            if data["kind"] == "packet":
                data["label"] = FORMULAS[3]
            reg.put(path.relative_to(reg.root).as_posix(), data)
    reg.commit("formulas for names")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    server, url = serve(reg.root / "build/site")
    try:
        tab.goto(url + "compare/decode-tok-s/")  # type: ignore[attr-defined]
        tab.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent")  # type: ignore[attr-defined]
        with tab.expect_download() as info:  # type: ignore[attr-defined]
            tab.locator(".evreg-download").click()  # type: ignore[attr-defined]
        cells = [c for row in csv.reader(io.StringIO(Path(info.value.path()).read_text("utf-8"))) for c in row]
    finally:
        server.shutdown()
    assert "'" + FORMULAS[0] in cells, "|".join(cells[12:40])
    number = __import__("re").compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
    starts = [c for c in cells if c.lstrip(" \t\r\n")[:1] in ("=", "+", "-", "@") and not number.fullmatch(c)]
    assert starts == [], starts


def test_a_wide_comparison_adds_the_rows_of_its_data_file_and_sorts_filters_and_downloads_them(
    wide_compare_site: Path, tab: object
) -> None:
    server, url = serve(wide_compare_site)
    try:
        tab.goto(url + "compare/decode-tok-s/")  # type: ignore[attr-defined]
        shown = tab.locator(".evreg-shown")  # type: ignore[attr-defined]
        total = 8 + WIDE_RUNS
        # the count appears once the data file is fetched and added (asynchronous: slow on a loaded machine)
        tab.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent")  # type: ignore[attr-defined]
        assert shown.inner_text() == f"{total} of {total} rows shown"  # the page's 50 and its data file's rows
        assert tab.evaluate(ORDER, WORKLOAD)[-2:] == ["run-q", "run-s"]  # type: ignore[attr-defined]
        tab.locator("thead th", has_text="Value").locator("button").click()  # type: ignore[attr-defined]
        assert tab.evaluate(ORDER, WORKLOAD)[1:3] == ["run-w00", "run-w01"]  # type: ignore[attr-defined]  # from the file
        tab.locator(".evreg-filter-text").fill("11.")  # type: ignore[attr-defined]  # 11.00 to 11.90 tok/s
        assert tab.evaluate(VISIBLE) == [f"run-w1{n}" for n in range(10)]  # type: ignore[attr-defined]
        with tab.expect_download() as info:  # type: ignore[attr-defined]
            tab.locator(".evreg-download").click()  # type: ignore[attr-defined]
        rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text("utf-8"))))
        assert [r["measurement"] for r in rows] == [f"run-w1{n}" for n in range(10)]
        assert rows[0]["Value (tok/s)"].startswith("11.00 tok/s") and rows[0]["url"].endswith(
            "/packets/pkt/#m-run-w10--decode-tok-s-0"
        )
        link = tab.locator("tr[data-measurement='run-w10'] a.evreg-cite")  # type: ignore[attr-defined]
        link.click()
        tab.wait_for_url("**/packets/pkt/#m-run-w10--decode-tok-s-0")  # type: ignore[attr-defined]
    finally:
        server.shutdown()


def test_without_scripts_the_page_is_the_plain_table(compare_url: str, browser: object) -> None:
    context = browser.new_context(java_script_enabled=False)  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(compare_url)
    assert pg.locator(".evreg-compare-controls").is_hidden()
    assert pg.locator("tr.evreg-row:visible").count() == 8
    context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_comparison_page_and_coverage_grid_fit_the_screen(real_site: str, browser: object, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(real_site + "compare/decode-tok-s/")
    pg.locator(".evreg-compare-controls").wait_for(state="visible")  # shown once the rows' data file is read
    assert pg.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0  # the table scrolls inside
    shot = ARTIFACTS / f"compare-{width}.png"
    pg.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    pg.goto(real_site + "coverage/qwen-27b/qwen36-tp1-llamacpp-sycl-target-matrix/")
    folds = pg.locator("details.evreg-grid-group")
    assert folds.count() > 1 and pg.locator("td.evreg-cell:visible").count() == 0  # folded by row group
    folds.first.locator(":scope > summary").click()
    assert pg.locator("td.evreg-cell:visible").count() > 0
    why = pg.locator("td.evreg-cell:visible a.evreg-why").first  # a cell's reason: a link to the grid's list
    target = (why.get_attribute("href") or "").lstrip("#")
    why.click()
    reason = pg.locator(f"ol.evreg-reasons li[id='{target}']")
    assert reason.is_visible() and reason.inner_text().strip()
    assert pg.evaluate("location.hash") == f"#{target}"
    assert reason.evaluate("e => getComputedStyle(e).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    colours = pg.evaluate(
        """() => Object.fromEntries(['lab-measured', 'missing'].map(s => [s,
             getComputedStyle(document.querySelector('td.evreg-cell-' + s)).backgroundImage + ' ' +
             getComputedStyle(document.querySelector('td.evreg-cell-' + s)).backgroundColor]))"""
    )
    assert colours["lab-measured"] != colours["missing"]  # the state is the cell's colour
    assert pg.locator("ul.evreg-grid-legend li").count() >= 2
    assert pg.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    shot = ARTIFACTS / f"coverage-grid-{width}.png"
    pg.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    context.close()


# -- hostile text in every string field the models allow, in every rendering context ----------

PAYLOADS = (
    "![c](x){: onerror=alert(101) }",  # Markdown image + attr_list
    "[x](javascript:alert(102))",  # javascript: link
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMDMpPC9zY3JpcHQ+)",  # data: link
    "<img src=x onerror=alert(104)>",  # raw HTML
    "<svg onload=alert(105)><circle/></svg>",  # SVG
    '<math><mtext><a xlink:href="javascript:alert(106)">m</a></mtext></math>',  # MathML
    '{: onclick="alert(107)" }',  # attribute list on its own
    "<https://evil.example/autolink>",  # autolink
    "[ref][r]\n\n[r]: javascript:alert(108)",  # reference-style link
    "&lt;img src=x onerror=alert(109)&gt; &#60;script&#62;alert(110)&#60;/script&#62;",  # entity-encoded tags
    "{% raw %}${alert(111)}{# c #}",  # template syntax (Jinja, JS template literal); {{ is citation syntax
    '"><script>alert(112)</script><p x="',  # attribute break-out
    "</title></text></svg><script>alert(113)</script>",  # context break-out (title, SVG text)
    "<!-- <style>*{display:none}</style> -->",
)
PAYLOAD = " ".join(PAYLOADS)


def _accepts(annotation: Any, value: Any) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(annotation).validate_python(value)
    except ValidationError:
        return False
    return True


def _models_in(annotation: Any) -> list[type]:
    """Record-model classes an annotation holds (directly, in a list, or as dict values)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def plant(model: type, data: dict[str, Any], payload: str, at: str = "") -> list[str]:
    """Put ``payload`` into every field of ``data`` whose model type accepts that string
    (present or not: the field list comes from the models, so a new text field is covered),
    recurse into nested records, and add an unknown field. Returns the JSON pointers planted."""
    planted = []
    for name, info in model.model_fields.items():  # type: ignore[attr-defined]
        key = info.alias or name
        if is_evidence_key(key):
            continue  # a path: anything but a safe path is refused (path-unsafe), so never rendered
        value = data.get(key)
        annotation = info.rebuild_annotation()
        nested = _models_in(info.annotation)
        if nested and isinstance(value, dict) and set(value) & set(nested[0].model_fields):
            planted += plant(nested[0], value, payload, f"{at}/{key}")
        elif nested and isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, dict):
                    planted += plant(nested[0], v, payload, f"{at}/{key}/{k}")
        elif nested and isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, dict):
                    planted += plant(nested[0], v, payload, f"{at}/{key}/{i}")
        elif _accepts(annotation, payload):
            data[key] = payload
            planted.append(f"{at}/{key}")
    data["lab_remark"] = payload
    return [*planted, f"{at}/lab_remark"]


PROSE_ENDINGS = tuple(f"/{k}" for k in ("summary", "caveat", "quality", "reason", "basis", "scope", "subtitle"))


def _restore(reg: Reg, originals: dict[str, dict[str, Any]], target: str) -> None:
    """Put back the original value of one planted field (or remove it if it was added)."""
    from evreg.core.findings import split_pointer

    path, ptr = target.split("#", 1)
    parts: list[Any] = split_pointer(ptr)
    whole = reg.read(path)
    node, original = whole, originals[path]
    for part in parts[:-1]:
        key = int(part) if isinstance(node, list) else part
        node, original = node[key], original[key]
    if parts[-1] in original:
        node[parts[-1]] = original[parts[-1]]
    else:
        node.pop(parts[-1], None)
    reg.put(path, whole)


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[str]]]:
    """A registry with the payload planted in every string field the models accept, as far as
    the rules allow (a field whose value the rules check against other records -- a metric
    name, a runtime compared across records -- keeps its value), built and served."""
    from evreg.check import rules
    from evreg.records.models import MODELS
    from evreg.store import load

    reg = Reg(tmp_path_factory.mktemp("hostile") / "reg")
    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")
    originals: dict[str, dict[str, Any]] = {}
    planted: list[str] = []
    for path in sorted(p.relative_to(reg.root).as_posix() for p in (reg.root / "packets").rglob("*.json")):
        data = reg.read(path)
        if "kind" not in data:
            continue  # an evidence file
        originals[path] = copy.deepcopy(data)
        planted += [f"{path}#{ptr}" for ptr in plant(MODELS[data["kind"]], data, PAYLOAD)]
        reg.put(path, data)
    kept: list[str] = []
    for _ in range(8):  # give back the fields the rules tie to other records, until clean
        errors = [f for f in rules.run(load(reg.root), rules.discover()).findings if f.severity == "error"]
        if not errors:
            break
        unplaced = []
        for f in errors:
            # the planted fields the finding is about: at its pointer, or beside it (a finding on
            # sample_index that names the metric); prose and unknown fields carry no meaning
            def near(p: str, f: Any = f) -> bool:
                ptr = p.split("#", 1)[1]
                parent = ptr.rsplit("/", 1)[0]  # a sibling inside one object, never any top-level field
                return p.startswith(f"{f.file}#") and (
                    f.pointer.startswith(ptr) or (parent != "" and f.pointer.rsplit("/", 1)[0] == parent)
                )

            targets = [p for p in planted if near(p) and not p.endswith(("/lab_remark", *PROSE_ENDINGS))]
            if PAYLOAD[:24] in f.message:
                # a finding on one record about another's planted value (a run against the packet whose
                # folder holds it): the fields of that name whose value the message quotes
                targets += [p for p in planted if f"{p.rsplit('/', 1)[1]} " in f.message and p not in targets]
            if not targets:
                unplaced.append(f)
            for target in targets:
                planted.remove(target)
                kept.append(target)
                _restore(reg, originals, target)
        assert len(unplaced) < len(errors), f"findings on fields nobody planted: {unplaced}"
    else:
        raise AssertionError("the planted registry did not come clean")
    print(f"hostile text planted in {len(planted)} fields; {len(kept)} kept their values: {kept}")
    reg.commit("hostile text everywhere")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = reg.root / "build/site"
    server, url = serve(out)
    yield url, out, planted
    server.shutdown()


INJECTED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('.md-content *, .md-sidebar *, title')) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) bad.push(`${el.tagName} ${a.name}`);
      if (/(^|:)(href|src|action|formaction|data)$/.test(a.name) && /^(javascript|data|vbscript):/.test(v))
        bad.push(`${el.tagName} ${a.name}=${v.slice(0, 40)}`);
      if (a.name === 'href' && /^[a-z]+:/.test(v) && !v.startsWith(location.origin)) bad.push(`external ${v}`);
    }
    const tag = el.tagName.toUpperCase();
    if (['SCRIPT', 'IMG', 'IFRAME', 'OBJECT', 'EMBED', 'FORM', 'MATH', 'STYLE'].includes(tag)) bad.push(tag);
  }
  return bad;
}"""


def test_hostile_text_in_every_field_stays_text_on_every_page(
    hostile_site: tuple[str, Path, list[str]], page: object
) -> None:
    url, out, planted = hostile_site
    fields = {p.split("#", 1)[1].rsplit("/", 1)[-1] for p in planted}
    # the prose fields, chart texts and identity fields all carry the payload
    for name in ("summary", "label", "caveat", "quality", "title", "x_label", "axis", "reason", "workload", "runtime"):
        assert name in fields, f"{name} was not planted: {sorted(fields)}"
    pages = sorted(p.relative_to(out).parent.as_posix() for p in out.rglob("index.html"))
    shown = 0
    for rel in pages:
        page.goto(url + ("" if rel == "." else rel + "/"))
        page.wait_for_timeout(50)
        assert page.dialogs == [], (rel, page.dialogs)
        assert page.evaluate(INJECTED) == [], rel
        shown += page.locator(".md-content").inner_text().count("onerror=alert(104)")
    assert shown >= len(planted) // 4, (shown, len(planted))  # rendered as text, not dropped
    # the search index and its results
    page.goto(url)
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").type("onerror")
    page.wait_for_timeout(1500)
    assert page.dialogs == []
    assert page.locator(".md-search-result img, .md-search-result script, .md-search-result svg[onload]").count() == 0
    assert "onerror" in (out / "search/search_index.json").read_text()  # indexed, escaped


def test_a_record_pages_search_box_opens_the_sites_search(real_site: str, page: object) -> None:
    """Record pages load no script: their search box is a form that opens the site's search with the words typed."""
    page.goto(real_site + "packets/qwen36-27b-autoround-int4-tp2/")  # type: ignore[attr-defined]
    assert page.locator("script").count() == 0  # type: ignore[attr-defined]
    box = page.locator("form.evreg-lean-search input[name=q]")  # type: ignore[attr-defined]
    box.fill("autoround")
    box.press("Enter")
    page.locator(".md-search-result__item").first.wait_for()  # type: ignore[attr-defined]
    assert page.locator("input.md-search__input").input_value() == "autoround"  # type: ignore[attr-defined]
    assert "autoround" in page.locator(".md-search-result__list").inner_text().lower()  # type: ignore[attr-defined]


class _DecodingHandler(http.server.SimpleHTTPRequestHandler):
    """A server that sends a ``.gz`` file with ``Content-Encoding: gzip`` (as Apache's ``AddEncoding`` does): the
    browser decodes it on the way, and the page's script gets JSON."""

    def end_headers(self) -> None:
        if self.path.split("?")[0].endswith(".gz"):
            self.send_header("Content-Encoding", "gzip")
        super().end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_a_wide_comparison_takes_its_data_file_from_a_server_that_decoded_it(
    wide_compare_site: Path, tab: object
) -> None:
    handler = functools.partial(_DecodingHandler, directory=str(wide_compare_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tab.goto(f"http://127.0.0.1:{server.server_address[1]}/compare/decode-tok-s/")  # type: ignore[attr-defined]
        tab.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent")  # type: ignore[attr-defined]
        total = 8 + WIDE_RUNS
        assert tab.locator(".evreg-shown").inner_text() == f"{total} of {total} rows shown"  # type: ignore[attr-defined]
    finally:
        server.shutdown()


def test_a_browser_without_decompression_keeps_the_table_working_and_says_rows_are_missing(
    wide_compare_site: Path, tab: object
) -> None:
    """A browser without ``DecompressionStream`` (Safari before 16.4, Firefox before 113) cannot read the data
    file: the rows in the page still sort and filter, and the reader is told that the other rows are not in the
    table (not a silent "53 of 53 rows shown" that a download then takes for every row)."""
    server, url = serve(wide_compare_site)
    try:
        tab.add_init_script("delete window.DecompressionStream")  # type: ignore[attr-defined]
        tab.goto(url + "compare/decode-tok-s/")  # type: ignore[attr-defined]
        tab.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent")  # type: ignore[attr-defined]
        inline = tab.locator("tr.evreg-row").count()  # type: ignore[attr-defined]
        assert inline < 8 + WIDE_RUNS
        tab.locator("thead th", has_text="Value").locator("button").click()  # type: ignore[attr-defined]
        assert tab.locator("thead th", has_text="Value").get_attribute("aria-sort") == "ascending"  # type: ignore[attr-defined]
        status = tab.locator(".evreg-compare-controls").inner_text()  # type: ignore[attr-defined]
        assert "data file" in status, status  # the reader learns the table is not every result
    finally:
        server.shutdown()


SWATCHES = """() => [...document.querySelectorAll('li.evreg-legend-entry .evreg-swatch')].map(mark => {
  const dot = getComputedStyle(mark, '::after');
  return [mark.className, dot.backgroundColor, dot.borderTopColor, getComputedStyle(mark).printColorAdjust];
})"""


def test_legend_marks_keep_their_series_colours_in_forced_colours_and_print(real_site: str, page: object) -> None:
    """A legend mark is drawn by the stylesheet (a border and a background): in forced-colours mode (Windows high
    contrast) a browser replaces both with system colours while the chart's SVG keeps its series' colours, so every
    entry would show the same hollow ring -- which series is which would be lost, and a measured series would look
    like one not measured. Printing drops backgrounds unless the page asks to keep them. The marks keep their colours
    in both."""
    page.emulate_media(forced_colors="active")  # type: ignore[attr-defined]
    page.goto(real_site + "families/qwen-27b/")  # type: ignore[attr-defined]
    marks = page.evaluate(SWATCHES)  # type: ignore[attr-defined]
    assert marks
    palette = {f"evreg-c{i}": colour for i, colour in enumerate(charts.PALETTE)}
    for cls, fill, ring, print_adjust in marks:
        colour = next(palette[c] for c in cls.split() if c in palette)
        rgb = "rgb({}, {}, {})".format(*(int(colour[i : i + 2], 16) for i in (1, 3, 5)))
        assert ring == rgb, (cls, ring)  # the series' colour, not a system colour
        assert fill == ("rgb(255, 255, 255)" if "evreg-hollow" in cls else rgb), (cls, fill)
        assert print_adjust == "exact", cls


# -- a reader's questions across labs, hardware and runtimes, each in at most two clicks from the home page ---------


@pytest.fixture
def wide(browser: object) -> Iterator[object]:
    """A page at 1400 px, where a comparison's trust once sat outside the visible table."""
    yield from _opened(browser, 1400)


def _text(locator: Any) -> str:
    return re.sub(r"\s+", " ", locator.inner_text())


def _inside(inner: Any, outer: Any) -> bool:
    """Whether ``inner`` is drawn within the visible box of ``outer`` (no scrolling needed to see it)."""
    a, b = inner.bounding_box(), outer.bounding_box()
    return bool(a and b and a["x"] >= b["x"] - 1 and a["x"] + a["width"] <= b["x"] + b["width"] + 1)


def test_fastest_decode_of_qwen38_on_one_b70_with_its_trust_in_the_same_cell(real_site: str, wide: Any) -> None:
    wide.goto(real_site)
    wide.get_by_role("link", name="Models").first.click()  # 1
    wide.get_by_role("link", name="Qwen3.8-27B", exact=True).click()  # 2
    wide.wait_for_url("**/models/qwen3-8-27b/")
    wide.wait_for_load_state()
    # the first ranked table of the decode section: every setup's best result, fastest first
    ranked = wide.locator("table", has=wide.locator("th", has_text="Rank")).first
    rows = ranked.locator("tbody tr")
    one_b70 = [rows.nth(i) for i in range(rows.count()) if re.search(r"Arc Pro B70 .* · 1 card\b", _text(rows.nth(i)))]
    assert one_b70, "no result of one Arc Pro B70 in the first workload"
    best = one_b70[0]
    value = best.locator("td").nth(1)
    assert re.search(r"\d+\.\d\d tok/s", _text(value))
    trust = value.locator(".evreg-trust")
    assert re.search(r"(lab|community)-measured .*(EVID|ungraded).* evidence (not )?checked", _text(trust))
    assert _inside(trust, wide.locator("article")), "the trust of the value is not in view beside it"


def test_qwen36_on_rtx5090_with_and_without_mtp_side_by_side(real_site: str, wide: Any) -> None:
    wide.goto(real_site)
    wide.get_by_role("link", name="Comparisons").first.click()  # 1
    wide.get_by_role("link", name=re.compile(r"^Decode")).first.click()  # 2
    wide.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent?.includes('rows shown')")
    rows = wide.locator("tr.evreg-row", has_text="Qwen3.6-35B-A3B").filter(has_text="RTX 5090")
    rows = rows.filter(has_text="3 samples")
    found = {_text(rows.nth(i)) for i in range(rows.count())}
    on = [r for r in found if "spec_decode=true" in r]
    off = [r for r in found if "spec_decode=false" in r]
    assert on and off, found
    # in one workload, one after the other, each row saying what sets it apart
    tier = wide.locator("tbody.evreg-tier", has=rows.first)
    assert tier.locator("tr.evreg-row", has_text="spec_decode=true").count() >= 1
    assert tier.locator("tr.evreg-row", has_text="spec_decode=false").count() >= 1
    first = rows.first
    assert _inside(first.locator(".evreg-trust"), wide.locator(".evreg-scroll").first)


def test_a_shared_model_shows_both_labs_and_what_keeps_them_from_being_ranked(real_site: str, wide: Any) -> None:
    wide.goto(real_site + "models/")
    wide.get_by_role("link", name="Qwen3.8-27B", exact=True).click()
    wide.wait_for_url("**/models/qwen3-8-27b/")
    wide.wait_for_load_state()
    filed = _text(wide.locator("table").first)
    assert "Qwen 27B · 3.6 → 3.8" in filed and "Qwen3.8-27B" in filed
    assert "lab steveseguin/b70-optimization-lab" in filed
    body = _text(wide.locator("article"))
    assert "NVIDIA GeForce RTX 5090" in body and "Intel Arc Pro B70" in body
    assert re.search(r"Not ranked against the first workload: context [0-9,–]+ tokens vs context unstated", body)
