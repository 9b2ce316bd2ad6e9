"""What may back a promotion: evidence of the claim's own scope (a result of another scope used to feature, grade,
chart or fill a cell is a sideways promotion) that is promotable (no estimate, screen, quarantined, closed or
diagnostic run). The codes are shared by every rule that checks a promotion; the placement rule is this module's
own: a measurement filed in a packet's folder is shown as the packet's, so it is of the packet's scope."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import scope
from evreg.core.findings import Code, Finding
from evreg.store import MEASUREMENT_KINDS, Registry
from evreg_rules.index import index

SIDEWAYS = Code(
    "sideways-promotion",
    "A promotion backed by evidence of another scope",
    "A result of one revision, artifact, runtime, topology, workload or class says nothing about "
    "another; using it to feature, grade or fill a cell of a different scope is a sideways promotion.",
    "Cite evidence whose scope equals the claim's, or narrow the claim to the evidence's scope.",
    "a family hero for qwen3.8-27b citing a qwen3.6-27b run",
)
NON_PROMOTABLE = Code(
    "non-promotable-evidence",
    "Estimate, screened, quarantined, closed or diagnostic evidence used to promote",
    "Estimates are projections, screens are bounded boot checks, quarantined runs are known-invalid and "
    "diagnostics measure something other than the claim; none may back a headline or a measured curve.",
    "Feature and chart lab-measured or community-measured, non-diagnostic runs only; show others as what they are.",
    "a view series listing an estimate id",
)


def scope_fields(
    evidence_id: Any, claim: dict[str, Any], evidence: dict[str, Any], keys: tuple[str, ...] = scope.SCOPE_KEYS
) -> dict[str, str]:
    """What a sideways promotion is about (a finding's fields): the evidence, and for each scope key it differs
    on, its value beside the claim's."""
    fields = {"evidence": str(evidence_id)}
    for key in scope.differing(claim, evidence, keys):
        fields[key] = f"{scope.stated(evidence, key)!r} for {scope.stated(claim, key)!r}"
    return fields


def promotion_fields(evidence_id: Any, data: dict[str, Any], reason: str) -> dict[str, str]:
    """What a non-promotable promotion is about (a finding's fields): the evidence and what makes it so."""
    fields = {"evidence": str(evidence_id), "state": str(data.get("state"))}
    if data.get("measurement_class"):
        fields["measurement_class"] = str(data["measurement_class"])
    if data.get("retired"):
        fields["retired"] = "yes"
    if reason.startswith("it is superseded"):
        fields["superseded"] = "yes"
    return fields


def check_placement(registry: Registry) -> Iterator[Finding]:
    """A measurement in a packet's folder is shown as the packet's: it must be of the packet's scope (every
    scope key, ``evreg.claims.scope``). A control or comparison run of another scope lives at family level."""
    ix = index(registry)
    for doc in registry.records(*MEASUREMENT_KINDS):
        if not doc.place.packet or not doc.valid:
            continue
        packet = ix.packets.get(doc.place.packet)
        if packet is None or packet.place.family != doc.place.family or not packet.valid:
            continue
        # a key stated on one side only differs: a run stripped of its quantization or hardware is not the packet's
        for key in scope.differing(packet.data, doc.data):
            if scope.stated(doc.data, key) is None:
                theirs = scope.stated(packet.data, key)
                shown = f"{theirs} cards" if key == "topology" and isinstance(theirs, int) else repr(theirs)
                why = f"it states no {key} (the packet's: {shown})"
            else:
                why = scope.mismatches(packet.data, doc.data, (key,), claim_name="the packet")[0]
            yield SIDEWAYS.at(
                doc,
                scope.pointer(doc.data, key),
                f"measurement {doc.id!r} is filed in packet {packet.id!r}'s folder but {why}",
                fields=scope_fields(doc.id, packet.data, doc.data, (key,)) | {"packet": packet.id},
                hint="State the run's own identity (importers: `--hardware`, `--runtime`, `--cards`), and move it to "
                "the family's measurements/ folder if it is a comparison or control run, or into the folder of the "
                "packet whose scope it has.",
            )


RULES = [
    Rule("placement", (SIDEWAYS,), check_placement, UNIT),
]
