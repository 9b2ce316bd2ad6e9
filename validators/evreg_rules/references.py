"""References: every id names something, and artifacts bind to their revision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evreg.check.rules import UNIT, Rule
from evreg.claims.scope import parse_runtime, same_quantization
from evreg.core import codes
from evreg.core.evidence import parse_ref
from evreg.core.findings import Code, Finding, join_pointer
from evreg.core.layout import LIST_OF_KIND
from evreg.store import MEASUREMENT_KINDS, Document, Registry
from evreg_rules.index import FamilyIndex, Index, index

DANGLING = Code(
    "dangling-reference",
    "An id that names nothing",
    "A claim that points at a revision, artifact, packet, measurement, estimate, view or evidence "
    "source that does not exist cannot be traced.",
    "Fix the id, or add the record it should name.",
    '{"kind": "packet", "id": "p", "revision": "qwen3.9-27b"}  (no such revision)',
)

MISMATCH = Code(
    "artifact-mismatch",
    "Artifact not of the named revision, or quantization unlike the artifact's",
    "A quantized artifact is a deployment variant of one weight revision. Naming an artifact of "
    "another revision, or a quantization the artifact does not have, attaches numbers to the wrong "
    "weights. A record that names no artifact is of the revision's own weights: where the revision has artifacts it "
    "states their quantization, and not one of the artifacts': the bare revision is not a surrogate for its exports.",
    "Name an artifact of this revision and copy its exact `quantization` (or, for the revision's own weights, "
    "state their precision).",
    '{"revision": "qwen3.6-27b", "artifact_id": "qwen38-27b-autoround-w4a16-bce40ca"}',
)


class _Checker:
    def __init__(self, registry: Registry) -> None:
        self.ix: Index = index(registry)
        self.registry = registry

    def dangling(self, doc: Document, pointer: str, what: str, value: Any, where: str) -> Finding:
        return DANGLING.at(doc, pointer, f"{what} {value!r} names no {where}", DANGLING.hint)

    def revision(self, doc: Document, fam: FamilyIndex, pointer: str, value: Any) -> Iterator[Finding]:
        for i, rev in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(rev, str) and rev not in fam.revisions:
                ptr = pointer + (f"/{i}" if isinstance(value, list) else "")
                yield self.dangling(doc, ptr, "revision", rev, f"weight revision of family {doc.place.family!r}")

    def binding(
        self,
        doc: Document,
        fam: FamilyIndex,
        base: str,
        values: dict[str, Any],
        check_quantization: bool = True,
        artifact_pointer: str | None = None,
    ) -> Iterator[Finding]:
        """Revision / artifact / quantization of one record or selector set."""
        revision, artifact_id = values.get("revision"), values.get("artifact_id")
        artifact_pointer = artifact_pointer or f"{base}/artifact_id"
        yield from self.revision(doc, fam, f"{base}/revision", revision)
        if artifact_id is not None and artifact_id not in fam.artifacts:
            yield self.dangling(
                doc,
                artifact_pointer,
                "artifact",
                artifact_id,
                f"quantized artifact of family {doc.place.family!r}",
            )
            return
        if not isinstance(revision, str) or revision not in fam.revisions:
            return
        if artifact_id is None:
            if (why := fam.unnamed_artifact(revision, values.get("quantization"))) is not None:
                stated = isinstance(values.get("quantization"), str)
                yield MISMATCH.at(
                    doc,
                    f"{base}/quantization" if stated else base or "",
                    why,
                    fields={"revision": revision, "artifact_id": "none"},
                )
            return
        artifact, owner = fam.artifacts[artifact_id]
        if owner != revision:
            yield MISMATCH.at(
                doc,
                artifact_pointer,
                f"artifact {artifact_id!r} belongs to revision {owner!r}, not {revision!r}",
                fields={"artifact_id": artifact_id, "revision": f"{owner!r} for {revision!r}"},
            )
        if not check_quantization:
            return
        quantization = values.get("quantization")
        if quantization is None:
            yield MISMATCH.at(
                doc,
                base or "",
                f"artifact {artifact_id!r} is named without its quantization {artifact['quantization']!r}",
                fields={"artifact_id": artifact_id, "quantization": f"None for {artifact['quantization']!r}"},
            )
        elif not (isinstance(quantization, str) and same_quantization(quantization, artifact["quantization"])):
            yield MISMATCH.at(
                doc,
                f"{base}/quantization",
                f"quantization {quantization!r} differs from artifact {artifact_id!r}'s {artifact['quantization']!r}",
                fields={
                    "artifact_id": artifact_id,
                    "quantization": f"{quantization!r} for {artifact['quantization']!r}",
                },
            )

    def measurement(self, doc: Document, pointer: str, value: Any, allow_estimate: bool = False) -> Iterator[Finding]:
        kinds = (*MEASUREMENT_KINDS, "estimate") if allow_estimate else MEASUREMENT_KINDS
        if self.ix.exists(kinds, None, value):
            return
        yield self.dangling(
            doc, pointer, "measurement", value, "measurement" + (" or estimate" if allow_estimate else "")
        )

    def local(self, doc: Document, pointer: str, value: Any, kinds: tuple[str, ...], what: str) -> Iterator[Finding]:
        if value is not None and not self.ix.exists(kinds, doc.place.family, value):
            yield self.dangling(doc, pointer, what, value, f"{what} of family {doc.place.family!r}")

    def cell(self, doc: Document, base: str, cell: dict[str, Any]) -> Iterator[Finding]:
        if cell.get("evidence_id") is not None:
            yield from self.measurement(doc, f"{base}/evidence_id", cell["evidence_id"])
        if cell.get("estimate_id") is not None and not self.ix.exists(("estimate",), None, cell["estimate_id"]):
            yield self.dangling(doc, f"{base}/estimate_id", "estimate", cell["estimate_id"], "estimate")
        yield from self.local(doc, f"{base}/packet_id", cell.get("packet_id"), ("packet",), "packet")

    def family_record(self, doc: Document) -> Iterator[Finding]:
        """The ids a family names: primary packet, featured measurements, initial views, record order."""
        data = doc.data
        yield from self.local(doc, "/primary_packet_id", data.get("primary_packet_id"), ("packet",), "packet")
        for i, fr in enumerate(data.get("featured_results") or []):
            yield from self.measurement(doc, f"/featured_results/{i}/measurement_id", fr["measurement_id"])
        for i, vid in enumerate(data.get("initial_view_ids") or []):
            yield from self.local(doc, f"/initial_view_ids/{i}", vid, ("view",), "view")
        for key, ids in (data.get("record_order") or {}).items():
            kinds = tuple(k for k, lst in LIST_OF_KIND.items() if lst == key)
            if not kinds:
                yield DANGLING.at(
                    doc,
                    join_pointer("record_order", key),
                    f"record_order names an unknown list {key!r}",
                    DANGLING.hint,
                )
                continue
            for i, rid in enumerate(ids):
                yield from self.local(doc, join_pointer("record_order", key, i), rid, kinds, kinds[0])

    def closure_record(self, doc: Document, fam: FamilyIndex) -> Iterator[Finding]:
        """The revision and artifact a closure's selectors and artifact_id name; quantization is not checked."""
        data = doc.data
        selectors = dict(data["selectors"])
        if "artifact_id" in data:
            selectors["artifact_id"] = data["artifact_id"]
        if isinstance(selectors.get("revision"), str):
            yield from self.binding(
                doc,
                fam,
                "/selectors",
                selectors,
                check_quantization=False,
                artifact_pointer="/artifact_id" if "artifact_id" in data else None,
            )
        elif "revision" in selectors:
            yield from self.revision(doc, fam, "/selectors/revision", selectors["revision"])

    def estimate_record(self, doc: Document, fam: FamilyIndex) -> Iterator[Finding]:
        """The ids an estimate names: its selectors' binding, its basis measurements, the estimate it supersedes."""
        data = doc.data
        yield from self.binding(doc, fam, "/selectors", data["selectors"])
        for i, mid in enumerate(data["basis_measurement_ids"]):
            yield from self.measurement(doc, f"/basis_measurement_ids/{i}", mid)
        if data.get("supersedes") is not None and not self.ix.exists(("estimate",), None, data["supersedes"]):
            yield self.dangling(doc, "/supersedes", "estimate", data["supersedes"], "estimate")

    def external_sources(self, doc: Document, fam: FamilyIndex) -> Iterator[Finding]:
        """External evidence references whose source the family does not declare."""
        for pointer, value in doc.refs:
            ref = parse_ref(value)
            if ref.kind == "external" and ref.source not in fam.sources:
                yield DANGLING.at(
                    doc,
                    pointer,
                    f"evidence {value!r} names source {ref.source!r}, which family "
                    f"{doc.place.family!r} does not declare in `sources`",
                    "declare the source in family.json `sources`, or cite a local file",
                )

    def catalog_record(self, doc: Document) -> Iterator[Finding]:
        """The family list names each family of the registry at most once."""
        seen: dict[str, int] = {}
        for i, listed in enumerate(doc.data["families"]):
            fid = listed["id"]
            if fid in seen:
                yield codes.DUPLICATE_ID.at(
                    doc,
                    f"/families/{i}/id",
                    f"family {fid!r} is listed twice (also at /families/{seen[fid]})",
                    "list each family once, where readers should find it",
                )
            elif self.registry.family(fid) is None:
                manifest = parse_ref(str(listed.get("manifest") or f"families/{fid}.json")).path
                yield DANGLING.at(
                    doc,
                    f"/families/{i}/id",
                    f"family {fid!r} is listed but not in this registry (no packets/{fid}/family.json)",
                    f"import it first (evreg import neural-download {manifest}), or take it off the list",
                )
            seen.setdefault(fid, i)

    def record(self, doc: Document) -> Iterator[Finding]:
        data, fam, kind = doc.data, self.ix.family_of(doc), doc.kind
        if kind == "catalog":
            yield from self.catalog_record(doc)
            yield from self.external_sources(doc, FamilyIndex(doc, sources=frozenset(data.get("sources") or {})))
            return
        if kind != "family" and fam.doc is None:
            message = f"family folder {doc.place.family!r} has no valid family.json"
            yield DANGLING.at(doc.path, "", message, "add packets/<family>/family.json", record=doc.ref())
            return
        if kind == "family":
            yield from self.family_record(doc)
        elif kind == "packet":
            yield from self.binding(doc, fam, "", data)
            fm = data.get("featured_metric")
            if fm:
                yield from self.measurement(doc, "/featured_metric/measurement_id", fm["measurement_id"])
        elif kind in MEASUREMENT_KINDS:
            yield from self.binding(doc, fam, "", data)
            if data.get("supersedes") is not None:
                yield from self.measurement(doc, "/supersedes", data["supersedes"])
        elif kind == "view":
            for si, series in enumerate(data["series"]):
                for mi, mid in enumerate(series["measurement_ids"]):
                    yield from self.measurement(doc, f"/series/{si}/measurement_ids/{mi}", mid, True)
        elif kind == "coverage-view":
            for key, cell in data["cells"].items():
                yield from self.cell(doc, join_pointer("cells", key), cell)
        elif kind == "coverage-contract":
            for ri, rule in enumerate(data["rules"]):
                yield from self.cell(doc, f"/rules/{ri}", rule)
        elif kind == "closure":
            yield from self.closure_record(doc, fam)
        elif kind == "estimate":
            yield from self.estimate_record(doc, fam)
        yield from self.external_sources(doc, fam)


