"""Comparison pages: one table per headline metric across every family, ranked only within one workload.

The headline metrics are read from the vocabulary and the records: a metric of the vocabulary's point grammar (it has
a ``point_code``) whose unit says which way is better (a rate or a time, ``evreg.claims.ranking.direction``) and which
some measurement stores. A row is one measurement's samples of the metric (a run) or one point of a series. Rows are
grouped by workload (``evreg.claims.ranking.workload_tier``: a workload class where the fields state a phase, else
the text); only promotable rows are ranked (``evreg.core.vocab.promotable`` and not superseded), with ties where the
robust spreads overlap (``evreg.claims.ranking.rank``); the others are listed unranked, with their state and why.
Every value on the page is a citation (``Pages.cite``) with its trust in the same cell (``Pages.trust_span``), and
links to its sample.

The page works as a plain table; ``assets/evreg-compare.js`` (local, no library) adds sorting within each workload,
filters and a CSV download of exactly the rows shown.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from html import unescape
from typing import TYPE_CHECKING, Any

import orjson

from evreg.claims import citations, ranking, topology, workload
from evreg.core import jsonio
from evreg.core.layout import slug
from evreg.core.vocab import metrics as metric_vocab
from evreg.core.vocab import promotable
from evreg.site.html import Scan, esc_trimmed, kept_scan, scan_piece

if TYPE_CHECKING:
    from evreg.site.cite import Pages  # handed in by the site: it registers these pages
    from evreg.site.html import Page
    from evreg.site.trace import Token

SCRIPT = "assets/evreg-compare.js"
COLUMNS = (
    # (heading, filterable): the cells of a row, in order; the script offers a filter for the filterable ones
    ("Rank", False),
    ("Value", False),
    ("Model · family", True),
    ("Hardware", True),
    ("Runtime", True),
    ("Quantization", True),
    ("Topology", True),
    ("Grade", True),
    ("State", True),
)


def headline_metrics(p: Pages) -> list[str]:
    """The metrics that get a comparison page, in the vocabulary's order."""
    stored = {k for m in p.measurements.values() for k in (m.get("metrics") or {})}
    stored |= {k for m in p.measurements.values() for pt in (m.get("points") or []) if isinstance(pt, dict) for k in pt}
    return [
        k
        for k, spec in metric_vocab().items()
        if spec.get("point_code") and ranking.direction(spec.get("unit")) is not None and k in stored
    ]


def direction(metric: str) -> int | None:
    """Which way a metric is better: its unit's direction (``ranking.direction``; 1 higher, -1 lower)."""
    return ranking.direction(metric_vocab()[metric].get("unit"))


def page_path(metric: str) -> str:
    return f"compare/{slug(metric)}.md"


@dataclass
class Row:
    """One result: a measurement's samples of the metric, or one series point."""

    mid: str
    values: list[float]
    indices: list[int | None]  # the sample index of each value (None: a series point)
    x: float | None
    tier: tuple[Any, ...]
    stated: list[tuple[str, float]]
    why_not: str | None  # why it is not ranked, None when promotable
    place: ranking.Ranked | None = None

    def fresh(self) -> Row:
        """The row, not yet placed (a copy: placing it leaves this one as it is)."""
        return Row(self.mid, self.values, self.indices, self.x, self.tier, self.stated, self.why_not)


@dataclass
class Tier:
    key: tuple[Any, ...]
    rows: list[Row] = field(default_factory=list)


def rows_of(p: Pages, metric: str) -> list[Row]:
    """The results of ``metric`` (``rows_by_metric``): each caller gets rows of its own, as ranking a group of rows
    places them (``place``)."""
    return [r.fresh() for r in rows_by_metric(p).get(metric, [])]


def rows_by_metric(p: Pages) -> dict[str, list[Row]]:
    """Every headline metric's results, worked out once per build (the comparisons, their index and the models' pages
    ask for them; the build works them out before its workers fork, which then share them)."""
    return p.memo("rows", None, lambda: _rows_by_metric(p))


