"""Claim integrity: adversarial cases built by mutating a copy of the real
family data, plus minimal failing and passing fixtures per rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, get_args

import git
import pytest
from pydantic import BaseModel, ValidationError

from conftest import EVIDENCE, RECORDS, REPO, F, Reg, evreg, only
from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.claims import citations
from evreg.core.findings import split_pointer
from evreg.core.jsonio import canonical
from evreg.records.models import MODELS, is_prose, iter_prose

Q = "packets/qwen-27b"


class Lab(Reg):
    """A copy of the committed registry (the real lab data) in a new git repository."""

    def __init__(self, root: Path) -> None:
        shutil.copytree(REPO / "packets", root / "packets")
        shutil.copytree(REPO / "schema", root / "schema")
        self.root = root
        self.repo = git.Repo.init(root)
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "Lab")
            cw.set_value("user", "email", "lab@example.org")

    def find(self, record_id: str) -> str:
        [path] = [p.relative_to(self.root).as_posix() for p in (self.root / Q).rglob(f"{record_id}.json")]
        return path

    def blocking(self, base: str | None = None) -> list[Any]:
        _registry, report = validate(self.root, rules.discover(), base=base, use_cache=False)
        return [f for f in report.findings if not f.baselined]


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    lab = Lab(tmp_path / "lab")
    lab.commit("import lab data")
    return lab


def test_unmodified_lab_data_passes(lab: Lab) -> None:
    assert lab.blocking() == []


def expect(findings: list[Any], code: str, file: str, pointer: str) -> None:
    hits = [(f.file, f.pointer) for f in only(findings, code)]
    assert (file, pointer) in hits, [(f.code, f.file, f.pointer, f.message) for f in findings]


def test_featured_result_citing_the_other_revision(lab: Lab) -> None:
    other = lab.find("q36-q4-0-tp1-target-only")  # a qwen3.6 run; the headline speaks for qwen3.8
    assert lab.read(other)["revision"] == "qwen3.6-27b"
    lab.edit(
        f"{Q}/family.json",
        lambda d: d["featured_results"][0].update(measurement_id="q36-q4-0-tp1-target-only", sample_index=0),
    )
    expect(lab.blocking(), "sideways-promotion", f"{Q}/family.json", "/featured_results/0/measurement_id")


def test_packet_graded_b_on_a_screened_run_only(lab: Lab) -> None:
    packet = f"{Q}/qwen38-27b-autoround-int4-tp1-f01e-mtp4-eager-f16-screened-grade-d/packet.json"
    lab.edit(packet, lambda d: d["grades"]["evidence"].update(grade="B"))
    findings = lab.blocking()
    expect(findings, "grade-unsupported", packet, "/grades/evidence/grade")
    [f] = [f for f in only(findings, "grade-unsupported") if f.file == packet]
    assert "promotable-observation" in f.message


def test_view_series_mixing_two_runtimes(lab: Lab) -> None:
    view = f"{Q}/views/mtp-nightly-tp1.json"
    data = lab.read(view)
    series = next(s for s in data["series"] if len(s["measurement_ids"]) >= 1)
    first = series["measurement_ids"][0]
    path = lab.find(first)
    clone = lab.read(path)
    clone["id"] = first + "-other-runtime"
    clone["runtime"] = "llama.cpp SYCL b1234"
    lab.put(f"{Q}/measurements/{clone['id']}.json", clone)
    lab.edit(view, lambda d: (d.pop("discrete", None), d["series"][0]["measurement_ids"].append(clone["id"])))
    expect(lab.blocking(), "curve-identity-mixed", view, f"/series/0/measurement_ids/{len(series['measurement_ids'])}")


def test_coverage_cell_measured_citing_a_quarantined_run(lab: Lab) -> None:
    quarantined = next(
        p for p in (lab.root / Q).rglob("*.json") if json.loads(p.read_text()).get("state") == "quarantined"
    )
    qid = quarantined.stem
    cov = f"{Q}/coverage/q36-q4-0-mtp-by-tp.json"
    lab.edit(cov, lambda d: d["cells"]["0:1"].update(evidence_id=qid, state="lab-measured"))
    expect(lab.blocking(), "state-mismatch", cov, "/cells/0:1/state")


def test_estimate_in_a_view_series(lab: Lab) -> None:
    estimate = {
        "kind": "estimate",
        "id": "q38-est-1",
        "state": "estimated",
        "selectors": {
            "revision": "qwen3.8-27b",
            "artifact_id": "qwen38-27b-autoround-w4a16-bce40ca",
            "quantization": "AutoRound INT4",
        },
        "metric": "decode_tok_s",
        "unit": "tok/s",
        "value": 40.0,
        "interval": {"low": 35.0, "high": 45.0},
        "engine": {"name": "projector", "version": "1", "snapshot_sha256": "a" * 64},
        "generated_at": "2026-09-01",
        "record": "neural-download:data/est.json",
        "basis_measurement_ids": ["q38-nightly-tp1-eager-diagnostic"],
        "not_for_promotion": True,
        "limitations": "A projection, not an observation.",
    }
    lab.put(f"{Q}/estimates/q38-est-1.json", estimate)
    view = f"{Q}/views/tp-strict.json"
    lab.edit(view, lambda d: d["series"][0]["measurement_ids"].append("q38-est-1"))
    expect(lab.blocking(), "non-promotable-evidence", view, "/series/0/measurement_ids/3")


def test_featured_value_rounded(lab: Lab) -> None:
    packet = f"{Q}/qwen36-27b-autoround-int4-tp2/packet.json"
    lab.edit(packet, lambda d: d["featured_metric"].update(value=round(d["featured_metric"]["value"], 2)))
    expect(lab.blocking(), "featured-mismatch", packet, "/featured_metric/value")


def test_orphan_figure_in_a_packet_summary(lab: Lab) -> None:
    packet = f"{Q}/qwen36-27b-autoround-int4-tp2/packet.json"
    lab.edit(packet, lambda d: d.update(summary="This route reaches 52.3 tok/s on two cards."))
    findings = lab.blocking()
    expect(findings, "orphan-number", packet, "/summary")
    assert "'52.3 tok/s'" in only(findings, "orphan-number")[0].message


def test_citation_of_a_sample_that_does_not_exist(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    lab.edit(path, lambda d: d.update(caveat="Peak {{ m:q38-nightly-tp1-eager-diagnostic.decode_tok_s[5] }}."))
    findings = lab.blocking()
    expect(findings, "citation-unresolved", path, "/caveat")
    assert "has 2 samples; index 5 is out of range" in only(findings, "citation-unresolved")[0].message


def test_change_that_edits_a_published_number(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    lab.edit(path, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 25.0))
    expect(lab.blocking("HEAD"), "history-rewrite", path, "/metrics")


def test_correction_as_a_superseding_record_passes(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    fixed = lab.read(path)
    fixed["id"] = "q38-nightly-tp1-eager-diagnostic-r2"
    fixed["supersedes"] = "q38-nightly-tp1-eager-diagnostic"
    lab.put(f"{Q}/measurements/{fixed['id']}.json", fixed)
    # the superseded run no longer backs a measured cell, a coverage rule or a curve: they move to the correction
    citing = {f.file for f in lab.blocking("HEAD")}
    assert {f.code for f in lab.blocking("HEAD")} == {"non-promotable-evidence"}
    assert f"{Q}/coverage/e9d1398-eager-f16.json" in citing
    for file in citing:
        text = (lab.root / file).read_text()
        (lab.root / file).write_text(text.replace('"q38-nightly-tp1-eager-diagnostic"', f'"{fixed["id"]}"'))
    assert lab.blocking("HEAD") == []


def test_a_superseding_record_never_unlocks_editing_the_old_one(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    fixed = lab.read(path)
    fixed["id"] = "q38-nightly-tp1-eager-diagnostic-r2"
    fixed["supersedes"] = "q38-nightly-tp1-eager-diagnostic"
    lab.put(f"{Q}/measurements/{fixed['id']}.json", fixed)
    lab.edit(path, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 25.0))
    expect(lab.blocking("HEAD"), "history-rewrite", path, "/metrics")


@pytest.mark.parametrize(
    ("field", "value"),
    [("caveat", "A reworded caveat."), ("hardware", "NVIDIA H100"), ("supersedes", "q38-e9d1398d9-tp1"), ("tool", {})],
)
def test_every_field_of_a_published_measurement_but_retired_is_immutable(lab: Lab, field: str, value: Any) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    lab.edit(path, lambda d: d.update({field: value}))
    expect(lab.blocking("HEAD"), "history-rewrite", path, f"/{field}")


def test_changing_a_published_measurements_kind_or_json_types_is_a_rewrite(reg: Reg) -> None:
    """Run and series measurements share a namespace (and a folder): a kind change is an edit of the
    same record; and JSON types count (``true`` is not ``1``)."""

    def to_series(d: dict[str, Any]) -> None:
        d.update(kind="series-measurement", points=[{"x": 0}])
        d["metrics"]["decode_tok_s"][1] = 999.0

    reg.edit(RUN, to_series)
    expect(_with_base(reg), "history-rewrite", RUN, "/kind")
    reg.repo.git.checkout("--", ".")
    reg.edit(RUN, lambda d: d["config"].update(natural_eos=1))
    expect(_with_base(reg), "history-rewrite", RUN, "/config")


def _with_base(reg: Reg) -> list[Any]:
    return validate(reg.root, rules.discover(), base="HEAD", use_cache=False)[1].findings


def test_packet_identity_cannot_be_added_or_widened_later(reg: Reg) -> None:
    packet = f"{F}/pkt/packet.json"
    reg.edit(packet, lambda d: d.update(hardware="NVIDIA H100"))  # missing on the base
    expect(_with_base(reg), "history-rewrite", packet, "/hardware")
    reg.repo.git.checkout("--", ".")
    reg.edit(packet, lambda d: d.update(topologies=[1, 4]))
    expect(_with_base(reg), "history-rewrite", packet, "/topologies")


def test_grades_need_new_observations(reg: Reg) -> None:
    """A grade where there was none is a raise; a copy of a published run under a new id is not new
    evidence; a weight revision's grades are held the same way."""
    packet = f"{F}/pkt/packet.json"
    grade = {"grade": "B", "scope": "TP1", "basis": "repeats", "reviewed_at": "2026-11-30", "evidence": ["run-1"]}
    reg.edit(packet, lambda d: d.update(grades={"capability": grade}))
    copy = reg.read(RUN) | {"id": "run-copy"}
    reg.put(f"{F}/pkt/measurements/run-copy.json", copy)
    expect(_with_base(reg), "promotion-without-evidence", packet, "/grades/capability/grade")
    reg.repo.git.checkout("--", ".")
    (reg.root / f"{F}/pkt/measurements/run-copy.json").unlink()
    reg.edit(f"{F}/family.json", lambda d: d["weight_revisions"][0].update(grades={"capability": grade}))
    expect(
        _with_base(reg), "promotion-without-evidence", f"{F}/family.json", "/weight_revisions/0/grades/capability/grade"
    )


