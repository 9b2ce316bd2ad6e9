"""A metric's results, as the comparisons and the model pages rank them: every finite sample of a run, every series
point with a numeric ``x`` and value, in the measurements' order, worked out in one pass for every headline metric.
Tried on the real records' catalog with measurements' metrics and points drawn at random (hypothesis): the rows are
what the definition below says, for each metric; and a caller placing its rows leaves the next caller's unplaced.
The pages sharing them are made in one part, so one process works them out once."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evreg.app.catalog import ensure_catalog
from evreg.claims import ranking
from evreg.core.vocab import promotable
from evreg.site import compare
from evreg.site.cite import Pages
from evreg.site.pages import site_jobs, site_parts


@pytest.fixture(scope="module")
def pages(pristine: Path) -> Pages:
    return Pages(ensure_catalog(pristine).path)


def expected(p: Pages, metric: str) -> list[tuple[Any, ...]]:
    """The definition of a metric's rows, one measurement at a time."""
    out = []
    for mid, m in p.measurements.items():
        why = promotable(m) or (f"it is superseded by {p.superseded_by[mid]!r}" if mid in p.superseded_by else None)
        samples = (m.get("metrics") or {}).get(metric)
        if isinstance(samples, list):
            kept = [(i, float(v)) for i, v in enumerate(samples) if _finite(v)]
            if kept:
                tier = ranking.workload_tier(m)[0]
                out.append((mid, [v for _, v in kept], [i for i, _ in kept], None, tier, why))
        for pt in m.get("points") or []:
            if isinstance(pt, dict) and _finite(pt.get("x")) and _finite(pt.get(metric)):
                tier = ranking.workload_tier(m, float(pt["x"]))[0]
                out.append((mid, [float(pt[metric])], [None], pt["x"], tier, why))
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def shown(p: Pages, metric: str) -> list[tuple[Any, ...]]:
    return [(r.mid, r.values, r.indices, r.x, r.tier, r.why_not) for r in compare.rows_of(p, metric)]


value = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_metrics_rows_are_its_finite_samples_and_points_in_the_measurements_order(
    pages: Pages, data: st.DataObject
) -> None:
    p = pages
    metrics = compare.headline_metrics(p)
    assert len(metrics) >= 2, "the real records state two headline metrics or more"
    store = p.measurements._data  # type: ignore[attr-defined]  # the test changes the catalog under the pages
    mids = sorted(store)
    picked = data.draw(st.lists(st.sampled_from(mids), min_size=1, max_size=4, unique=True))
    saved = {mid: store[mid] for mid in picked}
    try:
        for mid in picked:
            m = dict(store[mid])
            m["metrics"] = data.draw(st.dictionaries(st.sampled_from(metrics), st.lists(value, max_size=4), max_size=3))
            names = st.sampled_from([*metrics, "x"])
            m["points"] = data.draw(st.lists(st.dictionaries(names, value, max_size=4), max_size=4))
            store[mid] = m
        p._memos.pop("rows", None)  # the rows are worked out once per build: this is another catalog
        for metric in metrics:
            assert shown(p, metric) == expected(p, metric), metric
    finally:
        store.update(saved)
        p._memos.pop("rows", None)


def test_placing_a_callers_rows_leaves_the_next_callers_unplaced(pages: Pages) -> None:
    metric = compare.headline_metrics(pages)[0]
    tiers = compare.tiers_of(compare.rows_of(pages, metric), metric)
    assert any(r.place is not None for t in tiers for r in t.rows), "some real result is ranked"
    assert all(r.place is None for r in compare.rows_of(pages, metric))


def test_the_pages_sharing_every_metrics_results_by_model_are_made_in_one_part(pages: Pages) -> None:
    parts = site_parts(pages)
    paths = [job[0] for part in parts for job in part]
    assert paths == [job[0] for job in site_jobs(pages)] and len(paths) == len(set(paths))
    shared = {"models/index.md", "replications.md", "compare/index.md"}
    assert shared <= {job[0] for job in parts[0]}
    assert all(job[0].startswith("models/") for job in parts[0] if job[0] not in shared)
    assert sum(job[0].startswith("models/") for job in parts[0]) >= 2, "the real records name a model"
    assert not any(job[0].startswith("models/") or job[0] in shared for part in parts[1:] for job in part)


SEAM_TAILS = ["52.3", "52.3 tok", "decode", "TTFT", "1.5", "D25", "two thousand"]
SEAM_HEADS = ["/s", "tok/s", "52.3", "274 ms", "x", ".678", "tok/s apart"]


@pytest.mark.parametrize("metric", ["decode_tok_s", "ttft_ms"])
def test_a_comparisons_pieces_are_scanned_as_the_page_would_be(pages: Pages, metric: str) -> None:
    """Each workload of a comparison is a piece, scanned alone: it begins with its heading's fixed words, so no text
    a piece ends with joins the next one's into a figure the page's scan would find and the pieces' would not."""
    from evreg.claims.markdown import html_figures
    from evreg.site.html import Page

    page = Page("compare")
    pages.base, pages.here = "../../", compare.page_path(metric).removesuffix(".md") + "/"
    compare.metric_page(pages, page, metric)
    pieces = [page.parts[n] for n in sorted(page._pieces)]
    assert pieces and all(
        piece.startswith('<tbody class="evreg-tier"') and 'scope="rowgroup">Workload: ' in piece.split("</th>")[0]
        for piece in pieces
    )
    head = pieces[0].split("Workload: ")[0] + "Workload: "
    for tail in SEAM_TAILS:
        for start in SEAM_HEADS:
            joined = f"<tr><td>x {tail}</td></tr></tbody>\n{head}{start}</th></tr>"
            assert html_figures(joined) == html_figures(f"<td>x {tail}</td>") + html_figures(f"<th>{start}</th>")
