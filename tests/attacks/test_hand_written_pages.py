"""Hand-written pages, stylesheets and the site configuration, read as the build publishes them: every figure
they show is found (in tables, HTML, alt text, titles, attributes, styles, inline SVG, front matter), script is
refused wherever a browser would run it, raw HTML, SVG and JavaScript pages are refused unread; honest markup and
code pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evreg.claims import htmlscan, markdown
from evreg.claims.siteconfig import config_figures
from evreg.core.findings import Finding
from helpers import (
    CONTRIBUTING,
    blocking,
    has,
)


def _on_page(root: Path, text: str, page: str = CONTRIBUTING) -> list[Finding]:
    target = root / page
    target.parent.mkdir(parents=True, exist_ok=True)
    before = target.read_text("utf-8") if target.exists() else ""
    target.write_text(before + "\n\n" + text + "\n", "utf-8")
    return blocking(root)


# -- figures as Python-Markdown renders them ---------------------------------------------------------------------------


PAGE_FIGURES = [
    "| Setup | tok/s (decode) |\n|---|---|\n| a | 52.3 |",  # a unit first in a column header
    "| Setup | Decode (tok/s) ↑ |\n|---|---|\n| a | 52.3 |",  # a mark after the header's unit
    "Setup | Decode (tok/s)\n--- | ---\na | 52.3",  # a table without outer pipes
    "<table><tr><th>Decode (tok/s)</th></tr><tr><td>52.3</td></tr></table>",  # an HTML table
    "Decode reaches 52.3\ntok/s in one paragraph.",  # a line break between number and unit
    "Decode reaches 52.3<span></span> tok/s.",  # an empty element between number and unit
    "Decode reaches 52.3<!-- x --> tok/s.",  # a comment between number and unit
    "Decode reaches 52.3&nbsp;tok/s.",  # an entity space
    "  ~~~\n  Decode reaches 52.3 tok/s.\n  ~~~",  # an indented ~~~ is no fence to Python-Markdown
    "<!--\n```\n-->\n\nDecode reaches 52.3 tok/s.",  # a fence inside a comment opens nothing
    "Decode reaches <b>52.3</b> tok/s.",  # emphasis by HTML
]
"""Hand-written pages are read as Python-Markdown renders them (what the build publishes), so each of these is a
figure to validation as it is to the build."""


@pytest.mark.slow
@pytest.mark.parametrize("text", PAGE_FIGURES)
def test_page_figures_are_read_as_rendered(real: Path, text: str) -> None:
    assert has(_on_page(real, text), "orphan-number", CONTRIBUTING)


@pytest.mark.slow
def test_each_page_figure_is_located_where_it_was_typed(real: Path) -> None:
    """Repeated figures are each found at their own line and column, and never in code that shows the same text."""
    before = (real / CONTRIBUTING).read_text("utf-8").count("\n") + 2  # _on_page adds two line breaks before the text
    text = "```\nDecode reaches 52.3 tok/s.\n```\n\nDecode reaches 52.3 tok/s.\n\nAgain 52.3 tok/s, and 52.3 tok/s."
    found = [(f.line, f.column) for f in _on_page(real, text) if f.file == CONTRIBUTING and f.code == "orphan-number"]
    assert found == [(before + 5, 16), (before + 7, 7), (before + 7, 23)]


PAGE_HONEST = [
    "| Setup | Cards |\n|---|---|\n| a | 4 |",  # a count column
    "| Setup | Decode (tok/s) |\n|---|---|\n| a | {{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }} |",
    "```\nDecode reaches 52.3 tok/s.\n```",  # code
    "    Decode reaches 52.3 tok/s.",  # indented code
    "<!--\nDecode reaches 52.3 tok/s.\n-->",  # a comment is shown to no one
    "Power limit {{ set:575 W }} on every card.",
    "Decode reaches {{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | nounit }} tok/s.",  # its own unit
]


@pytest.mark.slow
@pytest.mark.parametrize("text", PAGE_HONEST)
def test_honest_page_text_passes(real: Path, text: str) -> None:
    assert [f for f in _on_page(real, text) if f.file == CONTRIBUTING] == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fast.html", "fast.HTM", "deep/fast.svg", "fast.js"])
def test_a_raw_page_is_refused(real: Path, name: str) -> None:
    """MkDocs publishes these as they are (never read as Markdown): refused, whatever they hold."""
    found = _on_page(real, "<p>Decode reaches the same speed.</p>", f"site/{name}")
    assert has(found, "site-file-unsafe", f"site/{name}")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".markdown", ".mdown", ".mkdn", ".mkd"])
def test_every_markdown_suffix_is_a_page(real: Path, suffix: str) -> None:
    assert has(
        _on_page(real, "Decode reaches 52.3 tok/s.", f"site/fast{suffix}"), "orphan-number", f"site/fast{suffix}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("before", "after", "pointer"),
    [
        ("site_name: Evidence registry", "site_name: 52.3 tok/s", "/site_name"),
        ("site_description: LLM", "site_description: 52.3 tok/s LLM", "/site_description"),
        ("  - Home: index.md", "  - Home at 52.3 tok/s: index.md", "/nav/0/Home at 52.3 tok~1s"),
        ("      - Grade rubric:", "      - Grade rubric (TTFT 274):", "/nav/10/Methodology/1/Grade rubric (TTFT 274)"),
    ],
)
def test_what_mkdocs_yml_shows_on_every_page_is_prose(real: Path, before: str, after: str, pointer: str) -> None:
    cfg = (real / "mkdocs.yml").read_text("utf-8")
    assert before in cfg
    (real / "mkdocs.yml").write_text(cfg.replace(before, after), "utf-8")
    assert [(f.code, f.pointer) for f in blocking(real)] == [("orphan-number", pointer)]


@pytest.mark.slow
def test_script_after_a_fence_python_markdown_does_not_see(real: Path) -> None:
    """Script after a fence Python-Markdown does not see (indented, or inside a comment) is still script."""
    for text in ("  ~~~\n<script>alert(1)</script>\n  ~~~", "<!--\n```\n-->\n\n<img src=x onerror=alert(1)>"):
        assert has(_on_page(real, text), "site-html-unsafe", CONTRIBUTING), text


# -- what a rendered page shows ----------------------------------------------------------------------------------------


EXTENSIONS: list[Any] = ["tables", "attr_list", "md_in_html", "admonition", {"toc": {"permalink": True}}]


ALL_EXTENSIONS: list[Any] = [*EXTENSIONS, "footnotes", "def_list", "abbr", "sane_lists"]


def _refused(text: str, extensions: list[Any] = EXTENSIONS) -> bool:
    """What validation's rendered-page check (site_pages._rendered_page) reports of a page, without the registry."""
    content = markdown.to_html(text, extensions)
    tags = markdown.html_tags(content)
    return bool(
        htmlscan.page_figures(content)
        or any(markdown.SCRIPT.search(t) or markdown.FORGED.search(t) or markdown.STYLE.search(t) for t in tags)
    )