def test_identity_of_published_packets_and_artifacts_is_immutable(lab: Lab) -> None:
    packet = f"{Q}/qwen36-27b-autoround-int4-tp2/packet.json"
    lab.edit(packet, lambda d: d.update(runtime=d["runtime"] + " + unmerged fork"))
    expect(lab.blocking("HEAD"), "history-rewrite", packet, "/runtime")
    lab.repo.git.checkout("--", ".")
    family = f"{Q}/family.json"
    lab.edit(family, lambda d: d["weight_revisions"][0]["quantized_artifacts"][0].update(quantization="FP8"))
    findings = only(lab.blocking("HEAD"), "history-rewrite")
    assert any(f.file == family and "changed its quantization" in f.message for f in findings), findings


def test_a_retirement_cannot_be_undone(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    lab.edit(path, lambda d: d.update(retired={"reason": "Superseded by a strict run.", "date": "2026-11-29"}))
    lab.commit("retire it")
    assert only(lab.blocking("HEAD"), "history-rewrite") == []  # retiring is the one allowed edit
    lab.edit(path, lambda d: d["retired"].update(date="2019-01-01"))  # nor back-dated
    expect(lab.blocking("HEAD"), "history-rewrite", path, "/retired")
    lab.edit(path, lambda d: d.pop("retired"))
    expect(lab.blocking("HEAD"), "history-rewrite", path, "/retired")


def test_evidence_of_a_published_record_cannot_be_rewritten_even_with_its_new_hash(reg: Reg) -> None:
    import hashlib

    new_bytes = b'{"decode_tok_s": [31.21, 30.25]}\n'
    reg.raw(EVIDENCE, new_bytes)
    reg.edit(RUN, lambda d: d["evidence_sha256"].update({EVIDENCE: hashlib.sha256(new_bytes).hexdigest()}))
    reg.edit(RUN, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 31.21))
    _registry, report = validate(reg.root, rules.discover(), base="HEAD", use_cache=False)
    messages = [f.message for f in only(report.findings, "history-rewrite")]
    assert any(f"evidence file {EVIDENCE} of published" in m for m in messages), messages
    assert only(report.findings, "evidence-hash-mismatch") == []  # the hashes agree: only history catches it