def _rows_by_metric(p: Pages) -> dict[str, list[Row]]:
    """Every headline metric's rows, in one pass over the measurements: whether a measurement is ranked, and its
    workload, are worked out once for all its metrics."""
    wanted = set(headline_metrics(p))
    out: dict[str, list[Row]] = {metric: [] for metric in wanted}
    for mid, m in p.measurements.items():
        why = promotable(m)
        if why is None and mid in p.superseded_by:
            why = f"it is superseded by {p.superseded_by[mid]!r}"
        run_tier: tuple[tuple[Any, ...], list[tuple[str, float]]] | None = None
        for metric, samples in (m.get("metrics") or {}).items():
            if metric not in wanted or not isinstance(samples, list):
                continue
            kept = [(i, v) for i, s in enumerate(samples) if (v := ranking.number(s)) is not None]
            if kept:
                tier, stated = run_tier = run_tier or ranking.workload_tier(m)
                out[metric].append(Row(mid, [v for _, v in kept], [i for i, _ in kept], None, tier, stated, why))
        for pt in m.get("points") or []:
            x = ranking.number(pt.get("x")) if isinstance(pt, dict) else None
            if x is None:
                continue
            point_tier = None
            for metric in wanted.intersection(pt):
                if (v := ranking.number(pt[metric])) is not None:
                    tier, stated = point_tier = point_tier or ranking.workload_tier(m, x)
                    out[metric].append(Row(mid, [v], [None], pt["x"], tier, stated, why))
    return out


def tiers_of(rows: list[Row], metric: str) -> list[Tier]:
    """Rows grouped by workload, each tier's promotable rows ranked (``place``)."""
    tiers = grouped(rows)
    for tier in tiers:
        place(tier, metric)
    return tiers


def grouped(rows: list[Row]) -> list[Tier]:
    """Rows grouped by workload, not yet ranked, each tier's rows in the order given; the tiers with the most
    promotable rows (those ranked) first, then the most rows, then by key."""
    by_key: dict[tuple[Any, ...], Tier] = {}
    for row in rows:
        by_key.setdefault(row.tier, Tier(row.tier)).rows.append(row)
    return sorted(by_key.values(), key=lambda t: (-sum(r.why_not is None for r in t.rows), -len(t.rows), t.key))


def place(tier: Tier, metric: str) -> None:
    """Rank a tier's promotable rows (``ranking.rank``) and order its rows: ranked ones by rank, then by median, best
    first; the unranked after them. A function of the rows, in their order, and the metric's direction alone."""
    better = direction(metric)
    ranked = [r for r in tier.rows if r.why_not is None]
    for row, placed in zip(ranked, ranking.rank([r.values for r in ranked], better != -1), strict=True):
        row.place = placed
    sign = -1 if better != -1 else 1
    tier.rows.sort(key=lambda r: (r.place is None, r.place.rank if r.place else 0, sign * ranking.median(r.values)))


