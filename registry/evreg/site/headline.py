"""A family's headline: the results it declares (or its primary packet's featured metric), each value with its
trust in its own cell (state, grades, accepted defects, whether its evidence was checked), hardware, setup and
runtime beside it, and why it is not simply the best value the family holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evreg.claims import citations, topology
from evreg.core.vocab import promotable
from evreg.site.cite import Pages
from evreg.site.html import Page, esc


def featured_rows(p: Pages, page: Page, fam: dict[str, Any]) -> None:
    """A family's headline: each declared result with its trust under its value in the same cell (``Pages.trust_span``;
    a family's accepted defect of the result is marked there too), its packet, hardware and setup, runtime, and why it
    is not simply the best value the family holds."""
    rows = fam.get("featured_results") or _primary_headline(p, fam)
    if not rows:
        primary = fam.get("primary_packet_id")
        if not primary:
            page.note(
                "This family declares no headline and names no primary packet "
                "(<code>evreg feature FAMILY/PACKET MEASUREMENT METRIC --primary</code> sets both)."
            )
        else:
            page.note(
                f"This family declares no headline, and its primary packet {p.link('packet', primary, primary)} "
                "features no metric (<code>evreg feature</code> sets one)."
            )
        return
    if not fam.get("featured_results"):
        page.p("The headline is the primary packet's featured metric (the family declares no featured results).")
    table = []
    where = p.where.get(("family", fam["id"]))
    own = p.defects_in.get(where.file, []) if where and fam.get("featured_results") else []
    for n, fr in enumerate(rows):
        mid = fr["measurement_id"]
        m = p.measurements.get(mid, {})
        pid = p.packet_of(mid)
        pk = p.records.get("packet", {}).get(pid or "", {})
        about = f"/featured_results/{n}"  # the family's accepted defects of this result
        defects = [f for f in own if f.pointer == about or f.pointer.startswith(about + "/")]
        setup = topology.of(m, pk)
        table.append(
            [
                esc(fr["role"]),
                p.prose(fr["label"]),
                headline_value(p, fr) + " " + p.trust_span(mid, defects),
                p.link("packet", pid, pid) if pid else "no packet",
                p.text(m.get("hardware") or pk.get("hardware") or "not recorded", "hardware")
                + (f" · {esc(setup)}" if setup != topology.NOT_RECORDED else ""),
                p.text(m.get("runtime") or pk.get("runtime") or "not recorded", "runtime"),
                p.prose(fr.get("quality_label")),
                _why_not_best(p, fam["id"], fr),
            ]
        )
    page.table(
        ["Role", "Result", "Value", "Packet", "Hardware · setup", "Runtime", "Quality", "Better values"],
        table,
    )


def headline_value(p: Pages, fr: Mapping[str, Any]) -> str:
    """A featured value as readers see it: a statistic of the run's repeats (median, range, count, a warm-up flagged),
    a declared sample with the median beside it, or a series point."""
    mid, metric = fr["measurement_id"], fr["metric"]
    if fr.get("statistic") is not None:
        return p.repeats(mid, metric)
    if fr.get("sample_index") is not None:
        return p.repeats(mid, metric, featured=fr["sample_index"])
    return p.cite(mid, metric, None, fr.get("point_x"))


def _lower_is_better(metric: str) -> bool:
    return citations.unit_of(metric) in ("ms", "s")


def _values(m: dict[str, Any], metric: str) -> Iterable[tuple[float, int | None, float | None]]:
    """Every value of ``metric`` a measurement stores: (value, sample index, point x)."""
    for i, v in enumerate((m.get("metrics") or {}).get(metric) or []):
        if isinstance(v, int | float) and not isinstance(v, bool):
            yield float(v), i, None
    for pt in m.get("points") or []:
        v = pt.get(metric) if isinstance(pt, dict) else None
        if isinstance(v, int | float) and not isinstance(v, bool) and isinstance(pt.get("x"), int | float):
            yield float(v), None, pt["x"]


SCOPE_KEYS = ("revision", "artifact_id", "quantization", "hardware", "runtime", "workload")


def _scope_difference(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The scope keys (and config keys) on which two measurements differ."""
    keys = [k for k in SCOPE_KEYS if a.get(k) != b.get(k)]
    ca, cb = a.get("config") or {}, b.get("config") or {}
    return keys + [f"config.{k}" for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]


def _why_not_best(p: Pages, fid: str, fr: dict[str, Any]) -> str:
    """Why the headline is not simply the family's best value of its metric: the best promotable and the best
    non-promotable values beyond it, each linked, with the reason it is not the headline."""
    mid, metric = fr["measurement_id"], fr["metric"]
    head = p.measurements.get(mid)
    where = (fr.get("sample_index"), fr.get("point_x"))
    if fr.get("statistic") is not None:
        median = citations.median_of(head or {}, metric)
        own = None if isinstance(median, str) else median
    else:
        own = next((v for v, i, x in _values(head or {}, metric) if (i, x) == where), None)
    if head is None or own is None:
        return "—"
    sign = -1.0 if _lower_is_better(metric) else 1.0
    best: dict[bool, tuple[float, str, int | None, float | None, str]] = {}
    for other in p.of_family.get(fid, []):
        m = p.measurements[other]
        superseded = f"it is superseded by {p.superseded_by[other]}" if other in p.superseded_by else None
        reason = promotable(m) or superseded
        for v, i, x in _values(m, metric):
            if sign * v <= sign * own:
                continue
            key = reason is not None
            if key not in best or sign * v > sign * best[key][0]:
                why = reason or _promotable_reason(m, head, other == mid)
                best[key] = (v, other, i, x, why)
    if not best:
        return "None: it is the best value of this metric in the family."
    out = []
    for key, label in ((False, "Best promotable"), (True, "Best not promotable")):
        if key in best:
            v, other, i, x, why = best[key]
            out.append(f"{label}: {p.cite(other, metric, i, x)} ({esc(why)}) {p.trust_span(other)}")
    return '<span class="evreg-why">' + "<br>".join(out) + "</span>"


def _promotable_reason(m: dict[str, Any], head: dict[str, Any], same: bool) -> str:
    if same:
        return "another sample of the same measurement; the family features the one it declares"
    diff = _scope_difference(m, head)
    if diff:
        return "another scope: " + ", ".join(diff[:4]) + (" …" if len(diff) > 4 else "")
    return "same scope; the family declares its headline, it is never computed as a maximum"


def _primary_headline(p: Pages, fam: dict[str, Any]) -> list[dict[str, Any]]:
    """The primary packet's featured metric as a family headline, as the lab's own pages show it."""
    pk = p.records.get("packet", {}).get(fam.get("primary_packet_id") or "", {})
    fm = pk.get("featured_metric")
    if not isinstance(fm, dict):
        return []
    keys = ("measurement_id", "metric", "sample_index", "point_x", "statistic")
    return [{"role": "hero", "label": pk.get("label") or pk["id"], **{k: fm.get(k) for k in keys}}]
