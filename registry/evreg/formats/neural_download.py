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

Measurements go into the folder of a packet when they are of its scope
(``evreg.claims.scope``; a control or historical run of another scope that a packet
cites stays at family level) and exactly one packet claims them: it features
them (``featured_metric.measurement_id``), names their
evidence file as its ``manifest`` or grade evidence, or pairs them with itself
in a coverage cell or contract rule (``packet_id`` + ``evidence_id``). All
other measurements stay at family level, in ``packets/<family>/measurements/``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from evreg.claims import citations, figures, scope, workload_text
from evreg.core import codes, jsonio
from evreg.core.errors import Refused
from evreg.core.evidence import map_refs, parse_ref
from evreg.core.findings import join_pointer, split_pointer
from evreg.core.jsonio import iter_keyed_strings
from evreg.core.layout import (
    FAMILY_LIST,
    LAB_FORMAT,
    LAB_SOURCE,
    LAB_SOURCE_REPOSITORY,
    LIST_OF_KIND,
    LISTS,
    id_problem,
    record_path,
)
from evreg.core.vocab import model_for, model_of_repository
from evreg.formats import (
    Importer,
    ImportRefused,
    Option,
    Plan,
    forbid_citation_markers,
    refuse,
    refuse_other_format,
    sniff,
)
from evreg.records.models import REVISION_LISTS, in_cell, is_prose_key, iter_prose, map_prose, revisions_of
from evreg.store import MEASUREMENT_KINDS, Registry

FORMAT = LAB_FORMAT
CATALOG_FORMAT = "neural-download-model-family-catalog-v1"
"""The lab's list of its families (``families/catalog.json``); imported as ``packets/catalog.json``."""
DEFAULT_SOURCE = LAB_SOURCE
DEFAULT_REPOSITORY = LAB_SOURCE_REPOSITORY

ADDED_FAMILY_FIELDS = ("kind", "record_order", "sources")


def plan_import(
    raw: bytes,
    file: str,
    source: str = DEFAULT_SOURCE,
    repository: str = DEFAULT_REPOSITORY,
    pin: Mapping[str, str] | None = None,
    hardware: str = "",
) -> Plan:
    """A family manifest split into records: the family (with ``record_order`` and ``sources``), and one
    record per list entry, with evidence paths cited into ``source`` and prose figures bound to citations.
    ``pin`` (``commit``, ``path``) says where in ``repository`` the manifest was read; it is recorded with the
    source. ``hardware``, stated by the contributor for a manifest that names none, is written into every packet
    and measurement and recorded with the source (``_state_hardware``). The lab's family list (``CATALOG_FORMAT``)
    becomes the registry's ``packets/catalog.json``."""
    manifest = _read_json(raw, file)

    def local_to_external(value: str) -> str:
        return value if parse_ref(value).kind == "url" else f"{source}:{value}"

    sources = {
        source: {
            "repository": repository,
            **{k: v for k, v in (pin or {}).items() if v},
            "note": "Evidence paths of the imported manifest point into this "
            "repository; its files are not copied here.",
        }
    }
    if manifest.get("format") == CATALOG_FORMAT:
        return _plan_catalog(manifest, file, local_to_external, sources)
    manifest = _check_manifest(manifest, file)
    family_id = manifest["id"]

    family: dict[str, Any] = {"kind": "family"}
    order: dict[str, list[str]] = {}
    records: list[tuple[str, dict[str, Any]]] = []
    for key, value in manifest.items():
        if key not in LIST_OF_KIND.values():
            family[key] = value
            continue
        listed = _list_records(file, key, value)
        order[key] = [record["id"] for _, record in listed]
        records += [(kind, map_refs(record, local_to_external)) for kind, record in listed]
    lists = [(join_pointer(key), manifest.get(key), "record id") for key, _ in LISTS if key != "family_closures"]
    revisions = [(join_pointer(key), manifest.get(key), "revision id") for key in REVISION_LISTS]
    artifacts = [
        (f"{where}/quantized_artifacts", rev.get("quantized_artifacts"), "artifact id")
        for where, rev in revisions_of(manifest)
    ]
    _refuse_bad_ids(file, [("", [manifest], "family id"), *lists, *revisions, *artifacts])
    if hardware:
        _state_hardware(file, hardware, records, sources[source])
    _state_identity(family, records)
    family = map_refs(family, local_to_external)
    bound, left = bind_figures([family, *(r for _, r in records)])
    family["record_order"] = order
    family["sources"] = sources

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
    plan.notes.append(f"{bound} figures in prose bound to citations; {left} left as written (orphan numbers)")
    plan.notes.append(
        f"{placed} measurements placed in packet folders, "
        f"{counts.get('run_measurements', 0) + counts.get('series_measurements', 0) - placed} "
        "at family level"
    )
    return plan


