"""Coverage checks learnt from the neural.download lab's own validator: axis and selector hygiene
of matrices and contracts, and on every cell (untested ones too) the scope its selectors bind
(revision, artifact, quantization, speculator), the packet and estimate it links, the evidence a
screened or quarantined cell needs, and the point a ``point_x`` cell shows.

``coverage`` already checks a cell against the measurement it cites (state, promotability, scope) and
that matrices and contracts are complete; these rules add what a cell says beyond that."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import citations
from evreg.claims.coverage import cell_key, expand, merge
from evreg.claims.scope import mismatched, runtime_matches, same_quantization
from evreg.core import jsonio
from evreg.core.findings import Code, Finding, join_pointer
from evreg.core.vocab import metrics as vocab_metrics
from evreg.store import Document, Registry
from evreg_rules.index import FamilyIndex, Index, index
from evreg_rules.lab import LAB_FIELD, SELECTOR, SELECTOR_KEY, lab_family, selector_problems
from evreg_rules.promotion import SIDEWAYS, scope_fields
from evreg_rules.references import DANGLING, MISMATCH

CELL_EVIDENCE = Code(
    "cell-evidence-invalid",
    "A coverage cell without the evidence its state needs, or with evidence of the wrong kind",
    "A screened or quarantined cell says something was run; it must point at what shows it (a measurement, "
    "or an evidence file). An estimated cell shows a projection and must not also cite a run, or the run's "
    "authority leaks onto the estimate. A point_x picks a point of a cited measurement, so it needs one.",
    "Cite the measurement (evidence_id) or the evidence file; an estimated cell cites only its estimate_id.",
    '{"state": "quarantined", "label": "failed gate"}  (no evidence_id, no evidence)',
)
CELL_POINT = Code(
    "cell-point-unbound",
    "A point_x cell whose point is not the cell's own, or whose label is not the point's",
    "A cell that shows one point of a sweep must sit where that point is: the measurement's axis is one of "
    "the cell's selectors and its value is the point's x. The cell's label shows the point's numbers, derived "
    "from the stored values, so a typed label cannot claim a number the point does not hold.",
    "Set point_x to the cell's value of the measurement's axis; write the label as the point's values, each a "
    "citation after its metric's letter code (D decode, P prefill, T TTFT, ...).",
    '{"selectors": {"active_context_tokens": 8192}, "point_x": 16384, "label": "D999"}',
)
RULE = Code(
    "contract-rule-invalid",
    "A coverage-contract rule with unknown fields, empty values or a match outside its axes",
    "A contract's rules fill its cells in order; a rule field no cell has (a typo), an empty label or reason, "
    "a retry without a status, a repeated rule id or a match value no axis has are silently ignored "
    "when the contract expands.",
    "Use the cell fields (state, label, reason, evidence_id, evidence, packet_id, estimate_id, point_x, parent, "
    "retry), non-empty; give retry a status; match declared axis values or '*'.",
    '{"id": "r1", "match": {"tp": 3}, "stat": "missing"}  (axis tp is [1, 2]; stat is no field)',
)
SPECULATOR = Code(
    "speculator-mismatch",
    "A speculator artifact of another revision, or not declared as a speculator",
    "Speculative decoding pairs a target with a draft model; a cell naming as its speculator an artifact of "
    "another revision, or a target artifact, describes a pairing that was never run.",
    "Name an artifact of the cell's revision declared with role 'speculator'.",
    '{"speculator_artifact_id": "q38-q4-k-xl"}  (a target artifact)',
)

CELL_FIELDS = frozenset(
    {"state", "label", "reason", "evidence_id", "evidence", "packet_id", "estimate_id", "point_x", "parent", "retry"}
)
"""What a contract rule may set on its cells (besides its own id and match)."""
_MISSING = object()


@dataclass
class Cell:
    """One cell as the checks see it: its fields, effective selectors, where each came from, and what it says."""

    doc: Document
    fields: dict[str, Any]
    selectors: dict[str, Any]
    field_ptr: dict[str, str]  # cell field -> pointer
    selector_ptr: dict[str, str]  # selector key -> pointer
    view_evidence: bool = False
    derive_label: bool = False
    out: dict[tuple[str, str, str], Finding] = field(default_factory=dict)

    def at(
        self, code: Code, key: str, message: str, selector: bool = False, fields: dict[str, str] | None = None
    ) -> None:
        pointer = (self.selector_ptr if selector else self.field_ptr).get(key, self.field_ptr.get("", ""))
        self.out.setdefault((code.code, pointer, message), code.at(self.doc, pointer, message, fields=fields))


# -- one cell -------------------------------------------------------------------------------


def _binding(cell: Cell, fam: FamilyIndex) -> None:
    """The revision, artifact, quantization and speculator a cell's selectors name agree with the family."""
    sel = cell.selectors
    rev, art_id = sel.get("revision"), sel.get("artifact_id")
    if art_id is not None and art_id not in fam.artifacts:
        cell.at(DANGLING, "artifact_id", f"artifact {art_id!r} names no quantized artifact of the family", True)
    elif isinstance(rev, str) and rev in fam.revisions:
        if art_id is None and (why := fam.unnamed_artifact(rev, sel.get("quantization"))) is not None:
            cell.at(MISMATCH, "revision", why, True)
        elif art_id is not None:
            art, owner = fam.artifacts[art_id]
            if owner != rev:
                cell.at(
                    MISMATCH, "artifact_id", f"artifact {art_id!r} belongs to revision {owner!r}, not {rev!r}", True
                )
            for key in ("quantization", "variant"):
                if key in sel and sel[key] != art["quantization"]:
                    message = f"{key} {sel[key]!r} is not artifact {art_id!r}'s quantization {art['quantization']!r}"
                    cell.at(MISMATCH, key, message, True)
    spec = sel.get("speculator_artifact_id")
    if spec is None:
        return
    if spec not in fam.artifacts:
        cell.at(DANGLING, "speculator_artifact_id", f"speculator {spec!r} names no artifact of the family", True)
        return
    art, owner = fam.artifacts[spec]
    if isinstance(rev, str) and owner != rev:
        cell.at(
            SPECULATOR,
            "speculator_artifact_id",
            f"speculator {spec!r} belongs to revision {owner!r}, not {rev!r}",
            True,
        )
    elif art.get("role") != "speculator":
        cell.at(SPECULATOR, "speculator_artifact_id", f"artifact {spec!r} is not declared with role 'speculator'", True)


