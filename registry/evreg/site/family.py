"""A family's pages: its page (headline, lineage, transfer scope, packets, charts, coverage, closures) and, when it
has too many coverage matrices for it, its page of matrices."""

from __future__ import annotations

from typing import Any

from evreg.claims import citations
from evreg.core.vocab import load as load_vocab
from evreg.records.models import revisions_of
from evreg.site import charts
from evreg.site.cite import Pages
from evreg.site.contracts import coverage_view
from evreg.site.headline import featured_rows
from evreg.site.html import Page, esc

FAMILY_CHARTS = 40
"""The most charts a family page draws: its initial views first, then the others in order. A family of thousands of
measurements has hundreds of views (at 100,000 measurements a family page drew 300 charts, 4 MB); the rest are listed
with links to the measurements they plot, whose sections hold every point. Every real family draws all of its charts."""
FAMILY_MATRICES = 60
"""The most coverage matrices a family page shows; a family with more has them on its own page of matrices
(``families/FAMILY/coverage/``), linked from the family page."""


def family_page(p: Pages, fid: str) -> Page:
    fam = p.records["family"][fid]
    page = Page(fam["name"])
    page.h(1, esc(fam.get("display_name") or fam["name"]))
    if fam.get("summary"):
        page.p(p.prose(fam["summary"]))
    page.h(2, "Headline")
    featured_rows(p, page, fam)
    if fam.get("primary_packet_id"):
        page.p(f"Primary packet: {p.link('packet', fam['primary_packet_id'])}")
    _lineage(p, page, fam)
    ts = fam.get("transfer_scope")
    if isinstance(ts, dict):
        page.h(2, "Transfer scope")
        page.p(f"Status: {esc(ts.get('status', ''))}")
        page.p("<strong>Transfers between revisions:</strong>")
        page.ul([p.prose(t) for t in ts.get("transfers", [])])
        page.p("<strong>Does not transfer:</strong>")
        page.ul([p.prose(t) for t in ts.get("does_not_transfer", [])])
    page.h(2, "Packets")
    page.table(
        ["Packet", "Grades", "Status", "Revision · artifact"],
        [
            [
                p.link("packet", pid, pk.get("label") or pid),
                " ".join(p.grade_badge(a, g) for a, g in (pk.get("grades") or {}).items()),
                esc(pk.get("status", "")),
                f"{esc(pk['revision'])} · {esc(pk.get('artifact_id', '—'))}",
            ]
            for pid, pk in p.family_records("packet", fid).items()
        ],
    )
    _family_views(p, page, fam, fid)
    closures = p.family_records("closure", fid)
    if closures:
        page.h(2, "Closures")
        closure_rows(p, page, closures.values())
    return page


def _lineage(p: Pages, page: Page, fam: dict[str, Any]) -> None:
    """Weight revisions and their quantized artifacts, with pinned identities."""
    page.h(2, "Lineage")
    page.p("Weight revisions and their quantized artifacts. A measurement never transfers across revisions.")
    for _, rev in revisions_of(fam):
        pin = (
            f"<code>{esc(rev['revision'])}</code>"
            if rev.get("revision")
            else esc(rev.get("revision_status", "unpinned"))
        )
        page.h(3, esc(rev.get("label") or rev["id"]))
        page.p(
            f"Revision id <code>{esc(rev['id'])}</code> · {esc(rev.get('role', ''))} · "
            f"{esc(rev.get('repository', ''))} at {pin}"
        )
        rows = []
        for art in rev.get("quantized_artifacts", []):
            ident = []
            if art.get("revision"):
                ident.append(f"revision <code>{esc(art['revision'])}</code>")
            if art.get("file_sha256"):
                ident.append(f"file sha256 <code>{esc(art['file_sha256'])}</code>")
            if art.get("revision_status"):
                ident.append("unpinned: " + esc(art["revision_status"]))
            rows.append(
                [
                    f"{esc(art['label'])} <code>{esc(art['id'])}</code>",
                    esc(art["quantization"]),
                    esc(art["repository"]),
                    "<br>".join(ident) or "unpinned",
                ]
            )
        page.table(["Artifact", "Quantization", "Repository", "Pinned identity"], rows)


def _ordered_views(p: Pages, fam: dict[str, Any], fid: str) -> list[dict[str, Any]]:
    views = p.family_records("view", fid)
    order = fam.get("initial_view_ids") or []
    return [views[v] for v in [*[v for v in order if v in views], *[v for v in views if v not in order]]]