def test_change_that_deletes_a_measurement(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    (lab.root / path).unlink()
    findings = lab.blocking("HEAD")
    expect(findings, "record-deleted", path, "")


def test_retiring_instead_of_deleting_passes(lab: Lab) -> None:
    path = lab.find("q38-nightly-tp1-eager-diagnostic")
    lab.edit(path, lambda d: d.update(retired={"reason": "Superseded by a strict run.", "date": "2026-11-29"}))
    assert only(lab.blocking("HEAD"), "record-deleted") == []


RAISE_PACKET = f"{Q}/qwen38-27b-autoround-int4-tp2-overlay-a3561ef8/packet.json"


def test_grade_raised_with_nothing_added(lab: Lab) -> None:
    data = lab.read(RAISE_PACKET)
    assert data["grades"]["evidence"]["grade"] == "C"
    lab.edit(RAISE_PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))
    expect(lab.blocking("HEAD"), "promotion-without-evidence", RAISE_PACKET, "/grades/evidence/grade")


def test_grade_raised_with_only_an_uncited_evidence_file_or_a_screened_run(lab: Lab) -> None:
    packet = lab.read(RAISE_PACKET)
    lab.edit(RAISE_PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))
    lab.raw(f"{Q}/{packet['id']}/evidence/notes.txt", b"more logs\n")
    expect(lab.blocking("HEAD"), "promotion-without-evidence", RAISE_PACKET, "/grades/evidence/grade")
    src = next(p for p in (lab.root / RAISE_PACKET).parent.rglob("measurements/*.json"))
    screened = json.loads(src.read_text()) | {"id": "q38-screen-r2", "state": "lab-screened"}
    lab.put(f"{Q}/{packet['id']}/measurements/q38-screen-r2.json", screened)
    expect(lab.blocking("HEAD"), "promotion-without-evidence", RAISE_PACKET, "/grades/evidence/grade")