def _packet_disagreements(sel: dict[str, Any], packet: dict[str, Any]) -> Iterator[str]:
    """How a linked packet's scope differs from the cell's selectors; a key the cell selects and the packet
    lacks is a difference too. Runtimes compare as identities (``scope.runtime_matches``)."""

    def shown(key: str) -> str:
        return repr(packet[key]) if packet.get(key) is not None else "none"

    for key in ("revision", "artifact_id"):
        if key in sel and packet.get(key) != sel[key]:
            yield f"{key} {shown(key)}, the cell {sel[key]!r}"
    got = packet.get("quantization")
    for key in ("quantization", "variant"):
        want = sel.get(key)
        same = isinstance(got, str) and isinstance(want, str) and same_quantization(got, want)
        if key in sel and not same and got != want:
            yield f"quantization {shown('quantization')}, the cell's {key} {sel[key]!r}"
    if isinstance(sel.get("runtime"), str) and not runtime_matches(sel["runtime"], packet):
        yield f"runtime {shown('runtime')}, the cell {sel['runtime']!r}"
    tp = sel.get("tp", sel.get("cards"))
    if tp is None or isinstance(tp, bool):
        return
    cards, topologies = packet.get("cards"), packet.get("topologies")
    if cards != tp if cards is not None else not (isinstance(topologies, list) and tp in topologies):
        yield f"{shown('cards') if cards is not None else shown('topologies')} cards, the cell TP{cell_key(tp)}"


def _links(cell: Cell, ix: Index) -> None:
    """The packet and the estimate a cell links are of the cell's scope."""
    f, sel = cell.fields, cell.selectors
    packet = ix.packets.get(f.get("packet_id") or "")
    if packet is not None:
        for why in _packet_disagreements(sel, packet.data):
            cell.at(
                SIDEWAYS, "packet_id", f"the cell links packet {packet.id!r} of another scope: the packet has {why}"
            )
        m_doc = ix.measurements.get(f.get("evidence_id") or "")
        if m_doc is not None and packet.valid and m_doc.valid:
            for key, why in mismatched(packet.data, m_doc.data, claim_name="the packet"):
                cell.at(
                    SIDEWAYS,
                    "evidence_id",
                    f"the cell's evidence {m_doc.id!r} is not of the scope of the packet it links "
                    f"({packet.id!r}): {why}",
                    fields=scope_fields(m_doc.id, packet.data, m_doc.data, (key,)) | {"packet": packet.id},
                )
    estimate = ix.estimates.get(f.get("estimate_id") or "")
    if estimate is not None:
        theirs = estimate.data["selectors"]
        for key, want in sel.items():
            got = theirs.get(key, _MISSING)
            if got is _MISSING or got != want or isinstance(got, bool) != isinstance(want, bool):
                shown = "nothing" if got is _MISSING else repr(got)
                message = f"the cell selects {key} = {want!r}, but estimate {estimate.id!r} has {shown}"
                cell.at(SIDEWAYS, "estimate_id", message)


