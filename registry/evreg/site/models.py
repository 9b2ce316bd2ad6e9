"""A page per canonical model, and the replications across sources.

A model's page gathers every result of its weights, whichever family and lab filed them (a weight revision names
its canonical model: ``evreg.core.vocab.models``): per headline metric, the best promotable value of each setup
(hardware, runtime, quantization, topology) in each workload, with the setups nobody measured in a workload shown
as gaps; then the results ranked within each workload, and what keeps each workload from being ranked against the
first. Results of one scope and workload from independent sources (by provenance: ``source_of``) are
*replications*: they agree when their spreads (``ranking.spread``) overlap, else they disagree; each verdict says how
far apart the values are, as a derived figure of their shown values (medians, or a series point's value).
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from evreg.claims import citations, ranking, scope, topology
from evreg.core.evidence import parse_ref
from evreg.core.layout import slug
from evreg.core.vocab import models as model_vocab
from evreg.core.vocab import repository_key
from evreg.site import compare
from evreg.site.html import Page, esc, esc_trimmed

if TYPE_CHECKING:
    from evreg.site.cite import Pages

T = TypeVar("T")

SETUP_COLUMNS = 6
"""Workloads a model's setup table shows as columns (the ones with the most results); the ranked tables below it hold
every workload."""


def page_path(model: str) -> str:
    return f"models/{slug(model)}.md"


def revisions_of_model(p: Pages) -> dict[str, list[tuple[str, str]]]:
    """Canonical model -> the (family, revision id) pairs that name it, in the family list's order."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for fid, fam in p.records.get("family", {}).items():
        for key in ("weight_revisions", "model_variants"):
            for rev in fam.get(key) or []:
                if isinstance(rev, dict) and isinstance(rev.get("model"), str) and isinstance(rev.get("id"), str):
                    out[rev["model"]].append((fid, rev["id"]))
    return dict(out)


def model_of(p: Pages) -> dict[str, str]:
    """Measurement id -> the canonical model of its revision (measurements of revisions that name none are absent)."""
    pairs = {pair: model for model, revs in revisions_of_model(p).items() for pair in revs}
    out = {}
    for mid, m in p.measurements.items():
        model = pairs.get((str(p.measurement_where(mid).family), str(m.get("revision"))))
        if model:
            out[mid] = model
    return out


def source_of(p: Pages, mid: str) -> str:
    """Who a result comes from, by provenance: the lab repository its evidence is read from (a family's declared
    source, however its address is spelled: ``repository_key``), else the author of the commit that added its record,
    else its family."""
    return p.memo("source", mid, lambda: _source_of(p, mid))


def _source_of(p: Pages, mid: str) -> str:
    m, row = p.measurements[mid], p.measurement_where(mid)
    fam = p.records.get("family", {}).get(str(row.family), {})
    evidence = m.get("evidence")
    if isinstance(evidence, str):
        ref = parse_ref(evidence)
        source = (fam.get("sources") or {}).get(ref.source or "") if ref.kind == "external" else None
        if isinstance(source, dict) and isinstance(source.get("repository"), str):
            return f"lab {repository_key(source['repository'])}"
    history = p.provenance.get(row.file) or []
    if history:
        return f"contributor {history[0].author}"
    return f"family {row.family}"


@dataclass(frozen=True)
class Setup:
    hardware: str
    runtime: str
    quantization: str
    topology: str

    def html(self, p: Pages) -> str:
        """The setup as a page shows it: hardware, runtime and quantization as the names they are (a memory size in a
        name is part of it, not a figure)."""
        names = (p.text(self.hardware, "hardware"), p.text(self.runtime, "runtime"))
        return " · ".join((*names, p.text(self.quantization, "quantization"), esc(self.topology)))


def setup_of(p: Pages, mid: str) -> Setup:
    """A result's setup: hardware, runtime family (its runtime's name, else its runtime), quantization, topology."""
    return p.memo("setup", mid, lambda: _setup_of(p, mid))


