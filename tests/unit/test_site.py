"""Parts of the site layer on their own: legend colours, the trust line beside a number under a stated line,
grid reasons, value cells and contract counts of the data files, white space, and a page's data file."""

from __future__ import annotations

import gzip
import html
import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evreg.site import compare, contracts
from evreg.site.cite import Pages
from evreg.site.html import Page
from evreg.site.trace import Reads
from helpers import REPO, with_data_rows

# -- charts ------------------------------------------------------------------------------------------------------------


def test_legend_marks_take_each_series_colour_from_the_stylesheet_in_palette_order() -> None:
    """A legend entry's mark is drawn by evreg.css from its colour class: the classes are the chart palette's colours,
    in order, so an entry's mark has its series' colour."""
    from evreg.site import charts

    css = (REPO / "registry/evreg/site/static/evreg.css").read_text("utf-8")
    assert re.findall(r"\.evreg-c(\d+) \{ --c: (#[0-9a-f]{6}); \}", css) == [
        (str(i), colour) for i, colour in enumerate(charts.PALETTE)
    ]
    legend = charts.svg(
        [charts.Series(f"s{i}", "lab-measured", [charts.Dot(1.0, 1.0, "", "")]) for i in range(12)], "x", "y"
    )
    assert re.findall(r'class="evreg-swatch evreg-c(\d+) evreg-joined"', legend) == [str(i % 10) for i in range(12)]


# -- trust beside every number -----------------------------------------------------------------------------------------


def bare_pages(parts: dict[str, tuple[str, str, str, str]]) -> Pages:
    """Pages without a catalog, each measurement's trust line given (as its memo holds it)."""
    p = Pages.__new__(Pages)
    p.reads, p._titles, p._trust_spans = Reads(), {}, {}
    p._parts = {mid: (line, frozenset()) for mid, line in parts.items()}
    return p


def test_a_tooltip_under_a_stated_line_names_a_part_once() -> None:
    """Under a stated line a tooltip names hardware and runtime ("hardware H100"), but not a second time when the part
    already says what it is: "hardware not recorded", not "hardware hardware not recorded"."""
    parts = {
        "a": ("lab-measured", "ungraded (no packet)", "H100", "vLLM 0.9"),
        "b": ("lab-measured", "ungraded (packet pkt)", "hardware not recorded", "runtime not recorded"),
    }
    p = bare_pages(parts)
    p.said = parts["a"]
    assert p.trust_tip("b") == "ungraded (packet pkt) · hardware not recorded · runtime not recorded"
    p.said = parts["b"]
    assert p.trust_tip("a") == "ungraded (no packet) · hardware H100 · runtime vLLM 0.9"


def test_a_derived_figure_under_a_stated_line_says_what_of_its_measurements_lines_differs() -> None:
    """A grid states "unless its tooltip says otherwise, it is <line>" of every number in it; a derived figure there
    (``{{ change:A from B }}``) computed from measurements of another line says, beyond "Derived: A change from B",
    what of each measurement's line differs, or the page would say it was of the stated line."""
    from evreg.claims import citations

    parts = {
        "a": ("lab-screened", "ungraded (no packet)", "B200", "sglang 1"),
        "b": ("lab-measured", "ungraded (packet pkt)", "H100", "vLLM 0.9"),
    }
    p = bare_pages(parts)
    p.measurements = {mid: {"state": "lab-measured", "metrics": {"decode_tok_s": [30.0]}} for mid in ("a", "b")}
    p.home, p.here, p.base = {"a": "packets/pkt/", "b": "packets/pkt/"}, "families/fam/", "../../"
    (derived,) = citations.parse("{{ change:m:a.decode_tok_s[0] from m:b.decode_tok_s[0] }}")
    p.said = None
    assert "lab-screened" not in p.form(derived)  # beside prose: the figure and its two sources
    p.said = parts["b"]
    shown = html.unescape(p.form(derived))
    assert "a: lab-screened · ungraded (no packet) · hardware B200 · runtime sglang 1" in shown, shown
    assert "; b:" not in shown  # b is of the stated line


