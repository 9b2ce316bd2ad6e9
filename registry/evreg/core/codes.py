"""Finding codes made outside the rule pack: by the JSON reader, the loader, the engine,
the importers and the site build. The rule pack declares its own codes beside its rules
and lists these too where its rules report them."""

from __future__ import annotations

from evreg.core.findings import Code

JSON_SYNTAX = Code(
    "json-syntax",
    "Unreadable JSON",
    "A record that cannot be parsed cannot be checked, cited or published. Also covers "
    "empty files, non-UTF-8 bytes, a byte-order mark and nesting beyond 64 levels.",
    "Fix the syntax at the line and column shown.",
    '{"id": "run-1", "metrics": {"decode_tok_s": [30.2, }',
)

JSON_DUPLICATE_KEY = Code(
    "json-duplicate-key",
    "An object repeats a key",
    "JSON readers disagree on which duplicate wins, so the record means different things to different tools.",
    "Keep one value per key.",
    '{"id": "run-1", "id": "run-2"}',
)

JSON_NON_FINITE = Code(
    "json-non-finite",
    "A number that is not a finite number",
    "NaN, Infinity and booleans are not measurements, and integers beyond 64 bits are not held exactly "
    "by JSON readers; tools coerce them silently.",
    "Record the finite number (a huge one with an exponent), or drop the sample and say why in a caveat.",
    '{"metrics": {"decode_tok_s": [NaN, true]}}',
)

FILE_TOO_LARGE = Code(
    "file-too-large",
    "A record file over the size limit",
    "Records are small, reviewable text. Huge files are refused unread so validation stays bounded in memory and time.",
    "Split the record; keep bulky raw output as an evidence file.",
    "",
)

SCHEMA = Code(
    "schema",
    "A JSON Schema violation",
    "Each record kind has a JSON Schema (schema/<kind>.schema.json) generated from the models.",
    "Match the schema: required fields, types, id patterns, enums.",
    '{"kind": "run-measurement", "id": "Run 1", "state": "measured"}',
)

LAYOUT = Code(
    "layout",
    "A file whose id, kind or folder disagree",
    "One record per file at one predictable path is what makes a pull request diff and `git log` of "
    "a file the history of exactly one record.",
    "Move the file to packets/<family>/<folder>/<id>.json, or make `id` and `kind` match the path.",
    'packets/qwen-27b/measurements/run-1.json containing {"kind": "view", "id": "run-2"}',
)

DUPLICATE_ID = Code(
    "duplicate-id",
    "Two records of one kind with one id",
    "An id must name one thing: citations, coverage cells and links resolve by id.",
    "Choose a new id for one of the records (a correction is a new record with `supersedes`).",
    "packets/a/measurements/run-1.json and packets/b/measurements/run-1.json",
)

SITE_FILE_UNSAFE = Code(
    "site-file-unsafe",
    "A file under site/ the build must not publish",
    "Everything under site/ is copied into the public site. A symlink there (to /proc/self/environ, "
    "~/.ssh, /etc/hosts, or another part of the repository) would publish the build machine's files; a name with a "
    "line break would print lines of its own into the build's log (a CI workflow command among them).",
    "Replace a symlink with a regular file holding what the page should show (or delete it); rename a file whose "
    "name holds a control character; write pages as Markdown (.md).",
    "site/assets/env.txt -> /proc/self/environ",
)

SITE_CONFIG_UNSAFE = Code(
    "site-config-unsafe",
    "A site configuration that could run code or load outside content",
    "MkDocs reads mkdocs.yml with a YAML loader that runs `!!python/...` tags and expands `!ENV` (publishing the "
    "build machine's environment), and runs the hooks, plugins and Markdown extensions it names (`pymdownx.snippets` "
    "includes any file). A pull request's configuration is held to plain YAML and an allowlist of settings.",
    "Use plain YAML and only the settings, plugins (search) and Markdown extensions listed in site/security.md.",
    "hooks: [evil.py]",
)

SCHEMA_DRIFT = Code(
    "schema-drift",
    "schema/ differs from the models",
    "The committed JSON Schemas are what editors and other tools validate against; they must say "
    "exactly what the validator enforces.",
    "Run `evreg schema` and commit schema/ with the model change.",
    "",
)