def _read_json(raw: bytes, file: str) -> dict[str, Any]:
    """The parsed object, or a refusal naming what makes it unreadable."""
    data, findings = jsonio.parse(raw, file)
    refuse_other_format(sniff(raw) if findings else data, file, "neural-download", f"a {FORMAT} manifest")
    if findings:
        raise ImportRefused(findings)
    forbid_citation_markers(data, file)
    if not isinstance(data, dict) or data.get("format") not in (FORMAT, CATALOG_FORMAT):
        raise refuse(
            file,
            "/format",
            f"not a {FORMAT} manifest nor a {CATALOG_FORMAT} list",
            "pass a neural.download family manifest (families/<family>.json) or the lab's families/catalog.json",
        )
    return data


def _plan_catalog(
    catalog: dict[str, Any], file: str, local_to_external: Callable[[str], str], sources: dict[str, Any]
) -> Plan:
    """The lab's family list as the registry's ``packets/catalog.json``: its fields kept, ``kind`` and ``sources``
    added, manifest paths cited into the source as a family's evidence paths are."""
    for key in ("kind", "sources"):
        if key in catalog:
            raise refuse(file, f"/{key}", f"the list already has a field {key!r}", "rename the field in the source")
    families = catalog.get("families")
    if not isinstance(families, list) or not all(isinstance(f, dict) for f in families):
        raise refuse(file, "/families", "families is not a list of objects", "pass the lab's families/catalog.json")
    _refuse_bad_ids(file, [("/families", families, "family id")])
    plan = Plan()
    plan.add(FAMILY_LIST, {"kind": "catalog", **map_refs(catalog, local_to_external), "sources": sources})
    plan.notes.append(f"family list: {len(families)} families, in the order readers will see them")
    return plan


def export_catalog(registry: Registry) -> dict[str, Any]:
    """The registry's family list back in the lab's format."""
    doc = registry.document(FAMILY_LIST)
    if doc is None or not isinstance(doc.data, dict):
        raise KeyError(FAMILY_LIST)
    return _local_paths({k: v for k, v in doc.data.items() if k not in ("kind", "sources")}, doc.data)