def _setup_of(p: Pages, mid: str) -> Setup:
    m = p.measurements[mid]
    pk = p.records.get("packet", {}).get(p.packet_of(mid) or "", {})
    hardware = m.get("hardware") or pk.get("hardware") or "hardware not recorded"
    runtime = m.get("runtime_family") or m.get("runtime") or pk.get("runtime") or "runtime not recorded"
    quant = m.get("quantization") or pk.get("quantization") or "quantization not recorded"
    hardware, runtime, quant = (" ".join(str(v).split()) for v in (hardware, runtime, quant))
    return Setup(hardware, runtime, quant, topology.of(m, pk))


@functools.lru_cache(maxsize=65536)
def same_setup(a: Setup, b: Setup) -> bool:
    """One setup however its parts are spelled (``RTX 5090`` is ``NVIDIA GeForce RTX 5090``; ``Q4_K_M`` is
    ``q4-k-m``)."""
    return (
        scope.same_hardware(a.hardware, b.hardware)
        and a.runtime.casefold() == b.runtime.casefold()
        and scope.same_quantization(a.quantization, b.quantization)
        and a.topology == b.topology
    )


@dataclass
class Replication:
    """Results of one model, metric, workload and setup from two or more sources."""

    model: str
    metric: str
    tier: compare.Tier
    setup: Setup
    rows: list[compare.Row]
    sources: list[str]

    @property
    def known(self) -> bool:
        """Whether every result has a spread to compare (``ranking.ROBUST_FROM`` repeats or more)."""
        return all(r.x is None and len(r.values) >= ranking.ROBUST_FROM for r in self.rows)

    @property
    def agree(self) -> bool:
        """Whether every pair of results' spreads overlap (``ranking.spread``: the interquartile range)."""
        spans = [ranking.spread(r.values) for r in self.rows]
        return max(low for low, _ in spans) <= min(high for _, high in spans)

    def apart(self) -> str:
        """How far apart the lowest and the highest result are, as a derived figure of their values as shown (the
        median of a run's repeats, a series point's value): the change from the lower to the higher."""
        by_value = sorted(self.rows, key=lambda r: ranking.median(r.values))
        return "{{ change:" + _side(by_value[-1], self.metric) + " from " + _side(by_value[0], self.metric) + " }}"


def _side(row: compare.Row, metric: str) -> str:
    if row.x is not None:
        return f"m:{row.mid}.{metric}{citations.selector(None, row.x)}"
    if len(row.values) == 1:
        return f"m:{row.mid}.{metric}{citations.selector(row.indices[0], None)}"
    return f"median:m:{row.mid}.{metric}"


def models_named(p: Pages) -> list[str]:
    """The vocabulary's models that some revision names, in the vocabulary's order."""
    named = revisions_of_model(p)
    return [m for m in model_vocab() if m in named]


def results_of(p: Pages, metrics: tuple[str, ...]) -> ModelResults:
    """The results of every model, worked out once per build by the process that makes the pages needing them (the
    site makes those pages in one part: ``evreg.site.pages.site_parts``)."""
    return p.memo("model results", metrics, lambda: ModelResults(p, list(metrics)))


