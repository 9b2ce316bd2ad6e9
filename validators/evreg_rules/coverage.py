"""Coverage matrices and contracts: every cell of the axes is listed (contracts: covered by one unambiguous chain of
rules), and a cell states what the record it cites is (its state, a point it has, the selectors it binds) and
stands, where it claims a measurement, on promotable evidence."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims.coverage import cell_key, expand, merge
from evreg.claims.scope import has, selector_value
from evreg.core.findings import Code, Finding, join_pointer
from evreg.store import Document, Registry
from evreg_rules.index import index
from evreg_rules.promotion import NON_PROMOTABLE, SIDEWAYS, promotion_fields
from evreg_rules.prose import UNRESOLVED

MEASURED = ("lab-measured", "community-measured")
"""Cell states that claim a measurement which may back a promotion."""


STATE = Code(
    "state-mismatch",
    "A coverage cell or view whose state differs from its cited record's",
    "A cell cannot upgrade what it cites: a quarantined run shown as measured is a false claim.",
    "Copy the cited record's state into the cell; keep one state per view series.",
    '{"state": "lab-measured", "evidence_id": "run-q"} where run-q is quarantined',
)
INCOMPLETE = Code(
    "coverage-incomplete",
    "A matrix that does not list every cell of its axes",
    "Coverage is exhaustive and explicit: an absent cell reads as a gap to one reader and as zero to "
    "another; 'missing' is a state, not an absence.",
    "List every row x column cell (state 'missing' where nobody measured); in contracts, make the "
    "rules cover every cell with an unambiguous chain.",
    'rows [0, 1] x columns [1, 2] with cells {"0:1", "0:2", "1:1"}',
)


DEFAULT_AXES = ({"key": "mtp"}, {"key": "tp"})


def _cell_against(
    doc: Document, pointer: str, cell: dict[str, Any], selectors: dict[str, Any], registry: Registry
) -> Iterator[Finding]:
    ix = index(registry)
    state = cell.get("state")
    if cell.get("estimate_id") is not None:
        if state != "estimated":
            yield STATE.at(
                doc,
                f"{pointer}/state",
                f"cell cites estimate {cell['estimate_id']!r} but says {state!r}",
                STATE.hint,
            )
        return
    if state == "estimated":
        yield STATE.at(doc, f"{pointer}/state", "an estimated cell must cite an estimate_id", STATE.hint)
    evidence_id = cell.get("evidence_id")
    m_doc = ix.measurements.get(evidence_id or "")
    if m_doc is None:
        if state in ("lab-measured", "community-measured"):
            yield STATE.at(
                doc,
                f"{pointer}/state",
                f"a {state} cell must cite the measurement (evidence_id)",
                STATE.hint,
            )
        return
    m = m_doc.data
    if m["state"] != state:
        yield STATE.at(
            doc,
            f"{pointer}/state",
            f"cell says {state!r} but cites {evidence_id!r}, which is {m['state']!r}",
            STATE.hint,
        )
    why = index(registry).why_not_promotable(m, m_doc.place.family) if state in MEASURED else None
    if why:
        message = f"a {state} cell cites {evidence_id!r}: {why}"
        yield NON_PROMOTABLE.at(doc, f"{pointer}/evidence_id", message, fields=promotion_fields(evidence_id, m, why))
    point_x = cell.get("point_x")
    if point_x is not None and not any(p.get("x") == point_x for p in m.get("points") or []):
        yield UNRESOLVED.at(
            doc,
            f"{pointer}/point_x",
            f"measurement {evidence_id!r} has no point at x = {cell_key(point_x)}",
            UNRESOLVED.hint,
        )
    for key, want in selectors.items():
        got = point_x if point_x is not None and key == m.get("axis") else selector_value(m, key)
        if not has(got) or got != want or isinstance(got, bool) != isinstance(want, bool):
            shown = repr(got) if has(got) else "nothing"
            yield SIDEWAYS.at(
                doc,
                f"{pointer}/evidence_id",
                f"cell selects {key} = {want!r}, but {evidence_id!r} has {shown}",
                fields={"evidence": evidence_id, key: f"{shown} for {want!r}"},
            )


def check_coverage(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records("coverage-view"):
        data = doc.data
        axes = (data.get("row_axis") or DEFAULT_AXES[0], data.get("column_axis") or DEFAULT_AXES[1])
        expected = {f"{cell_key(r)}:{cell_key(c)}": (r, c) for r in data["rows"] for c in data["columns"]}
        for key in sorted(set(expected) - set(data["cells"])):
            yield INCOMPLETE.at(doc, "/cells", f"cell {key!r} of rows x columns is not listed", INCOMPLETE.hint)
        for key in sorted(set(data["cells"]) - set(expected)):
            yield INCOMPLETE.at(
                doc,
                join_pointer("cells", key),
                f"cell {key!r} is not a row x column of this matrix",
                INCOMPLETE.hint,
            )
        for key, (r, c) in expected.items():
            cell = data["cells"].get(key)
            if cell is None:
                continue
            selectors = {
                **(data.get("fixed_selectors") or {}),
                axes[0]["key"]: r,
                axes[1]["key"]: c,
                **(cell.get("selectors") or {}),
            }
            yield from _cell_against(doc, join_pointer("cells", key), cell, selectors, registry)
    for doc in registry.records("coverage-contract"):
        yield from _contract(doc, registry)


MAX_CONTRACT_CELLS = 50_000


def _contract(doc: Document, registry: Registry) -> Iterator[Finding]:
    data = doc.data
    axes = data["axes"]
    keys = [a["key"] for a in axes]
    size = 1
    for a in axes:
        size *= len(a["values"])
    if size > MAX_CONTRACT_CELLS:
        yield INCOMPLETE.at(
            doc,
            "/axes",
            f"contract expands to {size:,} cells; the limit is {MAX_CONTRACT_CELLS:,}",
            "split the contract",
        )
        return
    rules = data["rules"]
    for i, rule in enumerate(rules):
        if sorted(rule["match"]) != sorted(keys):
            yield INCOMPLETE.at(
                doc,
                f"/rules/{i}/match",
                f"rule {rule['id']!r} must name every axis exactly once ({', '.join(keys)})",
                INCOMPLETE.hint,
            )
            return
    seen: set[tuple[str, str]] = set()
    for cell_sel, matching in expand(data):
        label = ", ".join(f"{k}={cell_key(v)}" for k, v in cell_sel.items())
        if not matching:
            if ("none", "") not in seen:
                seen.add(("none", ""))
                yield INCOMPLETE.at(doc, "/rules", f"no rule covers cell {label}", INCOMPLETE.hint)
            continue
        exact = [frozenset(k for k, v in r["match"].items() if v != "*") for _, r in matching]
        if any(not (a < b) for a, b in itertools.pairwise(exact)):
            ptr = f"/rules/{matching[-1][0]}"
            if ("chain", ptr) not in seen:
                seen.add(("chain", ptr))
                yield INCOMPLETE.at(
                    doc,
                    ptr,
                    f"rules {[r['id'] for _, r in matching]} match cell {label} ambiguously or out of order",
                    INCOMPLETE.hint,
                )
            continue
        merged, source = merge(matching)
        if "state" not in merged:
            yield INCOMPLETE.at(doc, f"/rules/{matching[-1][0]}", f"cell {label} resolves no state", INCOMPLETE.hint)
            continue
        ptr = f"/rules/{source.get('evidence_id', source['state'])}"
        for f in _cell_against(doc, ptr, merged, {**(data.get("fixed_selectors") or {}), **cell_sel}, registry):
            if (f.code + f.message, f.pointer) not in seen:
                seen.add((f.code + f.message, f.pointer))
                yield f


RULES = [
    Rule("coverage", (STATE, INCOMPLETE, NON_PROMOTABLE), check_coverage, UNIT),
]
