"""Every scan of text a pull request controls is linear in its length. Each attack below is a short seed grown to
20-200 kB that a quadratic (or exponential) scan would stall validation or the build on: it must finish (a hang
guard of 30 s, not a timing: each takes milliseconds), and where a scan is written for speed, it must find what the
plain pattern finds (hypothesis)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.claims import figures, htmlscan, markdown, scope
from evreg.core import jsonio
from evreg_rules import site_pages
from helpers import within

N = 100_000


# -- record text -------------------------------------------------------------------------------


def test_a_unit_word_before_a_long_run_of_blanks() -> None:
    """``tok`` then blanks around an optional dot (``tok · s⁻1``) is read one way, not every way (quadratic in the
    blanks)."""
    assert within(figures.find_figures, "5 tok" + " " * N + "x") == []
    assert within(figures.header_unit, "tok" + "\n" * N + "x") is None
    assert [f.text for f in figures.find_figures("5 tok · s-1")] == ["5 tok · s-1"]


def test_a_coverage_cell_of_many_figures() -> None:
    """A bare number in a cell is not checked against every figure found before it (quadratic in the figures)."""
    found = within(figures.find_figures, "–1.5 tok/s; 2.5" * 20_000, True)
    assert len(found) == 40_000


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["1.5 tok/s", "2.5", " ", "; ", "1,234", "x", "1.5x", "30-40 ms", "0.9.1"]), max_size=30)
)
def test_a_cell_reads_bare_numbers_outside_figures_as_before(pieces: list[str]) -> None:
    text = "".join(pieces)
    found = figures.find_figures(text, cell=True)
    plain = figures.find_figures(text)
    bare = [f for f in found if f not in plain]
    assert all(not any(p.start <= f.start < p.end for p in plain) for f in bare)
    assert [f.start for f in found] == sorted(f.start for f in found)


def test_hardware_names_with_long_runs_of_blanks() -> None:
    """The parts of a rig are split without a pattern entered at every blank (quadratic in the blanks)."""
    assert within(scope.same_hardware, "a" + " " * N + "b", "x") is False
    assert scope.same_hardware("B70 + RTX 4090", "RTX 4090 and B70")
    assert scope._PARTS.split("a  +  b & c and d  x") == ["a", "b", "c", "d  x"]
    assert scope._PARTS.split("RTX 4090 + + B70") == ["RTX 4090", "", "B70"]  # a separator after another's blanks
    assert scope.same_hardware("RTX 4090 and and", "RTX 4090")


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "  ", "+", "&", "and", "AND", "\n", "x1", " + ", "band"]), max_size=12))
def test_hardware_parts_split_as_the_plain_pattern_splits(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert scope._PARTS.split(text) == re.split(r"\s*(?:\+|&|\band\b)\s*", text, flags=re.I)


@pytest.mark.slow
def test_a_file_with_a_long_key_over_many_values() -> None:
    """Locating values does not hold the key once per value (400 MB for a 60 kB file), and a million problems
    make the first 20 findings of a code and one that counts the rest, not a million findings."""
    n = 200_000
    raw = ('{"' + "k" * n + '":[' + "NaN," * n + "1]}").encode()
    value, findings = within(jsonio.parse, raw, "packets/f/x.json")
    assert value is None and len(findings) == 21
    assert findings[0].pointer == "/" + "k" * n + "/0" and (findings[0].line, findings[0].column) == (1, n + 6)
    assert findings[-1].message == f"... and {n - 20} more json-non-finite findings in this file"


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=20,
    ),
    st.sampled_from([None, 0, 1, 2]),
)
def test_every_value_is_located_at_its_text(value: Any, indent: int | None) -> None:
    """The locator's tree of offsets: the value at each pointer is read back from its place in the text."""
    text = json.dumps(value, indent=indent)
    locator = jsonio.Locator(text)
    lines = text.split("\n")
    for path, node in jsonio._walk(value):
        pointer = jsonio._pointer(path)
        line, column = locator.position(pointer)
        assert line is not None and column is not None
        start = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
        assert json.JSONDecoder().raw_decode(text, start)[0] == node


# -- hand-written pages and stylesheets --------------------------------------------------------


