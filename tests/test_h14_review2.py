"""A second hostile review of issue 14's hardening (commit 041aa8a): variants of the closed classes tried as a
dishonest contributor would, on copies of the real records. Each closed hole is a test that it is refused beside its
honest neighbour (the three it left open -- inline SVG, an unlocated sample held only in another unit, an engine
with a fork word -- were closed after it); false positives of the figure grammar on honest prose are tested to
pass."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import test_h14_attacks as attacks
from conftest import blocking as _found
from conftest import edit_json as _edit
from evreg.claims import markdown
from evreg.claims.figures import find_figures
from evreg.claims.runtimes import runtime_matches
from evreg.claims.siteconfig import config_figures
from evreg.core.findings import Finding
from test_h14_attacks import PACKET, PACKET_DIR, PAGE, STRICT, _copy_run, _run_with_evidence

EXTENSIONS: list[Any] = ["tables", "attr_list", "md_in_html", "admonition", {"toc": {"permalink": True}}]
ALL_EXTENSIONS: list[Any] = [*EXTENSIONS, "footnotes", "def_list", "abbr", "sane_lists"]


def _on_page(root: Path, text: str, page: str = PAGE) -> list[Finding]:
    """The findings of ``page`` once ``text`` is added to it."""
    return [f for f in attacks._on_page(root, text, page) if f.file == page]


def _refused(text: str, extensions: list[Any] = EXTENSIONS) -> bool:
    """What validation's rendered-page check (site_pages._rendered_page) reports of a page, without the registry."""
    content = markdown.to_html(text, extensions)
    tags = markdown.html_tags(content)
    return bool(
        markdown.html_figures(content)
        or markdown.attribute_figures(content)
        or markdown.column_figures(content)
        or any(markdown.SCRIPT.search(t) or markdown.FORGED.search(t) or markdown.STYLE.search(t) for t in tags)
    )


# -- hand-written pages: closed here ------------------------------------------------------------------------------

CLOSED_PAGES = [
    "<pre><img src=x onerror=alert(1)></pre>",  # a raw <pre> is HTML to a browser: its tags were never read
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
]


@pytest.mark.parametrize("text", CLOSED_PAGES)
def test_a_page_shows_no_unchecked_figure_or_script(text: str) -> None:
    assert _refused(text), text


def test_abbreviation_definitions_are_titles() -> None:
    assert _refused("Decode is DRX.\n\n*[DRX]: 52.3 tok/s", ALL_EXTENSIONS)


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
]


@pytest.mark.parametrize("text", HONEST_PAGES)
def test_honest_page_markup_passes(text: str) -> None:
    assert not _refused(text, ALL_EXTENSIONS), text


REAL_PAGES = [
    ("<pre><img src=x onerror=alert(1)></pre>", "site-html-unsafe"),
    ("![Decode reaches 52.3 tok/s](missing.png)", "orphan-number"),
    ('Decode reaches 52.3<span style="font-size:0">zz</span> tok/s.', "site-style-unsafe"),
    ("<table><tr><td>Decode (tok/s)</td></tr><tr><td>52</td></tr></table>", "orphan-number"),
    ('---\ntitle: "\\x35\\x32.3 tok/s on one card"\n---\n\nText.', "orphan-number"),  # YAML escapes in front matter
    (
        "---\ntitle: Running on one card\n---\n\n![The registry's logo](logo.png)\n\n"
        "| Model | Cards |\n|---|---|\n| a | 4 |",
        None,
    ),
]


def test_validation_reports_them_on_the_real_records(real: Path) -> None:
    """One validation of the real records with each page beside them: each attack refused, the honest page clean."""
    for i, (text, _) in enumerate(REAL_PAGES):
        (real / f"site/probe{i}.md").write_text(text + "\n", "utf-8")
    found = _found(real)
    for i, (text, code) in enumerate(REAL_PAGES):
        codes = {f.code for f in found if f.file == f"site/probe{i}.md"}
        assert codes == ({code} if code else set()), text


# -- hand-written pages, stylesheets and the site configuration --------------------------------------------------------


def test_inline_svg_text_joins_its_unit() -> None:
    assert _refused('Decode reaches <svg width="40" height="12"><text x="0" y="10">52.3</text></svg> tok/s.')


STYLESHEETS = [
    ('.md-content h1::after { content: "52.3 tok/s"; }', "orphan-number"),
    ('h1::after { content: "\\35 2.3 tok/s"; }', "orphan-number"),  # a CSS escape
    ("a::after { content: attr(title); }", "site-style-unsafe"),
    ("body { counter-reset: n 52; } h1::after { content: counter(n); }", "site-style-unsafe"),
    ('.evreg-note::before { content: "Note: "; } h1 { margin: 0 0 1.2em; }', None),  # the honest neighbour
]


def test_what_stylesheets_and_repo_name_show_is_read(real: Path) -> None:
    """Stylesheets under site/ (extra_css) and repo_name (every page's header) are shown on every page."""
    (real / "site/assets").mkdir(parents=True, exist_ok=True)
    for i, (css, _) in enumerate(STYLESHEETS):
        (real / f"site/assets/x{i}.css").write_text(css + "\n", "utf-8")
    cfg = (real / "mkdocs.yml").read_text("utf-8").replace("site_dir:", "repo_name: 52.3 tok/s on B70\nsite_dir:")
    (real / "mkdocs.yml").write_text(cfg, "utf-8")
    found = _found(real)
    for i, (css, code) in enumerate(STYLESHEETS):
        assert {f.code for f in found if f.file == f"site/assets/x{i}.css"} == ({code} if code else set()), css
    assert [f.pointer for f in found if f.file == "mkdocs.yml"] == ["/repo_name"]
    (real / "mkdocs.yml").write_text(cfg.replace("repo_name: 52.3 tok/s", "repo_name: evreg"), "utf-8")
    assert config_figures(real) == []


