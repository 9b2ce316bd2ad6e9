"""The neural.download lab's family manifest (``neural-download-model-family-v1``).

Import splits one manifest into the store: ``family.json`` keeps the family's
own fields with its weight revisions and artifacts; every entry of the
manifest's record lists becomes one file. Export joins them back into a
manifest equal to the input (same keys, values and list order).

What the import adds, and the export removes again:

- ``kind`` on every record;
- ``id`` on family closures (the lab's closures have none): ``closure-N``,
  N the closure's position in the manifest, from 1;
- on the family, ``record_order`` (each list's ids in manifest order) and
  ``sources`` (the external source evidence paths point into);
- the prefix ``SOURCE:`` on evidence paths, which point into the lab's own
  repository and are not files here.

Measurements go into the folder of a packet when exactly one packet claims
them: it features them (``featured_metric.measurement_id``), names their
evidence file as its ``manifest`` or grade evidence, or pairs them with itself
in a coverage cell or contract rule (``packet_id`` + ``evidence_id``). All
other measurements stay at family level, in ``packets/<family>/measurements/``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from registry import jsonio
from registry.evidence import map_refs, parse_ref
from registry.findings import Finding, join_pointer
from registry.formats import ImportRefused, Plan
from registry.layout import record_path
from registry.models import SLUG_PATTERN
from registry.store import MEASUREMENT_KINDS, Registry

FORMAT = "neural-download-model-family-v1"
DEFAULT_SOURCE = "neural-download"
DEFAULT_REPOSITORY = "https://github.com/steveseguin/b70-optimization-lab"

LISTS: tuple[tuple[str, str], ...] = (
    ("packets", "packet"),
    ("run_measurements", "run-measurement"),
    ("series_measurements", "series-measurement"),
    ("views", "view"),
    ("coverage_views", "coverage-view"),
    ("coverage_contracts", "coverage-contract"),
    ("family_closures", "closure"),
    ("estimates", "estimate"),
)
LIST_OF_KIND = {kind: key for key, kind in LISTS}
ADDED_FAMILY_FIELDS = ("kind", "record_order", "sources")
_SLUG = re.compile(SLUG_PATTERN)


def _refuse(file: str, pointer: str, message: str, hint: str) -> ImportRefused:
    return ImportRefused([Finding(code="import-unmappable", file=file, pointer=pointer, message=message, hint=hint)])


def plan_import(raw: bytes, file: str, source: str = DEFAULT_SOURCE, repository: str = DEFAULT_REPOSITORY) -> Plan:
    manifest, findings = jsonio.parse(raw, file)
    if findings:
        raise ImportRefused(findings)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refuse(
            file,
            "/format",
            f"not a {FORMAT} manifest",
            "pass a neural.download family manifest (families/<family>.json)",
        )
    family_id = manifest.get("id")
    if not isinstance(family_id, str) or not _SLUG.match(family_id):
        raise _refuse(
            file,
            "/id",
            f"family id {family_id!r} is not a lowercase slug",
            "the family id becomes a folder name and must be a slug",
        )
    for key in ADDED_FAMILY_FIELDS:
        if key in manifest:
            raise _refuse(
                file,
                join_pointer(key),
                f"the manifest already has a field {key!r}, which the registry uses for itself",
                "rename the field in the source",
            )

    def local_to_external(value: str) -> str:
        return value if parse_ref(value).kind == "url" else f"{source}:{value}"

    family: dict[str, Any] = {"kind": "family"}
    order: dict[str, list[str]] = {}
    records: list[tuple[str, dict[str, Any]]] = []
    for key, value in manifest.items():
        if key not in LIST_OF_KIND.values():
            family[key] = value
            continue
        kind = dict(LISTS)[key]
        if not isinstance(value, list):
            raise _refuse(file, join_pointer(key), f"{key} is not a list", "each record list is a JSON array")
        order[key] = []
        for index, item in enumerate(value):
            pointer = join_pointer(key, index)
            if not isinstance(item, dict):
                raise _refuse(file, pointer, "a record is not a JSON object", "fix the manifest")
            if "kind" in item:
                raise _refuse(
                    file,
                    join_pointer(key, index, "kind"),
                    "the record already has a field 'kind', which the registry uses for itself",
                    "rename the field in the source",
                )
            record = {"kind": kind, **item}
            if kind == "closure":
                if "id" in item:
                    raise _refuse(
                        file,
                        join_pointer(key, index, "id"),
                        "family closures carry no id in this format",
                        "remove the id; the import numbers closures by position",
                    )
                record["id"] = f"closure-{index + 1}"
            rid = record.get("id")
            if not isinstance(rid, str) or not _SLUG.match(rid):
                raise _refuse(
                    file,
                    join_pointer(key, index, "id"),
                    f"record id {rid!r} is not a lowercase slug",
                    "ids become file names: lowercase letters, digits and single hyphens",
                )
            order[key].append(rid)
            records.append((kind, map_refs(record, local_to_external)))
    family = map_refs(family, local_to_external)
    family["record_order"] = order
    family["sources"] = {
        source: {
            "repository": repository,
            "note": "Evidence paths of the imported manifest point into this "
            "repository; its files are not copied here.",
        }
    }

    plan = Plan()
    plan.add(record_path("family", family_id, family_id), family)
    owners = _packet_owners(manifest)
    placed = 0
    for kind, record in records:
        packet = owners.get(record["id"]) if kind in MEASUREMENT_KINDS else None
        placed += packet is not None
        plan.add(record_path(kind, family_id, record["id"], packet), record)
    counts = {key: len(ids) for key, ids in order.items()}
    plan.notes.append(f"family {family_id}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    plan.notes.append(
        f"{placed} measurements placed in packet folders, "
        f"{counts.get('run_measurements', 0) + counts.get('series_measurements', 0) - placed} "
        "at family level"
    )
    return plan


def _packet_owners(manifest: dict[str, Any]) -> dict[str, str]:
    """Measurement id -> the one packet that claims it (see module docstring)."""
    claims: dict[str, set[str]] = defaultdict(set)
    measurements = [
        m for key in ("run_measurements", "series_measurements") for m in manifest.get(key) or [] if isinstance(m, dict)
    ]
    by_evidence: dict[str, set[str]] = defaultdict(set)
    for m in measurements:
        if isinstance(m.get("evidence"), str) and isinstance(m.get("id"), str):
            by_evidence[m["evidence"]].add(m["id"])
    for p in manifest.get("packets") or []:
        if not isinstance(p, dict) or not isinstance(p.get("id"), str):
            continue
        featured = p.get("featured_metric")
        if isinstance(featured, dict) and isinstance(featured.get("measurement_id"), str):
            claims[featured["measurement_id"]].add(p["id"])
        paths = {p.get("manifest")}
        for grade in (p.get("grades") or {}).values():
            if isinstance(grade, dict) and isinstance(grade.get("evidence"), list):
                paths.update(e for e in grade["evidence"] if isinstance(e, str))
        for path in paths:
            for mid in by_evidence.get(path, ()):  # type: ignore[arg-type]
                claims[mid].add(p["id"])
    cells: list[Any] = []
    for view in manifest.get("coverage_views") or []:
        if isinstance(view, dict) and isinstance(view.get("cells"), dict):
            cells.extend(view["cells"].values())
    for contract in manifest.get("coverage_contracts") or []:
        if isinstance(contract, dict) and isinstance(contract.get("rules"), list):
            cells.extend(contract["rules"])
    for cell in cells:
        if (
            isinstance(cell, dict)
            and isinstance(cell.get("packet_id"), str)
            and isinstance(cell.get("evidence_id"), str)
        ):
            claims[cell["evidence_id"]].add(cell["packet_id"])
    return {mid: next(iter(pids)) for mid, pids in claims.items() if len(pids) == 1}


def export(registry: Registry, family_id: str) -> dict[str, Any]:
    """Join a family's records back into one manifest."""
    family_doc = registry.family(family_id)
    if family_doc is None:
        raise KeyError(family_id)
    family = dict(family_doc.data)
    order: dict[str, list[str]] = family.get("record_order") or {}
    sources = tuple(family.get("sources") or {})

    def external_to_local(value: str) -> str:
        ref = parse_ref(value)
        return ref.path if ref.kind == "external" and ref.source in sources else value

    by_list: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for doc in registry.family_records(family_id, *LIST_OF_KIND):
        by_list[LIST_OF_KIND[doc.kind]][doc.id] = doc.data  # type: ignore[index]
    manifest = {k: v for k, v in family.items() if k not in ADDED_FAMILY_FIELDS}
    for key, kind in LISTS:
        if key not in order and not by_list.get(key):
            continue
        records = by_list.get(key, {})
        ids = [i for i in order.get(key, []) if i in records]
        ids += sorted(set(records) - set(ids))
        items = []
        for rid in ids:
            item = {k: v for k, v in records[rid].items() if k != "kind"}
            if kind == "closure":
                item.pop("id", None)
            items.append(item)
        manifest[key] = items
    return map_refs(manifest, external_to_local)  # type: ignore[no-any-return]


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
