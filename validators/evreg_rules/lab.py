"""Checks learnt from the neural.download lab's own family validator, on records of any family:
measurements that hold something, the metric vocabulary, sample annotations, initial views, ids
listed twice, packets (projection, package manifests), artifacts, estimates and selector hygiene.
Coverage cells and contracts are checked in ``lab_coverage``.

Some rules hold only for families kept in the lab's format (``family.format`` is
``layout.LAB_FORMAT``): that format's metric vocabulary is closed and some of its fields are
required, so a family that exports back to it must keep them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations
from evreg.core import jsonio
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, join_pointer
from evreg.core.layout import LAB_FORMAT, LIST_OF_KIND
from evreg.core.vocab import metrics as vocab_metrics
from evreg.records.models import MODELS, revisions_of
from evreg.store import MEASUREMENT_KINDS, Document, EvidenceState, Registry
from evreg_rules.index import index

SELECTOR_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
"""A selector key: what coverage axes, fixed selectors, cell, estimate and closure selectors may name."""

# -- codes ----------------------------------------------------------------------------------

EMPTY = Code(
    "measurement-empty",
    "A measurement with neither metrics nor points",
    "A measurement is an observation: one that holds no number backs nothing, yet it can be cited, charted "
    "and counted as coverage.",
    "Record the samples (`metrics`) or the sweep (`points`), or record the attempt as a closure with its reason.",
    '{"kind": "run-measurement", "id": "run-1", "metrics": {}}',
)
METRIC = Code(
    "metric-unknown",
    "A metric name the vocabulary does not define, where it must",
    "A metric's label, unit and precision come from the vocabulary (registry/evreg/vocab/metrics.json): an "
    "estimate of an unknown metric cannot say what its number is. The lab's family format accepts only its own "
    "metrics (in samples, points, views and headlines), so a family kept in that format may use no other.",
    "Use a metric of the vocabulary (decode_tok_s, ttft_ms, ...), or add the metric to the vocabulary first.",
    '{"metrics": {"decode_toks": [30.2]}}',
)
ANNOTATION = Code(
    "sample-annotation-invalid",
    "A sample annotation that names no stored sample, or misquotes it",
    "An annotation labels one sample of one metric (a warm-up, an outlier); one whose metric or index selects "
    "nothing, or whose value differs from the sample, labels a number that is not there.",
    "Name a metric of `metrics` and an index below its sample count; copy `value` exactly, or leave it out.",
    '{"metrics": {"decode_tok_s": [30.2]}, "sample_annotations": [{"metric": "decode_tok_s", "index": 3, '
    '"label": "warm-up"}]}',
)
INITIAL_VIEWS = Code(
    "initial-views-invalid",
    "An initial_view_ids list that is empty or repeats a view",
    "`initial_view_ids` picks the views a family page shows first, in order; an empty list shows none and a "
    "repeated id shows one chart twice.",
    "List each view once, or leave the field out to show every view.",
    '{"initial_view_ids": ["tp-view", "tp-view"]}',
)
LISTED_TWICE = Code(
    "record-listed-twice",
    "One record listed twice in the family's manifest order",
    "Ids are unique in every record list of the lab's manifest. Two entries with one id (even byte-identical "
    "ones) fold into one file here, so the manifest exported back differs from what was imported, and "
    "whichever copy a reader saw first wins.",
    "Remove the repeated entry from the source manifest (or from `record_order`) and import again.",
    '{"record_order": {"views": ["tp-view", "tp-view"]}}',
)
PROJECTION = Code(
    "projection-invalid",
    "A packet projection without its model, quantization, runtime or a whole token workload",
    "A projection compares a packet with a model of the hardware; it must name what is projected, and pin "
    "both the prompt and the output length (positive whole tokens) or neither, or the comparison is not "
    "like for like.",
    "Give `model`, `quant` and `runtime`, and set `prompt_tokens` and `output_tokens` together as positive integers.",
    '{"projection": {"model": "qwen3.8_27b", "quant": "Q4_K_M", "runtime": "llama_cpp", "prompt_tokens": 66}}',
)
PACKAGE_ID = Code(
    "package-id-mismatch",
    "A packet whose package manifest carries another id",
    "A package-backed packet and its package manifest are one deployable thing; two ids for it link the page "
    "of one to the install route of another.",
    "Make the packet's id the manifest's `id` (or point `manifest` at the packet's own package).",
    '{"id": "q8-tp2", "manifest": "packages/q8-tp1/package.json"}  (its id is q8-tp1)',
)
FEATURED_PACKAGE = Code(
    "featured-on-package",
    "A featured_metric on a package-backed packet",
    "A package-backed packet takes its headline from its package manifest; a second headline on the packet "
    "would show two numbers for one route. Only family-only (research) packets carry a featured_metric.",
    "Remove the featured_metric, or make the packet family-only (its manifest not a packages/*/package.json).",
    '{"manifest": "packages/q8-tp1/package.json", "featured_metric": {...}}',
)
UNPINNED = Code(
    "artifact-unpinned",
    "A quantized artifact with neither its revision nor a revision_status",
    "An artifact names exact weights; without a commit, the reason it is missing must be written down, so an "
    "unpinned export is never mistaken for a pinned one (and never stands in for its base revision).",
    "Give the artifact's 40-hex `revision`, or a `revision_status` saying why none was captured.",
    '{"id": "q4-art", "label": "Q4", "quantization": "Q4_K_M", "repository": "org/q4", "evidence": "..."}',
)
ESTIMATE = Code(
    "estimate-invalid",
    "An estimate of an unknown metric, with the wrong unit, an inverted interval or a value outside it",
    "An estimate is a projection with a band; its metric must be known, its unit the metric's, its interval "
    "low <= high with the value inside, and a superseded estimate must come before the one replacing it.",
    "Fix the metric, unit, interval or value; supersede an earlier estimate only.",
    '{"metric": "decode_tok_s", "unit": "ms", "value": 50, "interval": {"low": 36, "high": 48}}',
)
SELECTOR = Code(
    "selector-invalid",
    "A selector, axis or selector value that cannot be matched unambiguously",
    "Selectors say which scope a cell, closure or estimate is about. Keys are lowercase words "
    "([a-z][a-z0-9_]*); values are non-empty; axis values are unique and free of ':' (cell keys are "
    "ROW:COLUMN) and of the wildcard '*'; two axes never share a key and a selector never repeats one it "
    "inherits. A named-axis matrix pins its scope with fixed_selectors.",
    "Rename, deduplicate or remove the selector the message names.",
    '{"rows": ["q4:k"], "columns": [1], "cells": {"q4:k:1": {...}}}',
)
LAB_FIELD = Code(
    "lab-format-field",
    "A field of a lab-format family that the lab's format requires or types otherwise",
    "A family kept in the lab's manifest format exports back to it; the lab's validator refuses a manifest "
    "whose packets lack a manifest, whose family with packets names no primary packet, whose contract axes "
    "lack labels, or whose typed fields (collapse_coverage_contracts, profile_id, quality_scope) have another type.",
    "Add or fix the field the message names, as the lab's format (families/README.md) defines it.",
    '{"format": "neural-download-model-family-v1", "collapse_coverage_contracts": "yes"}',
)


# -- helpers --------------------------------------------------------------------------------


def lab_family(registry: Registry, doc: Document) -> bool:
    """Whether ``doc`` belongs to a family kept in the lab's manifest format."""
    fam = index(registry).family_of(doc).doc
    return fam is not None and fam.data.get("format") == LAB_FORMAT