def _local_paths(data: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """``data`` with evidence paths cited into ``record``'s sources back as the lab writes them."""
    sources = tuple(record.get("sources") or {})

    def external_to_local(value: str) -> str:
        ref = parse_ref(value)
        return ref.path if ref.kind == "external" and ref.source in sources else value

    return map_refs(data, external_to_local)


def _check_manifest(manifest: dict[str, Any], file: str) -> dict[str, Any]:
    """The manifest, or a refusal naming what makes it unmappable."""
    for key in ADDED_FAMILY_FIELDS:
        if key in manifest:
            raise refuse(
                file,
                join_pointer(key),
                f"the manifest already has a field {key!r}, which the registry uses for itself",
                "rename the field in the source",
            )
    return manifest


def _list_records(file: str, key: str, value: Any) -> list[tuple[str, dict[str, Any]]]:
    """(kind, record) of each entry of one record list of the manifest, with ``kind`` (and, for a
    closure, a positional ``id``) added; refuses entries that are not records."""
    kind = dict(LISTS)[key]
    if not isinstance(value, list):
        raise refuse(file, join_pointer(key), f"{key} is not a list", "each record list is a JSON array")
    out = []
    for index, item in enumerate(value):
        pointer = join_pointer(key, index)
        if not isinstance(item, dict):
            raise refuse(file, pointer, "a record is not a JSON object", "fix the manifest")
        if "kind" in item:
            raise refuse(
                file,
                join_pointer(key, index, "kind"),
                "the record already has a field 'kind', which the registry uses for itself",
                "rename the field in the source",
            )
        record = {"kind": kind, **item}
        if kind == "closure":
            if "id" in item:
                raise refuse(
                    file,
                    join_pointer(key, index, "id"),
                    "family closures carry no id in this format",
                    "remove the id; the import numbers closures by position",
                )
            record["id"] = f"closure-{index + 1}"
        out.append((kind, record))
    return out


def _refuse_bad_ids(file: str, lists: list[tuple[str, Any, str]]) -> None:
    """Refuse the input if any id in ``lists`` ((pointer, objects, what they are)) is not an id, naming every one
    and what is wrong with it (ids become folder and file names and are cited)."""
    ids = [
        (f"{base}/{i}/id" if base else "/id", what, item.get("id"))
        for base, items, what in lists
        if isinstance(items, list)
        for i, item in enumerate(items)
        if isinstance(item, dict)
    ]
    bad = [(pointer, what, rid, problem) for pointer, what, rid in ids if (problem := id_problem(rid))]
    if bad:
        raise ImportRefused(
            [
                codes.IMPORT_UNMAPPABLE.at(
                    file,
                    pointer,
                    f"{what} {rid!r} is not an id: {problem}",
                    "ids become folder and file names and are cited as m:ID.metric: lowercase letters and digits, "
                    "joined by single '-' or '.'",
                )
                for pointer, what, rid, problem in bad
            ]
        )


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
    packets = {
        p["id"]: p for p in manifest.get("packets") or [] if isinstance(p, dict) and isinstance(p.get("id"), str)
    }
    by_id = {m["id"]: m for m in measurements if isinstance(m.get("id"), str)}
    return {
        mid: pid
        for mid, pids in claims.items()
        if len(pids) == 1
        and (pid := next(iter(pids))) in packets
        and mid in by_id
        and not scope.mismatches(packets[pid], by_id[mid])
    }


HARDWARE_KINDS = ("packet", *MEASUREMENT_KINDS)
"""The records that state the hardware they were measured on (``evreg.claims.scope``): packets and measurements."""


def _state_hardware(
    file: str, hardware: str, records: list[tuple[str, dict[str, Any]]], source: dict[str, Any]
) -> None:
    """The contributor's ``--hardware`` written into every packet and measurement of a manifest that names none,
    and recorded with the source (export leaves it out again: the round trip stays exact). A manifest that names
    hardware itself is refused: a stated value would mix with the lab's own."""
    named = next((r for kind, r in records if kind in HARDWARE_KINDS and "hardware" in r), None)
    if named is not None:
        raise refuse(
            file,
            "",
            f"record {named.get('id')!r} of the manifest names its hardware ({named['hardware']!r}); --hardware "
            "states it only for a manifest that names none",
            "import without --hardware",
        )
    for kind, record in records:
        if kind in HARDWARE_KINDS:
            record["hardware"] = hardware
    source["hardware"] = hardware


def _workload_fields(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The workload fields the lab's workload text and config state (``evreg.claims.workload_text``), or None."""
    return workload_text.fields(record.get("workload"), record.get("config")) or None


def _read_model(rev: Mapping[str, Any]) -> str | None:
    """The canonical model a lab's revision names by its repository or label, if the vocabulary knows it."""
    hit = model_of_repository(rev["repository"]) if isinstance(rev.get("repository"), str) else None
    return hit[0] if hit else model_for(rev.get("label"), rev.get("id"))


def _state_identity(family: dict[str, Any], records: list[tuple[str, dict[str, Any]]]) -> None:
    """What the lab's manifest states in words, as fields: each revision's canonical model (by its repository or
    label) and each measurement's workload fields (by its text). The lab's format has neither: its export drops
    them."""
    for _, rev in revisions_of(family):
        if "model" not in rev and (model := _read_model(rev)):
            rev["model"] = model
    for kind, record in records:
        if kind in MEASUREMENT_KINDS and "workload_fields" not in record and (found := _workload_fields(record)):
            record["workload_fields"] = found


def _stated_hardware(family: Mapping[str, Any]) -> set[str]:
    sources = family.get("sources")
    if not isinstance(sources, dict):
        return set()
    return {s["hardware"] for s in sources.values() if isinstance(s, dict) and isinstance(s.get("hardware"), str)}


class ExportRefused(Refused, ValueError):
    """Files of the family cannot be read, so a manifest would silently lose them."""


def export(registry: Registry, family_id: str, elsewhere: Callable[[], Registry] | None = None) -> dict[str, Any]:
    """Join a family's records back into one manifest.

    Every record file of the family that parses is exported, whether or not it
    passes validation (an export must not lose data); a file that does not
    parse refuses the export, naming it. Its prose's citations are written as
    the figures they resolve to, from ``registry``'s measurements, or from those
    of ``elsewhere()`` (the whole registry) when the prose cites a measurement
    ``registry`` does not hold."""
    mine = [d for d in registry.documents if d.place.family == family_id and d.place.kinds and not d.place.evidence]
    unreadable = [d.path for d in mine if not isinstance(d.data, dict)]
    if unreadable:
        raise ExportRefused(f"cannot export {family_id!r}: unreadable record files {', '.join(unreadable[:5])}")
    family_doc = next((d for d in mine if d.place.kinds == ("family",)), None)
    if family_doc is None:
        raise KeyError(family_id)
    family = dict(family_doc.data)
    order: dict[str, list[str]] = family.get("record_order") or {}
    by_list: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for doc in mine:
        kind = doc.data.get("kind")
        if kind in LIST_OF_KIND:
            by_list[LIST_OF_KIND[kind]][str(doc.data.get("id", doc.place.id))] = doc.data
    manifest = {k: v for k, v in family.items() if k not in ADDED_FAMILY_FIELDS}
    for key in REVISION_LISTS:  # the canonical model is the registry's link between labs, not the lab's field
        if isinstance(manifest.get(key), list):
            manifest[key] = [
                {k: v for k, v in r.items() if k != "model"} if isinstance(r, dict) else r for r in manifest[key]
            ]
    stated = _stated_hardware(family)
    for key, kind in LISTS:
        if key not in order and not by_list.get(key):
            continue
        records = by_list.get(key, {})
        ids = [i for i in order.get(key, []) if i in records]
        ids += sorted(set(records) - set(ids))
        items = []
        for rid in ids:
            item = {k: v for k, v in records[rid].items() if k != "kind"}
            if kind in HARDWARE_KINDS and item.get("hardware") in stated:
                del item["hardware"]  # the contributor's statement at import, not the lab's field
            item.pop("workload_fields", None)  # the registry's reading of the lab's text, not a field of its format
            if kind == "closure":
                item.pop("id", None)
            items.append(item)
        manifest[key] = items
    measurements = {str(d.id): d.data for d in registry.records(*MEASUREMENT_KINDS)}
    if elsewhere is not None and _cites_beyond(manifest, measurements):
        measurements = {str(d.id): d.data for d in elsewhere().records(*MEASUREMENT_KINDS)}
    manifest = map_prose(manifest, lambda text: citations.plain(text, measurements))
    return _local_paths(manifest, family)


def _cites_beyond(manifest: dict[str, Any], measurements: Mapping[str, Any]) -> bool:
    """Whether a prose string of ``manifest`` (every string ``map_prose`` maps) cites a measurement not in
    ``measurements``."""
    return any(
        side.measurement not in measurements
        for _pointer, _key, text in iter_keyed_strings(manifest, is_prose_key)
        for form in citations.parse(text)
        if not isinstance(form, citations.CitationError)
        for side in citations.cited(form)
    )


_UNIT_SUFFIX = {"tok/s": "_tok_s", "t/s": "_tok_s", "tokens/s": "_tok_s", "ms": "_ms", "%": "_pct"}
_REFERENCE_KEYS = ("evidence_id", "measurement_id", "measurement_ids", "basis_measurement_ids")


_BOUND = re.compile(
    r"(?:[<>≥≤⩾⩽~≈]=?|=>|\b(?:at (?:least|most)|above|below|under|over|up to|more than|less than|fewer than|"
    r"greater than|exceed(?:s|ing)?|min(?:imum)?|max(?:imum)?|target(?:s|ed|ing)?|goal|objective|beyond)\b)"
    r"(?:\W*\d[\d.,]*\s*(?:/|-|–|,|to|and|or))*\W*$",  # and the later items of a list after it: > 30 / 38.2
    re.I,
)
"""Signs and words just before a figure that make it a bound or target rather than a stated result."""


def _as_read(text: str) -> str:
    """Text as a reader sees it (``evreg.claims.figures`` folds it the same way): compatibility forms folded, invisible
    characters and emphasis dropped."""
    return re.sub(r"[*_`\u200b-\u200f\u2060\ufeff]", "", unicodedata.normalize("NFKC", text))


_Value = tuple[str, int | None, float | None, float]
"""(metric, sample index, point x, value) of one measured value: a sample has no x, a point no index."""
_Hit = tuple[str, str, int | None, float | None, frozenset[str]]
"""(measurement id, metric, sample index, point x, citation filters) of the value a figure states."""
_Search = tuple[list[str], float | None]
"""(measurement ids, point x or None) where a figure's value is looked for."""


def _measured_values(records: list[dict[str, Any]]) -> dict[str, list[_Value]]:
    """Every numeric sample and point value of the measurements among ``records``, by measurement id."""
    values: dict[str, list[_Value]] = defaultdict(list)
    for r in records:
        if r.get("kind") not in MEASUREMENT_KINDS:
            continue
        for metric, samples in (r.get("metrics") or {}).items():
            for i, v in enumerate(samples if isinstance(samples, list) else []):
                if isinstance(v, int | float) and not isinstance(v, bool):
                    values[r["id"]].append((metric, i, None, float(v)))
        for p in r.get("points") or []:
            if not isinstance(p, dict) or not isinstance(p.get("x"), int | float):
                continue
            for metric, v in p.items():
                if metric != "x" and isinstance(v, int | float) and not isinstance(v, bool):
                    values[r["id"]].append((metric, None, float(p["x"]), float(v)))
    return values


def _matches(
    values: Mapping[str, list[_Value]], mids: list[str], fig: figures.Figure, point_x: float | None = None
) -> set[_Hit]:
    """The values of measurements ``mids`` (at ``point_x``, if given) of a metric the figure's
    hint or unit names that, at the figure's precision, read as the figure's number: as a ratio in
    percent (``| pct``) for a figure in %, without the leading zero (``| dot``) for ``.587``."""
    found = set()
    for mid in mids:
        for metric, index, x, value in values.get(mid, ()):
            if point_x is not None and x != point_x:
                continue
            if fig.metric_hints and metric not in fig.metric_hints:
                continue
            as_pct = fig.unit == "%" and citations.unit_of(metric) == "ratio"
            bare = not fig.unit and not fig.metric_hints  # a bare number in a cell: a value of the cell's arm
            if not (fig.metric_hints or as_pct or bare or metric.endswith(_UNIT_SUFFIX.get(fig.unit, "\0"))):
                continue
            sep = "," in fig.number
            if as_pct:
                shown = f"{value * 100:,.{fig.decimals}f}" if sep else f"{value * 100:.{fig.decimals}f}"
            else:
                shown = (
                    f"{value:,.{fig.decimals}f}" if sep else citations.format_value(value, metric, fig.decimals, False)
                )
            flags = ({"pct"} if as_pct else set()) | ({"sep"} if sep else set())
            if fig.number.startswith(".") and shown.startswith("0."):
                shown, flags = shown[1:], flags | {"dot"}
            if shown == fig.number:
                found.add((mid, metric, index, x, frozenset(flags)))
    return found


def _hit(values: Mapping[str, list[_Value]], fig: figures.Figure, searches: list[_Search]) -> _Hit | None:
    """The value the figure states, from the first search that finds any: None when that
    search finds more than one (ambiguous) or none finds any."""
    for mids, px in searches:
        found = _matches(values, mids, fig, px) if mids else set()
        if found:
            return next(iter(found)) if len(found) == 1 else None
    return None


def _bind_text(
    text: str, values: Mapping[str, list[_Value]], searches: list[_Search], cell: bool = False
) -> tuple[str, int, int]:
    """One prose string with every figure ``_hit`` finds replaced by its citation; and how many
    figures were bound and left as written."""
    new, bound, left = text, 0, 0
    for fig in reversed(figures.find_figures(text, cell=cell)):
        if fig.metric_hints and text[fig.end : fig.end + 1] == "%":  # A78.9%: the lab's acceptance rate, in percent
            fig = dataclasses.replace(fig, unit="%", metric_hints=None)
        bound_like = _BOUND.search(_as_read(text[: fig.start])) is not None
        whole = fig.decimals == 0
        bare = not fig.unit and not fig.metric_hints
        # A target (>=100 tok/s) is not a result; a whole number found only family-wide is too likely a round
        # figure that happens to equal some run's rounded value: both stay as written. A bare number in a cell is
        # looked for in the cell's arm and the record only.
        where = searches[:2] if bare else searches[:-1] if whole else searches
        hit = None if bound_like else _hit(values, fig, where)
        change = _change(text, fig, values, searches[:3]) if hit is None and not bound_like else None
        if change is not None:
            start, cite = change
            new = new[:start] + cite + new[fig.end :]
            bound += 1
            continue
        if hit is None:
            left += 1
            continue
        mid, metric, index, x, flags = hit
        cite = citations.citation_text(mid, metric, index, x, fig.decimals, False, flags)
        new = new[: fig.start] + cite + new[fig.start + len(fig.number) :]
        bound += 1
    return new, bound, left


def _change(
    text: str, fig: figures.Figure, values: Mapping[str, list[_Value]], searches: list[_Search]
) -> tuple[int, str] | None:
    """A signed percentage (``+8.14%``) that is, at its written precision, the change between exactly one pair of
    stored samples of one metric of the cell's arm, the record or the measurements it references (never the whole
    family: too many pairs): (where its sign starts, the derived citation that renders back to it)."""
    sign = text[fig.start - 1 : fig.start] if fig.start else ""
    if fig.unit != "%" or sign not in ("+", "-") or fig.end - fig.start != len(fig.number) + 1:
        return None
    mids = list(dict.fromkeys(m for ids, _ in searches for m in ids))
    samples = [(mid, metric, i, v) for mid in mids for metric, i, x, v in values.get(mid, ()) if x is None]
    found = {
        f"{{{{ change:m:{a[0]}.{a[1]}[{a[2]}] from m:{b[0]}.{b[1]}[{b[2]}] | {fig.decimals} }}}}"
        for a in samples
        for b in samples
        if a[:3] != b[:3]
        and a[1] == b[1]
        and b[3] != 0
        and f"{(a[3] - b[3]) / b[3] * 100:+.{fig.decimals}f}%" == sign + fig.text
    }
    return (fig.start - 1, found.pop()) if len(found) == 1 else None


def bind_figures(records: list[dict[str, Any]]) -> tuple[int, int]:
    """Turn figures in prose that state a measured value into citations, in place.

    A figure is bound when, at the written precision, it equals exactly one
    sample or point value of a metric its unit or notation names, searched in
    order: the measurement the surrounding cell cites (``evidence_id``, at its
    ``point_x``), the record itself, measurements the record references, then
    the whole family (only for figures with decimals). A figure after a bound
    (``>=``, ``at least``, ...) is a target and is never bound. A memory size in
    the model's fit to the lab's card (``model_signals.b70_fit``) is a
    specification, written as a setting. Ambiguous or
    unmatched figures stay as written, and the
    citation renders back to exactly the written text (a lossless export).
    Returns (bound, left).
    """
    values = _measured_values(records)
    bound = left = 0
    for record in records:
        referenced = [v for _, _, v in iter_keyed_strings(record, lambda k: k in _REFERENCE_KEYS)]
        own = [record["id"]] if record.get("kind") in MEASUREMENT_KINDS else []
        family_wide = list(values)
        for pointer, text in list(iter_prose(record)):
            parent = _parent(record, pointer)
            cell = [parent["evidence_id"]] if isinstance(parent.get("evidence_id"), str) else []
            point_x = parent.get("point_x") if isinstance(parent.get("point_x"), int | float) else None
            searches = [(cell, point_x), (own, None), (referenced, None), (family_wide, None)]
            marked = _specs_as_settings(text) if pointer.startswith(_SPEC_FIELDS) else text
            new, n_bound, n_left = _bind_text(marked, values, searches, in_cell(str(record.get("kind")), pointer))
            bound += n_bound
            left += n_left
            if new != text:
                _set(record, pointer, new)
    return bound, left


_SPEC_FIELDS = ("/model_signals/b70_fit/",)
"""Fields that state how a model fits the lab's card: a memory size there is the card's or the weights' size, a
specification (``{{ set:32 GiB }}``), not a measurement."""


def _specs_as_settings(text: str) -> str:
    for fig in reversed(figures.find_figures(text)):
        if fig.unit == "bytes":
            text = text[: fig.start] + "{{ set:" + fig.text + " }}" + text[fig.end :]
    return text


def _parent(record: dict[str, Any], pointer: str) -> dict[str, Any]:
    node: Any = record
    tokens = split_pointer(pointer)[:-1]
    for t in tokens:
        node = node[int(t)] if isinstance(node, list) else node[t]
    while isinstance(node, list):  # prose in a list: the object holding the list
        node = _parent(record, "/" + "/".join(tokens[:-1])) if tokens else record
        break
    return node if isinstance(node, dict) else {}


def _set(record: dict[str, Any], pointer: str, value: str) -> None:
    node: Any = record
    tokens = split_pointer(pointer)
    for t in tokens[:-1]:
        node = node[int(t)] if isinstance(node, list) else node[t]
    node[int(tokens[-1]) if isinstance(node, list) else tokens[-1]] = value


def _pin(file: str, options: Mapping[str, str]) -> dict[str, str]:
    """Where in the source repository the file was read (``--commit``, ``--path``), refused when malformed: it is
    recorded in ``sources`` and links to evidence at that commit."""
    commit, path = options.get("commit", ""), options.get("path", "")
    if commit and not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise refuse(
            file, "", f"--commit {commit!r} is not a commit id", "give the full 40-hex commit the file was read at"
        )
    if path and (path.startswith("/") or ".." in path.split("/") or "\\" in path):
        raise refuse(file, "", f"--path {path!r} is not a path inside the repository", "give it as families/NAME.json")
    return {"commit": commit, "path": path}


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


IMPORTER = Importer(
    "neural-download",
    "Split a neural.download family manifest into packets/<family>/.",
    lambda r: plan_import(
        r.raw, r.file, r.options["source"], r.options["repository"], _pin(r.file, r.options), r.options["hardware"]
    ),
    into_packet=False,
    options=(
        Option("source", DEFAULT_SOURCE, "Name under which the lab's evidence paths are cited (SOURCE:path)."),
        Option("repository", DEFAULT_REPOSITORY, "Where the lab's evidence files live."),
        Option("commit", "", "The repository's commit the manifest was read at (40 hex); recorded in `sources`."),
        Option("path", "", "The manifest's path in that repository, e.g. families/phi-4.json; recorded too."),
        Option(
            "hardware",
            "",
            "The hardware the manifest's runs were measured on, as you state it (the lab's manifests name none): "
            "written into every packet and measurement, recorded in `sources`, left out again on export.",
        ),
    ),
)
