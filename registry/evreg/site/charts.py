"""Charts drawn at build time as inline SVG: no JavaScript, no CDN.

Every plotted point is a link to its measurement and carries its value in a
tooltip that was formatted through the citation path (``point_html``).
Axis ticks are bare numbers; units live in the axis titles.

Why not a chart library: Vega-Lite through Altair and ``vl-convert-python`` (1.9, tried)
renders a chart of this size in 33-50 ms once warm (0.6 s for the first), against about 0.1 ms here;
the 100,000-measurement registry of ``evreg bench`` has some 20,000 series charts, so the library alone
would take 11-17 minutes of a 5-minute build budget. Its SVG also resolves point links against its
own base URL and carries no tooltips (they are JavaScript), so every point would need rewriting to stay
a citation link. What the hand-written charts must keep is checked on the built site instead
(``tests/acceptance/test_site_render.py``, ``tests/acceptance/test_browser.py``): every point inside the plot frame,
every legend entry a drawn series, x labels that neither overlap nor leave the picture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 300, 56, 16, 16, 44
"""The picture and its margins; the plot frame is the rectangle inside the margins, spanned by the y
ticks (the lowest tick on its bottom edge, the highest on its top edge)."""
R, PAD = 4.5, 12
"""A point's radius; the inset of the x values from the frame's sides, so every point is whole."""
CHAR_W = 6.6
"""The widest a character of an 11 px tick label is drawn (digits and '.'; an estimate with margin)."""


@dataclass
class Dot:
    x: float
    y: float
    href: str  # "" in its own measurement's chart: a bare point (its row below holds the value)
    tooltip: str  # already formatted through the citation path


@dataclass
class Series:
    label: str
    state: str
    dots: list[Dot] = field(default_factory=list)


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi``: the axis holds every value."""
    if not hi > lo:
        hi = lo + max(1.0, abs(lo))
    raw = (hi - lo) / n
    if not math.isfinite(raw) or raw <= 0:
        return [lo, hi]
    mag = 10 ** math.floor(math.log10(raw))
    step = next((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), mag * 10)
    first, last = math.floor(lo / step), math.ceil(hi / step)
    return [float(f"{k * step:.12g}") for k in range(first, last + 1)]  # relative rounding: tiny steps stay