class Context:
    """What a row shows beside its value, made once per page: the cells after the value of a measurement's rows, a
    rank's cell. Every record is read through the catalog's stores, so a workload's rows read what they show (a
    piece of the page is kept by its reads: ``tier_piece``)."""

    def __init__(self, p: Pages) -> None:
        self.p = p
        # (measurement, differs line) -> the row's cells after the value, with what they read (``Reads.memo``)
        self.fixed: dict[Any, tuple[tuple[list[str], bool], frozenset[Token]]] = {}
        self.same: dict[str, str] = {}  # one copy of each such cell (many rows share them)
        self.ranks: dict[tuple[int, bool] | None, str] = {}  # (rank, tied) -> its cell

    def packet(self, mid: str) -> tuple[str | None, dict[str, Any]]:
        pid = self.p.packet_of(mid)
        return pid, (self.p.records.get("packet", {}).get(pid or "") or {})

    def fixed_tds(self, row: Row, differs: str = "") -> tuple[list[str], bool]:
        """The cells of a row after its value (model, hardware, runtime, quantization, topology, grade, state) as
        ``td`` elements, and whether one holds a character the data file uses as a mark: the same for every row of
        a measurement (a series' points are rows of their own) with the same ``differs`` line (what sets it apart
        in its workload, ``_differs``), so made once per measurement and line."""

        def made() -> tuple[list[str], bool]:
            tds = [
                self.same.setdefault(td, td) for td in (_td(html, key, "") for html, key in self._cells(row, differs))
            ]
            return tds, any(c in td for td in tds for c in MARKS)

        return self.p.reads.memo(self.fixed, (row.mid, differs), made)

    def rank_td(self, row: Row) -> str:
        """A row's rank cell (the same for every row of a rank)."""
        key = (row.place.rank, row.place.tied) if row.place else None
        if (td := self.ranks.get(key)) is None:
            td = self.ranks[key] = _td(*rank_cell(row), row.place.rank if row.place else "")
        return td

    def _cells(self, row: Row, differs: str = "") -> list[tuple[str, str]]:
        """Each column's (HTML, filter key) after the value, for a row (``differs``: the HTML of what sets it apart
        in its workload, under its model)."""
        p, m = self.p, self.p.measurements[row.mid]
        family = str(p.measurement_where(row.mid).family)
        fam = p.records.get("family", {}).get(family, {})
        pid, pk = self.packet(row.mid)
        revision = revision_label(fam, m.get("revision"))
        hardware = m.get("hardware") or pk.get("hardware")
        runtime = m.get("runtime") or pk.get("runtime")
        quant = m.get("quantization") or pk.get("quantization")
        grades = pk.get("grades") or {}
        grade = " ".join(p.grade_badge(a, g) for a, g in grades.items()) or "ungraded"
        grade_key = " ".join(f"{'EVID' if a == 'evidence' else 'CAP'} {g.get('grade')}" for a, g in grades.items())
        name = str(fam.get("display_name") or fam.get("name") or family)
        model = f"{esc_trimmed(revision)} · {p.link('family', family, name)}"
        if pid:
            model += f" · {p.link('packet', pid, 'packet')}"
        if differs:
            model += f"<br>{differs}"
        topo = _topology(m, pk)
        return [
            (model, f"{name} · {revision}"),
            (p.text(hardware, "hardware") if hardware else "not recorded", str(hardware or "not recorded")),
            (p.text(runtime, "runtime") if runtime else "not recorded", str(runtime or "not recorded")),
            (esc_trimmed(quant) if quant else "not recorded", str(quant or "not recorded")),
            (esc_trimmed(topo), topo),
            (grade, grade_key or "ungraded"),
            (_state_cell(p, m["state"], row.why_not), str(m["state"])),
        ]


def revision_label(fam: dict[str, Any], rid: Any) -> str:
    """A revision's label in its family (its id when it has none; the revision as stated when the family lists no
    such revision; of two revisions with one id, the last listed)."""
    label = str(rid or "")
    for rev in [*(fam.get("weight_revisions") or []), *(fam.get("model_variants") or [])]:
        if isinstance(rev, dict) and isinstance(rev.get("id"), str) and rev["id"] == str(rid):
            label = str(rev.get("label") or rev["id"])
    return label


def _td(html: str, key: str, sort: Any) -> str:
    """A cell: its filter key when the shown text is not it (the script filters by the shown text), its sort key."""
    return (
        "<td"
        + (f' data-key="{esc_trimmed(key)}"' if key and key != _shown(html) else "")
        + (f' data-sort="{esc_trimmed(sort)}"' if sort != "" else "")
        + f">{html}</td>"
    )


def _topology(m: dict[str, Any], pk: dict[str, Any]) -> str:
    """A row's setup in the one topology vocabulary (``evreg.claims.topology``): ``2 cards · TP2``."""
    return topology.of(m, pk)