CLOSED_PAGES = [
    "<pre><img src=x onerror=alert(1)></pre>",  # a raw <pre> is HTML to a browser: its tags are read
    "Read <code><img src=x onerror=alert(1)></code> here.",
    "<pre><script>alert(1)</script></pre>",
    '<pre><span class="evreg-cite">52.3 tok/s</span></pre>',  # forged citation markup inside a raw <pre>
    "![Decode reaches 52.3 tok/s](missing.png)",  # alt text: shown when the image does not load, and read aloud
    '[runs](https://example.org "Decode reaches 52.3 tok/s")',  # a link's title: a tooltip
    '[runs][r]\n\n[r]: https://example.org "Decode reaches 52.3 tok/s"',
    '<abbr title="52.3 tok/s">decode</abbr> is fast.',
    "Decode is fast.\n{: title='52.3 tok/s' }",  # attr_list
    '<input value="52.3 tok/s" readonly>',
    '<span class="x" data-v="52.3 tok/s"></span>',  # shown by any stylesheet's attr(data-v)
    "<style>p::after{content:attr(title)}</style>",  # a style: shows text no check reads
    'Decode reaches 52.3<span style="font-size:0">zz</span> tok/s.',  # ... or hides what a check reads
    'Decode reaches <code style="all:unset">52.3 tok/s</code> today.',  # code dressed as prose
    "Decode reaches 52.3<br>tok/s.",  # inline elements join the text around them
    'Decode reaches 52.3<img src="dot.png" alt=""> tok/s.',
    "Decode reaches <label>52.3</label><label> tok/s</label>.",
    '<table><tr><th>Setup</th><th colspan="2">Decode (tok/s)</th></tr><tr><td>a</td><td>-</td><td>52</td></tr></table>',
    "<table><tr><td><b>Decode (tok/s)</b></td></tr><tr><td>52</td></tr></table>",  # a header row of td cells
    "<table><tr><th>Setup</th><th>Cards</th><th>Decode (tok/s)</th></tr>"
    '<tr><td rowspan="2">a</td><td>4</td><td>52</td></tr><tr><td>8</td><td>61</td></tr></table>',  # a row span
    "| Model | Decode |\n|---|---|\n| | tok/s |\n| a | 52 |",  # the unit in a row of its own under the header
    # an element inside a word: the text runs on (Decode52.3), and a style may set the element apart
    "Decode<b>52.3 tok/s</b> today.",
    "Decode**52.3 tok/s** today.",
    "Decode reaches 52.3 tok/s<b>ish</b> today.",
    "Decode reaches Q<b>.5 ms</b> today.",
    "Decode reache&#115;<span>52.3 tok/s</span> today.",
    "TTFT<b>274</b> today.",
    "Tested on A100**TTFT 274** today.",  # a digit before the element, a metric name in it
    "Tested on A100[Decode reaches 52.3](about.md){ .md-button } today.",  # a button: set apart by its padding
    "GPU busy **85%**of the time.",  # a word right after the unit
    "Decode℃<b>52.3 tok/s</b> today.",  # a character that reads as two (°C): the last is the one before
    "TTFT<sup></sup><b>274</b> today.",  # an empty superscript is nothing
    "Decode<sub>52.3</sub> tok/s today.",  # a subscript's number and the unit after it
    "TTFT<b>(274)</b> today.",  # a bracket after the edge
    "| TTFT<br>ms | Setup |\n|---|---|\n| 274 | a |",  # a header's unit, set apart
    "Decode<sup>52.3 tok/s</sup> today.",  # a superscript's own text
    "| Setup | Decode (tok/s) |\n|---|---|\n| a | v<b>52</b> |",  # a cell under a unit
    "Notes<kbd>52.3 tok/s</kbd>",  # keys and sample output are prose
    # what an HTML5 parser and the build's reading each find: a figure of either is a claim
    "TTFT<hr>274 today.",  # a rule between a metric and its value
    "<details><summary>TTFT</summary>274</details>",
    '<span lang="52.3 tok/s">x</span>',  # an attribute a stylesheet can show
    '<time datetime="52.3 tok/s">x</time>',
    # a superscript or subscript between a metric and its value: a footnote's mark, an index
    "TTFT<sup>1</sup> 274 today.",
    "TTFT<sub>50</sub> 274 today.",
    # a table row read across: a metric in one cell, its value in the next
    "| TTFT | 274 |\n|---|---|\n| Decode | 52 |",
    "| Metric | Value |\n|---|---|\n| TTFT (ms) | 274 |",
    "| Metric | Value | Unit |\n|---|---|---|\n| Decode | 52.3 | tok/s |",
    "<table><tr><th>TTFT (ms)</th><td>274</td></tr></table>",
    # the readings combined, and rows as an HTML5 parser builds them (a row's end left out, or in a comment)
    "| Metric | Value |\n|---|---|\n| TTFT<sup>1</sup> | 274 |",
    "<table><tr><th scope=row>TTFT<sub>p50</sub></th><td>274</td></tr></table>",
    "<table><tr><td>TTFT</td><td>274</td></table>",
    "<table><tr><td>TTFT</td><!-- </tr> --><td>274</td></tr></table>",
    '<table><tr><td title="</tr>">TTFT</td><td>274</td></tr></table>',
    "| Model | TTFT |\n|---|---|\n| x | 274 |",  # a column headed by a metric's name
    "<dl><dt>TTFT (ms)</dt><dd>274</dd></dl>",  # a definition after its term
    "TTFT<sup><sup>1</sup>a</sup> 274 today.",  # superscripts inside superscripts
    # tables as an HTML5 parser lays them out: end tags left out, spans, header rows, captions
    "<table><tr><th>Run</th><th>TTFT (ms)<tr><td>a<td>274</table>",
    "<table><thead><tr><th>Run<th>TTFT (ms)</thead><tbody><tr><td>a</td><td>274</td></tbody></table>",
    "<table><tr><th>Run</th><th>Decode (tok/s)</th></tr><tr><th>a</th><th>52.3</th></tr></table>",
    "| TTFT | Run |\n|---|---|\n| 311 | a |",  # the first column, under its header
    "| Run | Metric | Value |\n|---|---|---|\n| a | TTFT | 274 |",  # after its left neighbour
    "<table><tr><th>Metric</th><th>Phase</th><th>Value</th></tr>"
    "<tr><td rowspan=2>TTFT</td><td>a</td><td>x</td></tr><tr><td>b</td><td>274</td></tr></table>",
    "<table><tr><th colspan=2>TTFT</th></tr><tr><td>x</td><td>274</td></tr></table>",
    "<table><caption>TTFT</caption><tr><td>274</td></tr></table>",
    "<table><caption>Decode tok/s</caption><tr><th>Run</th></tr><tr><td>52.3</td></tr></table>",
    "<dl><dt>TTFT</dt><dd>time to first token</dd><dd>518</dd></dl>",  # a second definition of one term
    "<dl><dt>TTFT</dt><dt>other</dt><dd>274</dd></dl>",
    "Measured TTFT¹,² 274 today.",
    # a footnote's mark of any kind between a metric and its value
    "Measured TTFTᵃ 274 today.",
    "Measured TTFT[1] 274 today.",
    "Measured TTFT[a],[b] 274 today.",
    "Measured TTFT<sup>1</sup>,<sup>2</sup> 274 today.",
    "Measured TTFT<sup>a</sup>,<sup>b</sup> 274 today.",
    # a superscript or subscript after a bracket, a colon or a space, or two of them apart
    "Measured TTFT (ms)<sup>a</sup> 274 today.",
    "Measured TTFT:<sup>a</sup> 274 today.",
    "Measured TTFT <sup>a</sup> <sup>b</sup> 274 today.",
    "Measured TTFT<sup>a</sup> <sup>b</sup>274 today.",  # the space between two marks stays one
    "Measured TTFT<sup>1</sup><!-- --> <sup>2</sup>274 today.",
    "| Metric | Value |\n|---|---|\n| TTFT (ms)<sup>a</sup> | 274 |",
    "<dl><dt>Decode (tok/s)<sup>a</sup></dt><dd>52.3</dd></dl>",
    # a heading or a title over its value, as a term over its definition
    "## Decode tok/s\n\n52.3",
    "### TTFT (ms)\n\n274 on one card.",
    '!!! note "Decode tok/s"\n    61.4',
    "<details markdown><summary>Decode tok/s</summary>\n\n62.5\n\n</details>",
    # ... with something empty between, in a later block, under another title, or in a list, a quote or a table
    "## Decode tok/s\n\n<!-- x -->\n\n52.3",
    "## Decode tok/s\n\n\u200b\n\n---\n\n![](a.png)\n\n52.3",
    "<h2>Decode tok/s</h2>\u200b<p>52.3</p>",
    "## Decode tok/s\n\nOn one card:\n\n52.3",
    "## Decode tok/s\n\n### Qwen3 on one card\n\n52.3",
    '!!! note "Decode tok/s"\n    !!! note "Run a"\n        52.3',
    "## Decode tok/s\n\n<details><summary>Run a</summary>52.3</details>",
    "<div markdown>\n\n## Decode tok/s\n\n</div>\n\n52.3",
    "## Decode tok/s\n\n- 52.3\n- 53.1",
    "## Decode tok/s\n\n> Run a\n>\n> 52.3",
    "## Decode tok/s\n\n<dl><dt>Run a</dt><dd>52.3</dd></dl>",
    "## Decode tok/s\n\n| Run a | Run b |\n|---|---|\n| 52.3 | 53.1 |",
    "## Decode tok/s\n\n<table><tr><td>52.3</td></tr></table>",
    "## Decode tok/s, measured on Qwen3-32B with one RTX 4090 card\n\n52.3",
]