class ModelResults:
    """The results of every canonical model, per headline metric, grouped by workload (``compare.tiers_of``): each
    model's rows are read at once, and ranked the first time its workloads are asked for (``tiers``: the index of
    models ranks none, a model's page its own)."""

    def __init__(self, p: Pages, metrics: list[str]) -> None:
        self.named = models_named(p)  # (no reference to the pages: they hold this in their memos)
        self.model_of = model_of(p)
        self.revisions = revisions_of_model(p)
        self._rows: dict[str, dict[str, list[compare.Row]]] = defaultdict(dict)  # model -> metric -> its rows
        self._tiers: dict[str, dict[str, list[compare.Tier]]] = {}  # model -> metric -> its workloads, ranked
        self._digests: dict[tuple[str, str], str] = {}  # (model, metric) -> ``_digest``
        for metric in metrics:
            for row in compare.rows_of(p, metric):
                if (model := self.model_of.get(row.mid)) is not None:
                    self._rows[model].setdefault(metric, []).append(row)

    def rows(self, model: str) -> dict[str, list[compare.Row]]:
        """A model's results by metric, as read (not ranked)."""
        return self._rows.get(model, {})

    def shown(self, model: str, metric: str | None = None) -> tuple[str, ...]:
        """What a model's results (of ``metric``, or of every metric) state that its pages rank and group them by,
        as one digest per metric: the inputs of the pieces made of them (``Pages.piece``)."""
        return tuple(self._digest(model, m) for m in ([metric] if metric else self.rows(model)))

    def _digest(self, model: str, metric: str) -> str:
        """A digest of a model's results of ``metric``: each row's fields but its workload, which is named by its
        number among the workloads listed once (a workload's key is long, and a model has thousands of rows)."""
        if (model, metric) not in self._digests:
            workloads: dict[Any, int] = {}
            rows = [
                (r.mid, r.values, r.indices, r.x, r.stated, r.why_not, workloads.setdefault(r.tier, len(workloads)))
                for r in self.rows(model).get(metric, [])
            ]
            try:
                listed = orjson.dumps(rows)  # a tenth of repr's time
            except TypeError:  # a number past 64 bits, which JSON has but orjson does not write
                listed = repr(rows).encode()
            shown = repr((metric, list(workloads))).encode() + b"\0" + listed
            self._digests[(model, metric)] = hashlib.sha256(shown).hexdigest()
        return self._digests[(model, metric)]

    def tiers_of(self, model: str, metric: str) -> list[compare.Tier]:
        """A model's workloads of ``metric``, its promotable rows ranked in each (a function of the rows read above),
        worked out once."""
        mine = self._tiers.setdefault(model, {})
        if metric not in mine:
            mine[metric] = compare.tiers_of(self.rows(model)[metric], metric)
        return mine[metric]

    def tiers(self, model: str) -> dict[str, list[compare.Tier]]:
        """A model's workloads by metric (``tiers_of``)."""
        return {metric: self.tiers_of(model, metric) for metric in self.rows(model)}

    def models(self) -> list[str]:
        """The vocabulary's models that some revision names, in the vocabulary's order."""
        return self.named

    def replications(self, p: Pages, model: str) -> list[Replication]:
        """Each setup of each workload and metric that two or more sources measured (promotable results only): worked
        out once (the model's page and the page of every replication show them)."""
        return p.memo("replications", model, lambda: self._replications(p, model))

    def _replications(self, p: Pages, model: str) -> list[Replication]:
        out = []
        for metric, tiers in self.tiers(model).items():
            for tier in tiers:
                for setup, rows in setup_groups(p, [row for row in tier.rows if row.why_not is None]):
                    sources = sorted({source_of(p, r.mid) for r in rows})
                    if len(sources) > 1:
                        out.append(Replication(model, metric, tier, setup, rows, sources))
        return out


def not_ranked_against(first: compare.Tier, other: compare.Tier) -> str:
    """Why a workload's results are not ranked against the first workload's, as HTML: the parts of their classes
    that differ, or that one of them states its workload only as text."""
    (ka, a), (kb, b) = first.key[0], other.key[0]
    if ka == "class" and kb == "class":
        return "; ".join(
            f"{compare.part_html(*x)} vs {compare.part_html(*y)}"
            for x, y in zip(a.parts(), b.parts(), strict=True)
            if x != y
        )
    if ka == "class":
        return "its workload states no phase, only text: it is grouped by that text"
    if kb == "class":
        return "the first workload states no phase, only text: it is grouped by that text"
    return "both workloads are stated only as text, and the texts differ"