SETUP_KEYS = frozenset({"cards", *(key for key, _ in topology.DEGREES)})
"""Config keys the topology column shows (in its own words): not repeated in a row's ``differs`` line."""
DIFFERS_SHOWN = 4
"""The config keys a ``differs`` line names at most (then an ellipsis)."""
_UNSTATED = object()
_UNSTATED_KEY = "\0unstated"  # what _config_key makes of a key a config does not state


def _differs(p: Pages, tier: Tier) -> dict[str, str]:
    """What sets each row of a workload apart from the others: the config keys whose values differ between the
    tier's measurements (the setup's keys aside: the topology column shows them), as a ``differs: mtp=true`` line
    (HTML) by measurement; nothing when their configs are the same. A line names the keys its row states, those every
    row states and with the fewest values first (``mtp``, ``graph`` before a run's own id), at most
    ``DIFFERS_SHOWN`` of them; a row that states none of them says so."""
    configs: dict[str, dict[str, Any]] = {}
    for row in tier.rows:
        if row.mid not in configs:
            config = p.measurements[row.mid].get("config")
            configs[row.mid] = config if isinstance(config, dict) else {}
    if len(configs) < 2:
        return {}
    keys = sorted({k for c in configs.values() for k in c if isinstance(k, str)} - SETUP_KEYS)
    values = {k: [_config_key(c.get(k, _UNSTATED)) for c in configs.values()] for k in keys}
    differing = sorted(
        (k for k in keys if len(set(values[k])) > 1),
        key=lambda k: (values[k].count(_UNSTATED_KEY), len(set(values[k])), k),
    )
    if not differing:
        return {}
    out = {}
    for mid, config in configs.items():
        own = [k for k in differing if k in config]
        more = len(own or differing) > DIFFERS_SHOWN  # only the keys shown are written out
        if own:
            parts = [
                f"<code>{esc_trimmed(k)}={esc_trimmed(_config_text(config[k]))}</code>" for k in own[:DIFFERS_SHOWN]
            ]
        else:
            parts = [f"<code>{esc_trimmed(k)}</code>" for k in differing[:DIFFERS_SHOWN]]
            parts[0] = "states none of " + parts[0]
        out[mid] = (
            f'<span class="evreg-differs">differs: {" ".join(parts[:DIFFERS_SHOWN])}{" …" if more else ""}</span>'
        )
    return out


def _config_key(value: Any) -> str:
    """A config value as one comparable text, its type included (``1``, ``1.0`` and ``true`` differ), lists and
    objects as their JSON (a comparison page compares every config of a workload: plain values are not dumped)."""
    if value is _UNSTATED:
        return _UNSTATED_KEY
    if isinstance(value, str | bool | int | float) or value is None:
        return f"{type(value).__name__}:{value!r}"
    return _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _config_text(value: Any, limit: int = 40) -> str:
    """A config value as a ``differs`` line shows it: a string as written, anything else as its JSON, cut short."""
    text = value if isinstance(value, str) else _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def rank_cell(row: Row) -> tuple[str, str]:
    if row.place is None:
        return '<span class="evreg-unranked">not ranked</span>', "not ranked"
    tied = ' <span class="evreg-tied">tied</span>' if row.place.tied else ""
    return f'<span class="evreg-rank">{row.place.rank}</span>{tied}', "tied" if row.place.tied else "ranked"


def _state_cell(p: Pages, state: str, why_not: str | None) -> str:
    return p.state(state) + (
        f'<br><span class="evreg-reason">not ranked: {esc_trimmed(why_not)}</span>' if why_not else ""
    )


def value_cell(p: Pages, row: Row, metric: str) -> str:
    """The value as citations: a series point, one sample, or the median of the repeats with their range and count
    and any repeat far outside the others flagged (``Pages.repeats``); under it, in the same cell, its trust (state,
    grades, accepted defects, whether its evidence was checked: ``Pages.trust_span``),
    which no scrolling of the table can part from it."""
    if row.x is not None:
        shown = (
            p.cite(row.mid, metric, None, row.x, tooltip=False)
            + ' <span class="evreg-spread">one value (series point)</span>'
        )
    else:
        shown = p.repeats(row.mid, metric, tooltip=False)
    return f"{shown} {p.trust_span(row.mid)}"