@pytest.mark.parametrize("text", CLOSED_PAGES)
def test_a_page_shows_no_unchecked_figure_or_script(text: str) -> None:
    assert _refused(text), text


def test_abbreviation_definitions_are_titles() -> None:
    assert _refused("Decode is DRX.\n\n*[DRX]: 52.3 tok/s", ALL_EXTENSIONS)


def test_a_footnote_mark_between_a_metric_and_its_value_is_read_past() -> None:
    assert _refused("TTFT[^1] 274 today.\n\n[^1]: A note.", ALL_EXTENSIONS)
    assert not _refused("TTFT[^1] is measured.\n\n[^1]: A note.", ALL_EXTENSIONS)


def test_a_permalink_glued_to_its_heading_is_read() -> None:
    """The heading's text and its permalink run together (``Notes52.3 tok/s``); the theme sets the link apart."""
    assert _refused("## Notes\n\nText.", [{"toc": {"permalink": "52.3 tok/s"}}])
    assert not _refused("## Notes\n\nText.", [{"toc": {"permalink": "link"}}])


HONEST_INSIDE_WORDS = [
    "H<sub>2</sub>O cools.",
    "TP<sub>4</sub> runs.",
    "Q4<em>_K_M</em> loads.",
    "TP<b>4</b> and Q<b>4</b>_K_M, v<b>0.9.1</b>, Qwen3<b>-32B</b>, batch<b>32</b>.",
    "TTFT[^1] is measured from the first byte.\n\n[^1]: A note.",  # a footnote's mark
    "TTFT<sup>1</sup> is measured, Decode<sup>2</sup> too.",
    "TTFT<sub>50</sub> is the median.",
    "We ran on two [RTX 4090](https://example.org)s and **H100**s.",  # a plural of a linked or bold name
    "## Decode tok/s\n\nWe ran 3 runs of 512 tokens on 2 cards.",  # counts under a heading that names a unit
    '!!! note "TTFT"\n    Measured from the first byte, in 2 runs.',
    "TTFTᵃ is measured from the first byte; TTFT at the 99ᵗʰ percentile too.",
    "### Step 2\n\nTPS is measured at the client.",  # a title's own number joins nothing below it
    "## Release 0.9\n\nGB-scale downloads are needed.",
    "## Decode tok/s\n\n| Run | Cards |\n|---|---|\n| a | 2 |",  # a count under a title that names a unit
    "## Latency\n\n99th percentile is what we report.",
    # settings under a title that names a metric or a unit: a run with words of its own, an integer in a list or table
    "## Decode throughput\n\n- Batch size: 32\n- Cards: 4",
    "## Decode throughput (tok/s)\n\n| Setting | Value |\n|---|---|\n| Batch size | 32 |\n| Context | 8192 |",
    "## TTFT\n\nPrompts: 100",
    "## ITL (ms)\n\n| Percentile | Meaning |\n|---|---|\n| 50 | median |\n| 99 | tail |",
    "## Latency percentiles (ms)\n\n- 50\n- 90\n- 99",
    "## Decode throughput (tok/s)\n\nBatch sizes:\n\n- 8\n- 16\n- 32",
    "## Decode throughput (tok/s)\n\n2025-01-15",
    "## Decode tok/s\n\n| Setting | Value |\n|---|---|\n| temperature | 0.7 |\n| top_p | 0.95 |",
]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("## Decode tok/s\n\n52.3", [("52.3", "under the title 'Decode tok/s' (in tok/s)")]),
        ("# Decode tok/s\n\n## Run a\n\n### Card 1\n\n52.3", [("52.3", "under the title 'Decode tok/s' (in tok/s)")]),
        (
            "## Decode tok/s\n\n" + "| Run a | Run b |\n|---|---|\n" + "| 52.3 | 53.1 |\n" * 3,
            [*3 * [("52.3", None)], *3 * [("53.1", None)]],
        ),
        ("## Decode tok/s\n\n52.3<sup>1</sup>", [("52.3", "under the title 'Decode tok/s' (in tok/s)")]),
        ("## Decode tok/s\n\n52.3\n\n" * 3, 3 * [("52.3", None)]),
        ("## TTFT (ms)\n\n<dl><dt>Decode</dt><dd>52.3</dd></dl>", [("52.3", "on a hand-written page")]),
        ("## Decode tok/s\n\n274† ms", [("274† ms", "on a hand-written page")]),
        ("## Decode\n\n52.3", [("52.3", "on a hand-written page")]),
    ],
)
def test_a_value_below_a_title_is_counted_once_where_it_is_typed(
    text: str, found: list[tuple[str, str | None]]
) -> None:
    """As often as it is typed, as typed, and in the unit of the nearest title that names one (None: anywhere)."""
    shown = htmlscan.page_figures(markdown.to_html(text, ALL_EXTENSIONS))
    assert len(shown) == len(found)
    assert [(f, w if e is not None else None) for (f, w), (_, e) in zip(shown, found, strict=True)] == found


