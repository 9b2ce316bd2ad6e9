"""Lookups the rules share: a family's revisions and artifacts, and records by id.

Everything is looked up through the registry on demand (never collected from
``registry.records()``, which holds only the records being checked), so the
reads of a unit's rules outside the unit are recorded as its dependencies. An
``Index`` belongs to one registry view and is never shared between units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evreg.claims.scope import same_quantization
from evreg.core.vocab import promotable
from evreg.records.models import revisions_of
from evreg.store import MEASUREMENT_KINDS, ById, Document, Registry


@dataclass
class FamilyIndex:
    doc: Document | None
    revisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)  # id -> (artifact, revision id)
    sources: frozenset[str] = frozenset()

    def unnamed_artifact(self, revision: str, quantization: object) -> str | None:
        """Why a record of ``revision`` that names no artifact is ambiguous, or None. Such a record is of the
        revision's own weights: it must state their quantization when the revision has artifacts, and that must
        not be an artifact's (which one would it be?). So a revision that gains an artifact leaves its records of
        its own weights valid."""
        revision_artifacts = self.revisions.get(revision, {}).get("quantized_artifacts") or []
        artifacts = [a for a in revision_artifacts if isinstance(a, dict)]
        if not artifacts:
            return None
        if not isinstance(quantization, str):
            return (
                f"revision {revision!r} has quantized artifacts, but this names neither one (artifact_id) nor the "
                "quantization of the revision's own weights"
            )
        for art in artifacts:
            if same_quantization(str(art.get("quantization")), quantization):
                return (
                    f"quantization {quantization!r} is that of revision {revision!r}'s artifact {art.get('id')!r}, "
                    "but no artifact_id names it (a record without one is of the revision's own weights)"
                )
        return None


@dataclass
class Attachable:
    by_evidence: dict[Any, list[int]]
    by_packet: dict[Any, list[int]]
    by_id: dict[Any, list[int]]
    unhashable_evidence: list[int] = field(default_factory=list)

    def of(self, table: dict[Any, list[int]], key: Any) -> list[int]:
        """The positions of the measurements whose field equals ``key`` (none for an unhashable key)."""
        return table.get(key, []) if _hashable(key) else []


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class Index:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.measurements = ById(registry, MEASUREMENT_KINDS)
        self.measurement_data = ById(registry, MEASUREMENT_KINDS, data=True)
        self.estimates = ById(registry, ("estimate",))
        self.packets = ById(registry, ("packet",))
        self._families: dict[str, FamilyIndex] = {}
        self._of_family: dict[str | None, list[Document]] = {}
        self._superseded: dict[str | None, dict[str, str]] = {}
        self._attachable: dict[str | None, Attachable] = {}

    def family(self, name: str) -> FamilyIndex:
        if name not in self._families:
            doc = self.registry.family(name)
            fam = FamilyIndex(doc)
            if doc is not None:
                fam.sources = frozenset(doc.data.get("sources") or {})
                for _, rev in revisions_of(doc.data):
                    fam.revisions[rev["id"]] = rev
                    for art in rev.get("quantized_artifacts", []):
                        fam.artifacts[art["id"]] = (art, rev["id"])
            self._families[name] = fam
        return self._families[name]

    def family_of(self, doc: Document) -> FamilyIndex:
        return self.family(doc.place.family or "")

    def measurements_of_family(self, family: str | None) -> list[Document]:
        if family not in self._of_family:
            self._of_family[family] = self.registry.unit_records(family or "", *MEASUREMENT_KINDS)
        return self._of_family[family]

    def attachable(self, family: str | None) -> Attachable:
        """The family's measurements by the fields a grade attaches them by (positions in
        ``measurements_of_family``): built once per family, not scanned once per grade."""
        if family not in self._attachable:
            found = Attachable({}, {}, {})
            for n, m in enumerate(self.measurements_of_family(family)):
                ev = m.data.get("evidence")
                for table, key in ((found.by_evidence, ev), (found.by_packet, m.place.packet), (found.by_id, m.id)):
                    if _hashable(key):
                        table.setdefault(key, []).append(n)
                if not _hashable(ev):
                    found.unhashable_evidence.append(n)
            self._attachable[family] = found
        return self._attachable[family]

    def superseded(self, family: str | None) -> dict[str, str]:
        """Measurement id -> the id of the measurement of the same family that corrects it."""
        if family not in self._superseded:
            self._superseded[family] = {
                str(d.data["supersedes"]): str(d.id)
                for d in self.measurements_of_family(family)
                if d.valid and isinstance(d.data.get("supersedes"), str)
            }
        return self._superseded[family]

    def why_not_promotable(self, data: dict[str, Any], family: str | None) -> str | None:
        """Why a measurement may not back a headline, grade, measured cell or solid curve, or None:
        its state, class or retirement (``vocab.promotable``), or a correction that supersedes it."""
        reason = promotable(data)
        if reason is None and data.get("id") in self.superseded(family):
            reason = f"it is superseded by {self.superseded(family)[data['id']]!r}"
        return reason

    def exists(self, kinds: tuple[str, ...], family: str | None, record_id: str) -> bool:
        """A file for this id exists at a place of one of ``kinds`` (``family`` None: any family)."""
        return isinstance(record_id, str) and self.registry.exists(kinds, family, record_id)


def index(registry: Registry) -> Index:
    """One shared index per registry view."""
    return registry.derived("evreg_rules.index", Index)
