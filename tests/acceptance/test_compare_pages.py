"""Comparison pages and coverage grids as a built site shows them: ranks within one workload with ties,
unpromotable rows unranked, wide comparisons split between the page and its data file, contracts as folded grids."""

from __future__ import annotations

import gzip
import html
import json
import re
from pathlib import Path

import pytest

from evreg.site import compare
from helpers import REPO, WIDE_RUNS, WORKLOAD, with_data_rows

ROW = re.compile(r'<tr class="evreg-row evreg-(\w+)" data-measurement="([^"]+)"[^>]*>(.*?)</tr>', re.S)


def tiers(page: str) -> dict[str, list[tuple[str, str, str]]]:
    """Each workload's rows as (ranked or unranked, measurement, first cell's text), in page order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for body in re.findall(r'<tbody class="evreg-tier" data-tier="([^"]*)">(.*?)</tbody>', page, re.S):
        out[html.unescape(body[0])] = [
            (state, mid, " ".join(re.sub(r"<[^>]+>", " ", cells.split("</td>")[0]).split()))
            for state, mid, cells in ROW.findall(body[1])
        ]
    return out


@pytest.mark.slow
def test_comparison_ranks_within_one_workload_with_ties_and_leaves_unpromotable_rows_unranked(
    compare_site: Path,
) -> None:
    page = (compare_site / "compare/decode-tok-s/index.html").read_text()
    found = tiers(page)
    assert found[WORKLOAD] == [
        ("ranked", "run-2", "1 tied"),  # tied rows keep their order by median
        ("ranked", "run-1", "1 tied"),
        ("ranked", "run-3", "3"),
        ("unranked", "run-q", "not ranked"),
        ("unranked", "run-s", "not ranked"),
    ]
    assert found[f"{WORKLOAD} · active_context_tokens = 100000"] == [("ranked", "run-long", "1")]
    # the series' two points are two workloads (context 0 and 8192), never ranked against each other
    assert found["context sweep · active_context_tokens = 0"] == [("ranked", "sweep-1", "1")]
    assert found["context sweep · active_context_tokens = 8192"] == [("ranked", "sweep-1", "1")]
    assert "not ranked: its state is &#x27;quarantined&#x27;" in page
    # every value is a citation of a stored sample: the spread cites the lowest and highest repeats
    row = ROW.search(page[page.index('data-measurement="run-2"') - 40 :])
    assert row is not None
    cites = re.findall(r'class="evreg-cite" href="[^"#]*#([^"]+)"', row.group(3))
    assert cites == ["m-run-2--decode-tok-s-0", "m-run-2--decode-tok-s-2"] and "3 samples" in row.group(3)
    assert "median" in row.group(3)
    one = page.split('data-measurement="run-1"')[1].split("</tr>")[0]
    assert "2 samples (too few to know the spread)" in one
    assert "single sample" in page.split('data-measurement="run-3"')[1].split("</tr>")[0]
    # the script is the product's own file, loaded after the page content (content never holds a script element)
    script = '<script src="../../assets/evreg-compare.js" defer></script>'
    content = page[page.index('<article class="md-content__inner') : page.index("</article>")]
    assert script in page and script not in content and (compare_site / "assets/evreg-compare.js").is_file()


@pytest.mark.slow
def test_a_wide_comparison_keeps_its_first_rows_in_the_page_and_the_rest_in_its_data_file(
    wide_compare_site: Path,
) -> None:
    folder = wide_compare_site / "compare/decode-tok-s"
    page = (folder / "index.html").read_text("utf-8")
    inline = tiers(page)
    assert len(inline[WORKLOAD]) == compare.INLINE_ROWS  # the best results of the workload, in rank order
    assert [mid for _, mid, _ in inline[WORKLOAD][:3]] == ["run-2", "run-1", "run-3"]
    assert "15 more in the data file" in page and 'data-rows="rows.json.gz"' in page
    full = tiers(with_data_rows(page, folder))
    rows = full[WORKLOAD]
    assert len(rows) == 5 + WIDE_RUNS and len({mid for _, mid, _ in rows}) == len(rows)  # every result once
    ranks = [int(rank.split()[0]) for state, _, rank in rows if state == "ranked"]
    assert ranks == [1, 1, 3, *range(4, 4 + WIDE_RUNS)] and rows[-1][0] == "unranked"
    assert {k: v for k, v in full.items() if k != WORKLOAD} == {k: v for k, v in inline.items() if k != WORKLOAD}
    # a row from the data file is the row the page would have held: its value cites its sample on its packet's page
    row = with_data_rows(page, folder).split('data-measurement="run-w00"')[1].split("</tr>")[0]
    assert '<a class="evreg-cite" href="../../packets/pkt/#m-run-w00--decode-tok-s-0"' in row
    assert '#m-run-w00--decode-tok-s-0">10.00 tok/s</a>' in row and "evreg-state-lab-measured" in row
    data = json.loads(gzip.decompress((folder / "rows.json.gz").read_bytes()))
    assert len(data["cells"]) < 15 * 7  # shared cells (model, hardware, runtime, ...) are stored once


@pytest.mark.slow
def test_the_comparisons_index_lists_each_headline_metric_the_records_store(compare_site: Path) -> None:
    index = (compare_site / "compare/index.html").read_text()
    # the fixture stores only decode_tok_s: one page; ttft and prefill get pages only where the records hold them
    assert re.findall(r'href="[./]*compare/([a-z-]+)/"', index) == ["decode-tok-s"]
    assert not (compare_site / "compare/ttft-ms").exists()


@pytest.mark.slow
def test_the_real_sites_comparisons_never_rank_across_workloads_or_unpromotable_rows(repo_site: Path) -> None:
    from evreg.core.vocab import states

    promotable = {s for s, spec in states().items() if spec["promotable"]}
    pages = sorted((repo_site / "compare").glob("*/index.html"))
    assert {p.parent.name for p in pages} >= {"decode-tok-s", "ttft-ms", "prefill-tok-s"}
    tied = 0
    for path in pages:
        text = with_data_rows(path.read_text(), path.parent)
        keys = re.findall(r'<tbody class="evreg-tier" data-tier="([^"]*)">', text)
        assert len(keys) == len(set(keys)), path  # one body per workload
        for body in re.findall(r'<tbody class="evreg-tier".*?</tbody>', text, re.S):
            ranked = []
            for row in re.finditer(
                r'<tr class="evreg-row evreg-(\w+)"[^>]*data-low="([^"]+)" data-high="([^"]+)">(.*?)</tr>', body, re.S
            ):
                state = re.search(r'evreg-state-([\w-]+)"', row.group(4))
                assert state is not None
                if row.group(1) == "ranked":
                    assert state.group(1) in promotable, (path, row.group(4)[:200])
                    rank = int(re.search(r'data-sort="(\d+)"', row.group(4)).group(1))  # type: ignore[union-attr]
                    ranked.append((rank, float(row.group(2)), float(row.group(3)), "evreg-tied" in row.group(4)))
            tied += sum(r[3] for r in ranked)
            for a in ranked:  # a better rank lies wholly above (or, for times, below) a worse one; equal ranks overlap
                for b in ranked:
                    if a[0] < b[0]:
                        assert (a[1] > b[2]) if "ttft" not in path.parent.name else (a[2] < b[1]), (path, a, b)
    assert tied > 0  # the real records have overlapping repeats
    # the comparisons index is searchable; the tables' rows are not (they would crowd out the records' own pages)
    locations = {
        d["location"].split("#")[0] for d in json.loads((repo_site / "search/search_index.json").read_text())["docs"]
    }
    assert "compare/" in locations and not any(loc.startswith("compare/") and loc != "compare/" for loc in locations)


@pytest.mark.slow
def test_a_large_contract_is_a_grid_folded_by_row_group_with_every_cell_once(repo_site: Path) -> None:
    from evreg.claims import coverage

    name = "qwen36-tp1-llamacpp-sycl-target-matrix"
    contract = json.loads((REPO / f"packets/qwen-27b/coverage/{name}.json").read_text())
    expected = [coverage.merge(c.matching)[0].get("state", "missing") for c in coverage.expand(contract)]
    page = (repo_site / f"coverage/qwen-27b/{name}/index.html").read_text()
    cells = re.findall(r'<td class="evreg-cell evreg-cell-([\w-]+)"><b>\1</b>', page)
    assert sorted(cells) == sorted(expected) and len(cells) > 100  # each cell of the axes' product, once
    folds = re.findall(r'<details class="evreg-grid-group"><summary>(.*?)</summary>', page, re.S)
    artifacts = next(a for a in contract["axes"] if a["key"] == "artifact_id")["values"]
    assert len(folds) == len(artifacts)
    legend = page[page.index('<ul class="evreg-grid-legend">') :].split("</ul>")[0]
    for state in set(expected):  # the legend counts each state present
        assert re.search(rf"evreg-state-{state}\">{state}</span> {expected.count(state)} ", legend)
    assert "For every cell:" in page  # its single-valued axes, stated once


@pytest.mark.slow
def test_a_coverage_view_is_a_rows_by_columns_grid(compare_site: Path) -> None:
    page = (compare_site / "families/fam/index.html").read_text()
    grid = page[page.index('<table class="evreg-matrix evreg-grid">') :].split("</table>")[0]
    assert re.findall(r"<th scope=\"col\">(.*?)</th>", grid) == ["TP1", "TP2"]
    assert re.findall(r"<th scope=\"row\">(.*?)</th>", grid) == ["MTP0"]
    assert re.findall(r'class="evreg-cell evreg-cell-([\w-]+)"', grid) == ["lab-measured", "missing"]
