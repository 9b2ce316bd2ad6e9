"""A reader's questions across labs, hardware and runtimes, answered on the repository's own built site in a real
headless Chromium, each in at most two clicks from the home page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_browser import ARTIFACTS, CHROMIUM, serve, sync_api

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def real_site(repo_site: Path) -> Iterator[str]:
    server, url = serve(repo_site)
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def tab(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    outside: list[str] = []
    pg.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:")) else None)
    yield pg
    assert outside == [], f"the site requested outside resources: {outside[:5]}"
    context.close()


def _text(locator: Any) -> str:
    return re.sub(r"\s+", " ", locator.inner_text())


def _inside(inner: Any, outer: Any) -> bool:
    """Whether ``inner`` is drawn within the visible box of ``outer`` (no scrolling needed to see it)."""
    a, b = inner.bounding_box(), outer.bounding_box()
    return bool(a and b and a["x"] >= b["x"] - 1 and a["x"] + a["width"] <= b["x"] + b["width"] + 1)


def test_fastest_decode_of_qwen38_on_one_b70_with_its_trust_in_the_same_cell(real_site: str, tab: Any) -> None:
    tab.goto(real_site)
    tab.get_by_role("link", name="Models").first.click()  # 1
    tab.get_by_role("link", name="Qwen3.8-27B", exact=True).click()  # 2
    tab.wait_for_url("**/models/qwen3-8-27b/")
    tab.wait_for_load_state()
    # the first ranked table of the decode section: every setup's best result, fastest first
    ranked = tab.locator("table", has=tab.locator("th", has_text="Rank")).first
    rows = ranked.locator("tbody tr")
    one_b70 = [rows.nth(i) for i in range(rows.count()) if re.search(r"Arc Pro B70 .* · 1 card\b", _text(rows.nth(i)))]
    assert one_b70, "no result of one Arc Pro B70 in the first workload"
    best = one_b70[0]
    value = best.locator("td").nth(1)
    assert re.search(r"\d+\.\d\d tok/s", _text(value))
    trust = value.locator(".evreg-trust")
    assert re.search(r"(lab|community)-measured .*(EVID|ungraded).* evidence (not )?checked", _text(trust))
    assert _inside(trust, tab.locator("article")), "the trust of the value is not in view beside it"


def test_qwen36_on_rtx5090_with_and_without_mtp_side_by_side(real_site: str, tab: Any) -> None:
    tab.goto(real_site)
    tab.get_by_role("link", name="Comparisons").first.click()  # 1
    tab.get_by_role("link", name=re.compile(r"^Decode")).first.click()  # 2
    tab.wait_for_function("(document.querySelector('.evreg-shown') || {}).textContent?.includes('rows shown')")
    rows = tab.locator("tr.evreg-row", has_text="Qwen3.6-35B-A3B").filter(has_text="RTX 5090")
    rows = rows.filter(has_text="3 samples")
    found = {_text(rows.nth(i)) for i in range(rows.count())}
    on = [r for r in found if "spec_decode=true" in r]
    off = [r for r in found if "spec_decode=false" in r]
    assert on and off, found
    # in one workload, one after the other, each row saying what sets it apart
    tier = tab.locator("tbody.evreg-tier", has=rows.first)
    assert tier.locator("tr.evreg-row", has_text="spec_decode=true").count() >= 1
    assert tier.locator("tr.evreg-row", has_text="spec_decode=false").count() >= 1
    first = rows.first
    assert _inside(first.locator(".evreg-trust"), tab.locator(".evreg-scroll").first)


def test_a_shared_model_shows_both_labs_and_what_keeps_them_from_being_ranked(real_site: str, tab: Any) -> None:
    tab.goto(real_site + "models/")
    tab.get_by_role("link", name="Qwen3.8-27B", exact=True).click()
    tab.wait_for_url("**/models/qwen3-8-27b/")
    tab.wait_for_load_state()
    filed = _text(tab.locator("table").first)
    assert "Qwen 27B · 3.6 → 3.8" in filed and "Qwen3.8-27B" in filed
    assert "lab steveseguin/b70-optimization-lab" in filed
    body = _text(tab.locator("article"))
    assert "NVIDIA GeForce RTX 5090" in body and "Intel Arc Pro B70" in body
    assert re.search(r"Not ranked against the first workload: context [0-9,–]+ tokens vs context unstated", body)


@pytest.mark.parametrize("width", [1400, 390])
def test_screenshots_of_a_model_page_and_a_comparison(real_site: str, chromium: Any, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = chromium.new_context(viewport={"width": width, "height": 900})
    pg = context.new_page()
    for name, path in (("model", "models/qwen3-8-27b/"), ("compare", "compare/decode-tok-s/")):
        pg.goto(real_site + path)
        shot = ARTIFACTS / f"{name}-{width}.png"
        pg.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
    context.close()