def tier_label(p: Pages, tier: Tier) -> str:
    """A workload class by its fields (``evreg.claims.workload``), or a workload as the records state it (their text,
    with its citations resolved) then the stated numbers."""
    kind, what = tier.key[0]
    if kind == "class":
        parts = [class_label(what)]
    else:
        m = p.measurements[tier.rows[0].mid]
        parts = [p.text(m.get("workload"), "workload") if what else "workload not stated"]
    parts += [f"{esc_trimmed(name)} = {esc_trimmed(citations.fmt_x(value))}" for name, value in tier.key[1:]]
    return " · ".join(parts)


def part_html(text: str, setting: bool) -> str:
    """A part of a workload class's label as HTML: an offered request rate marked as the setting it is."""
    title = "A setting of the workload, not a measurement"
    return f'<span class="evreg-setting" title="{title}">{esc_trimmed(text)}</span>' if setting else esc_trimmed(text)


def class_label(cls: workload.WorkloadClass) -> str:
    """A workload class as HTML, its parts in order."""
    return '<span class="evreg-class">' + " · ".join(part_html(*part) for part in cls.parts()) + "</span>"


def tier_key(tier: Tier) -> str:
    """A workload's key as the page's script filters by it: the class, or the text and its stated numbers."""
    kind, what = tier.key[0]
    first = f"class: {what.label()}" if kind == "class" else what
    return " · ".join([first, *(f"{n} = {citations.fmt_x(v)}" for n, v in tier.key[1:])])


def metric_title(metric: str) -> str:
    spec = metric_vocab()[metric]
    return f"{spec.get('label', metric)} ({spec['unit']})" if spec.get("unit") else str(spec.get("label", metric))


def metric_page(p: Pages, page: Page, metric: str) -> None:
    """The comparison table of one metric (``page`` is empty; the site made it)."""
    better = "higher" if direction(metric) == 1 else "lower"
    tiers = grouped(rows_of(p, metric))  # each ranked only when its piece is made (``tier_piece``)
    rows = sum(len(t.rows) for t in tiers)
    ranked = sum(r.why_not is None for t in tiers for r in t.rows)
    page.h(1, f"Compare: {esc_trimmed(metric_title(metric))}")
    page.p(
        f"Every stored result of <code>{esc_trimmed(metric)}</code>, across all families: {rows} results in "
        f"{len(tiers)} workloads, {ranked} of them ranked ({better} is better). Results are ranked only against "
        "results of the same workload, as the records state it; only promotable results are ranked, and results whose "
        f'spreads overlap share a rank and are marked <em>tied</em> (<a href="{p.base}methodology/#comparisons">how '
        "comparisons rank</a>). Every value links to its sample."
    )
    ctx = Context(p)
    unit = metric_vocab()[metric].get("unit")
    head = "".join(
        f'<th scope="col" data-col="{i}"'
        + (' data-filter="1"' if filt else "")
        + f">{esc_trimmed(f'{name} ({unit})' if name == 'Value' and unit else name)}</th>"
        for i, (name, filt) in enumerate(COLUMNS)
    )
    data = Rows(p.base)
    pieces = [tier_piece(p, ctx, tier, metric) for tier in tiers]
    for piece in pieces:
        data.merge(piece["cells"], piece["rows"])
    attrs = f' data-rows="{ROWS_FILE}" data-row-count="{rows}"' if data.count else ""
    if data.count:
        page.p(
            f"The first {INLINE_ROWS} results of each workload are in the page; the other {data.count} are in "
            f'<a href="{ROWS_FILE}">its data file</a> (gzip-compressed JSON), which the page\'s script adds to '
            "the table."
        )
        page.data[ROWS_FILE] = (data.json(), "")  # the HTML its rows make was scanned with their workload's piece
    page.add(_controls(metric))  # right before the table: the script finds it there
    page.add(
        f'<div class="evreg-scroll"><table class="evreg-compare" data-metric="{esc_trimmed(metric)}"{attrs}><thead><tr>'
        f"{head}</tr></thead>"
    )
    for piece in pieces:
        page.piece(piece["html"], Scan(piece["figures"], [(n, f) for n, f in piece["data"]], piece["problems"]))
    page.add("</table></div>")
    page.scripts.append(p.base + SCRIPT)  # loaded after the content, never inside it


