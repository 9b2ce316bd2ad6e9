"""The rules on a copy of this repository's records (the real lab data): the copy passes as it is, and each
failing case is one edit of it -- a headline citing another revision, a grade on screened runs only, a curve mixing
runtimes, a rounded headline, an orphan figure, and, against the committed copy (``--base``), rewritten, deleted or
un-retired published records and grades raised with nothing new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import Lab, Q, evreg, expect, only

pytestmark = pytest.mark.slow  # each test validates a copy of the real records


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    lab = Lab(tmp_path / "lab")
    lab.commit("import lab data")
    return lab


def test_unmodified_lab_data_passes(lab: Lab) -> None:
    assert lab.blocking() == []


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


# -- history, against the committed copy -------------------------------------------------------------------------------


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
    # the superseded run no longer backs a measured cell, a coverage rule or a curve: they move to the correction.
    # (The copied sample is not in the held copy of the lab's file it cites: a warning, as for the run it corrects.)
    errors = [f for f in lab.blocking("HEAD") if f.severity == "error"]
    citing = {f.file for f in errors}
    assert {f.code for f in errors} == {"non-promotable-evidence"}
    assert f"{Q}/coverage/e9d1398-eager-f16.json" in citing
    for file in citing:
        text = (lab.root / file).read_text()
        (lab.root / file).write_text(text.replace('"q38-nightly-tp1-eager-diagnostic"', f'"{fixed["id"]}"'))
    assert [f for f in lab.blocking("HEAD") if f.severity == "error"] == []


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


def test_a_new_record_cannot_borrow_another_runs_samples(lab: Lab) -> None:
    """A new record whose locators point into another run's entry of the shared run log (the samples re-read, the
    receipt is not its own) is a finding; its own entry is not."""
    [found_at] = (lab.root / "packets").rglob("qwen36-moe-mtp.json")
    path = found_at.relative_to(lab.root).as_posix()
    run = lab.read(path)
    locators = run["evidence_locators"]
    entry = "/" + "/".join(next(iter(locators.values())).split("/")[1:3])  # /runs/N of qwen36-moe-mtp
    log = json.loads((lab.root / run["evidence"]).read_text())
    other = next(i for i, r in enumerate(log["runs"]) if r["id"] == "qwen36-moe-default")
    moved = {k: v.replace(entry, f"/runs/{other}", 1) for k, v in locators.items()}
    held = {k: v for k, v in moved.items() if _has(log, v)}  # the metrics the other run's entry has too
    metrics = sorted({k.split("[")[0] for k in held})
    borrowed = dict(run, id="qwen36-moe-mtp-again", evidence_locators=held)
    borrowed["metrics"] = {m: [_at(log, held[f"{m}[{i}]"]) for i in range(len(run["metrics"][m]))] for m in metrics}
    assert borrowed["metrics"]
    new = path.replace("qwen36-moe-mtp.json", "qwen36-moe-mtp-again.json")
    (lab.root / new).write_text(json.dumps(borrowed))
    found = [f for f in lab.blocking() if f.file == new]
    assert [f.code for f in found] == ["evidence-other-run"], [(f.code, f.message) for f in found]
    assert "qwen36-moe-default" in found[0].message
    twin = dict(run, id="qwen36-moe-mtp-again")  # the entry of qwen36-moe-mtp, claimed a second time
    (lab.root / new).write_text(json.dumps(twin))
    assert [f.code for f in lab.blocking() if f.file == new] == ["evidence-other-run"]
    honest = dict(run, id="qwen36-moe-mtp-again", supersedes="qwen36-moe-mtp")  # a correction of that run
    (lab.root / new).write_text(json.dumps(honest))
    assert [f for f in lab.blocking() if f.file == new and f.code == "evidence-other-run"] == []


def _has(data: Any, pointer: str) -> bool:
    try:
        _at(data, pointer)
    except (KeyError, IndexError):
        return False
    return True


def _at(data: Any, pointer: str) -> Any:
    for token in pointer.strip("/").split("/"):
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data


def test_a_figure_planted_in_any_string_of_any_record_is_a_finding(lab: Lab) -> None:
    """Every string field the real records use (one of each kind and field path, lists read as one), with a typed
    figure appended: validation reports it there -- as an orphan number, or as a value its field does not take. What
    the site renders from a record is therefore always text validation has read (validate >= build)."""
    import re

    from evreg.core.evidence import is_evidence_key
    from evreg.core.jsonio import iter_keyed_strings

    places: dict[tuple[str, str], dict[str, str]] = {}  # shape -> file -> the first pointer of that shape in it
    for path in sorted((lab.root / "packets").rglob("*.json")):
        rel = path.relative_to(lab.root).as_posix()
        if "/evidence/" in rel or rel.endswith("baseline.json"):
            continue
        data = json.loads(path.read_text())
        kind = data.get("kind") if isinstance(data, dict) else "list"
        for pointer, _key, _text in iter_keyed_strings(data, lambda k: not is_evidence_key(k)):
            if pointer not in ("/kind", "/id"):
                places.setdefault((str(kind), re.sub(r"/\d+(?=/|$)", "/N", pointer)), {}).setdefault(rel, pointer)
    assert len(places) > 200
    # Each shape is planted once, in the file of its kind that holds the fewest plants so far. A round plants a group
    # of figures in each file; a figure a round did not find is planted again in a smaller group (a figure in one
    # field can hide another's: a value its field does not take fails the whole record), and alone, it must be found.
    queues: dict[str, list[list[str]]] = {}
    for _shape, where in sorted(places.items(), key=lambda item: len(item[1])):
        rel = min(where, key=lambda r: (len(queues.get(r, [[]])[0]), r))
        queues.setdefault(rel, [[]])[0].append(where[rel])
    missed, rounds = [], 0
    while plants := {rel: queue.pop(0) for rel, queue in queues.items() if queue}:
        rounds += 1
        backup = {rel: (lab.root / rel).read_text() for rel in plants}
        for rel, pointers in plants.items():
            for pointer in pointers:
                lab.edit(rel, lambda d, p=pointer: _append(d, p, " at 52.3 tok/s"))
        found = {(f.file, f.pointer) for f in lab.blocking()}
        for rel, pointers in plants.items():
            unfound = [p for p in pointers if (rel, p) not in found]
            if len(pointers) == 1 and unfound and (rel, "") not in found:
                missed.append((rel, unfound[0]))
            elif len(pointers) > 1 and unfound:
                half = (len(unfound) + 1) // 2
                queues[rel] += [group for group in (unfound[:half], unfound[half:]) if group]
        for rel, text in backup.items():
            (lab.root / rel).write_text(text)
    assert missed == [] and rounds < 100, (missed, rounds)


def _append(data: Any, pointer: str, text: str) -> None:
    *parents, last = pointer.strip("/").split("/")
    node = data
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token.replace("~1", "/").replace("~0", "~")]
    key: Any = int(last) if isinstance(node, list) else last.replace("~1", "/").replace("~0", "~")
    node[key] = node[key] + text
