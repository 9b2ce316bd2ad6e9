"""Coverage on the site: coverage matrices (a family's views) and coverage contracts' pages, drawn as grids
(``evreg.site.grid``) whose cells link to their measurements, with their reasons listed once below them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from evreg.claims import citations, coverage
from evreg.core.layout import slug
from evreg.site import grid
from evreg.site.cite import Pages
from evreg.site.html import Page, esc


class Reasons:
    """A grid's reasons, each written once in a numbered list below it and referenced from its cells: a contract
    repeats one rule's reason in many cells (written into every cell, the reasons were most of the bytes of a 100k
    site's coverage pages)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.numbers: dict[str, int] = {}

    def ref(self, reason: str) -> str:
        """The cell's link to ``reason`` (HTML) in the list."""
        n = self.numbers.setdefault(reason, len(self.numbers) + 1)
        return f'<a class="evreg-why" href="#{self.prefix}-r{n}">why {n}</a>'

    def html(self) -> str:
        items = "".join(f'<li id="{self.prefix}-r{n}">{reason}</li>' for reason, n in self.numbers.items())
        return f'<ol class="evreg-reasons">{items}</ol>' if items else ""


def cell_html(p: Pages, cell: dict[str, Any], reasons: Reasons) -> str:
    """A coverage cell's contents: its state in words (the cell's colour is its state's, whose meaning the grid's
    legend gives: a badge and its meaning in every cell were a fifth of the 100k site's coverage pages), label and
    links, and a link to its reason in the list below the grid."""
    parts = [f"<b>{esc(cell['state'])}</b>"]
    if cell.get("label"):
        parts.append(p.prose(cell["label"], cell=True))
    if cell.get("evidence_id") and f"m:{cell['evidence_id']}." not in str(cell.get("label")):  # else its figure links
        parts.append(f'<a href="{esc(p.m_url(cell["evidence_id"]))}">measurement</a>')
    if cell.get("packet_id"):
        parts.append(p.link("packet", cell["packet_id"], "packet"))
    if cell.get("reason"):  # shown in the list below the grid, out of reach of the line stated above it
        said, p.said = p.said, None
        try:
            parts.append(reasons.ref(p.prose(cell["reason"], cell=True)))
        finally:
            p.said = said
    return "<br>".join(parts)


def coverage_view(p: Pages, page: Page, view: dict[str, Any]) -> None:
    row_axis = grid.Axis.of({"key": "row", **(view.get("row_axis") or {"label": "MTP", "prefix": "MTP"})})
    col_axis = grid.Axis.of({"key": "column", **(view.get("column_axis") or {"label": "TP", "prefix": "TP"})})
    row_axis.values, col_axis.values = list(view["rows"]), list(view["columns"])
    page.h(3, esc(view.get("label") or view["id"]))
    if view.get("fixed"):
        page.p(p.prose(view["fixed"]))

    def cell_of(r: Any, c: Any) -> dict[str, Any]:
        default = {"state": "missing", "label": "not listed"}
        return dict(view["cells"].get(f"{coverage.cell_key(r)}:{coverage.cell_key(c)}", default))

    reasons = Reasons(page.unique_id(f"why-{slug(str(view['id']))}"))  # ids differing by "." and "-" slug alike
    with p.stated(page, _cited(cell.get("label") for cell in view["cells"].values()), _GRID):  # reasons: below
        page.add(grid.matrix(row_axis, col_axis, cell_of, lambda cell: cell_html(p, cell, reasons)))
    page.add(reasons.html())
    if view.get("decision_note"):
        page.p(p.prose(view["decision_note"]))


_GRID = "number in this grid"


def _cited(texts: Iterable[Any]) -> list[str]:
    """The measurements the citations in ``texts`` cite."""
    return [c.measurement for t in texts for c in citations.parse(str(t or "")) if isinstance(c, citations.Citation)]


def _contract_cells(c: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], Counter[str]]:
    cells: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for sel, matching in coverage.expand(c):
        merged = coverage.merge(matching)[0]
        merged.setdefault("state", "missing")
        cells.append((sel, merged))
    return cells, Counter(cell["state"] for _, cell in cells)


def contracts_index(p: Pages, fid: str | None) -> Page:
    """The coverage contracts of one family, or of all."""
    page = Page("Coverage contracts" + (f" of {fid}" if fid else ""), search=False)
    page.h(1, "Coverage contracts" + (f" of {esc(fid)}" if fid else ""))
    rows = []
    if fid is None:
        contracts = [(key.split("/", 1), c) for key, c in p.records.get("coverage-contract", {}).items()]
    else:  # the family's own: a page per family reads its contracts, not every family's
        contracts = [([fid, cid], c) for cid, c in p.family_records("coverage-contract", fid).items()]
    for (family, cid), c in contracts:
        counts = p.contract_counts(c)
        rows.append(
            [
                f'<a href="{p.base}coverage/{esc(family)}/{esc(cid)}/">{esc(c["label"])}</a>',
                p.link("family", family),
                ", ".join(f"{n} {esc(s)}" for s, n in sorted(counts.items())),
            ]
        )
    if rows:
        page.table(["Contract", "Family", "Cells by state"], rows)
    else:
        page.note("No coverage contracts.")
    return page


def contract_page(p: Pages, key: str) -> Page:
    c = p.records["coverage-contract"][key]
    cells, counts = _contract_cells(c)
    page = Page(c["label"], search=False)
    page.h(1, esc(c["label"]))
    if c.get("description"):
        page.p(p.prose(c["description"]))
    page.p("Cells by state: " + ", ".join(f"{p.state(s)} {n}" for s, n in sorted(counts.items())))
    keys = [a["key"] for a in c["axes"]]
    by_key = {tuple(coverage.cell_key(sel[k]) for k in keys): cell for sel, cell in cells}
    reasons = Reasons(page.unique_id("why"))
    with p.stated(page, _cited(cell.get("label") for _, cell in cells), _GRID):  # its reasons are listed below it
        page.add(grid.contract(c, by_key, lambda cell: cell_html(p, cell, reasons)))
    page.add(reasons.html())
    return page