@pytest.mark.parametrize(
    "sheet", ['a"' + "\\" * N, "{" * N, "(" * N, "url(" * (N // 4), '"52 ms" ' * (N // 8), "@import " * (N // 8)]
)
def test_a_stylesheet_is_read_in_linear_time(sheet: str) -> None:
    """The CSS parser reads any shape once: a string of backslashes, deep blocks, many strings or rules."""
    within(lambda: list(htmlscan.stylesheet(sheet)))


def test_a_stylesheet_string_is_read_as_css_reads_it() -> None:
    found = [piece for *_, piece in htmlscan.stylesheet(r""".a{content: "52 \"x\" ms"} .b{content: "\35 2" " ms"}""")]
    assert found == ['52 "x" ms', "52 ms"]  # every string that shows a number


def test_script_tags_with_long_runs_of_blanks() -> None:
    assert within(markdown.SCRIPT.search, "<" + " " * N + "x") is None
    assert markdown.SCRIPT.search("<  /  script>") and markdown.SCRIPT.search("< script")


ATTACKS = {
    "open pre": "<pre>",
    "open code": "<code>",
    "open citation": '<a class="evreg-cite">',
    "open citation span": '<span class="evreg-orphan">',
    "open sample cell": '<td class="evreg-sample">',
    "open comment": "<!--",
    "open inline tag": "<b ",
    "open tag": "<div ",
    "open table": "<table>",
    "open row": "<table><tr>",
    "open cell": "<td>",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_rendered_html_with_elements_that_never_close(name: str) -> None:
    """An element is not read from each open to its close (``.*?``), to the end of the page from every open with
    no close: that is quadratic in the opens."""
    html = "<table><tr>" + ATTACKS[name] * 50_000 + "52 ms</tr></table>"
    within(markdown.shown, html)
    within(htmlscan.page_figures, html)


def plain_shown(content: str) -> str:
    """``markdown.shown`` with the plain patterns (each read from every open to the end of the text)."""
    text = markdown._EXEMPT.sub(" ", markdown._SVG_CITE.sub(" ", content))
    text = markdown._one_space(markdown._INLINE_TAG.sub("", text))
    text = markdown.html.unescape(markdown._TAG.sub("\n", text))
    return markdown._BLANKS.sub(" ", text) if "  " in text or markdown._ODD_BLANK.search(text) else text


PIECES = [
    *["<pre>", "</pre>", "<code>", "</code>", "<CODE>", "<a ", 'class="evreg-cite"', '<a class="evreg-cite" h=x>'],
    *["</a>", '<span class="evreg-orphan">', "</span>", '<mark class="evreg-unresolved">', "</mark>", "<b"],
    *['<td class="evreg-sample">', "</td>", "<!--", "-->", "--", ">", "<", "x", " ", "52 ms", "1.5x", "<b>", "</B>"],
    *["<table>", "</table >", "<TABLE>", "<tr>", "</tr>", "<th>", "</th>", "<td>", "<TD colspan=2>", "</TD>"],
    *["tok/s", "\n", "&amp;", "<br>", "<p>", "</p>", "<div ", "</div>"],
]


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_rendered_html_reads_as_the_plain_patterns_read_it(html: str) -> None:
    assert markdown.shown(html) == plain_shown(html)


@pytest.mark.slow
def test_a_page_of_many_figures_not_typed_as_shown() -> None:
    """Figures shown but typed nowhere (``&#52; ms`` shows ``4 ms``) are not each located by a search of every
    line: 20 findings of a code are located and one more counts the rest."""
    page = "".join(f"&#{48 + n % 10}; ms\n\n" for n in range(20_000))
    found = within(lambda: list(site_pages._rendered_page("site/x.md", page, ["tables"])))
    assert len(found) == 21 and found[-1].message == "... and 19980 more orphan-number findings on this page"


@pytest.mark.parametrize(
    "html",
    [
        "<div>" + "<sup>x" * 40_000 + "</div>",  # superscripts that never close, read with and without them
        "<table><tr><td>" * 10_000 + "x" + "</td></tr></table>" * 10_000,  # tables in cells: each node read once
        "<table>" + "<tr><td>TTFT<sup>1</sup></td><td>x</td></tr>" * 20_000 + "</table>",
        "<dl>" + "<dd>x" * 40_000 + "</dl>",  # definitions without a term
        "<dl>" + "<dt>TTFT" * 20_000 + "<dd>x" * 20_000 + "</dl>",  # many terms, then many definitions
        "<table><tr>" + "<th>" + "TTFT " * 2_000 + "</th>" * 2 + "</tr>" + "<tr><td>a<td>1" * 2_000 + "</table>",
        "<table>" + "<tr><th>" + "TTFT " * 10 + "</th></tr>" * 5_000 + "<tr><td>1</td></tr>" + "</table>",  # headers
        "<table>" + "<tr><td colspan=100 rowspan=100>1</td>" * 2_000 + "</table>",  # spans clamped
        # titles over what is below them: each node read for the nearest title only, however they nest
        "<div><h2>a</h2>" * 4_000 + "x",
        "<details><summary>a</summary>" * 4_000 + "x " * 10,
        "<h2>a</h2><blockquote>word " * 4_000,
        '<div class="admonition"><p class="admonition-title">t</p>' * 4_000 + "52.3",
        "<h2>TTFT</h2>" + "<p></p><!-- x -->" * 20_000 + "<p>274</p>",
    ],
)
def test_a_page_is_read_every_way_in_linear_time(html: str) -> None:
    within(htmlscan.page_figures, html)