def test_grade_raised_with_a_new_in_scope_measurement_passes(lab: Lab) -> None:
    packet = lab.read(RAISE_PACKET)
    lab.edit(RAISE_PACKET, lambda d: d["grades"]["evidence"].update(grade="B"))
    src = next(p for p in (lab.root / RAISE_PACKET).parent.rglob("measurements/*.json"))
    new = json.loads(src.read_text())
    new["id"] = "q38-e9d1398d9-tp1-repeat-r2"
    new["metrics"] = {"decode_tok_s": [30.1, 30.2, 30.3]}
    new["quality"] = "objective battery pass on a fresh host"
    # a repeat has its own evidence: the same file (and place in it) as a published run would be that run again
    new["evidence"] = str(new["evidence"]).rsplit("/", 1)[0] + "/repeat-r2-on-a-fresh-host.json"
    new.pop("evidence_sha256", None)
    new.pop("evidence_locators", None)
    lab.put(f"{Q}/{packet['id']}/measurements/{new['id']}.json", new)
    assert only(lab.blocking("HEAD"), "promotion-without-evidence") == []


def test_introduced_marks_only_changed_files(lab: Lab) -> None:
    lab.edit(f"{Q}/views/tp-strict.json", lambda d: d["series"][0]["measurement_ids"].append("ghost"))
    lab.commit("break a view")
    packet = f"{Q}/qwen36-27b-autoround-int4-tp2/packet.json"
    lab.edit(packet, lambda d: d.update(summary="reaches 52.3 tok/s"))
    lab.commit("add an orphan number")
    result = evreg("validate", "--base", "HEAD~1", "--format", "json", cwd=lab.root)
    assert result.returncode == 1
    findings = json.loads(result.stdout)["findings"]
    mine = {(f["code"], f["file"], f["introduced"]) for f in findings if not f["baselined"]}
    assert ("orphan-number", packet, True) in mine
    assert ("dangling-reference", f"{Q}/views/tp-strict.json", False) in mine
    assert findings[0]["introduced"] is True  # a contributor sees their own change first
    assert evreg("validate", "--base", "no-such-rev", cwd=lab.root).returncode == 2


# -- minimal fixtures ---------------------------------------------------------------

RUN = f"{F}/pkt/measurements/run-1.json"


def test_cited_prose_passes_and_renders(reg: Reg) -> None:
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(summary="Decode {{ m:run-1.decode_tok_s[1] }} on one card."))
    assert reg.findings() == []
    [c] = citations.parse("{{ m:run-1.decode_tok_s[1] }}")
    resolved = citations.resolve(c, {"run-1": reg.read(RUN)})
    assert isinstance(resolved, citations.Resolved) and resolved.text == "30.25 tok/s"


def test_malformed_citation(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(quality="gate {{ m:run-1.decode_tok_s }} passed"))
    [f] = reg.findings()
    assert (f.code, f.file, f.pointer) == ("citation-unresolved", RUN, "/quality")


def test_featured_needs_exactly_one_selector(reg: Reg) -> None:
    reg.edit(f"{F}/family.json", lambda d: d["featured_results"][0].update(point_x=0))
    [f] = reg.findings()
    assert (f.code, f.pointer) == ("featured-unbound", "/featured_results/0")


def featured_metric(reg: Reg) -> dict[str, Any]:
    """A packet headline bound exactly to run-1's first sample."""
    run = reg.read(RUN)
    return {
        "metric": "decode_tok_s",
        "measurement_id": "run-1",
        "sample_index": 0,
        "value": 30.21,
        "unit": "tok/s",
        "workload": run["workload"],
        "evidence": run["evidence"],
    }


def test_packet_featured_metric_binding(reg: Reg) -> None:
    fm = featured_metric(reg)
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(featured_metric=fm))
    assert reg.findings() == []
    reg.edit(f"{F}/pkt/packet.json", lambda d: d["featured_metric"].update(unit="t/s", workload="other"))
    assert {(f.code, f.pointer) for f in reg.findings()} == {
        ("featured-mismatch", "/featured_metric/unit"),
        ("featured-mismatch", "/featured_metric/workload"),
    }


