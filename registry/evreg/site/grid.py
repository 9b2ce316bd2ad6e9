"""Coverage as a grid: rows x columns of a matrix or a contract's axes, each cell coloured by its state, a legend,
and large contracts folded by row group (``<details>``). Drawing only: the cells' contents (HTML) come from the site.

A contract's axes are laid out as: its fixed axes (one value) stated once above the grid; up to ``MAX_COLUMNS``
columns made of its smallest varying axes; rows of the remaining axes in their declared order, grouped by the first of
them when there are more than ``FOLD_ROWS`` rows. A contract with one varying axis is one row per value.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evreg.claims import coverage
from evreg.core.vocab import states as state_vocab
from evreg.site.html import esc_trimmed

MAX_COLUMNS = 4
FOLD_ROWS = 12

CellHtml = Callable[[dict[str, Any]], str]
"""A cell's contents as HTML, from its merged fields (``state``, ``label``, ``evidence_id``, ...)."""


@dataclass
class Axis:
    key: str
    label: str
    values: list[Any]
    prefix: str = ""
    value_labels: dict[str, str] | None = None

    @classmethod
    def of(cls, spec: dict[str, Any]) -> Axis:
        return cls(
            str(spec.get("key", "")),
            str(spec.get("label") or spec.get("key", "")),
            list(spec.get("values") or []),
            str(spec.get("prefix") or ""),
            spec.get("value_labels") if isinstance(spec.get("value_labels"), dict) else None,
        )

    def show(self, value: Any) -> str:
        named = (self.value_labels or {}).get(coverage.cell_key(value))
        return str(named) if named is not None else f"{self.prefix}{coverage.cell_key(value)}"


def legend(states: Counter[str]) -> str:
    """The states present, each with its colour, its meaning and how many cells have it."""
    vocab = state_vocab()
    items = "".join(
        f'<li><span class="evreg-grid-swatch evreg-cell-{esc_trimmed(s)}" aria-hidden="true"></span>'
        f'<span class="evreg-state evreg-state-{esc_trimmed(s)}">{esc_trimmed(s)}</span> {n} '
        f'<span class="evreg-reason">{esc_trimmed(vocab.get(s, {}).get("meaning", ""))}</span></li>'
        for s, n in sorted(states.items(), key=lambda kv: (list(vocab).index(kv[0]) if kv[0] in vocab else 99, kv[0]))
    )
    return f'<ul class="evreg-grid-legend">{items}</ul>'


def _td(cell: dict[str, Any], html: CellHtml) -> str:
    state = esc_trimmed(cell.get("state", "missing"))
    return f'<td class="evreg-cell evreg-cell-{state}">{html(cell)}</td>'