def _evidence(cell: Cell) -> None:
    f = cell.fields
    state = f.get("state")
    if state in ("lab-screened", "quarantined") and not (
        f.get("evidence_id") or f.get("evidence") or cell.view_evidence
    ):
        cell.at(CELL_EVIDENCE, "state", f"a {state} cell names no evidence (evidence_id or evidence)")
    if f.get("evidence_id") is not None and (state == "estimated" or f.get("estimate_id") is not None):
        cell.at(CELL_EVIDENCE, "evidence_id", f"an estimated cell also cites measurement {f['evidence_id']!r}")
    if f.get("point_x") is not None and f.get("evidence_id") is None:
        cell.at(CELL_EVIDENCE, "point_x", "point_x picks a point, but the cell cites no measurement (evidence_id)")


def short_number(value: float) -> str:
    """A point value as cell labels show it: thousands grouped and no decimals from 1,000 up, else at most two
    decimals without trailing zeros."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def point_label(point: dict[str, Any]) -> str:
    """The label a cell showing ``point`` carries: each vocabulary metric of the point, in vocabulary order, as
    its point code and value (``D27.5 · P1,204``)."""
    parts = []
    for metric, spec in vocab_metrics().items():
        value = point.get(metric)
        if (
            spec.get("point_code")
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        ):
            parts.append(f"{spec['point_code']}{short_number(value)}")
    return " · ".join(parts)


def _point(cell: Cell, ix: Index) -> None:
    f = cell.fields
    x, m_doc = f.get("point_x"), ix.measurements.get(f.get("evidence_id") or "")
    if x is None or m_doc is None:
        return
    axis = m_doc.data.get("axis")
    got = cell.selectors.get(axis, _MISSING) if isinstance(axis, str) else _MISSING
    if got is _MISSING or got != x or isinstance(got, bool):
        where = f"its axis {axis!r}" if isinstance(axis, str) else "no axis"
        message = f"point_x {cell_key(x)} is not the cell's value of {m_doc.id!r}'s axis ({where}; the cell has " + (
            "no such selector)" if got is _MISSING else f"{cell_key(got)})"
        )
        cell.at(CELL_POINT, "point_x", message)
    point = next((p for p in m_doc.data.get("points") or [] if p.get("x") == x), None)
    if cell.derive_label and point is not None:
        derived, shown = point_label(point), citations.plain(str(f.get("label") or ""), ix.measurement_data)
        if shown != derived:
            cell.at(CELL_POINT, "label", f"label {shown!r} is not {m_doc.id!r}'s point at {cell_key(x)} ({derived!r})")


def check_cell(cell: Cell, registry: Registry) -> list[Finding]:
    ix = index(registry)
    _binding(cell, ix.family_of(cell.doc))
    _links(cell, ix)
    _evidence(cell)
    _point(cell, ix)
    return list(cell.out.values())


# -- coverage views -------------------------------------------------------------------------


def _axis_values(doc: Document, pointer: str, values: list[Any], contract: bool) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, value in enumerate(values):
        text = jsonio.canonical(value).strip() if contract else cell_key(value)
        if value == "" or value == "*" or (not contract and (isinstance(value, bool) or ":" in str(value))):
            yield SELECTOR.at(doc, f"{pointer}/{i}", f"axis value {value!r} is empty, '*', true/false or holds ':'")
        elif text in seen:
            yield SELECTOR.at(doc, f"{pointer}/{i}", f"axis value {value!r} is listed twice")
        seen.add(text)


def _value_labels(doc: Document, pointer: str, axis: dict[str, Any], values: list[Any]) -> Iterator[Finding]:
    labels = axis.get("value_labels")
    if labels is None:
        return
    known = {str(v) for v in values} | {cell_key(v) for v in values}
    if not isinstance(labels, dict) or any(not isinstance(t, str) for t in labels.values()):
        yield SELECTOR.at(doc, f"{pointer}/value_labels", "value_labels must map axis values to text")
        return
    for key in sorted(set(labels) - known):
        yield SELECTOR.at(
            doc,
            join_pointer(*pointer.split("/")[1:], "value_labels", key),
            f"value_labels names {key!r}, no value of the axis",
        )


def _view_hygiene(doc: Document) -> Iterator[Finding]:
    data = doc.data
    axes = [data.get("row_axis") or {"key": "mtp"}, data.get("column_axis") or {"key": "tp"}]
    for side, axis, values in (("row", axes[0], data["rows"]), ("column", axes[1], data["columns"])):
        yield from _axis_values(doc, f"/{side}s", values, contract=False)
        yield from _value_labels(doc, f"/{side}_axis", axis, values)
    keys = [a["key"] for a in axes]
    if keys[0] == keys[1]:
        yield SELECTOR.at(doc, "/column_axis", f"both axes select {keys[0]!r}")
    fixed = data.get("fixed_selectors")
    if ("row_axis" in data or "column_axis" in data) and not fixed:
        yield SELECTOR.at(doc, "", "a matrix with named axes needs fixed_selectors pinning its scope")
    for key, why in selector_problems(fixed or {}, wildcard=True):
        yield SELECTOR.at(doc, join_pointer("fixed_selectors", key), why)
    for key in sorted(set(fixed or {}) & set(keys)):
        yield SELECTOR.at(doc, join_pointer("fixed_selectors", key), f"fixed selector {key!r} is also an axis")
    inherited = set(fixed or {}) | set(keys)
    for name, cell in data["cells"].items():
        own = cell.get("selectors") or {}
        for key, why in selector_problems(own, wildcard=True):
            yield SELECTOR.at(doc, join_pointer("cells", name, "selectors", key), why)
        for key in sorted(set(own) & inherited):
            yield SELECTOR.at(
                doc, join_pointer("cells", name, "selectors", key), f"cell selector {key!r} repeats one it inherits"
            )


def check_coverage_views(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("coverage-view"):
        yield from _view_hygiene(doc)
        data = doc.data
        axes = [(data.get("row_axis") or {"key": "mtp"})["key"], (data.get("column_axis") or {"key": "tp"})["key"]]
        fixed = data.get("fixed_selectors") or {}
        seen: set[tuple[str, str, str]] = set()
        fixed_ptr = {k: join_pointer("fixed_selectors", k) for k in fixed}
        for r, c in itertools.product(data["rows"], data["columns"]):
            name = f"{cell_key(r)}:{cell_key(c)}"
            fields = data["cells"].get(name)
            if fields is None:
                continue  # coverage-incomplete
            base = join_pointer("cells", name)
            own = fields.get("selectors") or {}
            sel = {**fixed, axes[0]: r, axes[1]: c, **own}
            ptr = {**fixed_ptr, axes[0]: base, axes[1]: base, **{k: f"{base}/selectors/{k}" for k in own}}
            field_ptr = {k: f"{base}/{k}" for k in (*fields, *CELL_FIELDS)} | {"": base}
            cell = Cell(doc, fields, sel, field_ptr, ptr, view_evidence=bool(data.get("evidence")), derive_label=True)
            for f in check_cell(cell, registry):
                if (f.code, f.pointer, f.message) not in seen:  # a fixed selector's problem, once per matrix
                    seen.add((f.code, f.pointer, f.message))
                    yield f


# -- coverage contracts ---------------------------------------------------------------------


def _contract_hygiene(doc: Document, lab: bool) -> Iterator[Finding]:
    data = doc.data
    fixed = data.get("fixed_selectors")
    if fixed is not None and not fixed:
        yield SELECTOR.at(doc, "/fixed_selectors", "fixed_selectors is empty; leave it out or pin a selector")
    for key, why in selector_problems(fixed or {}, wildcard=True):
        yield SELECTOR.at(doc, join_pointer("fixed_selectors", key), why)
    keys: list[str] = []
    for i, axis in enumerate(data["axes"]):
        if axis["key"] in keys:
            yield SELECTOR.at(doc, f"/axes/{i}/key", f"axis key {axis['key']!r} is used by an earlier axis")
        if axis["key"] in (fixed or {}):
            yield SELECTOR.at(doc, f"/axes/{i}/key", f"axis {axis['key']!r} is also a fixed selector")
        keys.append(axis["key"])
        yield from _axis_values(doc, f"/axes/{i}/values", axis["values"], contract=True)
        yield from _value_labels(doc, f"/axes/{i}", axis, axis["values"])
        if lab and not axis.get("label"):
            yield LAB_FIELD.at(doc, f"/axes/{i}", f"axis {axis['key']!r} has no label, which the lab's format requires")


def _retry_ok(retry: Any) -> bool:
    return (
        isinstance(retry, dict)
        and isinstance(retry.get("status"), str)
        and bool(retry["status"])
        and all(SELECTOR_KEY.match(k) and isinstance(v, str | int | float | bool) and v != "" for k, v in retry.items())
    )


def _rule_hygiene(doc: Document) -> Iterator[Finding]:
    domains = {a["key"]: a["values"] for a in doc.data["axes"]}
    seen: set[str] = set()
    for i, rule in enumerate(doc.data["rules"]):
        base = f"/rules/{i}"
        if rule["id"] in seen:
            yield RULE.at(doc, f"{base}/id", f"rule id {rule['id']!r} is used by an earlier rule")
        seen.add(rule["id"])
        for key, value in rule["match"].items():
            if key in domains and value != "*" and value not in domains[key]:
                yield RULE.at(
                    doc, join_pointer("rules", i, "match", key), f"match {key} = {value!r} is no value of that axis"
                )
        for key in sorted(set(rule) - CELL_FIELDS - {"id", "match"}):
            yield RULE.at(doc, join_pointer("rules", i, key), f"{key!r} is not a field a rule can set on its cells")
        for key in ("label", "reason", "parent"):
            if key in rule and (not isinstance(rule[key], str) or not rule[key]):
                yield RULE.at(doc, f"{base}/{key}", f"{key} must be non-empty text")
        if "retry" in rule and not _retry_ok(rule["retry"]):
            yield RULE.at(doc, f"{base}/retry", "retry needs a non-empty status and plain, non-empty values")


def _contract_cells(doc: Document, registry: Registry) -> Iterator[Finding]:
    data = doc.data
    fixed = data.get("fixed_selectors") or {}
    keys = [a["key"] for a in data["axes"]]
    axis_ptr = {k: f"/axes/{i}/values" for i, k in enumerate(keys)}
    if any(sorted(r["match"]) != sorted(keys) for r in data["rules"]):
        return  # coverage-incomplete says so; the cells cannot be formed
    seen: set[tuple[str, str, str]] = set()
    for sel, matching in expand(data):
        exact = [frozenset(k for k, v in r["match"].items() if v != "*") for _, r in matching]
        if not matching or any(not a < b for a, b in itertools.pairwise(exact)):
            continue  # coverage-incomplete
        fields, source = merge(matching)
        field_ptr = {k: f"/rules/{i}/{k}" for k, i in source.items()} | {"": f"/rules/{matching[-1][0]}"}
        ptr = {k: join_pointer("fixed_selectors", k) for k in fixed} | axis_ptr
        for k in fields:
            field_ptr.setdefault(k, f"/rules/{source.get(k, matching[-1][0])}")
        field_ptr.setdefault("state", f"/rules/{matching[-1][0]}")
        for f in check_cell(Cell(doc, fields, {**fixed, **sel}, field_ptr, ptr), registry):
            if (f.code, f.pointer, f.message) not in seen:
                seen.add((f.code, f.pointer, f.message))
                yield f


def check_contracts(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("coverage-contract"):
        yield from _contract_hygiene(doc, lab_family(registry, doc))
        yield from _rule_hygiene(doc)
        yield from _contract_cells(doc, registry)


RULES = [
    Rule(
        "lab-coverage-views",
        (SELECTOR, DANGLING, MISMATCH, SIDEWAYS, CELL_EVIDENCE, CELL_POINT, SPECULATOR),
        check_coverage_views,
        UNIT,
    ),
    Rule(
        "lab-contracts",
        (SELECTOR, LAB_FIELD, RULE, DANGLING, MISMATCH, SIDEWAYS, CELL_EVIDENCE, CELL_POINT, SPECULATOR),
        check_contracts,
        UNIT,
    ),
]