@pytest.mark.parametrize("text", HONEST_INSIDE_WORDS)
def test_an_element_inside_an_identifier_is_no_figure(text: str) -> None:
    """Set apart or not, an identifier with markup inside it stays one, and a superscript or subscript gives a metric
    name no value (as ``TTFT¹`` and ``TTFT₅₀`` do not)."""
    assert not _refused(text, ALL_EXTENSIONS), text


def test_inline_svg_text_joins_its_unit() -> None:
    assert _refused('Decode reaches <svg width="40" height="12"><text x="0" y="10">52.3</text></svg> tok/s.')


HONEST_PAGES = [
    "```\n<script>alert(1)</script>\n```",  # code Python-Markdown escapes stays text
    "Write `<img onerror=x>` nowhere.",
    "    <script>x</script>",
    "![The registry's logo](logo.png)",
    '[the registry](https://example.org "Where every number is a receipt")',
    "<table><tr><th>Setup</th><th>Cards</th></tr><tr><td>a</td><td>4</td></tr></table>",
    '<table><tr><th colspan="2">Setup</th><th>Cards</th></tr><tr><td>a</td><td>b</td><td>4</td></tr></table>',
    "| Model | Cards |\n|---|---|\n| a | 4 |",
    "## Runs on one card\n\nText.",  # a heading's permalink
    '!!! note "How to cite"\n    Write a citation.',
    # tables read across their rows: settings, counts and versions are no figures
    "| Setting | Value |\n|---|---|\n| Batch size | 32 |\n| Context | 8192 |\n| Tensor parallel | 4 |",
    "| Model | Cards | Runtime |\n|---|---|---|\n| Qwen3-32B | 4 | vLLM 0.9.1 |\n| Llama 3.1 70B | 8 | b5000 |",
    "| Metric | Meaning |\n|---|---|\n| TTFT | time to first token, in ms |",
    "| Phase | Tokens |\n|---|---|\n| Prefill | 512 |\n| Decode | 128 |",  # counts: a cell reads with its header
    "| Phase | Threads |\n|---|---|\n| Prefill | 8 |\n| Decode | 4 |",
    "| Metric | Runs needed |\n|---|---|\n| TTFT | 3 |\n| Decode throughput | 5 |",
    "| What | Step |\n|---|---|\n| Measure TTFT | 1 |\n| Measure decode | 2 |",
]


