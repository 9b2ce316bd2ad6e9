"""The store (working tree and commits), fmt, schema, the CLI and the lab format round trip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EVIDENCE, LAB_MANIFEST, REPO, F, Reg, evreg
from evreg.claims import citations
from evreg.core.jsonio import canonical
from evreg.store import load

RUN = f"{F}/pkt/measurements/run-1.json"


def test_load_from_a_commit_reads_git_objects_not_the_work_tree(reg: Reg) -> None:
    first = reg.repo.head.commit.hexsha
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[99.0]))
    reg.commit("edit")
    (reg.root / RUN).unlink()  # the working tree no longer has it at all
    old = load(reg.root, first).by_path[RUN]
    new = load(reg.root, "HEAD").by_path[RUN]
    assert old.data["metrics"]["decode_tok_s"] == [30.21, 30.25]
    assert new.data["metrics"]["decode_tok_s"] == [99.0]
    assert RUN not in load(reg.root).by_path
    assert old.blob != new.blob


def test_commit_validation_checks_evidence_in_that_commit(reg: Reg) -> None:
    (reg.root / EVIDENCE).unlink()
    assert "evidence-missing" in reg.codes()
    assert reg.findings("HEAD") == []  # the committed tree still has the file
    reg.commit("drop evidence")
    assert "evidence-missing" in reg.codes("HEAD")


def test_git_blob_ids_match_git(reg: Reg) -> None:
    worktree = load(reg.root).by_path[RUN]
    committed = load(reg.root, "HEAD").by_path[RUN]
    assert worktree.content_id() == committed.blob == reg.repo.git.hash_object(str(reg.root / RUN))


def test_fmt_canonicalizes_keeps_unknown_fields_and_is_idempotent(reg: Reg) -> None:
    data = reg.read(RUN)
    data["zz_unknown"] = {"b": 1, "a": [3, 1.0, "x"]}
    (reg.root / RUN).write_text(json.dumps(data, indent=4))  # not canonical
    checked = evreg("fmt", "--check", cwd=reg.root)
    assert checked.returncode == 1 and RUN in checked.stdout
    assert json.loads((reg.root / RUN).read_text()) == data  # --check changes nothing
    assert evreg("fmt", cwd=reg.root).returncode == 0
    text = (reg.root / RUN).read_text()
    assert text == canonical(data) and json.loads(text) == data
    assert '"a": [\n      3,\n      1.0,' in text  # 1.0 stays a float
    again = evreg("fmt", "--check", cwd=reg.root)
    assert again.returncode == 0, again.stdout


def test_fmt_refuses_unreadable_files_and_leaves_them_alone(reg: Reg) -> None:
    reg.raw(RUN, b'{"id": "run-1", "id": "x"}')
    result = evreg("fmt", cwd=reg.root)
    assert result.returncode == 1 and "json-duplicate-key" in result.stdout
    assert (reg.root / RUN).read_bytes() == b'{"id": "run-1", "id": "x"}'


def test_validate_formats_and_exit_codes(reg: Reg) -> None:
    ok = evreg("validate", "--format", "json", cwd=reg.root, process=True)  # the console script itself
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["summary"]["errors"] == 0
    reg.edit(RUN, lambda d: d.update(artifact_id="art-b"))
    bad = evreg("validate", "--format", "json", cwd=reg.root, process=True)
    assert bad.returncode == 1
    # the run's own finding (the fixture matrix's cell that cites the run now selects another artifact too)
    # and, filed in the packet's folder, it is no longer of the packet's scope
    found = {x["code"]: x for x in json.loads(bad.stdout)["findings"] if x["file"] == RUN}
    assert set(found) == {"artifact-mismatch", "sideways-promotion"}
    f = found["artifact-mismatch"]
    assert f["pointer"] == "/artifact_id" and found["sideways-promotion"]["pointer"] == "/artifact_id"
    assert f["line"] and f["column"] and f["hint"] and f["record"] == {"kind": "run-measurement", "id": "run-1"}
    gh = evreg("validate", "--format", "github", cwd=reg.root)
    assert any(
        line.startswith(f"::error file={RUN},line={f['line']},col={f['column']},title=artifact-mismatch::")
        for line in gh.stdout.splitlines()
    )
    human = evreg("validate", cwd=reg.root)
    assert f"{RUN}:{f['line']}:{f['column']}: error [artifact-mismatch]" in human.stdout
    assert evreg("validate", "--format", "xml", cwd=reg.root, process=True).returncode == 2


def test_validate_paths_filter_reports_only_those_files(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(artifact_id="art-b"))
    assert evreg("validate", f"{F}/views", cwd=reg.root).returncode == 0
    assert evreg("validate", f"{F}/pkt", cwd=reg.root).returncode == 1
    typo = evreg("validate", f"{F}/pkts", cwd=reg.root)  # a mistyped path is a usage error, not a clean report
    assert typo.returncode == 2 and "does not exist" in typo.stderr


def test_root_option_and_no_traceback_on_garbage(reg: Reg, tmp_path: Path) -> None:
    reg.raw(RUN, b"\x00\x01garbage")
    result = evreg("--root", str(reg.root), "validate", cwd=tmp_path, process=True)
    assert result.returncode == 1 and "json-syntax" in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_schema_command_writes_and_checks(reg: Reg) -> None:
    shutil.rmtree(reg.root / "schema")
    assert evreg("schema", "--check", cwd=reg.root).returncode == 1
    assert evreg("schema", cwd=reg.root).returncode == 0
    assert evreg("schema", "--check", cwd=reg.root).returncode == 0
    schema = json.loads((reg.root / "schema/run-measurement.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/run-measurement.schema.json")


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


# -- the lab format ----------------------------------------------------------------


def test_lab_manifest_round_trip_is_lossless(empty_repo: Path) -> None:
    imported = evreg("import", "neural-download", str(LAB_MANIFEST), cwd=empty_repo)
    # The lab data has genuine defects: the import reports them as its own and exits 1 (the baseline accepts them).
    assert imported.returncode == 1 and "with errors it introduced" in imported.stderr, imported.stderr
    assert "72 packets, 78 run_measurements, 87 series_measurements" in imported.stderr
    out = empty_repo / "roundtrip.json"
    assert evreg("export", "neural-download", "qwen-27b", "-o", str(out), cwd=empty_repo).returncode == 0
    original = json.loads(LAB_MANIFEST.read_text())
    exported = json.loads(out.read_text())
    # Canonical text comparison: equal keys, values, list order, and int/float kinds.
    assert json.dumps(exported, sort_keys=True) == json.dumps(original, sort_keys=True)
    # The import reports the lab data's genuine defects; with the reviewed
    # baseline committed beside the data, validation passes.
    assert evreg("validate", cwd=empty_repo).returncode == 1
    shutil.copy(REPO / "packets/baseline.json", empty_repo / "packets/baseline.json")
    result = evreg("validate", "--format", "json", cwd=empty_repo)
    assert result.returncode == 0, result.stdout[-2000:]
    summary = json.loads(result.stdout)["summary"]
    assert summary["baselined"] > 0 and summary["errors"] == 0


def test_import_binds_prose_figures_to_citations(empty_repo: Path) -> None:
    result = evreg("import", "neural-download", str(LAB_MANIFEST), cwd=empty_repo)
    assert "732 figures in prose bound to citations; 33 left as written" in result.stderr
    cell = json.loads((empty_repo / "packets/qwen-27b/coverage/q36-q4-0-mtp-by-tp.json").read_text())["cells"]["0:1"]
    assert cell["label"] == "D{{ m:q36-q4-0-tp1-target-only.decode_tok_s[0] | 3 | nounit }} · target only"
    # a signed percentage that is the change between exactly one pair of the view's runs: a derived figure
    view = json.loads((empty_repo / "packets/qwen-27b/views/q36-q4-0-dflash5-q6-top1-ab.json").read_text())
    change = "{{ change:m:q36-q4-0-dflash5-q6-top1-candidate.decode_tok_s[0] from m:q36-q4-0-dflash5-q6-top1-control"
    assert change + ".decode_tok_s[0] | 2 }} versus control" in view["subtitle"]


def test_import_places_measurements_and_externalises_evidence(empty_repo: Path) -> None:
    shutil.copy(REPO / "packets/baseline.json", empty_repo / "packets/baseline.json")  # the data's known defects
    assert evreg("import", "neural-download", str(LAB_MANIFEST), cwd=empty_repo).returncode == 0
    fam = empty_repo / "packets/qwen-27b"
    featured = fam / "qwen36-27b-autoround-int4-tp2/measurements/q36-autoround-tp2-mtp3-historical.json"
    assert featured.exists()
    record = json.loads(featured.read_text())
    assert record["kind"] == "run-measurement"
    assert record["evidence"].startswith("neural-download:results/")
    family = json.loads((fam / "family.json").read_text())
    assert family["sources"]["neural-download"]["repository"].endswith("b70-optimization-lab")
    # 66 at family level: 60 no single packet claims, and 6 a packet claims but of another scope (controls)
    assert len(list((fam / "measurements").glob("*.json"))) == 66
    closures = sorted(p.name for p in (fam / "closures").glob("*.json"))
    assert closures[0] == "closure-1.json" and len(closures) == 9


def test_import_never_overwrites_silently(empty_repo: Path) -> None:
    shutil.copy(REPO / "packets/baseline.json", empty_repo / "packets/baseline.json")  # the data's known defects
    assert evreg("import", "neural-download", str(LAB_MANIFEST), cwd=empty_repo).returncode == 0
    target = empty_repo / "packets/qwen-27b/views/tp-strict.json"
    target.write_text(target.read_text().replace('"tp-strict"', '"tp-strict"', 1) + " ")
    before = target.read_bytes()
    again = evreg("import", "neural-download", str(LAB_MANIFEST), cwd=empty_repo)
    assert again.returncode == 1 and "nothing was written" in again.stderr
    assert target.read_bytes() == before
    forced = evreg("import", "neural-download", str(LAB_MANIFEST), "--overwrite", cwd=empty_repo)
    assert forced.returncode == 0 and target.read_bytes() != before


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b'{"format": "something-else", "id": "x"}', "import-unmappable"),
        (b'{"format": "neural-download-model-family-v1", "id": "Bad Id"}', "import-unmappable"),
        (
            b'{"format": "neural-download-model-family-v1", "id": "x", "views": [{"id": "a", "kind": 1}]}',
            "import-unmappable",
        ),
        (b'{"format": "neural-download-model-family-v1", "id": "x", "views": [{"id": "a"}, ', "json-syntax"),
    ],
)
def test_import_refuses_what_it_cannot_map(empty_repo: Path, content: bytes, code: str) -> None:
    src = empty_repo / "in.json"
    src.write_bytes(content)
    result = evreg("import", "neural-download", str(src), "--format", "json", cwd=empty_repo)
    assert result.returncode == 1
    assert json.loads(result.stdout)["findings"][0]["code"] == code
    assert list((empty_repo / "packets").iterdir()) == []


def test_root_is_accepted_before_and_after_the_command(reg: Reg, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evreg.cli.main import cli

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runner = CliRunner()
    before = runner.invoke(cli, ["--root", str(reg.root), "validate", "--format", "json"])
    after = runner.invoke(cli, ["validate", "--root", str(reg.root), "--format", "json"])
    assert before.exit_code == after.exit_code == 0 and before.stdout == after.stdout
    assert json.loads(after.stdout)["summary"]["records"] == 7
    nested = runner.invoke(
        cli, ["new", "family", "fam2", "--name", "F", "--revision", "r", "--repository", "o/r", "--root", str(reg.root)]
    )
    assert nested.exit_code == 0 and (reg.root / "packets/fam2/family.json").exists()


def test_ids_as_the_lab_writes_them_import_and_are_cited(empty_repo: Path) -> None:
    """Measurement ids with dots (glm-4.7-flash-…) are ids: they become file names and are cited as m:ID.metric."""
    manifest = json.loads(LAB_MANIFEST.read_text())
    run = manifest["run_measurements"][0]
    old, new = run["id"], "glm-4.7-flash-udq4-tp1-rapid"
    text = json.dumps(manifest).replace(f'"{old}"', f'"{new}"')
    src = empty_repo / "dotted.json"
    src.write_text(text)
    assert "import done" in evreg("import", "neural-download", str(src), cwd=empty_repo).stderr  # with lab defects
    [path] = list((empty_repo / "packets").rglob(f"{new}.json"))
    assert json.loads(path.read_text())["id"] == new
    report = json.loads(evreg("validate", "--format", "json", cwd=empty_repo).stdout)
    assert not [f for f in report["findings"] if new in f["message"] or path.name in f["file"]]
    [cite] = list(citations.CITATION.finditer("{{m:" + new + ".decode_tok_s[0]}}"))
    assert (cite["id"], cite["metric"]) == (new, "decode_tok_s")


def test_every_bad_id_is_named_with_what_is_wrong(empty_repo: Path) -> None:
    bad = {"Qwen-27B": "upper-case letters", "run_1": "'_'", "-run": "starts or ends", "a--b": "two separators"}
    manifest = {
        "format": "neural-download-model-family-v1",
        "id": "fam",
        "run_measurements": [{"id": rid} for rid in bad],
        "views": [{"id": "fine.view-1"}],
    }
    src = empty_repo / "bad.json"
    src.write_text(json.dumps(manifest))
    result = evreg("import", "neural-download", str(src), "--format", "json", cwd=empty_repo)
    findings = json.loads(result.stdout)["findings"]
    assert result.returncode == 1 and len(findings) == len(bad)
    for finding, (rid, words) in zip(findings, bad.items(), strict=True):
        assert finding["pointer"].startswith("/run_measurements/") and repr(rid) in finding["message"]
        assert words in finding["message"], finding["message"]
    assert list((empty_repo / "packets").iterdir()) == []
