"""Structure: what the loader found, where files live, unique ids."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator
from pathlib import Path

from evreg.check.rules import UNIT, Rule
from evreg.claims.siteconfig import unpublishable
from evreg.core import codes
from evreg.core.findings import Code, Finding, Severity, join_pointer
from evreg.records import schemas
from evreg.records.models import MODELS, revisions_of
from evreg.store import Registry


def check_parse(registry: Registry) -> Iterator[Finding]:
    yield from registry.parse_findings()


def check_layout(registry: Registry) -> Iterator[Finding]:
    for doc in registry.documents:
        place = doc.place
        if place.problem:
            yield codes.LAYOUT.at(doc.path, "", f"{doc.path}: {place.problem}")
            continue
        if not doc.valid or place.evidence:
            continue
        if doc.id != place.id:
            yield codes.LAYOUT.at(
                doc,
                "/id",
                f"id {doc.id!r} differs from the file's name {place.id!r}",
                "the file name (or folder) is the id: rename one of them",
            )


def check_duplicates(registry: Registry) -> Iterator[Finding]:
    """Two files at places for one id of one namespace (ids are file names, and a
    file whose id differs from its name is a ``layout`` finding of its own)."""
    for key in sorted(registry.shared):
        paths = registry.shared[key]
        if len(paths) > 1:
            space, _family, rid = key.split("/", 2)
            for path in paths[1:]:
                doc = registry.document(path)
                assert doc is not None
                doc.data  # noqa: B018 -- read it, so the finding names the record
                yield codes.DUPLICATE_ID.at(
                    doc, "/id", f"{space} id {rid!r} is also used by {paths[0]}", codes.DUPLICATE_ID.hint
                )


def check_family_ids(registry: Registry) -> Iterator[Finding]:
    """Ids within a family record: its revisions and artifacts."""
    for fam in registry.records("family"):
        ids: dict[str, str] = {}
        for base, rev in revisions_of(fam.data):
            for rid, ptr in [(rev["id"], f"{base}/id")] + [
                (a["id"], f"{base}/quantized_artifacts/{ai}/id")
                for ai, a in enumerate(rev.get("quantized_artifacts", []))
            ]:
                if rid in ids:
                    yield codes.DUPLICATE_ID.at(
                        fam, ptr, f"id {rid!r} is also used at {ids[rid]}", codes.DUPLICATE_ID.hint
                    )
                ids.setdefault(rid, ptr)


def check_site_files(registry: Registry) -> Iterator[Finding]:
    if registry.source.label != "working tree":
        return  # a commit's tree is checked when it is checked out; the build checks what it publishes
    yield from unpublishable(Path(registry.root))


MISSPELT = Code(
    "field-misspelt",
    "An unknown field whose name is close to a known one",
    "Unknown fields are kept as they are, but nothing checks or shows them as the field they resemble: a `caveats` "
    "beside no `caveat` is prose nobody validates, and a reader never sees it as the caveat.",
    "Rename the field to the known one it was meant to be (or to a name that is clearly your own).",
    '{"kind": "run-measurement", "caveats": "..."}',
)


@functools.lru_cache(maxsize=4096)
def _close_field(key: str, kind: str) -> list[str]:
    """The known field of ``kind`` that ``key`` reads like, if any. The same unknown fields recur in
    every record of a kind (the lab's extra fields), so each pair is compared with difflib once."""
    return difflib.get_close_matches(key, [*MODELS[kind].model_fields, "kind"], n=1, cutoff=0.85)


def check_field_names(registry: Registry) -> Iterator[Finding]:
    """Top-level fields of a record that are not its kind's but read like one (a typo)."""
    for doc in registry.records():
        model = MODELS.get(str(doc.kind))
        if model is None:
            continue
        for key in doc.data:
            if key not in model.model_fields and key != "kind":
                near = _close_field(key, str(doc.kind))
                if near and near[0] not in doc.data:
                    message = f"{key!r} is not a field of a {doc.kind}; did you mean {near[0]!r}?"
                    yield MISSPELT.at(doc, join_pointer(key), message, severity=Severity.WARNING)


RULES = [
    Rule(
        "parse",
        (codes.JSON_SYNTAX, codes.JSON_DUPLICATE_KEY, codes.JSON_NON_FINITE, codes.FILE_TOO_LARGE, codes.SCHEMA),
        check_parse,
        UNIT,
    ),
    Rule("layout", (codes.LAYOUT,), check_layout, UNIT),
    Rule("duplicate-id", (codes.DUPLICATE_ID,), check_duplicates),
    Rule("family-ids", (), check_family_ids, UNIT),
    Rule("field-names", (MISSPELT,), check_field_names, UNIT),
    Rule("site-files", (codes.SITE_FILE_UNSAFE, codes.SITE_CONFIG_UNSAFE), check_site_files),
]


def check_schema_drift(registry: Registry) -> Iterator[Finding]:
    if registry.source.label == "working tree":
        yield from schemas.check(registry.root)


RULES.append(Rule("schema-drift", (codes.SCHEMA_DRIFT,), check_schema_drift))