ORPHAN_NUMBER = Code(
    "orphan-number",
    "A figure with a unit in prose that is not a citation",
    "A typed-in number cannot be traced and silently diverges from the data it was copied from.",
    "Replace the figure with {{ m:ID.METRIC[INDEX] }} (or @X for a series point); the renderer formats and links it.",
    "summary: 'reaches 52.3 tok/s on one card'",
)

BASELINE_STALE = Code(
    "baseline-stale",
    "A baseline entry that matches no finding",
    "The baseline lists accepted defects of imported data; an entry whose defect is gone (or changed) "
    "would silently excuse a future finding at the same place.",
    "Remove the entry, or update it after reviewing the new finding.",
    "",
)

IMPORT_UNMAPPABLE = Code(
    "import-unmappable",
    "Import input that cannot be mapped to records",
    "An importer writes what it reads; input it cannot map is refused whole, never half-written.",
    "Fix the named field in the source file, or import it with the format it is in.",
    '{"format": "neural-download-model-family-v1", "id": "Not A Slug"}',
)

IMPORT_OUT_OF_SCOPE = Code(
    "import-out-of-scope",
    "A tool's file whose run is not the target packet's",
    "A packet is one identity (weights, quantization, runtime build, hardware, topology). A run of another model, "
    "quantization, engine or card filed into it would be published as the packet's number.",
    "Import the file into the packet it belongs to (scaffold one with `evreg new packet` if there is none).",
    '{"gpu_info": "NVIDIA GeForce RTX 4090"} into a packet with "hardware": "NVIDIA H100 80GB HBM3"',
)

IMPORT_IDENTITY_MISSING = Code(
    "import-identity-missing",
    "A tool's file that does not say part of the run's identity",
    "What the file does not record stays unrecorded: the importer never copies it from the packet as if measured, "
    "so a reader knows which parts of the identity rest on the contributor's word.",
    "State it on the command line where the importer offers an option (`--runtime`, `--cards`), or accept the gap.",
    '{"model_id": "Qwen/Qwen2.5-7B-Instruct"} (a vllm bench serve file names no vLLM version)',
)

IMPORT_FACT_NEEDED = Code(
    "import-fact-needed",
    "A fact a packet needs that neither the file nor the contributor states",
    "A packet is one identity: weights, quantization, runtime build, hardware, topology. What a tool's file does not "
    "record is stated by the person who ran it, once; evreg never guesses it or copies it from elsewhere.",
    "State it with the option the message names (`--hardware`, `--cards`, `--runtime`, `--quantization`, `--model`, "
    "`--weights`) and run the same command again.",
    "a vllm bench serve file (it names no vLLM version, GPU or card count) given to `evreg add` alone",
)

IMPORT_WRONG_FORMAT = Code(
    "import-wrong-format",
    "A file given to the importer of another format",
    "Read with the wrong importer a file maps to nothing, or worse to the wrong fields.",
    "Use the importer the message names: `evreg import NAME FILE`.",
    "an lm-evaluation-harness results.json given to `evreg import llama-bench`",
)

TOO_MANY_FILES = Code(
    "too-many-files",
    "A registry larger than the file limit",
    "Validation holds every record in memory; refusing an oversized tree with one finding keeps a hostile or "
    "accidental pull request of millions of tiny files from exhausting the machine.",
    "Split the registry, or raise EVREG_MAX_FILES where the memory exists.",
    "",
)

INTERNAL_ERROR = Code(
    "internal-error",
    "A rule failed",
    "A bug in a rule must not hide the findings of other rules, nor pass silently.",
    "Report it with the message; this is not a defect of your data.",
    "",
)

ALL = (
    JSON_SYNTAX,
    JSON_DUPLICATE_KEY,
    JSON_NON_FINITE,
    FILE_TOO_LARGE,
    SCHEMA,
    LAYOUT,
    DUPLICATE_ID,
    SITE_FILE_UNSAFE,
    SITE_CONFIG_UNSAFE,
    SCHEMA_DRIFT,
    ORPHAN_NUMBER,
    BASELINE_STALE,
    IMPORT_UNMAPPABLE,
    IMPORT_OUT_OF_SCOPE,
    IMPORT_IDENTITY_MISSING,
    IMPORT_WRONG_FORMAT,
    IMPORT_FACT_NEEDED,
    TOO_MANY_FILES,
    INTERNAL_ERROR,
)
