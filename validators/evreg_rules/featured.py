"""Featured results: a packet's featured_metric and a family's featured_results bind exactly one sample of one
measurement, copy its value, unit, workload and evidence exactly, and stand on promotable evidence of the scope the
headline speaks for; a family features exactly one hero."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations, scope
from evreg.core.findings import Code, Finding
from evreg.store import Document, Registry
from evreg_rules.index import Index, index
from evreg_rules.promotion import NON_PROMOTABLE, SIDEWAYS, promotion_fields, scope_fields

UNBOUND = Code(
    "featured-unbound",
    "A featured result that does not bind exactly one measurement and one sample",
    "A headline must name one observation; without an exact binding a renderer falls back to picking "
    "a maximum, which is cherry-picking.",
    "Give `statistic: median` (the median of the run's samples), or exactly one of sample_index or point_x selecting "
    "a value that exists; a family lists exactly one hero.",
    '{"measurement_id": "run-1", "metric": "decode_tok_s"}  (no sample_index or point_x)',
)
FEATURED_MISMATCH = Code(
    "featured-mismatch",
    "A featured value, unit, workload or evidence that differs from the cited sample",
    "A copied headline value must be exactly the stored sample, or the headline and its receipt disagree.",
    "Copy value, unit, workload and evidence exactly from the measurement (no rounding).",
    '{"value": 30.21, ...} when the sample is 30.2134',
)


def _selected(doc: Document, base: str, binding: dict[str, Any], m: dict[str, Any]) -> tuple[Any, Finding | None]:
    """The value a featured result states: the median of the run's samples (``statistic``), or the one sample or
    point it selects; or the finding that it binds none or several."""
    has_index, has_x = binding.get("sample_index") is not None, binding.get("point_x") is not None
    if binding.get("statistic") is not None:
        if has_index or has_x:
            message = "a featured result states a statistic or selects one sample, not both"
            return None, UNBOUND.at(doc, f"{base}/statistic", message, UNBOUND.hint)
        median = citations.median_of(m, binding.get("metric", ""))
        if isinstance(median, str):
            return None, UNBOUND.at(doc, f"{base}/statistic", f"measurement {m['id']!r} {median}", UNBOUND.hint)
        return median, None
    if has_index == has_x:
        return None, UNBOUND.at(
            doc, base, "a featured result needs exactly one of sample_index, point_x and statistic", UNBOUND.hint
        )
    value = citations.lookup(m, binding.get("metric", ""), binding.get("sample_index"), binding.get("point_x"))
    if isinstance(value, str):
        ptr = f"{base}/sample_index" if has_index else f"{base}/point_x"
        return None, UNBOUND.at(doc, ptr, f"measurement {binding['measurement_id']!r} {value}", UNBOUND.hint)
    return value, None


def _copied_exactly(doc: Document, fm: dict[str, Any], value: Any, m: dict[str, Any]) -> Iterator[Finding]:
    """Mismatches between a packet's featured_metric and the sample and measurement it cites:
    value, unit, workload and evidence are copies and must be exact."""
    if fm["value"] != value:
        yield FEATURED_MISMATCH.at(
            doc,
            "/featured_metric/value",
            f"featured value {fm['value']!r} differs from the cited {'median' if fm.get('statistic') else 'sample'} "
            f"{value!r}",
            FEATURED_MISMATCH.hint,
        )
    unit = citations.unit_of(fm["metric"])
    if fm["unit"] != unit:
        yield FEATURED_MISMATCH.at(
            doc,
            "/featured_metric/unit",
            f"unit {fm['unit']!r} is not {fm['metric']}'s unit {unit!r}",
            FEATURED_MISMATCH.hint,
        )
    for key in ("workload", "evidence"):
        if fm[key] != m.get(key):
            yield FEATURED_MISMATCH.at(
                doc,
                f"/featured_metric/{key}",
                f"featured {key} differs from measurement {m['id']!r}'s {key}",
                FEATURED_MISMATCH.hint,
            )


def _packet_featured(doc: Document, ix: Index) -> Iterator[Finding]:
    """A packet's featured_metric: bound to one sample, copied exactly, of the packet's scope and promotable."""
    fm = doc.data.get("featured_metric")
    m_doc = ix.measurements.get(fm["measurement_id"]) if fm else None
    if not fm or m_doc is None:
        return
    m = m_doc.data
    value, problem = _selected(doc, "/featured_metric", fm, m)
    if problem:
        yield problem
        return
    yield from _copied_exactly(doc, fm, value, m)
    for key, why in scope.mismatched(doc.data, m, claim_name="the packet"):
        yield SIDEWAYS.at(
            doc,
            "/featured_metric/measurement_id",
            f"featured measurement {m['id']!r}: {why}",
            fields=scope_fields(m["id"], doc.data, m, (key,)),
        )
    yield from _promotable(doc, "/featured_metric/measurement_id", m, doc.place.family, ix, "be a headline")


def _family_result(
    doc: Document, base: str, fr: dict[str, Any], m_doc: Document, primary: Document | None, ix: Index
) -> Iterator[Finding]:
    """One of a family's featured_results: bound to one sample of a measurement of this family, of
    the revision the headline speaks for (its own, else the primary packet's), and promotable. The hero
    speaks for a packet: the one whose folder holds its measurement (``check_placement`` holds it to that
    packet's whole scope), else the primary packet, whose whole scope it must then have."""
    _, problem = _selected(doc, base, fr, m_doc.data)
    if problem:
        yield problem
    claimed = fr.get("revision") or (primary.data["revision"] if primary else None)
    if claimed and m_doc.data["revision"] != claimed:
        source = "its `revision`" if fr.get("revision") else f"primary packet {primary.id!r}"  # type: ignore[union-attr]
        yield SIDEWAYS.at(
            doc,
            f"{base}/measurement_id",
            f"featured result cites {m_doc.id!r} of revision {m_doc.data['revision']!r}, "
            f"but the family's headline speaks for revision {claimed!r} ({source})",
            fields={"evidence": m_doc.id, "revision": f"{m_doc.data['revision']!r} for {claimed!r}"},
        )
    if fr.get("role") == "hero" and not m_doc.place.packet and primary is not None:
        for key, why in scope.mismatched(primary.data, m_doc.data, claim_name=f"primary packet {primary.id!r}"):
            yield SIDEWAYS.at(
                doc,
                f"{base}/measurement_id",
                f"the family's hero {m_doc.id!r} is not of the scope the headline speaks for: {why}",
                fields=scope_fields(m_doc.id, primary.data, m_doc.data, (key,)),
                hint="A hero speaks for the primary packet, or for the packet whose folder holds its measurement; "
                "feature a run of that scope.",
            )
    if m_doc.place.family != doc.id:
        yield SIDEWAYS.at(
            doc,
            f"{base}/measurement_id",
            f"featured result cites {m_doc.id!r} of family {m_doc.place.family!r}",
            fields={"evidence": m_doc.id, "family": str(m_doc.place.family)},
        )
    yield from _promotable(doc, f"{base}/measurement_id", m_doc.data, m_doc.place.family, ix, "be featured")


def _promotable(
    doc: Document, pointer: str, m: dict[str, Any], family: str | None, ix: Index, what: str
) -> Iterator[Finding]:
    """A featured measurement may back a headline: not an estimate, screen, quarantined or superseded run."""
    reason = ix.why_not_promotable(m, family)
    if reason:
        message = f"featured measurement {m['id']!r} cannot {what}: {reason}"
        yield NON_PROMOTABLE.at(doc, pointer, message, fields=promotion_fields(m["id"], m, reason))


def _family_featured(doc: Document, ix: Index) -> Iterator[Finding]:
    """A family's featured_results: exactly one hero, and each result as ``_family_result`` checks it."""
    results = doc.data.get("featured_results") or []
    heroes = [i for i, r in enumerate(results) if r["role"] == "hero"]
    if results and len(heroes) != 1:
        yield UNBOUND.at(
            doc,
            "/featured_results",
            f"featured_results has {len(heroes)} heroes; exactly one is required",
            UNBOUND.hint,
        )
    primary = ix.packets.get(doc.data.get("primary_packet_id") or "")
    for i, fr in enumerate(results):
        m_doc = ix.measurements.get(fr["measurement_id"])
        if m_doc is None:
            continue
        yield from _family_result(doc, f"/featured_results/{i}", fr, m_doc, primary, ix)


def check_featured(registry: Registry) -> Iterator[Finding]:
    ix = index(registry)
    for doc in registry.records("packet"):
        yield from _packet_featured(doc, ix)
    for doc in registry.records("family"):
        yield from _family_featured(doc, ix)


RULES = [
    Rule("featured", (UNBOUND, FEATURED_MISMATCH, SIDEWAYS, NON_PROMOTABLE), check_featured, UNIT),
]