def _controls(metric: str) -> str:
    """Filters and the download, shown by the script (without it the page is the plain table)."""
    return (
        f'<div class="evreg-compare-controls" hidden data-metric="{esc_trimmed(metric)}">'
        '<label>Filter <input type="search" class="evreg-filter-text" placeholder="any text"></label> '
        '<span class="evreg-filter-selects"></span> '
        '<label><input type="checkbox" class="evreg-ranked-only"> ranked only</label> '
        '<button type="button" class="evreg-download">Download shown rows (CSV)</button> '
        '<span class="evreg-shown" aria-live="polite"></span></div>'
    )


INLINE_ROWS = 50
"""Rows of a workload written into the page; the rest are in the page's data file (``ROWS_FILE``), which the script
adds to the table. At 100,000 measurements one table held 540,000 rows (120 MB of HTML in one page): the data file
holds each row's own parts only, and its cells shared with other rows (model, hardware, runtime, grade, state) once,
gzip-compressed (the four files at 100,000 measurements: 108 MB of JSON, 6 MB compressed; the script decompresses it
with the browser's ``DecompressionStream``)."""
ROWS_FILE = "rows.json.gz"
MID, BASE, HOME, NUMBER = "\u0001", "\u0002", "\u0003", "\u0004"
"""In the data file: a row's measurement id, the page's base, the row's measurement's page and a number of its value
cell (none is in HTML)."""
MARKS = (MID, BASE, HOME, NUMBER)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def filled(template: str, numbers: list[str]) -> str:
    """A value cell from its template and its numbers, in order (as ``evreg-compare.js`` fills it)."""
    parts = template.split(NUMBER)
    return "".join(part + (numbers[i] if i < len(numbers) else "") for i, part in enumerate(parts))


