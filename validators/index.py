"""Lookups the rules share: a family's revisions and artifacts, and the
registry-wide measurement and packet ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.store import MEASUREMENT_KINDS, Document, Registry


@dataclass
class FamilyIndex:
    doc: Document | None
    revisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)  # id -> (artifact, revision id)
    sources: frozenset[str] = frozenset()

    def artifact_bound(self, revision: str) -> bool:
        return bool(self.revisions.get(revision, {}).get("quantized_artifacts"))


class Index:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.families: dict[str, FamilyIndex] = {}
        for doc in registry.records("family"):
            fam = FamilyIndex(doc, sources=frozenset(doc.data.get("sources") or {}))
            for rev in doc.data.get("weight_revisions", []):
                fam.revisions[rev["id"]] = rev
                for art in rev.get("quantized_artifacts", []):
                    fam.artifacts[art["id"]] = (art, rev["id"])
            self.families[doc.id] = fam  # type: ignore[index]
        self.measurements = {d.id: d for d in registry.records(*MEASUREMENT_KINDS)}
        self.estimates = {d.id: d for d in registry.records("estimate")}
        self.packets = {d.id: d for d in registry.records("packet")}
        # Ids of every file that exists at a record's place, valid or not, so
        # a record that fails its schema is reported once, not as dangling too.
        self.existing: set[tuple[str, str | None, str]] = {
            (kind, d.place.family, d.place.id) for d in registry.documents if d.place.id for kind in d.place.kinds
        }
        self.existing_anywhere: set[tuple[str, str]] = {(kind, rid) for kind, _, rid in self.existing}

    def measurements_of_family(self, family: str | None) -> list[Document]:
        if not hasattr(self, "_by_family"):
            self._by_family: dict[str | None, list[Document]] = {}
            for m in self.measurements.values():
                self._by_family.setdefault(m.place.family, []).append(m)
        return self._by_family.get(family, [])

    def family_of(self, doc: Document) -> FamilyIndex:
        return self.families.get(doc.place.family or "", FamilyIndex(None))

    def exists(self, kinds: tuple[str, ...], family: str | None, record_id: str) -> bool:
        """A file for this id exists at a place of one of ``kinds`` (``family`` None: any family)."""
        if family is None:
            return any((k, record_id) in self.existing_anywhere for k in kinds)
        return any((k, family, record_id) in self.existing for k in kinds)


def index(registry: Registry) -> Index:
    """One shared index per loaded registry."""
    cached = registry.__dict__.get("_validator_index")
    if cached is None:
        cached = registry.__dict__["_validator_index"] = Index(registry)
    return cached