def test_featured_metric_of_another_topology(reg: Reg) -> None:
    fm = featured_metric(reg)
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(featured_metric=fm, cards=2))
    found = {(f.code, f.file, f.pointer): f for f in reg.findings()}
    f = found.pop(("sideways-promotion", f"{F}/pkt/packet.json", "/featured_metric/measurement_id"))
    assert "TP1" in f.message
    # the matrix cell at TP1 that links the packet is now of another topology too, and so is the evidence it
    # cites; and the run filed in the packet's folder is no longer of the packet's scope
    assert set(found) == {
        ("sideways-promotion", f"{F}/coverage/matrix.json", "/cells/0:1/packet_id"),
        ("sideways-promotion", f"{F}/coverage/matrix.json", "/cells/0:1/evidence_id"),
        ("sideways-promotion", f"{F}/pkt/measurements/run-1.json", "/config/tp"),
    }, sorted(found)


def test_grade_passing_and_failing_on_the_rubric(reg: Reg) -> None:
    grade = {
        "grade": "B",
        "scope": "TP1",
        "basis": "repeats with quality gate",
        "reviewed_at": "2026-11-01",
        "evidence": [reg.read(RUN)["evidence"]],
    }
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(grades={"evidence": grade}))
    [f] = reg.findings()  # no quality gate stated on the run
    assert (f.code, f.pointer) == ("grade-unsupported", "/grades/evidence/grade")
    assert "quality-gate" in f.message and "support EVID C" in f.message
    reg.edit(RUN, lambda d: d.update(quality_scope="12/12 cache-zero prompts passed the final gate"))
    assert reg.findings() == []  # the lab records its quality gate as quality_scope
    reg.edit(RUN, lambda d: d.update(quality_scope=" ", quality="objective battery pass"))
    assert reg.findings() == []


def test_grade_needs_a_date(reg: Reg) -> None:
    grade = {"grade": "D", "scope": "TP1", "basis": "one run", "reviewed_at": "last week", "evidence": ["x"]}
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(grades={"evidence": grade}))
    assert ("schema", f"{F}/pkt/packet.json", "/grades/evidence/reviewed_at") in {
        (f.code, f.file, f.pointer) for f in reg.findings()
    }


def test_coverage_matrix_missing_a_cell(reg: Reg) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"].pop("0:2"))
    [f] = reg.findings()
    assert (f.code, f.file, f.pointer) == ("coverage-incomplete", f"{F}/coverage/matrix.json", "/cells")
    assert "'0:2'" in f.message


def test_coverage_cell_of_another_scope(reg: Reg) -> None:
    reg.edit(f"{F}/coverage/matrix.json", lambda d: d["cells"]["0:2"].update(state="lab-measured", evidence_id="run-1"))
    [f] = reg.findings()  # run-1 is TP1, the cell is TP2
    assert (f.code, f.pointer) == ("sideways-promotion", "/cells/0:2/evidence_id")


CONTRACT = {
    "kind": "coverage-contract",
    "id": "tp-contract",
    "label": "TP contract",
    "axes": [{"key": "tp", "values": [1, 2]}, {"key": "mtp", "values": [0]}],
    "rules": [
        {"id": "gap", "match": {"tp": "*", "mtp": "*"}, "state": "missing", "label": "gap"},
        {
            "id": "tp1",
            "match": {"tp": 1, "mtp": 0},
            "state": "lab-measured",
            "label": "measured",
            "evidence_id": "run-1",
        },
    ],
}


def test_contract_passing_and_ambiguous(reg: Reg) -> None:
    reg.put(f"{F}/coverage/tp-contract.json", CONTRACT)
    assert reg.findings() == []
    broken = json.loads(canonical(CONTRACT))
    broken["rules"].append({"id": "also", "match": {"tp": 1, "mtp": "*"}, "state": "missing"})
    reg.put(f"{F}/coverage/tp-contract.json", broken)
    [f] = reg.findings()
    assert (f.code, f.pointer) == ("coverage-incomplete", "/rules/2")


def test_contract_with_an_uncovered_cell(reg: Reg) -> None:
    broken = json.loads(canonical(CONTRACT))
    broken["rules"] = broken["rules"][1:]
    reg.put(f"{F}/coverage/tp-contract.json", broken)
    [f] = reg.findings()
    assert f.code == "coverage-incomplete" and "tp=2" in f.message


def test_view_series_of_one_state_passes_and_mixed_states_fail(reg: Reg) -> None:
    reg.edit(
        f"{F}/views/tp-view.json",
        lambda d: (d.update(discrete=True), d["series"][0]["measurement_ids"].append("sweep-1")),
    )
    assert reg.findings() == []
    reg.edit(f"{F}/measurements/sweep-1.json", lambda d: d.update(state="lab-screened"))
    [f] = reg.findings()
    assert (f.code, f.pointer) == ("state-mismatch", "/series/0")


