"""This repository's own content: the committed schemas are the models', the committed records validate clean and
agree with the schemas, and its mkdocs.yml is the template ``evreg init`` writes plus its own pages."""

from __future__ import annotations

import json

import pytest
import yaml

from evreg.core.layout import PAGES_DIR
from evreg.store import load
from helpers import REPO, evreg


def test_committed_schemas_match_the_models() -> None:
    result = evreg("schema", "--check", cwd=REPO)
    assert result.returncode == 0, result.stdout


def test_committed_registry_validates_clean() -> None:
    result = evreg("validate", "--format", "json", cwd=REPO)
    assert result.returncode == 0, result.stdout[-3000:]
    summary = json.loads(result.stdout)["summary"]
    assert summary["records"] >= 335 and summary["external_evidence_refs"] > 400


def test_schemas_agree_with_the_models_on_the_committed_records() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    registry = load(REPO)
    validators = {}
    for doc in registry.records():
        schema = json.loads((REPO / "schema" / f"{doc.kind}.schema.json").read_text())
        validator = validators.setdefault(doc.kind, jsonschema.Draft202012Validator(schema))
        errors = list(validator.iter_errors(doc.data))
        assert errors == [], (doc.path, errors[0].message)


def test_this_registrys_mkdocs_yml_is_the_template_with_its_own_pages() -> None:
    """One configuration: this repository's differs from what `evreg init` writes only in the nav entries of its
    own hand-written pages (under site/)."""
    ours = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    template = yaml.safe_load((PAGES_DIR / "mkdocs.yml").read_text())

    def own(entry: object) -> bool:
        page = next(iter(entry.values())) if isinstance(entry, dict) else entry
        return isinstance(page, str) and (page == "about.md" or (REPO / "site" / page).is_file())

    assert {k: v for k, v in ours.items() if k != "nav"} == {k: v for k, v in template.items() if k != "nav"}
    assert [e for e in ours["nav"] if not own(e)] == [e for e in template["nav"] if not own(e)]
    assert not (REPO / "site/methodology/index.md").exists()  # the product's page is the package's