class Rows:
    """The rows past ``INLINE_ROWS``, as the data file holds them: per workload (in page order) a list of rows
    ``[measurement, its page, class, low, high (as the page writes them), value cell template, [its numbers],
    [cell index, ...]]``, each other cell's HTML and each value cell template once in ``cells``. In the cells, the
    measurement id is ``MID``, the page's base ``BASE`` and the measurement's page ``HOME`` (a model cell's packet
    link is then the same for every row of a revision); in a value cell template each number is ``NUMBER`` (the
    value cells of a metric's rows differ only in their numbers: stored whole, they were half of the data file)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cells: dict[str, int] = {}
        self.tiers: list[list[list[Any]]] = []
        self.count = 0
        self.fixed: dict[tuple[str, str], list[int]] = {}  # (measurement, setup) -> its cells' numbers after the value

    def cell(self, td: str) -> int:
        return self.cells.setdefault(td, len(self.cells))

    def add(
        self, mid: str, home: str, cls: str, low: str, high: str, own: list[str], fixed: list[str], setup: str = ""
    ) -> None:
        """A row: its rank and value cells (``own``) and the cells after them (``fixed``: the same list for every row
        of a measurement with the same ``setup`` line, whose cell numbers are then looked up once)."""
        rank, value = [td.replace(f"{self.base}{home}", BASE + HOME) for td in own] if home else own
        value = value.replace(mid, MID)
        if self.base:
            value = value.replace(self.base, BASE)
        template, numbers = self.cell(_NUMBER.sub(NUMBER, value)), _NUMBER.findall(value)
        first = self.cell(rank)
        if (after := self.fixed.get((mid, setup))) is None:
            after = self.fixed[(mid, setup)] = [
                self.cell(td.replace(f"{self.base}{home}", BASE + HOME) if home else td) for td in fixed
            ]
        self.tiers[-1].append([mid, home, cls, low, high, template, numbers, [first, *after]])
        self.count += 1

    def merge(self, cells: list[str], rows: list[list[Any]]) -> None:
        """A workload's rows as another ``Rows`` holds them (``cells``, and ``rows`` naming them by number), as this
        one's next workload."""
        number = [self.cell(c) for c in cells]
        self.tiers.append([[*row[:5], number[row[5]], row[6], [number[n] for n in row[7]]] for row in rows])
        self.count += len(rows)

    def json(self) -> str:
        return orjson.dumps({"base": self.base, "cells": list(self.cells), "tiers": self.tiers}).decode()

    def scan_rows(self) -> list[str]:
        """The HTML the script makes of these rows (``addRows`` in ``evreg-compare.js``), row by row, for the build's
        scan for orphan figures: each row's cells side by side, in the order the script puts them, since the figure
        grammar reads across cells (``52.3 tok`` in one and ``/s`` in the next is a figure). A row's last cell is its
        state (fixed words), so no figure runs from one row into the next (``markdown.rows_figures``), and a row the
        same as one before is given once."""
        cells = list(self.cells)
        made = dict.fromkeys(
            "<tr>"
            + "".join(
                [
                    cells[row[7][0]],
                    filled(cells[row[5]], row[6]).replace(MID, row[0]),
                    *(cells[n] for n in row[7][1:]),
                ]
            )
            .replace(HOME, row[1])
            .replace(BASE, self.base)
            + "</tr>"
            for tier in self.tiers
            for row in tier
        )
        return list(made)


def tier_piece(p: Pages, ctx: Context, tier: Tier, metric: str) -> dict[str, Any]:
    """A workload's rows as a piece of the page (``Pages.kept``): its ``tbody`` (``html``), the rows past
    ``INLINE_ROWS`` as the data file holds them (``cells``, ``rows``: ``Rows``) and what the scans found on both
    (``figures``, ``data``, ``problems``: ``evreg.site.html.scan_piece``). It is kept under the page's URL and a
    digest of its rows as grouped, not yet ranked (their values, order and why any is not ranked: their places follow
    from them and the metric's direction, ``place``) and of what the page states around them, and taken from an
    earlier build while everything it read is unchanged: a pull request's new result ranks and remakes the workloads
    it joins, not the page."""
    shown = [(r.mid, r.values, r.indices, r.x, r.stated, r.why_not) for r in tier.rows]
    said = (metric, direction(metric), p.base, p.here, p.said, tier.key)
    key = hashlib.sha256(repr((*said, shown)).encode()).hexdigest()
    return p.kept(f"{p.here}#{key}", lambda: _tier_bytes(p, ctx, tier, metric), _piece)


def _piece(data: bytes) -> dict[str, Any] | None:
    """A workload's piece as ``_tier_bytes`` writes it, read back; None for anything else (bytes that are not such
    JSON, a field of another type, a row naming a cell the piece does not hold)."""
    try:
        piece = jsonio.loads(data, shallow_reader=True)  # read below level by level, to a fixed depth
    except ValueError:
        return None
    if not (isinstance(piece, dict) and set(piece) == {"html", "cells", "rows", "figures", "data", "problems"}):
        return None
    cells, rows = piece["cells"], piece["rows"]
    if not (
        kept_scan(piece) is not None
        and isinstance(cells, list)
        and all(isinstance(v, str) for v in cells)
        and isinstance(rows, list)
        and all(_row(row, len(cells)) for row in rows)
    ):
        return None
    return piece


