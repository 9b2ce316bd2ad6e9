"""The site build: it refuses invalid registries and orphan numbers, keeps record text inert, reads code as
validation does, serves with the site's own 404; measurement and point anchors are unique, and names and
unbaselined figures are published as validation reads them."""

from __future__ import annotations

import hashlib
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evreg.claims.markdown import html_figures as orphans_in_html
from evreg.core.layout import DOWNLOADS_DIR
from helpers import EVIDENCE, REPO, F, Reg, evreg, validate_then_build


def site_setup(reg: Reg) -> None:

    shutil.copy(REPO / "mkdocs.yml", reg.root / "mkdocs.yml")
    shutil.copytree(REPO / "site", reg.root / "site")


def test_build_succeeds_and_every_page_number_is_cited(reg: Reg) -> None:
    site_setup(reg)
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    out = reg.root / "build/site"
    measurement = (out / "packets/pkt/index.html").read_text()  # a measurement is a section of its packet's page
    assert '<h3 id="m-run-1">' in measurement
    # in its own table a sample is the anchor its citations link to, not a link to itself
    assert '<td class="evreg-sample" id="m-run-1--decode-tok-s-0">30.21 tok/s</td>' in measurement
    assert 'href="#m-run-1--decode-tok-s-0"' not in measurement.split('<h3 id="m-run-1">')[1].split("</table>")[1]
    assert not (out / "measurements/run-1").exists()  # no page per measurement
    assert (out / "downloads/samples.parquet").exists() and (out / "downloads/SHA256SUMS").exists()
    assert "search_index.json" in {p.name for p in (out / "search").iterdir()}
    for page in out.rglob("*.html"):
        assert orphans_in_html(page.read_text()) == [] or "/search/" in str(page), page


def test_build_refuses_a_registry_with_validation_errors(reg: Reg) -> None:
    site_setup(reg)
    reg.edit(f"{F}/pkt/measurements/run-1.json", lambda d: d.update(artifact_id="art-b"))
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 1
    assert "artifact-mismatch" in result.stdout and f"{F}/pkt/measurements/run-1.json" in result.stdout
    assert "nothing was published" in result.stderr
    assert not (reg.root / "build/site/index.html").exists()


def test_build_fails_on_an_orphan_number_in_a_hand_written_page(reg: Reg) -> None:
    site_setup(reg)
    page = reg.root / "site/contributing.md"
    page.write_text(page.read_text() + "\nOur best run reached 52.3 tok/s on one card.\n")
    result = evreg("build", cwd=reg.root)
    assert result.returncode == 1
    assert "site/contributing.md" in result.stdout and "'52.3 tok/s'" in result.stdout
    page.write_text(page.read_text().replace("52.3 tok/s", "{{ m:run-1.decode_tok_s[0] }}"))
    assert evreg("build", cwd=reg.root).returncode == 0
    html = (reg.root / "build/site/contributing/index.html").read_text()
    assert 'class="evreg-cite" href="../packets/pkt/#m-run-1--decode-tok-s-0"' in html
    # its state, its packet's grade, hardware and runtime ride with it (a tooltip, shown on focus by the stylesheet)
    assert re.search(r'#m-run-1--decode-tok-s-0" title="run-1 · lab-measured · [^"]*\(packet pkt\)', html)


def _counted(result: subprocess.CompletedProcess[str], verb: str) -> int:
    found = re.search(rf"^{verb} (\d+) pages", result.stderr, re.M)
    assert found, result.stderr
    return int(found[1])