def table(corner: str, columns: Sequence[str], rows: Sequence[tuple[str, list[dict[str, Any]]]], html: CellHtml) -> str:
    """One grid table: ``corner`` and ``columns`` are HTML; each row is (its heading HTML, its cells)."""
    head = "".join(f'<th scope="col">{c}</th>' for c in columns)
    body = "".join(
        f'<tr><th scope="row">{label}</th>' + "".join(_td(c, html) for c in cells) + "</tr>" for label, cells in rows
    )
    return (
        f'<div class="evreg-grid-scroll"><table class="evreg-matrix evreg-grid">'
        f"<thead><tr><th>{corner}</th>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def matrix(row_axis: Axis, col_axis: Axis, cell_of: Callable[[Any, Any], dict[str, Any]], html: CellHtml) -> str:
    """A coverage view: its rows by its columns, with the legend."""
    rows = [(esc_trimmed(row_axis.show(r)), [cell_of(r, c) for c in col_axis.values]) for r in row_axis.values]
    states = Counter(cell.get("state", "missing") for _, cells in rows for cell in cells)
    corner = f"{esc_trimmed(row_axis.label)} \\ {esc_trimmed(col_axis.label)}"
    return (
        '<div class="evreg-grid-block">'
        + legend(states)
        + table(corner, [esc_trimmed(col_axis.show(c)) for c in col_axis.values], rows, html)
        + "</div>"
    )


def layout(axes: list[Axis]) -> tuple[list[Axis], list[Axis], list[Axis]]:
    """(fixed, row, column) axes of a contract."""
    fixed = [a for a in axes if len(a.values) <= 1]
    varying = [a for a in axes if len(a.values) > 1]
    if len(varying) <= 1:
        return fixed, varying, []
    columns: list[Axis] = []
    width = 1
    for axis in sorted(varying[1:], key=lambda a: len(a.values)):  # the first axis always heads the rows
        if width * len(axis.values) <= MAX_COLUMNS or not columns:
            columns.append(axis)
            width *= len(axis.values)
    return fixed, [a for a in varying if a not in columns], [a for a in varying if a in columns]


def _rows(
    fixed: list[Axis],
    row_axes: list[Axis],
    col_axes: list[Axis],
    combos: list[tuple[Any, ...]],
    cell: Callable[..., Any],
    shown: int = 0,
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Grid rows for the given row-axis value combinations: (heading, the cell of each column). Headings leave out
    the first ``shown`` row axes (a fold's summary states them)."""
    base = {a.key: a.values[0] for a in fixed if a.values}
    columns = list(itertools.product(*(a.values for a in col_axes)))
    out = []
    for combo in combos:
        sel = {**base, **{a.key: v for a, v in zip(row_axes, combo, strict=True)}}
        label = " · ".join(a.show(v) for a, v in list(zip(row_axes, combo, strict=True))[shown:])
        out.append(
            (
                esc_trimmed(label),
                [cell({**sel, **{a.key: v for a, v in zip(col_axes, c, strict=True)}}) for c in columns],
            )
        )
    return out


def _corner(row_axes: list[Axis], col_axes: list[Axis]) -> str:
    corner = esc_trimmed(" · ".join(a.label for a in row_axes))
    return corner + (" \\ " + esc_trimmed(" · ".join(a.label for a in col_axes)) if col_axes else "")


def contract(spec: dict[str, Any], cells: dict[tuple[str, ...], dict[str, Any]], html: CellHtml) -> str:
    """A coverage contract as a grid: ``cells`` maps each cell's axis values (``coverage.cell_key`` of each, in the
    axes' order) to its merged fields."""
    axes = [Axis.of(a) for a in spec.get("axes") or []]
    keys = [a.key for a in axes]
    fixed, row_axes, col_axes = layout(axes)
    out = ['<div class="evreg-grid-block">', legend(Counter(c.get("state", "missing") for c in cells.values()))]
    if fixed:
        stated = "; ".join(f"{esc_trimmed(a.label)} {esc_trimmed(a.show(a.values[0]))}" for a in fixed if a.values)
        out.append(f'<p class="evreg-grid-fixed">For every cell: {stated}</p>')
    col_heads = [
        esc_trimmed(" · ".join(a.show(v) for a, v in zip(col_axes, combo, strict=True))) or "Cell"
        for combo in itertools.product(*(a.values for a in col_axes))
    ]

    def cell(sel: dict[str, Any]) -> dict[str, Any]:
        return cells.get(tuple(coverage.cell_key(sel[k]) for k in keys), {"state": "missing", "label": "not listed"})

    combos = list(itertools.product(*(a.values for a in row_axes)))
    if len(combos) <= FOLD_ROWS or len(row_axes) < 2:
        out.append(table(_corner(row_axes, col_axes), col_heads, _rows(fixed, row_axes, col_axes, combos, cell), html))
    else:
        head = row_axes[0]
        for value in head.values:
            group = _rows(fixed, row_axes, col_axes, [c for c in combos if c[0] == value], cell, shown=1)
            counts = Counter(c.get("state", "missing") for _, cs in group for c in cs)
            summary = ", ".join(f"{n} {esc_trimmed(s)}" for s, n in sorted(counts.items()))
            out.append(
                f'<details class="evreg-grid-group"><summary>{esc_trimmed(head.label)} {esc_trimmed(head.show(value))} '
                f'<span class="evreg-reason">({summary})</span></summary>'
                + table(_corner(row_axes[1:], col_axes), col_heads, group, html)
                + "</details>"
            )
    out.append("</div>")
    return "".join(out)
