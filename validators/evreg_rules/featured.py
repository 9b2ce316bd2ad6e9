"""Featured results: a packet's featured_metric and a family's featured_results bind exactly one sample of one
measurement, copy its value, unit, workload and evidence exactly, and stand on promotable evidence of the scope the
headline speaks for; a family features exactly one hero."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations, scope, topology
from evreg.core.findings import Code, Finding
from evreg.core.vocab import model_key, models
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
    fam = ix.family(str(m_doc.place.family))
    weights = fam.revisions.get(m_doc.data.get("revision"), {})
    artifact = fam.artifacts.get(m_doc.data.get("artifact_id") or "", ({}, ""))[0]
    for why in label_scope(str(fr.get("label", "")), m_doc.data, weights, artifact):
        yield SIDEWAYS.at(
            doc,
            f"{base}/label",
            f"featured result {m_doc.id!r} is labelled as another run: {why}",
            fields={"evidence": m_doc.id, "label": why},
            hint="A headline's label names the scope of the run it cites: relabel it, or feature the run it names.",
        )
    if m_doc.place.family != doc.id:
        yield SIDEWAYS.at(
            doc,
            f"{base}/measurement_id",
            f"featured result cites {m_doc.id!r} of family {m_doc.place.family!r}",
            fields={"evidence": m_doc.id, "family": str(m_doc.place.family)},
        )
    yield from _promotable(doc, f"{base}/measurement_id", m_doc.data, m_doc.place.family, ix, "be featured")


_TP = re.compile(r"(?i)(?<![A-Za-z0-9])TP\s?(\d+)(?![0-9])")
_CARDS = re.compile(r"(?i)(?<![\w.])(\d+)\s?(?:x|×)\s?(?=[A-Za-z])|(?<![\w.])(\d+)\s(?:cards?|GPUs?)\b")
_WORD = re.compile(r"[A-Za-z0-9_]+")


def label_scope(label: str, m: dict[str, Any], weights: dict[str, Any], artifact: dict[str, Any]) -> list[str]:
    """What a headline's label says of the run's scope that the run it cites is not: a tensor-parallel degree or a
    card count of another topology, a quantization neither the run nor its artifact states, or a model the
    vocabulary knows that is not the weights' (a label is read as a reader reads it: the run's own name)."""
    stated = m.get("config")
    config: dict[str, Any] = stated if isinstance(stated, dict) else {}
    out = []
    tp = config.get("tp") if isinstance(config.get("tp"), int) else None
    n = topology.cards(config, m.get("cards"))
    for hit in _TP.finditer(label):
        said = int(hit.group(1))
        if said != (tp if tp is not None else (1 if n == 1 else None)):
            out.append(f"the label says {hit.group()}, the run is {topology.of(m)}")
    for hit in _CARDS.finditer(label):
        said = int(hit.group(1) or hit.group(2))
        if n is not None and said != n:
            out.append(f"the label says {hit.group().strip()}, the run used {n}")
    own = " ".join(str(x) for x in (m.get("quantization"), artifact.get("quantization"), artifact.get("label")) if x)
    own_words = {w.lower() for w in _WORD.findall(own)}
    for word in _WORD.findall(label):
        is_quant = word.lower() in scope.QUANT_WORDS or scope.GGUF_QUANT.fullmatch(word)
        if is_quant and word.lower() not in own_words and not any(scope.same_quantization(word, w) for w in own_words):
            out.append(f"the label names quantization {word!r}, the run is {own or 'of no stated quantization'}")
    named = {model for model in models() if _names(label, model)}
    if named and weights.get("model") and weights["model"] not in named:
        out.append(f"the label names model {sorted(named)[0]!r}, the run's weights are {weights['model']!r}")
    return out


def _names(label: str, model: str) -> bool:
    """Whether ``label`` names ``model`` by its id or a name of it, as whole words."""
    spec = models()[model]
    text = "-" + model_key(label) + "-"
    return any(f"-{model_key(n)}-" in text for n in (model, spec["name"], *spec.get("names", [])))


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