def selector_problems(selectors: dict[str, Any], wildcard: bool = False) -> Iterator[tuple[str, str]]:
    """(key, why) of each selector whose key is not a selector key or whose value is empty (or '*')."""
    for key, value in selectors.items():
        if not SELECTOR_KEY.match(key):
            yield key, f"selector key {key!r} is not a lowercase word ([a-z][a-z0-9_]*)"
        values = value if isinstance(value, list) else [value]
        if any(v == "" for v in values):
            yield key, f"selector {key!r} has an empty value"
        if wildcard and "*" in values:
            yield key, f"selector {key!r} is the wildcard '*', which only a contract rule's match may use"


def _metric_known(metric: Any) -> bool:
    return isinstance(metric, str) and metric in vocab_metrics()


# -- measurements ---------------------------------------------------------------------------


def _annotations(doc: Document) -> Iterator[Finding]:
    metrics = doc.data.get("metrics") or {}
    for i, note in enumerate(doc.data.get("sample_annotations") or []):
        samples = metrics.get(note["metric"])
        base = f"/sample_annotations/{i}"
        if samples is None:
            yield ANNOTATION.at(doc, f"{base}/metric", f"annotation names metric {note['metric']!r}, not in `metrics`")
        elif note["index"] >= len(samples):
            message = f"annotation selects sample {note['index']} of {note['metric']}, which has {len(samples)}"
            yield ANNOTATION.at(doc, f"{base}/index", message)
        elif note.get("value") is not None and note["value"] != samples[note["index"]]:
            message = (
                f"annotation value {note['value']!r} differs from {note['metric']}[{note['index']}] "
                f"= {samples[note['index']]!r}"
            )
            yield ANNOTATION.at(doc, f"{base}/value", message)


def _typed_lab_fields(doc: Document, keys: tuple[str, ...], kind: type, what: str) -> Iterator[Finding]:
    """Fields of the lab's format the record's model does not declare, which must have type ``kind``."""
    declared = MODELS[str(doc.kind)].model_fields
    for key in keys:
        value = doc.data.get(key)
        if key in doc.data and key not in declared and not isinstance(value, kind):
            yield LAB_FIELD.at(doc, join_pointer(key), f"{key} must be {what}, not {jsonio.canonical(value).strip()}")