def test_a_checking_build_checks_every_page_a_build_publishes_and_writes_none(reg: Reg) -> None:
    """``build --check`` (a pull request's check): the pages a build publishes, each made and checked, none written,
    and no data downloads exported; the published site is left as it is, and so is what the last build kept for the
    next one (a pull request keeps nothing); what a build refuses, the check refuses."""
    site_setup(reg)
    checked = evreg("build", "--check", cwd=reg.root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out, downloads = reg.root / "build/site", reg.root / "build/downloads"
    kept = [reg.root / "build/cache/pages", reg.root / DOWNLOADS_DIR]  # the next build's pages and downloads' pieces
    assert not any(p.exists() for p in (out, downloads, *kept))
    built = evreg("build", cwd=reg.root)
    assert built.returncode == 0, built.stdout + built.stderr
    assert _counted(checked, "checked") == _counted(built, "built") == len(list(out.rglob("index.html")))
    site = {p: p.read_bytes() for folder in (out, downloads, *kept) for p in folder.rglob("*") if p.is_file()}
    assert {"made.json", "SHA256SUMS"} <= {p.name for p in site}
    assert any(p.is_relative_to(kept[1]) for p in site)
    page = reg.root / "site/contributing.md"
    page.write_text(page.read_text() + "\nOur best run reached 52.3 tok/s on one card.\n")
    refused = evreg("build", "--check", cwd=reg.root)
    assert refused.returncode == 1
    assert "site/contributing.md" in refused.stdout and "'52.3 tok/s'" in refused.stdout
    assert {p: p.read_bytes() for folder in (out, downloads, *kept) for p in folder.rglob("*") if p.is_file()} == site
    assert [p.name for p in reg.root.joinpath("build").iterdir() if p.name.startswith(".")] == []


def test_a_build_stopped_midway_leaves_the_published_site_and_nothing_else(reg: Reg) -> None:
    """A build stopped by ``SIGTERM`` (a cancelled CI job, a ``timeout``) while it makes pages ends with the status
    of a stopped process and removes what it began: no staging folder, no packs of pages half made; the site
    published before is there, byte for byte."""
    site_setup(reg)
    assert evreg("build", cwd=reg.root).returncode == 0
    build, out = reg.root / "build", reg.root / "build/site"
    site = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    page = reg.root / "site/contributing.md"
    page.write_text(page.read_text() + "\nOne more line, so the build makes a page again.\n")

    def begun() -> list[str]:
        return sorted(str(p.relative_to(build)) for p in build.rglob(".*") if not p.name.startswith(".gitignore"))

    assert begun() == []
    stopped = subprocess.Popen(
        [str(Path(sys.executable).parent / "evreg"), "build"], cwd=reg.root, stdout=subprocess.PIPE, text=True
    )
    while not begun():  # its staging folder: the site is being made
        assert stopped.poll() is None, "the build ended before it was stopped"
        time.sleep(0.002)
    stopped.send_signal(signal.SIGTERM)
    stopped.communicate(timeout=300)
    assert stopped.returncode == 128 + signal.SIGTERM
    assert begun() == []
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == site


def test_nothing_under_site_takes_the_place_of_a_record_page_or_an_evidence_file(reg: Reg) -> None:
    """A hand-written page published where a record's page or an evidence file goes is refused, by the build and by
    its check alike: never written over, never a crash."""
    site_setup(reg)
    sha = hashlib.sha256((reg.root / EVIDENCE).read_bytes()).hexdigest()
    for page, place in (
        ("site/packets/pkt.md", "page packets/pkt/"),
        (f"site/evidence/{sha}/run.json.md", f"evidence file evidence/{sha}/run.json"),
    ):
        (reg.root / page).parent.mkdir(parents=True, exist_ok=True)
        (reg.root / page).write_text("# Notes\n\nNothing here.\n")
        for args in (("build",), ("build", "--check")):
            result = evreg(*args, cwd=reg.root)
            assert result.returncode == 1, result.stdout + result.stderr
            assert f"takes the place of the generated {place}" in result.stdout, result.stdout
        (reg.root / page).unlink()
    assert not (reg.root / "build/site").exists()
    assert evreg("build", "--check", cwd=reg.root).returncode == 0


@pytest.mark.slow
def test_validate_and_build_agree_on_what_is_code(reg: Reg) -> None:
    site_setup(reg)
    page = reg.root / "site/contributing.md"
    page.write_text(
        page.read_text() + "\nInline `52.3 tok/s` and `{{ m:run-1.decode_tok_s[0] }}` stay code.\n\n"
        "```\n52.3 tok/s in a fence\n```\n\n~~~\n{{ m:nope.decode_tok_s[0] }}\n~~~\n"
    )
    assert evreg("validate", cwd=reg.root).returncode == 0
    assert evreg("build", cwd=reg.root).returncode == 0
    html = (reg.root / "build/site/contributing/index.html").read_text()
    assert "{{ m:run-1.decode_tok_s[0] }}" in html and "{{ m:nope.decode_tok_s[0] }}" in html  # shown, not rendered


def test_record_text_is_inert_in_generated_markdown(reg: Reg, tmp_path: Path) -> None:
    from evreg.catalog import build as catalog
    from evreg.check import rules
    from evreg.site.cite import Pages
    from evreg.site.pages import render_pages
    from evreg.store import load

    evil = "<script>alert(1)</script> [x](javascript:alert(1)) {{ config }} {% raw %} **bold** | pipe"
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(label=evil, summary=evil))
    registry = load(reg.root)
    report = rules.run(registry, rules.discover())
    db = tmp_path / "c.duckdb"
    catalog.build(registry, report.findings, {}, db, {"schema_version": "1"})
    page = render_pages(Pages(db))["packets/pkt.md"]
    assert page.stub().endswith("\n---\n") and "<" not in page.stub()  # MkDocs gets no record text to render
    for bad in ("<script", '<a href="javascript'):
        assert bad not in page.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1)) {{ config }}" in page.html