# -- the figure grammar: false positives --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Host: Ryzen 9 7950X.", "Threadripper 7980X, 256 cores", "RX 7900X vs RX 7900 XTX", "Ryzen 5 3600X"],
)
def test_a_part_number_ending_in_x_is_no_multiplier(text: str) -> None:
    assert [f.text for f in find_figures(text) if f.unit == "x"] == [], text


@pytest.mark.parametrize("text", ["8x faster", "100x faster", "was 3x.", "1000x faster than eager"])
def test_multipliers_that_compare_stay_figures(text: str) -> None:
    assert [f.unit for f in find_figures(text)] == ["x"], text


@pytest.mark.parametrize(
    "text",
    [
        "Llama 3.1 8B Instruct",
        "Qwen3-30B-A3B",
        "Mixtral 8x7B",
        "PCIe 5.0 x16",
        "CUDA 12.8",
        "Q4_K_M",
        "Gemma 3 27B",
        "MI300X",
        "Core i9-10980XE",
        "Ryzen 7 7800X3D",
        "ISL 1024 OSL 128",
        "concurrency 32",
        "2:4 sparsity",
    ],
)
def test_honest_hardware_and_model_names_are_no_figures(text: str) -> None:
    assert find_figures(text) == [], text


# -- evidence: open -----------------------------------------------------------------------------------------------


def test_an_unlocated_sample_held_only_in_another_unit(real: Path) -> None:
    text = "decode: nan tok/s; peak memory 40.1 GiB\n"
    assert any(f.code == "evidence-value-mismatch" for f in _run_with_evidence(real, "x.log", text, None))


def test_a_line_locator_whose_label_states_another_unit(real: Path) -> None:
    """A unit in a label's brackets right before the number is the line's unit (as after it)."""
    for line in ("Peak memory (GiB): 40.1", "Mean TTFT (ms): 40.1", "Peak memory [GiB] = 40.1"):
        found = _run_with_evidence(real, "x.log", line + "\n", {"decode_tok_s[0]": "line:1"})
        assert any(f.code == "evidence-value-mismatch" for f in found), line


def test_a_csv_column_twice_up_to_spacing(real: Path) -> None:
    """A header differing only in spacing or case is the same column to a reader: no locator can say which."""
    for text in ("run,decode ,decode\n1,NaN,40.1\n", "run,Decode,decode\n1,NaN,40.1\n"):
        found = _run_with_evidence(real, "x.csv", text, {"decode_tok_s[0]": "csv:1/decode"})
        assert any(f.code == "evidence-value-mismatch" and "twice" in f.message for f in found), text


def test_a_line_locator_in_the_metrics_unit_passes(real: Path) -> None:
    line = "Output token throughput (tok/s): 40.1\n"
    assert _run_with_evidence(real, "x.log", line, {"decode_tok_s[0]": "line:1"}) == []


# -- history ------------------------------------------------------------------------------------------------------


def _raise_with(root: Path, fn: Callable[[Any], Any]) -> set[tuple[str, str]]:
    """(code, file) of what --base reports when a raised grade is backed by a perturbed copy of a published run."""
    _edit(root, PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))

    def perturbed(d: Any) -> None:
        d["metrics"]["decode_tok_s"][0] = 93.6
        fn(d)

    _copy_run(root, STRICT, f"{PACKET_DIR}/measurements", "x-copy", perturbed)
    return {(f.code, f.file) for f in _found(root, base=True)}


COPY = f"{PACKET_DIR}/measurements/x-copy.json"


def test_a_copy_with_a_locator_added_is_refused(real: Path) -> None:
    """history._source takes the added locator as a new source, but the locator reads nothing in the external
    summary: refused by the evidence values instead."""
    found = _raise_with(real, lambda d: d.update(evidence_locators={"decode_tok_s[0]": "/decode"}))
    assert ("evidence-value-mismatch", COPY) in found


def test_a_copy_with_the_path_respelt_is_refused(real: Path) -> None:
    """history._source takes 'data/./' as a new source, but the path itself is refused."""
    found = _raise_with(real, lambda d: d.update(evidence=d["evidence"].replace("data/", "data/./")))
    assert ("path-unsafe", COPY) in found


# -- runtime identity ---------------------------------------------------------------------------------------------


def test_an_engine_only_claim_and_a_fork_word() -> None:
    assert not runtime_matches("vLLM XPU", {"runtime": "vLLM XPU fork"})
    assert not runtime_matches("vLLM", {"runtime": "vLLM patched 0.11.0"})
    assert runtime_matches("vLLM XPU", {"runtime": "vLLM XPU nightly a3561ef8"})  # a channel, not a change


@pytest.mark.parametrize(
    "runtime", ["vLLM 0.11.0+fork", "vLLM 0.11.0 (patched)", "vLLM 0.11.0-fork", "vLLM 0.11.0 ＋ custom", "vLLM 0.11"]
)
def test_respelt_additions_are_another_runtime(runtime: str) -> None:
    assert not runtime_matches("vLLM 0.11.0", {"runtime": runtime}), runtime