def test_hand_written_site_page_orphan_and_citation(reg: Reg) -> None:
    page = reg.root / "site/notes.md"
    page.parent.mkdir()
    page.write_text("# Notes\n\nWe reached 52.3 tok/s.\n\n```\n99.9 tok/s in a code block is an example\n```\n")
    [f] = reg.findings()
    assert (f.code, f.file, f.line) == ("orphan-number", "site/notes.md", 3)
    page.write_text("# Notes\n\nWe reached {{ m:run-1.decode_tok_s[0] }}.\n")
    assert reg.findings() == []


def _grammar_examples() -> list[tuple[str, list[str]]]:
    """The rows of the methodology page's table of figure examples: (text, the claims in it)."""
    import re

    page = (REPO / "registry/evreg/site/static/methodology.md").read_text()
    table = page[page.index("| Text | Claims in it |") :].split("\n\n", 1)[0].splitlines()[2:]
    rows = []
    for row in table:
        text_cell, claims_cell = row.strip("|").split(" | ", 1)
        text = re.match(r"\s*`([^`]*)`", text_cell).group(1)  # type: ignore[union-attr]
        claims = [] if claims_cell.strip() == "none" else re.findall(r"`([^`]*)`", claims_cell)
        rows.append((text, claims))
    return rows


@pytest.mark.parametrize(("text", "figures"), _grammar_examples())
def test_the_documented_figure_grammar(text: str, figures: list[str]) -> None:
    from evreg.claims.figures import find_figures

    assert [f.text for f in find_figures(text)] == figures


def test_the_grammar_table_has_claims_and_non_claims() -> None:
    rows = _grammar_examples()
    assert len(rows) >= 20 and any(not f for _, f in rows) and sum(len(f) for _, f in rows) >= 25


def test_every_declared_finding_code_is_documented_and_explained() -> None:
    """Findings are made only from declared codes (see test_architecture); every code any module
    declares is in the documentation the CLI and the site show, and nothing else is."""
    import importlib
    import pkgutil

    import evreg as package_evreg
    import evreg_rules
    from evreg.core.findings import declared

    for package in (package_evreg, evreg_rules):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    documented = rules.code_docs(rules.discover())
    assert len(documented) > 30 and set(declared()) == set(documented)
    for code in documented:
        result = evreg("explain", code)
        assert result.returncode == 0 and "Why:" in result.stdout
    assert evreg("explain", "no-such-code").returncode == 2


def test_a_finding_needs_a_declared_code_and_a_code_is_declared_once() -> None:
    from pydantic import ValidationError

    from evreg.core import codes
    from evreg.core.findings import Code, Finding

    with pytest.raises(ValidationError, match="not declared"):
        Finding(code="made-up", file="x.json", message="m")
    with pytest.raises(ValueError, match="declared twice"):
        Code("schema", "another title", "why", "hint")
    made = codes.SCHEMA.at("x.json", "/a", "m")
    assert (made.code, made.hint) == ("schema", codes.SCHEMA.hint)


# -- values that cannot be physical ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "edit", "pointer"),
    [
        (RUN, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 0.0), "/metrics/decode_tok_s/0"),
        (RUN, lambda d: d["metrics"].update(ttft_ms=[-3.0]), "/metrics/ttft_ms/0"),
        (RUN, lambda d: d["metrics"].update(draft_acceptance_rate=[1.2]), "/metrics/draft_acceptance_rate/0"),
        (RUN, lambda d: d["metrics"].update(my_prefill_tok_s=[-1]), "/metrics/my_prefill_tok_s/0"),  # by unit
        (f"{F}/measurements/sweep-1.json", lambda d: d["points"][1].update(decode_tok_s=0), "/points/1/decode_tok_s"),
        (RUN, lambda d: d["metrics"].update(ttft_ms=[9e10]), "/metrics/ttft_ms/0"),
    ],
)
def test_a_number_its_metric_cannot_take_is_refused(reg: Reg, path: str, edit: Any, pointer: str) -> None:
    reg.edit(path, edit)
    hits = [(f.file, f.pointer) for f in only(reg.findings(), "implausible-value")]
    assert hits == [(path, pointer)]


def test_plausible_edges_pass(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"].update(draft_acceptance_rate=[0.0, 1.0], ttft_ms=[0.01], tokens_seen=[0]))
    assert only(reg.findings(), "implausible-value") == []


# -- the baseline cannot approve its own change ---------------------------------------------------------------


def test_a_change_cannot_baseline_its_own_findings(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"]["decode_tok_s"].__setitem__(0, 99.0))
    [rewrite] = only(_with_base(reg), "history-rewrite")
    entry = {"code": rewrite.code, "file": rewrite.file, "pointer": rewrite.pointer, "message": rewrite.message}
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [entry | {"reason": "typo"}]})
    findings = _with_base(reg)
    assert [f.baselined for f in only(findings, "history-rewrite")] == [False]  # history is never baselinable
    expect(findings, "baseline-self-approval", "packets/baseline.json", "/entries/0")
    # nor is the self-approval finding, even by an entry that names itself
    itself = {"code": "baseline-self-approval", "file": "packets/baseline.json", "pointer": "/entries/1"}
    itself["message"] = "this change adds or edits a baseline entry (baseline-self-approval)"
    reg.put(
        "packets/baseline.json", {"kind": "baseline", "entries": [entry | {"reason": "x"}, itself | {"reason": "x"}]}
    )
    assert not any(f.baselined for f in only(_with_base(reg), "baseline-self-approval"))