def _family_views(p: Pages, page: Page, fam: dict[str, Any], fid: str) -> None:
    """A family's charts (in its initial order, the first ``FAMILY_CHARTS`` drawn), coverage matrices (on a page of
    their own when there are more than ``FAMILY_MATRICES``) and coverage contracts."""
    views = _ordered_views(p, fam, fid)
    if views:
        page.h(2, "Charts")
        page.p(
            "Each point links to its measurement; hover for the value. Screened series are "
            "dashed and hollow: they are not measured curves."
        )
        for view in views[:FAMILY_CHARTS]:
            _view(p, page, view)
    if len(views) > FAMILY_CHARTS:
        _more_views(p, page, views[FAMILY_CHARTS:])
    cov = p.family_records("coverage-view", fid)
    if len(cov) > FAMILY_MATRICES:
        page.h(2, "Coverage matrices")
        page.p(
            f'{len(cov)} coverage matrices, on <a href="{p.base}families/{esc(fid)}/coverage/">their own page</a>. '
            "Every cell is explicit; <em>missing</em> means nobody measured it, never zero."
        )
    elif cov:
        page.h(2, "Coverage matrices")
        page.p("Every cell is explicit; <em>missing</em> means nobody measured it, never zero.")
        for view in cov.values():
            coverage_view(p, page, view)
    contracts = p.family_records("coverage-contract", fid)
    if contracts:
        page.h(2, "Coverage contracts")
        page.table(
            ["Contract", "Cells by state"],
            [
                [
                    f'<a href="{p.base}coverage/{esc(fid)}/{esc(cid)}/">{esc(c["label"])}</a>',
                    ", ".join(f"{n} {esc(s)}" for s, n in sorted(p.contract_counts(c).items())),
                ]
                for cid, c in contracts.items()
            ],
        )


def _more_views(p: Pages, page: Page, views: list[dict[str, Any]]) -> None:
    """Views past the drawn ones: title, metrics and each series with links to the measurements it plots."""
    page.h(2, "More charts")
    page.p(
        f"{len(views)} more views of this family, not drawn here: each series links to the measurements it plots, "
        "whose sections list every point."
    )
    rows = []
    for view in views:
        series = []
        for s in view["series"]:
            links = [p.link("measurement", mid) for mid in s["measurement_ids"] if mid in p.measurements]
            series.append(f"{esc(s.get('label') or 'series')}: {', '.join(links) or 'no measurement'}")
        rows.append([esc(view.get("title") or view["id"]), esc(", ".join(view["metrics"])), "<br>".join(series)])
    page.table(["View", "Metrics", "Series and their measurements"], rows)


def matrices_page(p: Pages, fid: str) -> Page:
    """A family's coverage matrices, when there are too many for its page."""
    page = Page(f"Coverage matrices of {fid}")  # their headings were searchable on the family page
    page.h(1, f"Coverage matrices of {esc(fid)}")
    page.p(f"Family {p.link('family', fid)}. Every cell is explicit; <em>missing</em> means nobody measured it.")
    for view in p.family_records("coverage-view", fid).values():
        coverage_view(p, page, view)
    return page


def closure_rows(p: Pages, page: Page, closures: Any) -> None:
    page.table(
        ["State", "Scope", "Reason"],
        [
            [
                p.state(c["state"]),
                ", ".join(f"{esc(k)}={p.text(v)}" for k, v in c["selectors"].items()),
                p.prose(c["reason"]),
            ]
            for c in closures
        ],
    )


def _x_of(m: dict[str, Any], x_from: str) -> Any:
    node: Any = m
    for part in x_from.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _view(p: Pages, page: Page, view: dict[str, Any]) -> None:
    page.h(3, esc(view.get("title") or view["id"]))
    if view.get("subtitle"):
        page.p(p.prose(view["subtitle"]))
    charted = "point of " + ("these charts" if len(view["metrics"]) > 1 else "this chart")
    with p.stated(page, [mid for s in view["series"] for mid in s["measurement_ids"]], charted):
        for metric in view["metrics"]:
            _view_chart(p, page, view, metric)


def _view_chart(p: Pages, page: Page, view: dict[str, Any], metric: str) -> None:
    """One metric of a view, drawn: its series' points, each linked to its sample."""
    series = []
    for s in view["series"]:
        members = [(mid, p.measurements[mid]) for mid in s["measurement_ids"] if mid in p.measurements]
        state = members[0][1]["state"] if members else "missing"
        cs = charts.Series(s.get("label") or "series", state)
        for mid, m in members:
            if m.get("points"):
                for pt in m["points"]:
                    v = pt.get(metric)
                    if isinstance(v, int | float) and not isinstance(v, bool):
                        cs.dots.append(p.dot(mid, metric, None, pt["x"], float(pt["x"]), float(v)))
            else:
                x = _x_of(m, s.get("x_from") or "config.tp")
                samples = (m.get("metrics") or {}).get(metric) or []
                if isinstance(x, int | float) and not isinstance(x, bool):
                    for i, v in enumerate(samples):
                        cs.dots.append(p.dot(mid, metric, i, None, float(x), float(v)))
        series.append(cs)
    unit = citations.unit_of(metric)
    label = load_vocab("metrics")["metrics"].get(metric, {}).get("label", metric)
    page.add(
        charts.svg(
            series,
            view.get("x_label") or "x",
            f"{label} ({unit})" if unit else label,
            view.get("x_scale") == "log",
            not view.get("discrete"),
            view.get("title", ""),
        )
    )