@pytest.mark.slow
def test_serve_takes_the_port_first_and_answers_missing_pages_with_the_site_404(reg: Reg) -> None:
    import socket
    import sys
    import time
    import urllib.error
    import urllib.request

    site_setup(reg)
    evreg_bin = str(Path(sys.executable).parent / "evreg")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        result = evreg("serve", "--port", str(taken), cwd=reg.root)
        assert result.returncode == 2 and f"127.0.0.1:{taken}" in result.stderr
        assert not (reg.root / "build/site").exists()  # refused before building anything
    result = evreg("serve", "--port", "99999", cwd=reg.root)  # no port: a usage error, not an internal one
    assert result.returncode == 2 and "0<=x<=65535" in result.stderr and "internal error" not in result.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([evreg_bin, "serve", "--port", str(port)], cwd=reg.root, stderr=subprocess.PIPE)
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/no/such/page/", timeout=5)
        assert missing.value.code == 404
        body = missing.value.read().decode()
        assert "md-content" in body and "404" in body  # the site's own page, in its theme
        for folder in ("coverage/", "families/", "packets/", "measurements/"):
            assert urllib.request.urlopen(f"http://127.0.0.1:{port}/{folder}", timeout=5).status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


# -- what validation reads is what the site publishes ------------------------------------------------------------------


RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"


def test_unbaselined_figure_is_not_published_as_a_baselined_defect(reg: Reg, tmp_path: Path) -> None:
    """A typed figure under a token-named key (config.metric) is an orphan number to validation, so no build
    publishes it (as 'a baselined defect of the source data' or otherwise) without a baseline entry."""
    reg.edit(RUN, lambda d: d["config"].__setitem__("metric", "decode 250 tok/s"))
    errors, _ = validate_then_build(reg, tmp_path)
    assert [f.code for f in errors] == ["orphan-number"]  # validate reports it, so no build publishes it


@pytest.mark.slow
def test_a_memory_size_in_a_name_is_not_marked_as_a_defect_beside_a_citation(reg: Reg, tmp_path: Path) -> None:
    """'80GB' in hardware is part of the name to validation and to the site alike: a name that also holds a
    citation validates and builds, and the site does not mark '80GB' as a baselined defect."""
    for path in (PKT, RUN):  # the run in the packet's folder states the packet's hardware
        reg.edit(path, lambda d: d.__setitem__("hardware", "H100 80GB at {{ m:run-1.decode_tok_s[0] }}"))
    reg.commit("name")
    errors, built = validate_then_build(reg, tmp_path)
    assert not errors and built.returncode == 0
    pages = "".join(p.read_text("utf-8") for p in (tmp_path / "out").rglob("*.html"))
    assert ">80GB</mark>" not in pages