@pytest.mark.parametrize("text", HONEST_PAGES)
def test_honest_page_markup_passes(text: str) -> None:
    assert not _refused(text, ALL_EXTENSIONS), text


REAL_PAGES = [
    ("<pre><img src=x onerror=alert(1)></pre>", "site-html-unsafe"),
    ("![Decode reaches 52.3 tok/s](missing.png)", "orphan-number"),
    # a style that hides text; read set apart, the figure it hides is shown
    ('Decode reaches 52.3<span style="font-size:0">zz</span> tok/s.', "site-style-unsafe orphan-number"),
    ("<table><tr><td>Decode (tok/s)</td></tr><tr><td>52</td></tr></table>", "orphan-number"),
    ('---\ntitle: "\\x35\\x32.3 tok/s on one card"\n---\n\nText.', "orphan-number"),  # YAML escapes in front matter
    ("Decode<b>52.3 tok/s</b> today.", "orphan-number"),  # an element inside a word: a style may set it apart
    ("TTFT<br>274 today.", "orphan-number"),  # validation reads what the build reads
    ("Notes<kbd>52.3 tok/s</kbd>", "orphan-number"),
    ("Used 52.3  \ntok/s today.", "orphan-number"),  # a hard line break
    ("TTFT<sup>1</sup> is measured.", None),
    ("TTFT<hr>274 today.", "orphan-number"),  # found by the build's reading, and so by validation's
    ('<time datetime="52.3 tok/s">x</time>', "orphan-number"),
    ("TTFT<sup>1</sup> 274 today.", "orphan-number"),
    ("| Metric | Value |\n|---|---|\n| TTFT (ms) | 274 |", "orphan-number"),
    # a table inside a cell: no row reads across it
    ("<table><tr><td><table><tr><td>TTFT</td></tr></table></td><td>274</td></tr></table>", "site-html-unsafe"),
    ('<table><tr><th colspan="101">Setup</th></tr></table>', "site-html-unsafe"),  # a span no reading clamps
    # a line that holds only a citation is a line, as the build renders it: not a blank that ends a table
    ("TTFT\n{{ m:deepseek-coder-v2-lite-q4km-tp1-rapid.decode_tok_s[0] }}\n    274", "orphan-number"),
    (
        "| Metric | Value |\n|---|---|\n{{ m:deepseek-coder-v2-lite-q4km-tp1-rapid.decode_tok_s[0] }}\n| TTFT | 274 |",
        "orphan-number",
    ),
    (
        "---\ntitle: Running on one card\n---\n\n![The registry's logo](logo.png)\n\n"
        "| Model | Cards |\n|---|---|\n| a | 4 |",
        None,
    ),
]


