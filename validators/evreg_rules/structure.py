"""Structure: what the loader found, where files live, unique ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evreg import schemas
from evreg.containment import SITE_CONFIG_HINT, SITE_FILE_HINT, unpublishable
from evreg.findings import Finding
from evreg.rules import UNIT, CodeDoc, Rule
from evreg.store import Registry

PARSE_CODES = (
    CodeDoc(
        "json-syntax",
        "Unreadable JSON",
        "A record that cannot be parsed cannot be checked, cited or published. Also covers "
        "empty files, non-UTF-8 bytes, a byte-order mark and nesting beyond 64 levels.",
        "Fix the syntax at the line and column shown.",
        '{"id": "run-1", "metrics": {"decode_tok_s": [30.2, }',
    ),
    CodeDoc(
        "json-duplicate-key",
        "An object repeats a key",
        "JSON readers disagree on which duplicate wins, so the record means different things to different tools.",
        "Keep one value per key.",
        '{"id": "run-1", "id": "run-2"}',
    ),
    CodeDoc(
        "json-non-finite",
        "A number that is not a finite number",
        "NaN, Infinity and booleans are not measurements, and integers beyond 64 bits are not held exactly "
        "by JSON readers; tools coerce them silently.",
        "Record the finite number (a huge one with an exponent), or drop the sample and say why in a caveat.",
        '{"metrics": {"decode_tok_s": [NaN, true]}}',
    ),
    CodeDoc(
        "file-too-large",
        "A record file over the size limit",
        "Records are small, reviewable text. Huge files are refused unread so validation stays "
        "bounded in memory and time.",
        "Split the record; keep bulky raw output as an evidence file.",
        "",
    ),
    CodeDoc(
        "schema",
        "A JSON Schema violation",
        "Each record kind has a JSON Schema (schema/<kind>.schema.json) generated from the models.",
        "Match the schema: required fields, types, id patterns, enums.",
        '{"kind": "run-measurement", "id": "Run 1", "state": "measured"}',
    ),
)


def check_parse(registry: Registry) -> Iterator[Finding]:
    yield from registry.parse_findings()


LAYOUT = CodeDoc(
    "layout",
    "A file whose id, kind or folder disagree",
    "One record per file at one predictable path is what makes a pull request diff and `git log` of "
    "a file the history of exactly one record.",
    "Move the file to packets/<family>/<folder>/<id>.json, or make `id` and `kind` match the path.",
    'packets/qwen-27b/measurements/run-1.json containing {"kind": "view", "id": "run-2"}',
)


def check_layout(registry: Registry) -> Iterator[Finding]:
    for doc in registry.documents:
        place = doc.place
        if place.problem:
            yield Finding(code="layout", file=doc.path, message=f"{doc.path}: {place.problem}", hint=LAYOUT.hint)
            continue
        if not doc.valid or place.evidence:
            continue
        if doc.id != place.id:
            yield doc.finding(
                "layout",
                "/id",
                f"id {doc.id!r} differs from the file's name {place.id!r}",
                "the file name (or folder) is the id: rename one of them",
            )


DUPLICATE = CodeDoc(
    "duplicate-id",
    "Two records of one kind with one id",
    "An id must name one thing: citations, coverage cells and links resolve by id.",
    "Choose a new id for one of the records (a correction is a new record with `supersedes`).",
    "packets/a/measurements/run-1.json and packets/b/measurements/run-1.json",
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
                yield doc.finding(
                    "duplicate-id", "/id", f"{space} id {rid!r} is also used by {paths[0]}", DUPLICATE.hint
                )


def check_family_ids(registry: Registry) -> Iterator[Finding]:
    """Ids within a family record: its revisions and artifacts."""
    for fam in registry.records("family"):
        ids: dict[str, str] = {}
        for ri, rev in enumerate(fam.data.get("weight_revisions", [])):
            for rid, ptr in [(rev["id"], f"/weight_revisions/{ri}/id")] + [
                (a["id"], f"/weight_revisions/{ri}/quantized_artifacts/{ai}/id")
                for ai, a in enumerate(rev.get("quantized_artifacts", []))
            ]:
                if rid in ids:
                    yield fam.finding("duplicate-id", ptr, f"id {rid!r} is also used at {ids[rid]}", DUPLICATE.hint)
                ids.setdefault(rid, ptr)


SITE_FILE = CodeDoc(
    "site-file-unsafe",
    "A file under site/ the build must not publish",
    "Everything under site/ is copied into the public site. A symlink there (to /proc/self/environ, "
    "~/.ssh, /etc/hosts, or another part of the repository) would publish the build machine's files.",
    SITE_FILE_HINT,
    "site/assets/env.txt -> /proc/self/environ",
)


SITE_CONFIG_CODE = CodeDoc(
    "site-config-unsafe",
    "A site configuration that could run code or load outside content",
    "MkDocs reads mkdocs.yml with a YAML loader that runs `!!python/...` tags and expands `!ENV` (publishing the "
    "build machine's environment), and runs the hooks, plugins and Markdown extensions it names (`pymdownx.snippets` "
    "includes any file). A pull request's configuration is held to plain YAML and an allowlist of settings.",
    SITE_CONFIG_HINT,
    "hooks: [evil.py]",
)


def check_site_files(registry: Registry) -> Iterator[Finding]:
    if registry.source.label != "working tree":
        return  # a commit's tree is checked when it is checked out; the build checks what it publishes
    yield from unpublishable(Path(registry.root))


RULES = [
    Rule("parse", PARSE_CODES, check_parse, UNIT),
    Rule("layout", (LAYOUT,), check_layout, UNIT),
    Rule("duplicate-id", (DUPLICATE,), check_duplicates),
    Rule("family-ids", (), check_family_ids, UNIT),
    Rule("site-files", (SITE_FILE, SITE_CONFIG_CODE), check_site_files),
]


DRIFT = CodeDoc(
    "schema-drift",
    "schema/ differs from the models",
    "The committed JSON Schemas are what editors and other tools validate against; they must say "
    "exactly what the validator enforces.",
    "Run `evreg schema` and commit schema/ with the model change.",
    "",
)


def check_schema_drift(registry: Registry) -> Iterator[Finding]:
    if registry.source.label == "working tree":
        yield from schemas.check(registry.root)


RULES.append(Rule("schema-drift", (DRIFT,), check_schema_drift))
