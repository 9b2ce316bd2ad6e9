"""The published site in a real headless Chromium (Debian's), driven by Playwright."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, F, Reg, evreg

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
pytestmark = pytest.mark.browser

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
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("real-site")
    result = evreg("build", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    server, url = serve(out)
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
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    external: list[str] = []
    pg.on("request", lambda r: external.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:")) else None)
    yield pg
    assert external == [], f"the site requested outside resources: {external[:5]}"
    context.close()


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
    value, target = cite.inner_text(), cite.get_attribute("data-cite")
    cite.click()
    page.wait_for_url("**/measurements/**")
    mid = target.split(":", 1)[1].split(".", 1)[0]
    assert f"/measurements/{mid}/" in page.url
    assert page.locator(f"a.evreg-cite[data-cite='{target}']").first.inner_text() == value
    assert page.get_by_text("neural-download", exact=False).count() > 0  # its evidence, marked external


def test_chart_points_link_to_their_measurements(real_site: str, page: object) -> None:
    page.goto(real_site + "families/qwen-27b/")
    point = page.locator("svg.evreg-chart a.evreg-cite").last  # drawn last: nothing lies on top of it
    href, cite = point.get_attribute("href"), point.get_attribute("data-cite")
    tooltip = point.locator("title").text_content()
    # Points of neighbouring series may overlap; activate this one exactly as a click would.
    with page.expect_navigation():
        point.evaluate("a => a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))")
    mid = cite.split(":", 1)[1].split(".", 1)[0]
    assert mid in page.url and href.split("#")[0].strip("./") in page.url
    shown = page.locator(f"a.evreg-cite[data-cite='{cite}']").first.inner_text()
    assert tooltip.endswith(shown)


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


def test_search_finds_a_packet_by_id_offline(real_site: str, page: object) -> None:
    page.goto(real_site)
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    links = page.locator(".md-search-result__item > a")
    hrefs: list[str] = []
    for attempt in range(60):
        # The search worker loads its index in the background and answers each keystroke asynchronously:
        # retype now and then (the index may not have been ready), and read the results once they settle.
        if attempt % 8 == 0:
            box.fill("")
            box.type("qwen36-27b-q8-tp2")
        page.wait_for_timeout(500)
        hrefs = [a.get_attribute("href") or "" for a in links.all()]
        if any(h.rstrip("/").endswith("packets/qwen36-27b-q8-tp2") for h in hrefs):
            break
    assert any(h.rstrip("/").endswith("packets/qwen36-27b-q8-tp2") for h in hrefs), hrefs


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize(
    "path",
    ["", "families/qwen-27b/", "packets/qwen36-27b-autoround-int4-tp2/", "measurements/q36-q4km-tp1-kv-f16-context/"],
)
def test_pages_have_no_horizontal_overflow(real_site: str, browser: object, width: int, path: str) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(real_site + path)
    overflow = pg.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    context.close()
    assert overflow <= 0, f"{path} at {width}px overflows by {overflow}px"