def test_a_number_in_a_grid_reason_carries_its_full_trust_line() -> None:
    """A grid's reasons are written in a list below it, after the line stated above the grid ("every number in this
    grid ... unless its tooltip says otherwise"): a number there gets its whole trust line, not only what differs."""
    line = ("lab-measured", "ungraded (packet pkt)", "H100", "vLLM 0.9")
    p = bare_pages({"a": line})
    p.measurements = {"a": {"state": "lab-measured", "metrics": {"decode_tok_s": [30.0]}}}
    p.home, p.here, p.base = {"a": "packets/pkt/"}, "families/fam/", "../../"
    p.said = line
    reasons = contracts.Reasons("why")
    cell = {"state": "lab-measured", "label": "{{ m:a.decode_tok_s[0] }}", "reason": "see {{ m:a.decode_tok_s[0] }}"}
    shown = contracts.cell_html(p, cell, reasons)
    assert "title=" not in shown  # in the grid: of the stated line
    assert 'title="a · lab-measured · ungraded (packet pkt) · H100 · vLLM 0.9"' in reasons.html(), reasons.html()
    assert p.said == line


# -- comparison rows and coverage contracts ----------------------------------------------------------------------------


@given(st.text(alphabet=st.characters(blacklist_characters="\x01\x02\x03\x04", blacklist_categories=("Cs",))))
def test_a_value_cell_is_its_template_filled_with_its_numbers(value: str) -> None:
    """The data file stores a value cell as a shared template and the row's numbers; filling gives the cell back."""
    template, numbers = compare._NUMBER.sub(compare.NUMBER, value), compare._NUMBER.findall(value)
    assert compare.filled(template, numbers) == value


_CELL_TEXT = st.sampled_from(["H100", "52.3 tok", "/s", "vLLM 0.6", "", "tp 2", "<b>12</b>", "a", "ms"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(_CELL_TEXT, min_size=2, max_size=4), _CELL_TEXT), min_size=1, max_size=6))
def test_the_data_files_rows_are_scanned_as_the_script_renders_them(rows: list[tuple[list[str], str]]) -> None:
    """What the build scans of a comparison's data file holds each row as ``evreg-compare.js`` renders it: its cells
    side by side, so a figure written across two cells (``52.3 tok`` | ``/s``) is found there as on the page."""
    from evreg.claims import markdown

    made = compare.Rows("/base/")
    made.tiers.append([])
    rendered = []
    for n, (texts, value) in enumerate(rows):
        mid, home = f"run-{n}", f"p/pkt-{n}/"
        own = ['<td class="r">—</td>', f'<td><a href="/base/{home}#m-{mid}">{value} 30.{n}</a></td>']
        fixed = [f"<td>{t}</td>" for t in texts] + ['<td class="s">measured</td>']
        made.add(mid, home, "unranked", "1.0", "2.0", own, fixed)
        rendered.append("".join([*own, *fixed]))
    scanned = made.scan_rows()
    for row in rendered:
        assert f"<tr>{row}</tr>" in scanned
    # the same figures as the page the script makes from the data file (each text it shows once)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / compare.ROWS_FILE).write_bytes(gzip.compress(made.json().encode()))
        page = with_data_rows('<table><tbody class="evreg-tier" data-tier="w"></tbody></table>', Path(tmp))
    assert set(markdown.rows_figures(scanned)) == set(markdown.html_figures(page))
    assert set(markdown.rows_figures(scanned)) == set(markdown.html_figures("".join(scanned)))


