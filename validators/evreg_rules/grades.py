"""Grades: a packet's evidence grade is no higher than the rubric (``vocab/rubric.json``) says its attached,
in-scope, promotable evidence supports; grade evidence of another scope is reported and not counted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims import scope
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, Severity
from evreg.core.jsonio import canonical
from evreg.core.vocab import load as load_vocab
from evreg.store import Document, Registry
from evreg_rules.index import index
from evreg_rules.promotion import SIDEWAYS, scope_fields

GRADE = Code(
    "grade-unsupported",
    "A grade above what its attached evidence supports",
    "A grade is a claim about evidence maturity; the rubric (registry/evreg/vocab/rubric.json, shown on the "
    "site) says what each letter requires in checkable terms.",
    "Lower the grade, or attach the evidence the rubric asks for.",
    "EVID B on a packet whose only in-scope evidence is a lab-screened run",
)


RANK = {"D": 1, "C": 2, "B": 3, "A": 4}


def attached_evidence(registry: Registry, packet: Document, grade: dict[str, Any]) -> list[Document]:
    """Measurements a packet's grade rests on (see the rubric's `attached_evidence`)."""
    ix = index(registry)
    listed = set(grade.get("evidence") or [])
    fm = packet.data.get("featured_metric") or {}
    family = ix.measurements_of_family(packet.place.family)
    found = ix.attachable(packet.place.family)  # the family's measurements by evidence, packet and id
    hits = {n for ev in listed for n in found.by_evidence.get(ev, ())}
    hits.update(found.of(found.by_packet, packet.id), found.of(found.by_id, fm.get("measurement_id")))
    hits.update(n for n in found.unhashable_evidence if family[n].data.get("evidence") in listed)
    return [family[n] for n in sorted(hits)]


def _pinned(registry: Registry, packet: Document) -> bool:
    fam = index(registry).family_of(packet)
    art = fam.artifacts.get(packet.data.get("artifact_id") or "")
    if art:
        return bool(art[0].get("revision") or art[0].get("file_sha256"))
    rev = fam.revisions.get(packet.data["revision"], {})
    return bool(rev.get("revision"))


def _evidence_identity(m: dict[str, Any]) -> str:
    ev = m.get("evidence")
    digest = (m.get("evidence_sha256") or {}).get(ev) if isinstance(ev, str) else None
    return f"sha256:{digest}" if digest else f"ref:{ev}"


_NO_GATE = re.compile(r"\b(?:skipped|not (?:run|tested|checked)|untested|n/?a|none|unknown)\b|\bfail", re.I)
_PASSED = re.compile(r"\bpass(?:ed|es)?\b", re.I)


def states_a_gate(text: Any) -> bool:
    """Whether a quality statement says a gate was passed: not empty, and not saying it was skipped or failed
    (a failure beside a pass -- 'retrieval passed but q1 equality failed' -- is no passed gate either)."""
    if not isinstance(text, str) or not text.strip():
        return False
    return not _NO_GATE.search(text) or (bool(_PASSED.search(text)) and not re.search(r"\bfail", text, re.I))


def rubric_checks(registry: Registry, packet: Document, attached: list[Document]) -> dict[str, bool]:
    ix = index(registry)
    ok = [m.data for m in attached if ix.why_not_promotable(m.data, packet.place.family) is None]
    # Independent repeats differ in what they are, not in where they are filed: the evidence's content (its
    # sha256 where the record gives one) and the numbers observed.
    evidence_files = {_evidence_identity(m) for m in ok}
    observations = {canonical([m.get("metrics"), m.get("points")]) for m in ok}

    def hashed(m: dict[str, Any]) -> bool:
        ev = m.get("evidence")
        return isinstance(ev, str) and parse_ref(ev).kind == "local" and ev in (m.get("evidence_sha256") or {})

    return {
        "promotable-observation": bool(ok),
        "runtime-identity": all(m.get("runtime") for m in ok),
        "pinned-artifact": _pinned(registry, packet),
        "repeat-samples": len(ok) >= 2 or any(len(v) >= 2 for m in ok for v in (m.get("metrics") or {}).values()),
        "quality-gate": any(states_a_gate(m.get(k)) for m in ok for k in ("quality", "quality_scope")),
        "hashed-local-evidence": bool(attached) and all(hashed(m.data) for m in attached),
        "reproduction-record": any("reproduction" in str(m.get("measurement_class") or "") for m in ok),
        "independent-repeats": len(evidence_files) >= 2 and len(observations) >= 2,
    }


def check_grades(registry: Registry) -> Iterator[Finding]:
    rubric = load_vocab("rubric")
    for doc in registry.records("packet"):
        grade = (doc.data.get("grades") or {}).get("evidence")
        if not grade:
            continue
        in_scope: list[Document] = []
        outside: list[Document] = []
        for m in attached_evidence(registry, doc, grade):
            (
                outside
                if scope.differing(doc.data, m.data) and m.data.get("evidence") in grade["evidence"]
                else in_scope
            ).append(m)
        for m in outside:
            why = "; ".join(scope.mismatches(doc.data, m.data, claim_name="the packet"))
            yield SIDEWAYS.at(
                doc,
                "/grades/evidence/evidence",
                f"grade evidence {m.data['evidence']!r} is measurement {m.id!r} of another scope: {why}",
                severity=Severity.WARNING,
                fields=scope_fields(m.id, doc.data, m.data),
            )
        in_scope = [m for m in in_scope if not scope.differing(doc.data, m.data)]
        checks = rubric_checks(registry, doc, in_scope)
        letter = grade["grade"]
        failed = [c for c in rubric["grades"][letter]["requires"] if not checks[c]]
        if failed:
            supported = max(
                (g for g, spec in rubric["grades"].items() if all(checks[c] for c in spec["requires"])),
                key=lambda g: RANK[g],
                default=None,
            )
            yield GRADE.at(
                doc,
                "/grades/evidence/grade",
                f"EVID {letter} requires {', '.join(failed)}, which the {len(in_scope)} attached "
                f"in-scope measurements do not show; they support "
                f"{'EVID ' + supported if supported else 'no grade'}",
                fields={"grade": letter, "missing": ", ".join(failed), "supported": supported or "none"},
            )


RULES = [
    Rule("grades", (GRADE,), check_grades, UNIT),
]