def check_measurements(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records(*MEASUREMENT_KINDS):
        data, lab = doc.data, lab_family(registry, doc)
        if not data.get("metrics") and not data.get("points"):
            yield EMPTY.at(doc, "", f"measurement {doc.id!r} holds no metrics and no points")
        if lab:
            for metric in data.get("metrics") or {}:
                if not _metric_known(metric):
                    message = f"metric {metric!r} is not in the vocabulary, which the lab's format requires"
                    yield METRIC.at(doc, join_pointer("metrics", metric), message)
            yield from _typed_lab_fields(doc, ("profile_id", "quality_scope"), str, "a string")
            for i, point in enumerate(data.get("points") or []):
                if not any(_metric_known(k) for k in point):
                    yield METRIC.at(doc, f"/points/{i}", f"point {i} carries no metric of the vocabulary")
        yield from _annotations(doc)


# -- the family record ----------------------------------------------------------------------


def _order(doc: Document) -> Iterator[Finding]:
    for key, ids in (doc.data.get("record_order") or {}).items():
        seen: set[str] = set()
        for i, rid in enumerate(ids):
            if rid in seen:
                message = f"{key} lists {rid!r} twice; the second entry is folded into the first"
                yield LISTED_TWICE.at(doc, join_pointer("record_order", key, i), message)
            seen.add(rid)


def _initial_views(doc: Document) -> Iterator[Finding]:
    views = doc.data.get("initial_view_ids")
    if views is None:
        return
    if not views:
        yield INITIAL_VIEWS.at(doc, "/initial_view_ids", "initial_view_ids is empty")
    for vid, n in Counter(views).items():
        if n > 1:
            i = [j for j, v in enumerate(views) if v == vid][1]
            yield INITIAL_VIEWS.at(doc, f"/initial_view_ids/{i}", f"view {vid!r} is listed {n} times")


def _artifacts(doc: Document) -> Iterator[Finding]:
    for where, rev in revisions_of(doc.data):
        for ai, art in enumerate(rev.get("quantized_artifacts") or []):
            if art.get("revision") is None and art.get("revision_status") is None:
                message = f"artifact {art['id']!r} has neither a revision nor a revision_status"
                yield UNPINNED.at(doc, f"{where}/quantized_artifacts/{ai}", message)


def _lab_family_fields(registry: Registry, doc: Document) -> Iterator[Finding]:
    data = doc.data
    yield from _typed_lab_fields(doc, ("collapse_coverage_contracts",), bool, "true or false")
    if data.get("primary_packet_id") is None and registry.unit_records(str(doc.id), "packet"):
        yield LAB_FIELD.at(doc, "", "the family has packets but names no primary_packet_id")
    for i, fr in enumerate(data.get("featured_results") or []):
        if not _metric_known(fr["metric"]):
            yield METRIC.at(
                doc, f"/featured_results/{i}/metric", f"featured metric {fr['metric']!r} is not in the vocabulary"
            )


def check_family(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("family"):
        yield from _order(doc)
        yield from _initial_views(doc)
        yield from _artifacts(doc)
        if doc.data.get("format") == LAB_FORMAT:
            yield from _lab_family_fields(registry, doc)


# -- packets --------------------------------------------------------------------------------


def _projection(doc: Document) -> Iterator[Finding]:
    projection = doc.data.get("projection")
    if projection is None:
        return
    if not isinstance(projection, dict):
        yield PROJECTION.at(doc, "/projection", "projection must be an object")
        return
    for key in ("model", "quant", "runtime"):
        if not isinstance(projection.get(key), str) or not projection[key]:
            yield PROJECTION.at(doc, "/projection", f"projection names no {key}")
    tokens = {k: projection.get(k) for k in ("prompt_tokens", "output_tokens")}
    if (tokens["prompt_tokens"] is None) != (tokens["output_tokens"] is None):
        yield PROJECTION.at(doc, "/projection", "projection pins only one of prompt_tokens and output_tokens")
    for key, value in tokens.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            yield PROJECTION.at(doc, f"/projection/{key}", f"{key} {value!r} is not a positive whole number")


def package_backed(packet: dict[str, Any]) -> str | None:
    """The path of a packet's package manifest (``packages/.../package.json``), or None: a family-only packet."""
    manifest = packet.get("manifest")
    if not isinstance(manifest, str) or parse_ref(manifest).kind == "url":
        return None
    path = parse_ref(manifest).path
    return path if path.startswith("packages/") and path.endswith("package.json") else None


def _package(registry: Registry, doc: Document) -> Iterator[Finding]:
    path = package_backed(doc.data)
    if path is None:
        return
    if doc.data.get("featured_metric") is not None:
        message = f"packet {doc.id!r} is package-backed ({path}); its headline comes from the package manifest"
        yield FEATURED_PACKAGE.at(doc, "/featured_metric", message)
    manifest = doc.data["manifest"]
    if parse_ref(manifest).kind != "local" or registry.evidence(manifest) is not EvidenceState.FILE:
        return  # an external manifest is not here to read; a missing local one is evidence-missing
    package, problems = jsonio.parse(registry.read_file(manifest), manifest)
    if not problems and isinstance(package, dict) and package.get("id") != doc.id:
        message = f"package manifest {manifest} has id {package.get('id')!r}, not the packet's {doc.id!r}"
        yield PACKAGE_ID.at(doc, "/manifest", message)


def check_packets(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("packet"):
        yield from _projection(doc)
        yield from _package(registry, doc)
        if not lab_family(registry, doc):
            continue
        if doc.data.get("manifest") is None:
            yield LAB_FIELD.at(doc, "", f"packet {doc.id!r} has no manifest, which the lab's format requires")
        fm = doc.data.get("featured_metric")
        if fm and not _metric_known(fm["metric"]):
            yield METRIC.at(
                doc, "/featured_metric/metric", f"featured metric {fm['metric']!r} is not in the vocabulary"
            )


# -- views, estimates, closures -------------------------------------------------------------


def check_views(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("view"):
        if not lab_family(registry, doc):
            continue  # other labs chart their own metrics (a divergence, a KL mean) under their own names
        for i, metric in enumerate(doc.data["metrics"]):
            if not _metric_known(metric):
                yield METRIC.at(doc, f"/metrics/{i}", f"view metric {metric!r} is not in the vocabulary")


def _later_or_self(registry: Registry, doc: Document) -> bool:
    """Whether the estimate ``doc`` supersedes itself or one listed after it in the family's manifest order."""
    target = doc.data.get("supersedes")
    if target == doc.id:
        return True
    fam = index(registry).family_of(doc).doc
    order = ((fam.data.get("record_order") or {}) if fam else {}).get(LIST_OF_KIND["estimate"], [])
    return target in order and doc.id in order and order.index(target) > order.index(doc.id)


def _estimate(registry: Registry, doc: Document) -> Iterator[Finding]:
    data = doc.data
    metric, unit = data["metric"], data["unit"]
    if not _metric_known(metric):
        yield ESTIMATE.at(doc, "/metric", f"estimate metric {metric!r} is not in the vocabulary")
    elif unit != citations.unit_of(metric):
        yield ESTIMATE.at(doc, "/unit", f"unit {unit!r} is not {metric}'s unit {citations.unit_of(metric)!r}")
    low, high, value = data["interval"]["low"], data["interval"]["high"], data["value"]
    if low > high:
        yield ESTIMATE.at(doc, "/interval", f"interval low {low!r} is above high {high!r}")
    elif not low <= value <= high:
        yield ESTIMATE.at(doc, "/value", f"value {value!r} lies outside its interval [{low!r}, {high!r}]")
    if data.get("supersedes") is not None and _later_or_self(registry, doc):
        message = f"estimate supersedes {data['supersedes']!r}, which is itself or listed after it"
        yield ESTIMATE.at(doc, "/supersedes", message)
    if not data["selectors"]:
        yield SELECTOR.at(doc, "/selectors", "an estimate needs selectors saying what it estimates")
    for key, why in selector_problems(data["selectors"], wildcard=True):
        yield SELECTOR.at(doc, join_pointer("selectors", key), why)


def check_estimates(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("estimate"):
        yield from _estimate(registry, doc)


def check_closures(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("closure"):
        if not doc.data["selectors"]:
            yield SELECTOR.at(doc, "/selectors", "a closure needs selectors saying what it closes")
        for key, why in selector_problems(doc.data["selectors"], wildcard=True):
            yield SELECTOR.at(doc, join_pointer("selectors", key), why)


RULES = [
    Rule("lab-measurements", (EMPTY, METRIC, ANNOTATION, LAB_FIELD), check_measurements, UNIT),
    Rule(
        "lab-family",
        (LISTED_TWICE, INITIAL_VIEWS, UNPINNED, LAB_FIELD, METRIC),
        check_family,
        UNIT,
    ),
    Rule("lab-packets", (PROJECTION, FEATURED_PACKAGE, PACKAGE_ID, LAB_FIELD, METRIC), check_packets, UNIT),
    Rule("lab-views", (METRIC,), check_views, UNIT),
    Rule("lab-estimates", (ESTIMATE, SELECTOR), check_estimates, UNIT),
    Rule("lab-closures", (SELECTOR,), check_closures, UNIT),
]