def model_page(p: Pages, model: str, metrics: tuple[str, ...]) -> Page:
    results = results_of(p, metrics)
    spec = model_vocab()[model]
    page = Page(f"Model {spec['name']}")
    page.h(1, esc_trimmed(spec["name"]))
    facts = [f"Publisher: {esc(spec.get('publisher') or 'not recorded')}"]
    if spec.get("repository"):
        facts.append(f"upstream repository <code>{esc(spec['repository'])}</code>")
    params = spec.get("parameters") or {}
    if params:
        facts.append(
            "parameters: "
            + " · ".join(
                f"{esc(k.removesuffix('_b'))} {esc(v)}B" for k, v in params.items() if isinstance(v, int | float)
            )
        )
    page.p(" · ".join(facts) + f" (canonical model <code>{esc(model)}</code>).")
    revs = results.revisions.get(model, [])
    rows = []
    for fid, rid in revs:
        fam = p.records["family"][fid]
        rev = next(r for k in ("weight_revisions", "model_variants") for r in fam.get(k) or [] if r.get("id") == rid)
        where = f"<code>{esc(rev['repository'])}</code>" if rev.get("repository") else "no repository recorded"
        commit = f" @ <code>{esc(rev['revision'][:12])}</code>" if rev.get("revision") else ""
        sources = sorted(
            {source_of(p, mid) for mid in p.of_family.get(fid, []) if p.measurements[mid].get("revision") == rid}
        )
        rows.append(
            [
                p.link("family", fid, str(fam.get("display_name") or fam.get("name") or fid)),
                p.text(rev.get("label") or rid, "label"),
                where + commit,
                esc(", ".join(sources) or "no results"),
            ]
        )
    page.h(2, "Where these weights are filed")
    page.table(["Family", "Revision", "Weights", "Sources"], rows)
    if not results.rows(model):
        page.note("No headline metric of these weights is measured yet.")
        return page
    # Each metric's tables and the replications are pieces kept by the model's results and what they read: a pull
    # request's new result remakes its model's pieces of its metric, not every model's.
    for metric in results.rows(model):
        page.h(2, esc_trimmed(compare.metric_title(metric)), hid=slug(metric))
        section = functools.partial(_metric_section, p, results, model, metric)
        page.piece(*p.piece(("model metric", model, metric, *results.shown(model, metric)), section, ("", "")))
    page.h(2, "Replications")
    reps = functools.partial(_model_replications, p, results, model)
    page.piece(*p.piece(("model replications", model, *results.shown(model)), reps, ("", "")))
    return page


def _metric_section(p: Pages, results: ModelResults, model: str, metric: str, page: Page) -> None:
    tiers = results.tiers_of(model, metric)
    _setups(p, page, metric, tiers)
    _ranked(p, page, metric, tiers)


def _model_replications(p: Pages, results: ModelResults, model: str, page: Page) -> None:
    reps = results.replications(p, model)
    if reps:
        page.p(
            f'Results of one setup and workload from independent sources (<a href="{p.base}replications/">every '
            "replication</a>):"
        )
        page.add(replication_table(p, reps, show_model=False))
    else:
        page.note("No setup of these weights has been measured by two independent sources yet.")


def _best_per_setup(p: Pages, tier: compare.Tier) -> list[tuple[Setup, compare.Row, int]]:
    """Each setup of a workload once: its best promotable result (else its best result), and how many results it
    has there; in the tier's order (ranked first). Worked out once per workload of a model (its tiers live as long as
    the process's ``results_of``)."""
    return p.memo("best per setup", id(tier), lambda: _best_of(p, tier))


def _best_of(p: Pages, tier: compare.Tier) -> list[tuple[Setup, compare.Row, int]]:
    return [
        (setup, next((row for row in rows if row.why_not is None), rows[0]), len(rows))
        for setup, rows in setup_groups(p, tier.rows)
    ]


def setup_groups(p: Pages, rows: list[compare.Row]) -> list[tuple[Setup, list[compare.Row]]]:
    """Rows grouped by their setups (``by_setup``)."""
    return by_setup(rows, lambda row: setup_of(p, row.mid))


def by_setup(items: Iterable[T], setup: Callable[[T], Setup]) -> list[tuple[Setup, list[T]]]:
    """Items grouped by setup (``same_setup``), in order: each group is named by the setup of its first item, and an
    item joins the first group whose setup is its own. A setup spelled as one seen before joins that one's group
    without comparing again (a model's rows are thousands, its setups tens)."""
    groups: list[tuple[Setup, list[T]]] = []
    joins: dict[Setup, list[T]] = {}
    for item in items:
        s = setup(item)
        group = joins.get(s)
        if group is None:
            group = next((g for named, g in groups if same_setup(named, s)), None)
            if group is None:
                group = []
                groups.append((s, group))
            joins[s] = group
        group.append(item)
    return groups


def _columns(p: Pages, tiers: list[compare.Tier]) -> list[compare.Tier]:
    """The workloads a setup table shows: classes (a workload stated only as text is one lab's own) with the most
    setups first, at most ``SETUP_COLUMNS``."""
    classes = [t for t in tiers if t.key[0][0] == "class"]
    ranked = sorted(classes, key=lambda t: -len(_best_per_setup(p, t)))
    return ranked[:SETUP_COLUMNS]