def _fmt_tick(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _scale_x(v: float, use_log: bool) -> float:
    """An x value on the axis scale: its log2 on a log axis, else the value itself."""
    return math.log2(v) if use_log else v


@dataclass(frozen=True)
class _Plot:
    """The scales of the plot area: from data values to SVG coordinates."""

    use_log: bool
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float

    def px(self, v: float) -> float:
        """The SVG x coordinate of an x value: inside the frame, ``PAD`` in from either side."""
        span = W - LEFT - RIGHT - 2 * PAD
        return LEFT + PAD + (_scale_x(v, self.use_log) - self.x_lo) / (self.x_hi - self.x_lo) * span

    def py(self, v: float) -> float:
        """The SVG y coordinate of a y value."""
        return TOP + (1 - (v - self.y_lo) / (self.y_hi - self.y_lo)) * (H - TOP - BOTTOM)


def _fit(xs: list[float], ys: list[float], log_x: bool) -> tuple[_Plot, list[float]]:
    """Scales that hold every value, and the y axis ticks (from zero, or below it for a negative value).
    A log x axis is used only when every x is positive."""
    use_log = log_x and min(xs) > 0
    x_lo, x_hi = _scale_x(min(xs), use_log), _scale_x(max(xs), use_log)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_ticks = _ticks(min(0.0, min(ys)), max(ys) * 1.08 if max(ys) > 0 else 1.0)
    return _Plot(use_log, x_lo, x_hi, y_ticks[0], y_ticks[-1]), y_ticks


def _n(v: float) -> str:
    """A coordinate to a tenth of a pixel, without a trailing ".0" (most coordinates are whole)."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _axes(plot: _Plot, y_ticks: list[float], xs: list[float], x_label: str, y_label: str) -> list[str]:
    """The grid lines and y ticks, a tick mark at every x value (labelled where the label has
    room), and the two axis titles. Lines of a kind are one path and labels of a kind one group
    (the axes were a tenth of the 100,000-measurement site as one element per line and label)."""
    grid, y_labels = [], []
    for t in y_ticks:
        y = _n(plot.py(t))
        grid.append(f"M{LEFT} {y}H{W - RIGHT}")
        y_labels.append(f'<text x="{LEFT - 6}" y="{_n(plot.py(t) + 4)}">{_fmt_tick(t)}</text>')
    base = H - BOTTOM
    marks, x_labels = [], []
    free_from = -math.inf  # where the next x label may start without touching the last one drawn
    for xv in sorted(set(xs)):
        x, label = plot.px(xv), _fmt_tick(xv)
        half = len(label) * CHAR_W / 2
        marks.append(f"M{_n(x)} {base}v4")
        tx = min(max(x, half), W - half)  # a long label near an edge stays in the picture
        if tx - half >= free_from:
            x_labels.append(f'<text x="{_n(tx)}" y="{base + 16}">{label}</text>')
            free_from = tx + half + 4
    mid_y = _n((TOP + H - BOTTOM) / 2)
    return [
        f'<path class="grid" d="{"".join(grid)}"/>',
        f'<g class="tick" text-anchor="end">{"".join(y_labels)}</g>',
        f'<path class="xtick" d="{"".join(marks)}"/>',
        f'<g class="tick xlabel" text-anchor="middle">{"".join(x_labels)}</g>',
        f'<text x="{_n((LEFT + W - RIGHT) / 2)}" y="{H - 6}" class="axis">'
        f"{escape(x_label)}{' (log scale)' if plot.use_log else ''}</text>",
        f'<text x="14" y="{mid_y}" class="axis" transform="rotate(-90 14 {mid_y})">{escape(y_label)}</text>',
    ]


def _series(plot: _Plot, i: int, s: Series, joined: bool) -> str:
    """Series ``i`` as one group: its line through the median y at each x (when joined) and its
    dots, each a citation link. A series that is not measured is dashed and hollow."""
    color, measured = PALETTE[i % len(PALETTE)], _measured(s)
    # Colour and stroke are the group's, inherited by its line and dots (written once, not per point).
    fill = color if measured else "white"
    out = [f'<g class="evreg-series" data-series="{i}" fill="{fill}" stroke="{color}">']
    if joined and len(s.dots) > 1:
        by_x: dict[float, list[float]] = {}
        for d in s.dots:
            by_x.setdefault(d.x, []).append(d.y)
        path = " ".join(f"{_n(plot.px(x))},{_n(plot.py(sorted(v)[len(v) // 2]))}" for x, v in sorted(by_x.items()))
        dash = "" if measured else ' stroke-dasharray="4 3"'
        out.append(f'<polyline points="{path}"{dash}/>')
    for d in s.dots:
        circle = f'<circle cx="{_n(plot.px(d.x))}" cy="{_n(plot.py(d.y))}" r="{R}"/>'
        if not d.href:  # a point of the measurement whose section this is: its row, just below, holds the value
            out.append(circle)
            continue
        out.append(f'<a class="evreg-cite" href="{escape(d.href)}">{circle}<title>{escape(d.tooltip)}</title></a>')
    out.append("</g>")
    return "".join(out)


def _measured(s: Series) -> bool:
    return s.state in ("lab-measured", "community-measured")


def _legend(drawn: list[tuple[int, Series]], joined: bool) -> str:
    """The legend as HTML below the chart: its text wraps at any width and it takes its own
    space on the page, so it can neither be cut off nor overlap what follows. One entry per
    drawn series, with the series' own mark (a line for a joined chart, else a dot)."""
    items = []
    for i, s in drawn:
        measured = _measured(s)
        # the series' mark drawn by the stylesheet (evreg.css: .evreg-swatch, a colour class per PALETTE entry)
        kind = ("evreg-joined" if joined else "") + ("" if measured else " evreg-hollow")
        mark = f'<span class="evreg-swatch evreg-c{i % len(PALETTE)} {kind.strip()}" aria-hidden="true"></span>'
        note = "" if measured else f" ({escape(s.state)}, not a measured {'curve' if joined else 'series'})"
        items.append(f'<li class="evreg-legend-entry" data-series="{i}">{mark} {escape(s.label)}{note}</li>')
    return '<ul class="evreg-legend">' + "".join(items) + "</ul>"


def svg(
    series: list[Series], x_label: str, y_label: str, log_x: bool = False, joined: bool = True, title: str = ""
) -> str:
    """A chart of the series: an inline SVG (the plot frame, axes, one group per series) and its
    legend, in one figure; series with nothing to draw are named below it, not in the legend.
    A note when there is nothing to chart."""
    dots = [d for s in series for d in s.dots]
    if not dots:
        return '<p class="evreg-empty">No chartable measurements in this view.</p>'
    xs = [d.x for d in dots]
    plot, y_ticks = _fit(xs, [d.y for d in dots], log_x)
    drawn = [(i, s) for i, s in enumerate(series) if s.dots]
    out = [
        '<figure class="evreg-figure">'
        f'<svg class="evreg-chart" viewBox="0 0 {W} {H}" role="img" '
        f'aria-label="{escape(title or y_label)}">'
        f'<rect class="evreg-plot" x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}"/>'
    ]
    out += _axes(plot, y_ticks, xs, x_label, y_label)
    out += [_series(plot, i, s, joined) for i, s in drawn]
    out.append("</svg>")
    out.append(_legend(drawn, joined))
    empty = [s.label for s in series if not s.dots]
    if empty:
        names = ", ".join(escape(label) for label in empty)
        out.append(f'<figcaption class="evreg-chart-note">Not drawn (no values of this metric): {names}.</figcaption>')
    out.append("</figure>")
    return "".join(out)