def test_baseline_entries_name_the_exact_message(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(caveat="reaches 52.3 tok/s"))
    wildcard = {"code": "orphan-number", "file": RUN, "pointer": "/caveat", "reason": "lab prose"}
    reg.put("packets/baseline.json", {"kind": "baseline", "entries": [wildcard]})
    findings = reg.findings()
    assert not any(f.baselined for f in findings)
    expect(findings, "schema", "packets/baseline.json", "/entries/0")


# -- non-promotable everywhere: a superseded run backs nothing ---------------------------------------


def test_a_superseded_run_backs_no_headline_cell_or_curve(reg: Reg) -> None:
    correction = reg.read(RUN) | {"id": "run-2", "supersedes": "run-1"}
    reg.put(f"{F}/pkt/measurements/run-2.json", correction)
    other = reg.read(RUN) | {"id": "run-3", "config": {"tp": 2, "mtp": 0, "natural_eos": True}}
    reg.put(f"{F}/pkt/measurements/run-3.json", other)
    reg.edit(f"{F}/views/tp-view.json", lambda d: d["series"][0]["measurement_ids"].append("run-3"))
    findings = only(reg.findings(), "non-promotable-evidence")
    where = {(f.file, f.pointer) for f in findings}
    assert (f"{F}/family.json", "/featured_results/0/measurement_id") in where  # the headline
    assert (f"{F}/coverage/matrix.json", "/cells/0:1/evidence_id") in where  # a measured cell
    assert (f"{F}/views/tp-view.json", "/series/0/measurement_ids/0") in where  # a joined curve
    assert all("superseded by 'run-2'" in f.message for f in findings)


def test_a_misspelt_field_is_named_with_the_field_it_resembles(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d.update(caveats="reaches 52.3 tok/s", worklaod=d.pop("workload")))
    found = {(f.pointer, f.message) for f in only(reg.findings(), "field-misspelt")}
    assert found == {
        ("/caveats", "'caveats' is not a field of a run-measurement; did you mean 'caveat'?"),
        ("/worklaod", "'worklaod' is not a field of a run-measurement; did you mean 'workload'?"),
    }
    reg.edit(RUN, lambda d: [d.pop("caveats"), d.update(workload=d.pop("worklaod"), caveat="ok", caveats="x")])
    assert only(reg.findings(), "field-misspelt") == []  # beside the field it resembles, it is a field of its own


# -- evidence locators in CSV, TSV and text logs are re-read like JSON pointers ------------------------------


@pytest.mark.parametrize(
    ("name", "content", "locator", "ok"),
    [
        ("runs.csv", "run,decode_tok_s\nfirst,30.21\nsecond,30.25\n", "csv:2/decode_tok_s", True),
        ("runs.csv", "run,decode_tok_s\nfirst,NaN\nsecond,NaN\n", "csv:2/decode_tok_s", False),  # NaN backs nothing
        ("runs.csv", "run,decode_tok_s\nfirst,30.21\n", "csv:2/decode_tok_s", False),  # no such row
        ("runs.tsv", "run\tdecode_tok_s\nfirst\t30.21\nsecond\t30.25\n", "csv:2/decode_tok_s", True),
        ("run.log", "warmup done\nsteady decode 30.25 tok/s over 512 tokens\n", "line:2:1", True),
        ("run.log", "warmup done\nsteady decode 30.25 tok/s over 512 tokens\n", "line:2", False),  # two numbers
        ("run.log", "warmup done\nsteady decode 31.25 tok/s\n", "line:2", False),  # another value
    ],
)
def test_csv_and_text_locators_are_checked(reg: Reg, name: str, content: str, locator: str, ok: bool) -> None:
    import hashlib

    path = f"{F}/pkt/evidence/{name}"
    reg.raw(path, content.encode())

    def point(d: dict[str, Any]) -> None:
        d.update(evidence=path, evidence_sha256={path: hashlib.sha256(content.encode()).hexdigest()})
        d["metrics"]["decode_tok_s"] = [30.25]  # one sample, located (a record locates each sample or none)
        d["evidence_locators"] = {"decode_tok_s[0]": locator}

    reg.edit(RUN, point)
    mismatches = only(reg.findings(), "evidence-value-mismatch")
    assert (mismatches == []) is ok, [f.message for f in mismatches]


