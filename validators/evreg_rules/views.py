"""Views: a chart series shows one state and charts no estimate or quarantined run, and a joined curve stands on
promotable runs that differ only along its x axis."""

from __future__ import annotations

from collections.abc import Iterator

from evreg.check.rules import UNIT, Rule
from evreg.claims.scope import curve_identity
from evreg.core.findings import Code, Finding
from evreg.store import Registry
from evreg_rules.coverage import STATE
from evreg_rules.index import index
from evreg_rules.promotion import NON_PROMOTABLE, promotion_fields

CURVE = Code(
    "curve-identity-mixed",
    "A chart series whose points differ in anything but the x axis",
    "A line joins like with like; mixing runtimes, workloads or configs in one curve draws a trend "
    "that no single setup shows.",
    "Split the series by identity, or mark the view `discrete` so points are not joined.",
    "a series joining a vLLM run and a llama.cpp run",
)


def check_views(registry: Registry) -> Iterator[Finding]:
    ix = index(registry)
    for doc in registry.records("view"):
        for si, series in enumerate(doc.data["series"]):
            x_key = (series.get("x_from") or "config.tp").split(".")[-1]
            members = []
            for mi, mid in enumerate(series["measurement_ids"]):
                ptr = f"/series/{si}/measurement_ids/{mi}"
                if mid in ix.estimates:
                    yield NON_PROMOTABLE.at(
                        doc,
                        ptr,
                        f"{mid!r} is an estimate; estimates are never charted",
                        fields={"evidence": mid, "kind": "estimate"},
                    )
                    continue
                m_doc = ix.measurements.get(mid)
                if m_doc is None:
                    continue
                if m_doc.data["state"] in ("quarantined",):
                    yield NON_PROMOTABLE.at(
                        doc,
                        ptr,
                        f"{mid!r} is quarantined and cannot be charted",
                        fields=promotion_fields(mid, m_doc.data, ""),
                    )
                members.append((ptr, m_doc))
            states = {m.data["state"] for _, m in members}
            if len(states) > 1:
                yield STATE.at(
                    doc,
                    f"/series/{si}",
                    f"series mixes states {sorted(states)}; one series shows one state",
                    STATE.hint,
                )
            if doc.data.get("discrete") or len(members) < 2:
                continue
            ix = index(registry)
            for ptr, m_doc in members:
                why = ix.why_not_promotable(m_doc.data, m_doc.place.family)
                if why:
                    message = f"a joined curve shows {m_doc.id!r}: {why}"
                    yield NON_PROMOTABLE.at(doc, ptr, message, fields=promotion_fields(m_doc.id, m_doc.data, why))
            first = curve_identity(members[0][1].data, x_key)
            for ptr, m_doc in members[1:]:
                ident = curve_identity(m_doc.data, x_key)
                if ident != first:
                    diff = sorted(k for k in set(first) | set(ident) if first.get(k) != ident.get(k))
                    yield CURVE.at(
                        doc,
                        ptr,
                        f"{m_doc.id!r} differs from {members[0][1].id!r} in {', '.join(diff)}; "
                        "a joined curve may vary only along its x axis",
                        CURVE.hint,
                    )


RULES = [
    Rule("views", (CURVE, NON_PROMOTABLE), check_views, UNIT),
]
