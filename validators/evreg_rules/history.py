"""History (with ``--base``): published measurements are append-only,
published records are retired rather than deleted, and a grade rises only
with new in-scope evidence."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.findings import Code, Finding, Severity
from evreg.rules import Rule
from evreg.store import MEASUREMENT_KINDS, Document, Registry
from evreg_rules.scope import packet_scope_mismatches

REWRITE = Code(
    "history-rewrite",
    "Edited numbers or identity of a published measurement without a superseding record",
    "Published measurements are append-only: readers, citations and permalinks rely on a record meaning "
    "the same thing forever.",
    "Restore the published record and add a new measurement with `supersedes: <old id>`.",
    "a change that edits decode_tok_s of a measurement that exists on the base",
)
DELETED = Code(
    "record-deleted",
    "A published record removed",
    "Deleting a record breaks its permalink and every citation of it, and hides that it ever existed.",
    "Keep the file and add `retired: {reason, date}`; corrections are new records.",
    "a change that deletes packets/f/measurements/run-1.json",
)
RAISED = Code(
    "promotion-without-evidence",
    "A grade raised with no new in-scope evidence in the change",
    "A promotion is a claim that evidence got stronger; a raise that adds no measurement or evidence "
    "file in the packet's scope is a relabel.",
    "Add the new in-scope measurement or evidence file in the same change, or keep the grade.",
    "a change that raises EVID C to B and adds nothing else",
)

RULES_CHANGED = Code(
    "rules-changed",
    "A change that edits the rules it is judged by",
    "A pull request that changes validators, vocabularies or the grade rubric together with records is judged "
    "by the rules it brings; reviewers should see that before trusting a green run.",
    "Split the rule change into its own pull request, or review both parts together knowingly.",
    "a change to registry/evreg/vocab/rubric.json and packets/f/p/packet.json in one pull request",
)

RULE_PATHS = ("validators/", "registry/evreg/vocab/", "registry/evreg/models.py")

IDENTITY_AND_NUMBERS = (
    "state",
    "revision",
    "artifact_id",
    "quantization",
    "runtime",
    "runtime_family",
    "config",
    "workload",
    "measurement_class",
    "axis",
    "metrics",
    "points",
    "evidence",
    "identity",
)
RANK = {"D": 1, "C": 2, "B": 3, "A": 4}


def _by_id(registry: Registry, kinds: tuple[str, ...]) -> dict[tuple[str, str], Document]:
    return {(d.kind, d.id): d for d in registry.records(*kinds)}  # type: ignore[misc]


def check_history(registry: Registry) -> Iterator[Finding]:
    base = registry.base
    if base is None:
        return
    head_measurements = {d.id: d for d in registry.records(*MEASUREMENT_KINDS)}
    superseded = {d.data.get("supersedes") for d in head_measurements.values()}
    for old in base.records(*MEASUREMENT_KINDS):
        new = head_measurements.get(old.id)
        if new is None or old.id in superseded:
            continue
        changed = [k for k in IDENTITY_AND_NUMBERS if old.data.get(k) != new.data.get(k)]
        if changed:
            yield REWRITE.at(
                new,
                f"/{changed[0]}",
                f"published measurement {old.id!r} changed its {', '.join(changed)} and no new record supersedes it",
                REWRITE.hint,
            )
    head_ids = {(d.kind, d.id) for d in registry.records()}
    head_paths = {d.path for d in registry.documents}
    for old in base.records():
        if (old.kind, old.id) not in head_ids and old.path not in head_paths:
            yield DELETED.at(old.path, "", f"published {old.kind} {old.id!r} was deleted", record=old.ref())
    yield from _raised_grades(registry, base)
    rule_files = sorted(p for p in registry.changed if p.startswith(RULE_PATHS))
    if rule_files and any(p.startswith("packets/") for p in registry.changed):
        message = (
            f"this change edits {len(rule_files)} rule or vocabulary files "
            f"({', '.join(rule_files[:3])}) together with records"
        )
        yield RULES_CHANGED.at(rule_files[0], "", message, severity=Severity.WARNING)


def _grade(data: dict[str, Any], which: str) -> str | None:
    g = (data.get("grades") or {}).get(which)
    return g.get("grade") if isinstance(g, dict) else None


def _raised_grades(head: Registry, base: Registry) -> Iterator[Finding]:
    old_packets = {d.id: d for d in base.records("packet")}
    fresh = [d for d in head.records(*MEASUREMENT_KINDS) if d.path in head.changed]
    changed_files = head.changed
    for packet in head.records("packet"):
        old = old_packets.get(packet.id)
        if old is None:
            continue
        for which in ("evidence", "capability"):
            before, after = _grade(old.data, which), _grade(packet.data, which)
            if not before or not after or RANK[after] <= RANK[before]:
                continue
            in_scope = [
                m
                for m in fresh
                if m.place.family == packet.place.family and not packet_scope_mismatches(packet.data, m.data)
            ]
            folder = f"packets/{packet.place.family}/{packet.id}/evidence/"
            new_files = [p for p in changed_files if p.startswith(folder)]
            if not in_scope and not new_files:
                yield RAISED.at(
                    packet,
                    f"/grades/{which}/grade",
                    f"{which} grade raised from {before} to {after}, but the change adds no "
                    "in-scope measurement or evidence file",
                    RAISED.hint,
                )


RULES = [Rule("history", (REWRITE, DELETED, RAISED, RULES_CHANGED), check_history)]
