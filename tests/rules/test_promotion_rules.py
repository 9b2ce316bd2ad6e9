"""Failing and passing fixtures for what a record may promote: featured results and headlines bound to their
samples, grades on the rubric, coverage grids and contracts, view series of one state, values a metric can take,
and superseded or copied runs that back nothing new."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evreg.core.jsonio import canonical
from helpers import EVIDENCE, F, Reg, only

RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"


# -- featured results --------------------------------------------------------------------------------------------------


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


# -- grades ------------------------------------------------------------------------------------------------------------


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


@pytest.mark.parametrize("scope", ["quality suite skipped", "JSON and color failed on the first request", "n/a"])
def test_a_skipped_or_failed_quality_scope_is_no_quality_gate(reg: Reg, scope: str) -> None:
    """EVID B requires a quality gate: a quality_scope that says the suite was skipped or failed (as the lab's own
    'JSON and color failed on the first request; quality suite skipped' in packets/qwen-35b) is none."""
    grade = {"grade": "B", "scope": "x", "basis": "y", "reviewed_at": "2026-01-01", "evidence": [EVIDENCE]}
    reg.edit(PKT, lambda d: d.__setitem__("grades", {"evidence": grade}))
    assert only(reg.findings(), "grade-unsupported")  # without any quality statement: refused
    reg.edit(RUN, lambda d: d.__setitem__("quality_scope", scope))
    assert only(reg.findings(), "grade-unsupported"), f"{scope!r} counted as a passed quality gate"


def test_grade_needs_a_date(reg: Reg) -> None:
    grade = {"grade": "D", "scope": "TP1", "basis": "one run", "reviewed_at": "last week", "evidence": ["x"]}
    reg.edit(f"{F}/pkt/packet.json", lambda d: d.update(grades={"evidence": grade}))
    assert ("schema", f"{F}/pkt/packet.json", "/grades/evidence/reviewed_at") in {
        (f.code, f.file, f.pointer) for f in reg.findings()
    }


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


# -- coverage grids and contracts --------------------------------------------------------------------------------------


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


# -- views -------------------------------------------------------------------------------------------------------------


def test_view_series_of_one_state_passes_and_mixed_states_fail(reg: Reg) -> None:
    reg.edit(
        f"{F}/views/tp-view.json",
        lambda d: (d.update(discrete=True), d["series"][0]["measurement_ids"].append("sweep-1")),
    )
    assert reg.findings() == []
    reg.edit(f"{F}/measurements/sweep-1.json", lambda d: d.update(state="lab-screened"))
    [f] = reg.findings()
    assert (f.code, f.pointer) == ("state-mismatch", "/series/0")


# -- values that cannot be physical ------------------------------------------------------------------------------------


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


# -- non-promotable everywhere: a superseded run backs nothing ---------------------------------------------------------


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