def check_references(registry: Registry) -> Iterator[Finding]:
    checker = _Checker(registry)
    for doc in registry.records():
        yield from checker.record(doc)


RUNTIME_FAMILY = Code(
    "runtime-family-mismatch",
    "A runtime_family that is not the runtime's engine",
    "Claims that name only a runtime family (`vLLM XPU`) cover a measurement through its `runtime_family`; one that "
    "disagrees with the measurement's own `runtime` would put it under another engine's claims.",
    "Make `runtime_family` the runtime's engine words (`vLLM` for `vLLM XPU 0.20.1`), or leave it out.",
    '{"runtime": "llama.cpp SYCL e3546c794", "runtime_family": "vLLM"}',
)


def check_runtime_family(registry: Registry) -> Iterator[Finding]:
    for doc in registry.records():
        runtime, family = doc.data.get("runtime"), doc.data.get("runtime_family")
        if isinstance(runtime, str) and isinstance(family, str):
            engine, named = parse_runtime(runtime).engine, parse_runtime(family)
            if named.pinned or engine[: len(named.engine)] != named.engine:
                message = f"runtime_family {family!r} is not the engine of runtime {runtime!r}"
                yield RUNTIME_FAMILY.at(doc, "/runtime_family", message)


RULES = [
    Rule("references", (DANGLING, MISMATCH), check_references, UNIT),
    Rule("runtime-family", (RUNTIME_FAMILY,), check_runtime_family, UNIT),
]