def test_a_figure_written_across_two_cells_of_a_data_files_row_is_found() -> None:
    """The data file holds each cell once: the second row's ``/s`` is the first row's cell, yet it is scanned beside
    the ``52.3 tok`` before it in the second row."""
    from evreg.claims import markdown

    made = compare.Rows("")
    made.tiers.append([])
    own = ["<td>—</td>", "<td>a</td>"]
    made.add("run-1", "", "unranked", "1.0", "2.0", own, ["<td>/s</td>", "<td>x</td>"])
    made.add("run-2", "", "unranked", "1.0", "2.0", own, ["<td>52.3 tok</td>", "<td>/s</td>"])  # "/s" held once
    assert [f.split() for f in markdown.rows_figures(made.scan_rows())] == [["52.3", "tok", "/s"]]


_VALUES = st.sampled_from([0, 1, 2, "a", "b", True, 1.0])


@st.composite
def _contracts(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(["tp", "mtp", "ctx"]), min_size=1, max_size=3))  # a key may repeat
    axes = [{"key": k, "values": draw(st.lists(_VALUES, min_size=1, max_size=4))} for k in keys]
    rules = []
    for n in range(draw(st.integers(0, 5))):
        match = {k: draw(st.one_of(st.just("*"), _VALUES)) for k in keys if draw(st.booleans())}
        rule: dict[str, Any] = {"id": f"r{n}", "match": match}
        if draw(st.booleans()):
            rule["state"] = draw(st.sampled_from(["measured", "blocked", "missing", "planned"]))
        if draw(st.booleans()):
            rule["label"] = "x"
        rules.append(rule)
    return {"axes": axes, "rules": rules}


def _counted_by_cells(contract: dict[str, Any]) -> Counter[Any]:
    from evreg.claims import coverage

    return Counter(coverage.merge(c.matching)[0].get("state", "missing") for c in coverage.expand(contract))


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(_contracts())
def test_a_contracts_cells_are_counted_by_state_as_its_cells_say(contract: dict[str, Any]) -> None:
    """The family page and the contracts' index count a contract's cells by state without making them: the same
    counts as its cells, merged, give."""
    from evreg.claims import coverage

    assert coverage.state_counts(contract) == _counted_by_cells(contract)


def test_every_real_contract_is_counted_by_state_as_its_cells_say() -> None:
    from evreg.claims import coverage

    contracts = [json.loads(p.read_text()) for p in sorted(REPO.glob("packets/*/coverage/*.json"))]
    contracts = [c for c in contracts if c.get("kind") == "coverage-contract"]
    assert len(contracts) > 3
    for contract in contracts:
        assert coverage.state_counts(contract) == _counted_by_cells(contract), contract.get("id")


# -- the build's text and data files -----------------------------------------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [" ", "\t", "\r", "\n", "\f", "\v", "\u00a0", "\u2003", "\u2028", "\x1c", "\x85", "\u3000", "a", "<", "é"]
        )
    )
)
def test_white_space_is_collapsed_to_one_line_break_as_one_pattern_would(text: str) -> None:
    """The build makes every run of white space holding a line break one line break line by line (fast): the same
    text as the one pattern that says it, for every kind of white space."""
    from evreg.site.build import one_break

    assert one_break(text) == re.sub(r"[ \t\r]*\n\s*", "\n", text)


def test_a_data_file_of_the_home_page_is_written_beside_it(tmp_path: Path) -> None:
    """A generated page's data file is written in the page's folder of the site, the home page's too (whose URL is
    empty), after the HTML its script makes of it was checked."""
    from evreg.site.build import SitePlugin
    from evreg.site.reuse import Checks

    plugin = SitePlugin.__new__(SitePlugin)  # the plugin's own state for pages, without a catalog
    plugin.generated, plugin.findings, plugin.beside, plugin.checks = {}, [], {}, Checks("")
    for path in ("index.md", "compare/decode.md"):
        page = Page("A page")
        page.data["rows.json.gz"] = ('{"rows": []}', "<td>no figure</td>")
        plugin._take(path, page)
    plugin._write_data(tmp_path / "site")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.gz")) == [
        "site/compare/decode/rows.json.gz",
        "site/rows.json.gz",
    ]
    assert plugin.findings == []