def _setups(p: Pages, page: Page, metric: str, tiers: list[compare.Tier]) -> None:
    """The best promotable value of each setup in each workload class; a class nobody measured on a setup is a gap."""
    shown = _columns(p, tiers)
    if not shown:
        page.note("No result of this metric states its workload's phase: the results below are grouped by their text.")
        return
    setups: list[Setup] = []
    for tier in shown:
        for s, _, _ in _best_per_setup(p, tier):
            if not any(same_setup(s, t) for t in setups):
                setups.append(s)
    best = {id(t): _best_per_setup(p, t) for t in shown}
    rows = []
    for s in setups:
        cells = [s.html(p)]
        for tier in shown:
            hit = next(((row, n) for t, row, n in best[id(tier)] if same_setup(s, t)), None)
            if hit is None:
                cells.append('<span class="evreg-gap">not measured</span>')
                continue
            row, n = hit
            more = f' <span class="evreg-spread">best of {n} results</span>' if n > 1 else ""
            why = f'<span class="evreg-reason">not promotable: {esc(row.why_not)}</span> ' if row.why_not else ""
            cells.append(f"{why}{compare.value_cell(p, row, metric)}{more}")
        rows.append(cells)
    page.p(
        "The best promotable result of each setup (hardware · runtime · quantization · topology) in each workload "
        "class; <em>not measured</em> is a gap nobody has filled. Every workload, ranked, is below."
    )
    page.ul([f"<strong>W{n}</strong>: {compare.tier_label(p, t)}" for n, t in enumerate(shown, 1)])
    page.add('<div class="evreg-scroll">')
    page.table(["Setup", *(f"W{n}" for n in range(1, len(shown) + 1))], rows)
    page.add("</div>")


def _ranked(p: Pages, page: Page, metric: str, tiers: list[compare.Tier]) -> None:
    """Each workload's setups ranked by their best promotable result, and what keeps the workload from being ranked
    against the first."""
    better = compare.direction(metric) != -1
    for n, tier in enumerate(tiers):
        apart = not_ranked_against(tiers[0], tier) if n else ""
        page.p(
            f"<strong>Workload:</strong> {compare.tier_label(p, tier)}"
            + (f'<br><span class="evreg-apart">Not ranked against the first workload: {apart}</span>' if apart else "")
        )
        setups = _best_per_setup(p, tier)
        promotable = [row for _, row, _ in setups if row.why_not is None]
        places = dict(zip(map(id, promotable), ranking.rank([r.values for r in promotable], better), strict=True))
        placed = [(s, replace(row, place=places.get(id(row))), k) for s, row, k in setups]
        placed.sort(key=lambda e: (e[1].place is None, e[1].place.rank if e[1].place else 0))
        rows = []
        for s, row, k in placed:
            fid = str(p.measurement_where(row.mid).family)
            fam = p.records["family"].get(fid, {})
            count = f' <span class="evreg-spread">best of {k} results</span>' if k > 1 else ""
            rows.append(
                [
                    compare.rank_cell(row)[0],
                    compare.value_cell(p, row, metric) + count,
                    s.html(p),
                    p.link("family", fid, str(fam.get("display_name") or fam.get("name") or fid))
                    + f" · {esc(source_of(p, row.mid))}",
                ]
            )
        page.table(["Rank", "Value", "Setup", "Filed by"], rows)


def replication_table(p: Pages, reps: list[Replication], show_model: bool = True) -> str:
    """Replications as a table: what was measured, by whom, and whether the sources agree."""
    return (
        f"<table><thead><tr>{_replication_head(show_model)}</tr></thead>{replication_rows(p, reps, show_model)}</table>"
    )


def _replication_head(show_model: bool) -> str:
    head = ("<th>Model</th>" if show_model else "") + "<th>Metric</th><th>Workload</th><th>Setup</th><th>Results</th>"
    return f"{head}<th>Verdict</th>"