@pytest.mark.slow
def test_validation_reports_them_on_the_real_records(real: Path) -> None:
    """One validation of the real records with each page beside them: each attack refused, the honest page clean."""
    for i, (text, _) in enumerate(REAL_PAGES):
        (real / f"site/probe{i}.md").write_text(text + "\n", "utf-8")
    found = blocking(real)
    for i, (text, code) in enumerate(REAL_PAGES):
        codes = {f.code for f in found if f.file == f"site/probe{i}.md"}
        assert codes == set(code.split() if code else ()), text


# -- stylesheets and the site configuration ----------------------------------------------------------------------------


STYLESHEETS = [
    ('.md-content h1::after { content: "52.3 tok/s"; }', "orphan-number"),
    ('h1::after { content: "\\35 2.3 tok/s"; }', "orphan-number"),  # a CSS escape
    ("a::after { content: attr(title); }", "site-style-unsafe"),
    ("body { counter-reset: n 52; } h1::after { content: counter(n); }", "site-style-unsafe"),
    ('.evreg-note::before { content: "Note: "; } h1 { margin: 0 0 1.2em; }', None),  # the honest neighbour
]


@pytest.mark.slow
def test_what_stylesheets_and_repo_name_show_is_read(real: Path) -> None:
    """Stylesheets under site/ (extra_css) and repo_name (every page's header) are shown on every page."""
    (real / "site/assets").mkdir(parents=True, exist_ok=True)
    for i, (css, _) in enumerate(STYLESHEETS):
        (real / f"site/assets/x{i}.css").write_text(css + "\n", "utf-8")
    cfg = (real / "mkdocs.yml").read_text("utf-8").replace("site_dir:", "repo_name: 52.3 tok/s on B70\nsite_dir:")
    (real / "mkdocs.yml").write_text(cfg, "utf-8")
    found = blocking(real)
    for i, (css, code) in enumerate(STYLESHEETS):
        assert {f.code for f in found if f.file == f"site/assets/x{i}.css"} == ({code} if code else set()), css
    assert [f.pointer for f in found if f.file == "mkdocs.yml"] == ["/repo_name"]
    (real / "mkdocs.yml").write_text(cfg.replace("repo_name: 52.3 tok/s", "repo_name: evreg"), "utf-8")
    assert config_figures(real) == []