def _row(row: Any, cells: int) -> bool:
    """Whether ``row`` is a data file's row as ``Rows.add`` makes it, its cells among the first ``cells`` (JSON's
    types, exactly: a kept piece of 10,000 rows is checked on every build that takes it)."""
    if type(row) is not list or len(row) != 8:
        return False
    *texts, template, numbers, after = row
    return (
        all(type(v) is str for v in texts)
        and type(template) is int
        and 0 <= template < cells
        and type(numbers) is list
        and all(type(n) is str for n in numbers)
        and type(after) is list
        and all(type(n) is int and 0 <= n < cells for n in after)
    )


def _tier_bytes(p: Pages, ctx: Context, tier: Tier, metric: str) -> bytes:
    place(tier, metric)
    rows = Rows(p.base)
    html = _tier_body(p, ctx, tier, metric, rows)  # the data file's rows of one workload: rows.tiers[0]
    scan = scan_piece(html, ("<table>", "</table>"), [(ROWS_FILE, rows.scan_rows())] if rows.count else [])
    piece = {"html": html, "cells": list(rows.cells), "rows": rows.tiers[0], **scan._asdict()}
    return orjson.dumps(piece)


def _tier_body(p: Pages, ctx: Context, tier: Tier, metric: str, rows: Rows) -> str:
    ranked = sum(r.place is not None for r in tier.rows)
    label = tier_label(p, tier)
    count = f"{len(tier.rows)} result{'s' if len(tier.rows) != 1 else ''}, {ranked} ranked"
    key = esc_trimmed(tier_key(tier))
    more = len(tier.rows) - INLINE_ROWS
    note = f' <span class="evreg-tier-more">({more} more in the data file)</span>' if more > 0 else ""
    out = [
        f'<tbody class="evreg-tier" data-tier="{key}"><tr class="evreg-tier-head"><th colspan="{len(COLUMNS)}" '
        f'scope="rowgroup">Workload: {label} <span class="evreg-tier-count">({count})</span>{note}</th></tr>'
    ]
    rows.tiers.append([])
    differs = _differs(p, tier)
    for n, row in enumerate(tier.rows):
        setup = differs.get(row.mid, "")
        fixed, marked = ctx.fixed_tds(row, setup)
        own = [
            ctx.rank_td(row),
            _td(value_cell(p, row, metric), "", repr(ranking.median(row.values))),
        ]
        state = "ranked" if row.place else "unranked"
        low, high = ranking.spread(row.values)  # the spread it is ranked by
        if n >= INLINE_ROWS and not marked and not any(c in td for td in own for c in MARKS):
            rows.add(row.mid, p.home.get(row.mid, ""), state, repr(low), repr(high), own, fixed, setup)
            continue
        out.append(
            f'<tr class="evreg-row evreg-{state}" data-measurement="{esc_trimmed(row.mid)}" data-low="{low!r}" '
            f'data-high="{high!r}">{"".join(own)}{"".join(fixed)}</tr>'
        )
    out.append("</tbody>")
    return "".join(out)


_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def _shown(cell: str) -> str:
    """A cell's text as the comparison script reads it (``textContent``, runs of white space as one)."""
    return _SPACE.sub(" ", unescape(_TAG.sub("", cell))).strip()


def index_page(p: Pages, page: Page, metrics: list[str]) -> None:
    page.h(1, "Comparisons")
    page.p(
        "One table per headline metric across every family, ranked only within one workload and only among "
        f'promotable results, with ties where spreads overlap (<a href="{p.base}methodology/#comparisons">how '
        "comparisons rank</a>)."
    )
    rows = []
    for metric in metrics:
        results = rows_of(p, metric)
        rows.append(
            f'<tr><td><a href="{p.base}compare/{slug(metric)}/">{esc_trimmed(metric_title(metric))}</a></td>'
            f"<td><code>{esc_trimmed(metric)}</code></td><td>{len(results)}</td>"
            f"<td>{sum(r.why_not is None for r in results)}</td></tr>"
        )
    if rows:
        page.add(
            "<table><thead><tr><th>Metric</th><th>Id</th><th>Results</th><th>Promotable</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )
    else:
        page.note("No measurement stores a headline metric yet.")
