"""The site build: refuses invalid registries and orphan numbers, escapes record text."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import REPO, F, Reg, evreg
from evreg.claims.markdown import html_figures as orphans_in_html


def site_setup(reg: Reg) -> None:
    import shutil

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


def test_rendered_page_scan_catches_figures_outside_the_citation_path() -> None:
    assert orphans_in_html("<p>reached <b>52.3</b> tok/s</p>") == ["52.3 tok/s"]  # read as shown: one figure
    assert orphans_in_html("<p>reached 52.3 tok/s</p>") == ["52.3 tok/s"]
    assert orphans_in_html('<p><a class="evreg-cite" href="x">52.3 tok/s</a></p>') == []
    assert orphans_in_html("<pre><code>52.3 tok/s</code></pre>") == []


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


def test_serve_takes_the_port_first_and_answers_missing_pages_with_the_site_404(reg: Reg) -> None:
    import socket
    import subprocess
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


@given(st.text(alphabet="ab`~ \n", max_size=60))
def test_markdown_code_split_gives_the_text_back(text: str) -> None:
    from evreg.claims import markdown

    assert "\n".join(line for _, line, _ in markdown.lines(text)) == text
    for _, line, code in markdown.lines(text):
        if not code:
            assert "".join(t for t, _ in markdown.spans(line)) == line


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


_SHOWN_ALPHABET = st.sampled_from(
    [
        "<",
        ">",
        "/",
        "!--",
        "-->",
        "a",
        "b",
        "br",
        "div",
        "td",
        "code",
        "span",
        " ",
        "  ",
        "\n",
        "\t",
        "\xa0",
        "&nbsp;",
        "&#9;",
        "&#32;",
        "&#10;",
        "&amp;",
        "&lt;",
        "x",
        "1",
        '="',
        '"',
        "class",
        "B",
        "SPAN",
        "Td",
        "\u017f",
        "\u212a",
        "evreg-cite",
        "\u2003",
    ]
)


@given(st.lists(_SHOWN_ALPHABET, max_size=40).map("".join))
def test_shown_text_is_the_plain_regular_expression_reading_of_the_page(content: str) -> None:
    """``markdown.shown`` takes fast paths (every page of a 100,000-measurement site passes through it); what it
    returns is the plain reading: white space runs collapsed, inline tags joined, block tags line breaks, entities
    decoded, every run of blanks made by an entity one space."""
    from evreg.claims import markdown as md

    inline = re.compile(
        r"<!--.*?-->|</?(?:a|abbr|b|bdi|bdo|cite|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|"
        r"var|del|ins|wbr|font|br|img|svg|label|button|input|select|output|meter|progress)\b[^>]*>",
        re.S | re.I,
    )
    text = re.sub(r"\s+", " ", inline.sub("", md._EXEMPT.sub(" ", md._SVG_CITE.sub(" ", content))))
    expected = re.sub(r"[^\S\n]+", " ", html.unescape(re.sub(r"<[^>]+>", "\n", text)))
    assert md.shown(content) == expected


def _plain_reading(content: str) -> str:
    """The reference composition of ``markdown.shown`` (as in the test above)."""
    from evreg.claims import markdown as md

    inline = re.compile(
        r"<!--.*?-->|</?(?:a|abbr|b|bdi|bdo|cite|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|sup|time|u|"
        r"var|del|ins|wbr|font|br|img|svg|label|button|input|select|output|meter|progress)\b[^>]*>",
        re.S | re.I,
    )
    text = re.sub(r"\s+", " ", inline.sub("", md._EXEMPT.sub(" ", md._SVG_CITE.sub(" ", content))))
    return re.sub(r"[^\S\n]+", " ", html.unescape(re.sub(r"<[^>]+>", "\n", text)))


def test_shown_text_fast_paths_hold_for_every_character_they_depend_on() -> None:
    """The fast paths of ``markdown.shown`` rest on two facts about all of Unicode, which a sampled alphabet cannot
    cover: ``str.split`` splits at exactly the characters ``\\s`` matches, and every character that matches an ASCII
    letter when case is ignored (the upper case, and "İ", "ı", "ſ", "K") sends the scan to the case-blind tag pattern.
    Every such character, in a tag name and in text beside entities, reads as the plain regular expressions read it."""
    from evreg.claims import markdown as md

    space, letter = re.compile(r"\s"), re.compile("[a-z]", re.I)
    chars = [chr(i) for i in range(0x110000) if not 0xD800 <= i <= 0xDFFF]
    assert [c for c in chars if bool(space.match(c)) != c.isspace()] == []
    odd = [c for c in chars if c.isspace() or letter.match(c)]
    assert {"\u0130", "\u0131", "\u017f", "\u212a", "\xa0", "\u2028"} <= set(odd)
    for c in odd:
        for content in (
            f"<{c}>1 tok/s</{c}>",
            f"<spa{c}>12</spa{c}> tok/s",
            f"<{c}pan class=x>3</{c}pan> GiB",
            f"4{c}<b>{c}</b>{c}&nbsp;{c}tok/s",
            f"<td>5</td>{c}{c}<{c}>&#9;ms",
        ):
            assert md.shown(content) == _plain_reading(content), (hex(ord(c)), content)