def replication_rows(p: Pages, reps: list[Replication], show_model: bool = True) -> str:
    """Replications as the rows of a ``replication_table`` (a ``tbody``)."""
    out = []
    for rep in reps:
        values = "<br>".join(
            f"{compare.value_cell(p, r, rep.metric)} <span class='evreg-source'>({esc(source_of(p, r.mid))})</span>"
            for r in rep.rows
        )
        gap = p.prose(rep.apart())
        if not rep.known:
            verdict = (
                f'<span class="evreg-unknown">too few repeats to tell</span>: a result has fewer than '
                f"{ranking.ROBUST_FROM} repeats, so its spread is not known; the values are {gap} apart"
            )
        elif rep.agree:
            verdict = f'<span class="evreg-agree">agree</span>: their spreads overlap (the values are {gap} apart)'
        else:
            verdict = (
                f'<span class="evreg-disagree">disagree</span>: their spreads do not overlap; the values are {gap} '
                "apart"
            )
        model = (
            f'<td><a href="{p.base}models/{slug(rep.model)}/">{esc(model_vocab()[rep.model]["name"])}</a></td>'
            if show_model
            else ""
        )
        out.append(
            f"<tr>{model}<td>{esc_trimmed(compare.metric_title(rep.metric))}</td>"
            f"<td>{compare.tier_label(p, rep.tier)}</td><td>{rep.setup.html(p)}</td><td>{values}</td>"
            f"<td>{verdict}</td></tr>"
        )
    return f"<tbody>{''.join(out)}</tbody>"


def models_index(p: Pages, metrics: tuple[str, ...]) -> Page:
    results = results_of(p, metrics)
    page = Page("Models")
    page.h(1, "Models")
    page.p(
        "Every canonical model the registry holds results of, whichever family and lab filed them: a model's page "
        "compares its weights across hardware, runtimes, quantizations and topologies."
    )
    rows = []
    of_model: dict[str, list[str]] = defaultdict(list)
    for mid, model in results.model_of.items():
        of_model[model].append(mid)
    for model in results.models():
        spec = model_vocab()[model]
        mids = of_model[model]
        families = dict.fromkeys(fid for fid, _ in results.revisions[model])
        rows.append(
            [
                f'<a href="{p.base}models/{slug(model)}/">{esc(spec["name"])}</a>',
                esc(spec.get("publisher") or "not recorded"),
                ", ".join(p.link("family", fid, fid) for fid in families),
                str(len(mids)),
                str(len({source_of(p, mid) for mid in mids})),
            ]
        )
    page.table(["Model", "Publisher", "Families", "Measurements", "Sources"], rows)
    return page


def replications_page(p: Pages, metrics: tuple[str, ...]) -> Page:
    results = results_of(p, metrics)
    page = Page("Replications")
    page.h(1, "Replications")
    page.p(
        "Results of one model, setup (hardware · runtime · quantization · topology), workload and metric from "
        "independent sources (by provenance: the lab repository an evidence file is read from, else who committed "
        "the record). They <em>agree</em> when their spreads (the interquartile range of three or more repeats) "
        "overlap, and <em>disagree</em> when they do not; with fewer repeats, or a series point, the spread is not "
        "known and the page says so. Each verdict says how far apart the values are (the change from the lower "
        "median to the higher)."
    )
    # a model's rows are a piece kept by its results and what they read (as on its page)
    pieces = [
        p.piece(
            ("replications", model, *results.shown(model)),
            functools.partial(_replications_of, p, results, model),
            ("<table>", "</table>"),
        )
        for model in results.models()
    ]
    if any(html for html, _, _ in pieces):
        page.add(f"<table><thead><tr>{_replication_head(True)}</tr></thead>")
        for piece in pieces:
            page.piece(*piece)
        page.add("</table>")
    else:
        page.note("No setup has been measured by two independent sources yet.")
    return page


def _replications_of(p: Pages, results: ModelResults, model: str, page: Page) -> None:
    if reps := results.replications(p, model):
        page.add(replication_rows(p, reps))


def jobs(p: Pages, metrics: list[str]) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """The pages of models: the index, one per model, the replications (each works out the models' results, once per
    process: ``results_of``)."""
    shown = tuple(metrics)
    return [
        ("models/index.md", models_index, (shown,)),
        *((page_path(model), model_page, (model, shown)) for model in models_named(p)),
        ("replications.md", replications_page, (shown,)),
    ]
