"""The lab's whole published catalogue (tests/data/lab, sources in SOURCES.json) is the registry's content:
every family imports, exports back equal to its input, and is what packets/ holds, pinned to its commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, evreg
from evreg.formats import neural_download as nd
from evreg.store import load

LAB = REPO / "tests/data/lab"
SOURCES: list[dict[str, Any]] = json.loads((LAB / "SOURCES.json").read_text())
FAMILIES = [s for s in SOURCES if s["path"] != "families/catalog.json"]
HARDWARE = "Intel Arc Pro B70"  # the lab measures on Arc Pro B70 cards; its manifests name no hardware


def _text(data: Any) -> str:
    """Equal JSON: keys, values, list order and int/float kinds (json.dumps writes 1 and 1.0 differently)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def test_every_lab_family_imports_and_exports_back_equal(empty_repo: Path) -> None:
    for source in SOURCES:
        pin = ("--commit", source["commit"], "--path", source["path"], "--hardware", HARDWARE)
        result = evreg("import", "neural-download", str(LAB / source["path"]), *pin, cwd=empty_repo)
        assert "import done" in result.stderr, source["path"] + result.stdout[-1500:] + result.stderr[-500:]
    registry = load(empty_repo)
    for source in FAMILIES:
        original = json.loads((LAB / source["path"]).read_text())
        assert _text(nd.export(registry, original["id"])) == _text(original), source["path"]
        family = json.loads((empty_repo / f"packets/{original['id']}/family.json").read_text())
        pinned = family["sources"]["neural-download"]
        assert (pinned["commit"], pinned["path"], pinned["hardware"]) == (source["commit"], source["path"], HARDWARE)
        # the stated hardware is on every packet and measurement, as in the repository's records
        stated = [
            d.data.get("hardware") for d in registry.records(*nd.HARDWARE_KINDS) if d.place.family == original["id"]
        ]
        assert stated and set(stated) == {HARDWARE}, source["path"]
    catalog = json.loads((LAB / "families/catalog.json").read_text())
    out = empty_repo / "catalog.json"
    assert evreg("export", "neural-download", "--catalog", "-o", str(out), cwd=empty_repo).returncode == 0
    assert _text(json.loads(out.read_text())) == _text(catalog)
    assert evreg("export", "neural-download", "x", "--catalog", cwd=empty_repo).returncode == 2


@pytest.mark.parametrize("source", FAMILIES, ids=[s["path"] for s in FAMILIES])
def test_the_registry_holds_the_pinned_lab_families(source: dict[str, Any]) -> None:
    """packets/<family>/ is the import of the pinned file: nothing edited by hand, nothing lost."""
    original = json.loads((LAB / source["path"]).read_text())
    registry = _repository()
    assert _text(nd.export(registry, original["id"])) == _text(original)
    family = registry.family(original["id"])
    assert family is not None
    assert family.data["sources"]["neural-download"]["commit"] == source["commit"]


def test_stated_hardware_is_refused_for_a_manifest_that_names_its_own(empty_repo: Path, tmp_path: Path) -> None:
    """--hardware states what the manifest does not; a manifest naming hardware itself keeps the lab's word alone."""
    source = FAMILIES[0]
    manifest = json.loads((LAB / source["path"]).read_text())
    manifest["packets"][0]["hardware"] = "NVIDIA H100 80GB HBM3"
    named = tmp_path / "named.json"
    named.write_text(json.dumps(manifest))
    result = evreg("import", "neural-download", str(named), "--hardware", HARDWARE, "--format", "json", cwd=empty_repo)
    [finding] = json.loads(result.stdout)["findings"]
    assert result.returncode == 1 and finding["code"] == "import-unmappable"
    assert "'NVIDIA H100 80GB HBM3'" in finding["message"] and not (empty_repo / "packets" / manifest["id"]).exists()
    # without --hardware the manifest's own hardware is kept, and exported again
    assert evreg("import", "neural-download", str(named), cwd=empty_repo).returncode in (0, 1)
    assert nd.export(load(empty_repo), manifest["id"])["packets"][0]["hardware"] == "NVIDIA H100 80GB HBM3"


def test_the_registry_lists_families_in_the_labs_order() -> None:
    catalog = json.loads((LAB / "families/catalog.json").read_text())
    assert _text(nd.export_catalog(_repository())) == _text(catalog)


def test_the_family_list_names_registry_families_once(empty_repo: Path) -> None:
    listed = {"format": nd.CATALOG_FORMAT, "families": [{"id": "nope"}, {"id": "nope"}, {"id": "Bad_Id"}]}
    src = empty_repo / "catalog.json"
    src.write_text(json.dumps(listed))
    refused = evreg("import", "neural-download", str(src), "--format", "json", cwd=empty_repo)
    [finding] = json.loads(refused.stdout)["findings"]
    assert refused.returncode == 1 and finding["pointer"] == "/families/2/id" and "'_'" in finding["message"]
    listed["families"].pop()
    src.write_text(json.dumps(listed))
    evreg("import", "neural-download", str(src), cwd=empty_repo)
    assert json.loads((empty_repo / "packets/catalog.json").read_text())["families"] == listed["families"]
    report = json.loads(evreg("validate", "--format", "json", cwd=empty_repo).stdout)
    found = {(f["code"], f["pointer"]) for f in report["findings"] if f["file"] == "packets/catalog.json"}
    assert found == {("dangling-reference", "/families/0/id"), ("duplicate-id", "/families/1/id")}


_REGISTRY: list[Any] = []


def _repository() -> Any:
    if not _REGISTRY:
        _REGISTRY.append(load(REPO))
    return _REGISTRY[0]


def test_a_malformed_pin_is_refused_before_anything_is_written(empty_repo: Path) -> None:
    phi = LAB / "families/phi-4.json"
    for args, words in [(("--commit", "abc"), "not a commit id"), (("--path", "../etc/passwd"), "not a path inside")]:
        result = evreg("import", "neural-download", str(phi), *args, "--format", "json", cwd=empty_repo)
        [finding] = json.loads(result.stdout)["findings"]
        assert result.returncode == 1 and words in finding["message"]
        assert list((empty_repo / "packets").iterdir()) == []


def test_a_listed_family_that_is_missing_says_how_to_add_it(empty_repo: Path) -> None:
    evreg("import", "neural-download", str(LAB / "families/catalog.json"), cwd=empty_repo)
    report = json.loads(evreg("validate", "--format", "json", cwd=empty_repo).stdout)
    first = next(f for f in report["findings"] if f["pointer"] == "/families/0/id")
    assert "not in this registry" in first["message"]
    assert "evreg import neural-download families/deepseek-coder-v2.json" in first["hint"]