def test_a_copy_of_the_evidence_under_a_new_name_is_not_an_independent_repeat(reg: Reg) -> None:
    import hashlib

    copy = f"{F}/pkt/evidence/run-again.json"
    reg.raw(copy, EVIDENCE_BYTES_FOR_COPY)
    repeat = reg.read(RUN) | {
        "id": "run-2",
        "measurement_class": "clean-host reproduction",
        "evidence": copy,
        "evidence_sha256": {copy: hashlib.sha256(EVIDENCE_BYTES_FOR_COPY).hexdigest()},
        "quality": "objective battery pass",
    }
    reg.put(f"{F}/pkt/measurements/run-2.json", repeat)
    reg.edit(RUN, lambda d: d.update(quality="objective battery pass"))
    reg.edit(f"{F}/measurements/sweep-1.json", lambda d: d.update(evidence_sha256=reg.read(RUN)["evidence_sha256"]))
    grade = {
        "grade": "A",
        "scope": "TP1",
        "basis": "repeats",
        "reviewed_at": "2026-11-30",
        "evidence": [EVIDENCE, copy],
    }
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(grades={"evidence": grade}))
    [f] = only(reg.findings(), "grade-unsupported")
    assert "independent-repeats" in f.message  # same bytes, same numbers: one observation filed twice
    other = b'{"decode_tok_s": [31.02, 31.07]}\n'
    reg.raw(copy, other)
    reg.edit(
        f"{F}/pkt/measurements/run-2.json",
        lambda d: d.update(
            metrics={"decode_tok_s": [31.02, 31.07]}, evidence_sha256={copy: hashlib.sha256(other).hexdigest()}
        ),
    )
    assert all("independent-repeats" not in f.message for f in only(reg.findings(), "grade-unsupported"))


EVIDENCE_BYTES_FOR_COPY = b'{"decode_tok_s": [30.21, 30.25]}\n'


# -- every string a reader sees is prose ------------------------------------------------------------


def _prose_fields(model: type[BaseModel]) -> list[str]:
    """Top-level fields of ``model`` that hold a string readers see (not a token: id, hash, date, state)."""
    return [
        info.alias or name
        for name, info in model.model_fields.items()
        if is_prose(info.alias or name, "some text") and _leaf_types(info.annotation) in ({str}, {str, type(None)})
    ]


def _leaf_types(annotation: Any) -> set[Any]:
    args = get_args(annotation)
    return {annotation} if not args else set().union(*(_leaf_types(a) for a in args))


def test_a_figure_in_any_string_readers_see_is_an_orphan_number(reg: Reg) -> None:
    """Generated from the models: every declared text field of every record kind, every string the fixture records
    hold at any depth (config included), and a field no model declares. Tokens (ids, hashes) are not prose."""
    planted: list[tuple[str, str]] = []
    for path, make in RECORDS.items():
        record = make()
        targets = {f"/{field}" for field in _prose_fields(MODELS[record["kind"]])}
        targets |= {pointer for pointer, _ in iter_prose(record)}
        targets |= {"/caveats", "/config/scheduler"}  # a misspelt field; a setting's text
        for pointer in sorted(targets):
            trial = make()
            _plant(trial, pointer, "reached 52.3 tok/s")
            try:  # where the schema allows free text (a featured result's role is one of two words)
                MODELS[record["kind"]].model_validate(trial)
            except ValidationError:
                continue
            planted.append((path, pointer))
    assert len(planted) > 45
    for path, pointer in planted:
        reg.edit(path, lambda d, p=pointer: _plant(d, p, "reached 52.3 tok/s"))
    found = {(f.file, f.pointer) for f in only(reg.findings(), "orphan-number")}
    assert set(planted) <= found, sorted(set(planted) - found)[:10]
    assert not is_prose("measurement_id", "run-1") and is_prose("measurement_id", "decode 250 tok/s")
    assert is_prose("workload", "x") and not is_prose("evidence", "decode 250 tok/s")


def _plant(record: dict[str, Any], pointer: str, text: str) -> None:
    *parents, last = split_pointer(pointer)
    node: Any = record
    for token in parents:
        node = node.setdefault(token, {}) if isinstance(node, dict) else node[int(token)]
    key: Any = int(last) if isinstance(node, list) else last
    before = node[key] if (isinstance(node, list) or key in node) and isinstance(node[key], str) else ""
    node[key] = f"{before} {text}".strip()


def test_a_memory_size_is_part_of_a_hardware_or_runtime_name_but_a_speed_is_a_claim(reg: Reg) -> None:
    packet = f"{F}/pkt/packet.json"
    reg.edit(packet, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3", runtime="vLLM 0.9"))
    assert "orphan-number" not in reg.codes()
    reg.edit(packet, lambda d: d.update(hardware="RTX 5090 32 GB reaching 250 tok/s"))
    [f] = only(reg.findings(), "orphan-number")
    assert (f.pointer, "'250 tok/s'" in f.message) == ("/hardware", True)
    reg.edit(packet, lambda d: d.update(hardware="RTX 5090", summary="Runs on one 32 GB card."))
    [f] = only(reg.findings(), "orphan-number")  # in prose that is not a name, a memory size is a figure
    assert f.pointer == "/summary"
