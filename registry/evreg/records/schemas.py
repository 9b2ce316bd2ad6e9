"""JSON Schemas (draft 2020-12) generated from the record models.

``schema/<kind>.schema.json`` is committed so editors and other tools can use
it; ``evreg schema --check`` fails with ``schema-drift`` when the committed
files differ from what the models generate.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from evreg.core import codebase, codes, jsonio
from evreg.core.findings import Finding
from evreg.core.jsonio import write_atomic
from evreg.records.models import MODELS

SCHEMA_DIR = "schema"
BASE_ID = "https://evidence-registry.invalid/schema/v1/"
"""Schema ids are names, not addresses: nothing is fetched from them."""


class _Generator(GenerateJsonSchema):
    def generate(self, schema: Any, mode: Any = "validation") -> dict[str, Any]:
        out = super().generate(schema, mode=mode)
        return {"$schema": self.schema_dialect, **out}


def generate() -> dict[str, str]:
    """File name -> schema text, for every record kind."""
    files = {}
    for kind, model in MODELS.items():
        schema = model.model_json_schema(schema_generator=_Generator)
        schema = {"$schema": schema.pop("$schema"), "$id": f"{BASE_ID}{kind}.schema.json", **schema}
        files[f"{kind}.schema.json"] = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    files[RECORD_SCHEMA] = json.dumps(_dispatch(list(MODELS)), indent=2, ensure_ascii=False) + "\n"
    return files


RECORD_SCHEMA = "record.schema.json"
"""One schema for any record file: it dispatches on ``kind`` (one folder holds two measurement kinds), so
an editor can map every record file to it (``.vscode/settings.json`` does)."""


def _dispatch(kinds: list[str]) -> dict[str, Any]:
    # No $id: the references resolve next to this file, wherever the repository is.
    return {
        "$schema": _Generator.schema_dialect,
        "title": "A registry record",
        "description": "Any record file under packets/: the schema of its `kind` applies.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": kinds}},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                "then": {"$ref": f"{kind}.schema.json"},
            }
            for kind in kinds
        ],
    }


CACHE_FILE = "build/cache/schemas.json"


def _models_version() -> str:
    """Changes whenever the generated schemas could: the code (the models, the patterns they use, this generator,
    the vocabularies) and the environment (pydantic), as every cached result is versioned (``codebase.digest``)."""
    return codebase.digest()


def generated(root: Path) -> dict[str, str]:
    """``generate()``, kept in ``build/cache`` for the code that generated it (it takes pydantic a while)."""
    cache, version = root / CACHE_FILE, _models_version()
    try:
        stored = jsonio.loads(cache.read_text("utf-8"))
        if stored["version"] == version and isinstance(stored["files"], dict):
            return {str(k): str(v) for k, v in stored["files"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    files = generate()
    with contextlib.suppress(OSError):  # a read-only checkout still validates
        write_atomic(cache, json.dumps({"version": version, "files": files}))
    return files


def check(root: Path) -> list[Finding]:
    """``schema-drift`` findings for every file that differs from the models."""
    findings = []
    expected = generated(root)
    folder = root / SCHEMA_DIR
    for name, text in expected.items():
        path = folder / name
        if not path.exists():
            findings.append(
                codes.SCHEMA_DRIFT.at(
                    f"{SCHEMA_DIR}/{name}",
                    "",
                    f"{SCHEMA_DIR}/{name} is missing",
                    "run `evreg schema` to regenerate schema/",
                )
            )
        elif path.read_text("utf-8") != text:
            findings.append(
                codes.SCHEMA_DRIFT.at(
                    f"{SCHEMA_DIR}/{name}",
                    "",
                    f"{SCHEMA_DIR}/{name} differs from what the models generate",
                    "run `evreg schema` and commit the result with the model change",
                )
            )
    if folder.is_dir():
        for path in sorted(folder.glob("*.schema.json")):
            if path.name not in expected:
                findings.append(
                    codes.SCHEMA_DRIFT.at(
                        f"{SCHEMA_DIR}/{path.name}",
                        "",
                        f"{SCHEMA_DIR}/{path.name} belongs to no record kind",
                        "delete it, or add the model it describes",
                    )
                )
    return findings