def test_measurement_id_index_keeps_its_page(reg: Reg, tmp_path: Path) -> None:
    """'index' is a valid id whose page would be measurements/index.md, the measurement list: either validation
    refuses it, or the measurement keeps its section (``m-index``) on its packet's page, where every citation of it
    (the family's hero) links."""
    data = reg.read(RUN)
    data["id"] = "index"
    (reg.root / RUN).unlink()
    reg.put(f"{F}/pkt/measurements/index.json", data)
    reg.edit(f"{F}/family.json", lambda d: d["featured_results"][0].__setitem__("measurement_id", "index"))
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0].__setitem__("measurement_ids", ["index"]))
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:1"].__setitem__("evidence_id", "index"))
    reg.commit("id index")
    errors, _ = validate_then_build(reg, tmp_path)
    out = tmp_path / "out" / "packets" / "pkt" / "index.html"
    assert errors or (out.exists() and 'id="m-index"' in out.read_text("utf-8"))


@pytest.mark.slow
def test_series_point_anchors_are_unique(reg: Reg, tmp_path: Path) -> None:
    """Points at x=-1 and x=1 get ids of their own (the sign is part of the slug), so a citation @1 lands on the
    x=1 row."""
    import re

    reg.edit(
        f"{F}/measurements/sweep-1.json",
        lambda d: d.__setitem__("points", [{"x": -1, "decode_tok_s": 30.1}, {"x": 1, "decode_tok_s": 27.5}]),
    )
    reg.commit("negative x")
    errors, built = validate_then_build(reg, tmp_path)
    assert not errors and built.returncode == 0
    html = (tmp_path / "out" / "families" / "fam" / "measurements" / "index.html").read_text("utf-8")
    ids = re.findall(r'id="(m-sweep-1--decode-tok-s[^"]*)"', html)
    assert len(ids) == len(set(ids)) == 2, ids


@pytest.mark.slow
def test_an_independent_scan_of_the_built_site_finds_no_untraceable_figure(tmp_path: Path) -> None:
    """The repository's own registry built, and every page read as a browser reads it (Lexbor, not the build's own
    reader): no figure a reader sees stands outside a citation, a quote from evidence, a derived figure, a stored
    sample, or a mark that flags it as a baselined defect; and the defects page is the only page that repeats the
    flagged ones in its findings."""
    from selectolax.lexbor import LexborHTMLParser

    from evreg.claims.figures import find_figures

    out = tmp_path / "site"
    result = evreg("build", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stderr
    receipts = {"evreg-cite", "evreg-derived", "evreg-sample", "evreg-quote"}
    unflagged, flagged = [], 0
    for page in sorted(out.rglob("*.html")):
        tree = LexborHTMLParser(page.read_text("utf-8"))
        body = tree.css_first("article")
        if body is None:
            continue
        for node in body.css("script, style, pre, code, svg"):
            node.decompose()
        for node in body.css("[class]"):
            classes = set((node.attributes.get("class") or "").split())
            if classes & receipts:
                node.replace_with(" ")
            elif "evreg-orphan" in classes:
                flagged += 1
                node.replace_with(" ")
        for block in body.css("p, li, td, th, h1, h2, h3, h4, figcaption, dd, dt, caption"):
            text = block.text(separator=" ", deep=False) if block.css_first("p, li, td") else block.text(separator=" ")
            unflagged += [(page.relative_to(out).as_posix(), f.text) for f in find_figures(text)]
    assert unflagged == []
    assert flagged > 0  # the lab's baselined figures are shown, flagged
