"""Comparison tables and coverage grids in a real headless Chromium: sorting within a workload, filters, the CSV of
the rows shown, the page without scripts, and screenshots at desktop and phone widths."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import WORKLOAD
from test_browser import ARTIFACTS, browser, real_site, serve  # noqa: F401  (fixtures, and the skip without Chromium)

pytestmark = pytest.mark.browser

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
def tab(browser: object) -> Iterator[object]:  # noqa: F811
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
    assert first["workload"] == WORKLOAD and first["Value"].startswith("29.00 tok/s") and first["Rank"] == "3"
    assert first["State"] == "lab-measured" and first["url"].endswith("/measurements/run-3/#decode-tok-s-0")
    assert {r["measurement"] for r in rows}.isdisjoint({"run-q", "run-s"})


def test_without_scripts_the_page_is_the_plain_table(compare_url: str, browser: object) -> None:  # noqa: F811
    context = browser.new_context(java_script_enabled=False)  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(compare_url)
    assert pg.locator(".evreg-compare-controls").is_hidden()
    assert pg.locator("tr.evreg-row:visible").count() == 8
    context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_comparison_page_and_coverage_grid_fit_the_screen(real_site: str, browser: object, width: int) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(real_site + "compare/decode-tok-s/")
    assert pg.locator(".evreg-compare-controls").is_visible()
    assert pg.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0  # the table scrolls inside
    shot = ARTIFACTS / f"compare-{width}.png"
    pg.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    pg.goto(real_site + "coverage/qwen-27b/qwen36-tp1-llamacpp-sycl-target-matrix/")
    folds = pg.locator("details.evreg-grid-group")
    assert folds.count() > 1 and pg.locator("td.evreg-cell:visible").count() == 0  # folded by row group
    folds.first.locator("summary").click()
    assert pg.locator("td.evreg-cell:visible").count() > 0
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
