"""Failing and passing fixtures for the checks learnt from the neural.download lab's own family validator
(``tools/build-family-pages.py`` in steveseguin/b70-optimization-lab): each failing case is the smallest
change to the clean fixture registry that breaks one check, and asserts the code, file and JSON pointer;
the passing cases are the clean fixture (every rule passes it) and the nearest correct variant."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evreg.core.layout import LAB_FORMAT
from helpers import EVIDENCE, REV_A, REV_B, F, Lab, Q, Reg, evreg, only

FAMILY = f"{F}/family.json"
PACKET = f"{F}/pkt/packet.json"
RUN = f"{F}/pkt/measurements/run-1.json"
SWEEP = f"{F}/measurements/sweep-1.json"
VIEW = f"{F}/views/tp-view.json"
MATRIX = f"{F}/coverage/matrix.json"
CLOSURE = f"{F}/closures/closure-1.json"
ESTIMATE = f"{F}/estimates/est-1.json"
CONTEXT = f"{F}/coverage/context.json"
CONTRACT = f"{F}/coverage/contract.json"
BOUND = {"revision": REV_A, "artifact_id": "art-a", "quantization": "INT4"}

SIBLING = {"id": REV_B, "model": "qwen3.6-27b", "label": "Qwen3.6-27B"}
"""A sibling weight revision of a known model, tied to it by its label."""


def estimate(**changes: Any) -> dict[str, Any]:
    return {
        "kind": "estimate",
        "id": "est-1",
        "state": "estimated",
        "selectors": dict(BOUND),
        "metric": "decode_tok_s",
        "unit": "tok/s",
        "value": 40.0,
        "interval": {"low": 35.0, "high": 45.0},
        "engine": {"name": "projector", "version": "1", "snapshot_sha256": "a" * 64},
        "generated_at": "2026-09-01",
        "record": EVIDENCE,
        "basis_measurement_ids": ["run-1"],
        "not_for_promotion": True,
        "limitations": "A projection, not an observation.",
    } | changes


def context_matrix() -> dict[str, Any]:
    """Two points of the fixture sweep, each in the cell of its context length."""
    return {
        "kind": "coverage-view",
        "id": "context",
        "rows": [0, 8192],
        "columns": [1],
        "row_axis": {"key": "active_context_tokens", "label": "Context"},
        "column_axis": {"key": "tp", "label": "TP"},
        "fixed_selectors": dict(BOUND),
        "cells": {
            "0:1": {
                "state": "lab-measured",
                "evidence_id": "sweep-1",
                "point_x": 0,
                "label": "D{{ m:sweep-1.decode_tok_s@0 | 1 | nounit }}",
            },
            "8192:1": {
                "state": "lab-measured",
                "evidence_id": "sweep-1",
                "point_x": 8192,
                "label": "D{{ m:sweep-1.decode_tok_s@8192 | 1 | nounit }}",
            },
        },
    }


def contract() -> dict[str, Any]:
    return {
        "kind": "coverage-contract",
        "id": "contract",
        "label": "TP inventory",
        "fixed_selectors": dict(BOUND),
        "axes": [{"key": "tp", "label": "TP", "values": [1, 2]}],
        "rules": [
            {"id": "all", "match": {"tp": "*"}, "state": "missing", "label": "untested"},
            {"id": "tp1", "match": {"tp": 1}, "state": "closed", "reason": "no route", "packet_id": "pkt"},
        ],
    }


def lab_format(reg: Reg) -> None:
    reg.edit(FAMILY, lambda d: d.update(format=LAB_FORMAT))


def hits(reg: Reg, code: str) -> set[tuple[str, str]]:
    return {(f.file, f.pointer) for f in only(reg.findings(), code)}


def test_the_clean_fixture_passes_in_the_labs_format_too(reg: Reg) -> None:
    reg.put(ESTIMATE, estimate())
    reg.put(CONTEXT, context_matrix())
    reg.put(CONTRACT, contract())
    lab_format(reg)
    assert reg.findings() == []


Edit = Callable[[Reg], Any]
CASES: list[tuple[str, Edit, str, str, str]] = [
    # (case, edit, code, file, pointer)
    ("no metrics, no points", lambda r: r.edit(RUN, lambda d: d.update(metrics={})), "measurement-empty", RUN, ""),
    (
        "lab family: point without a vocabulary metric",
        lambda r: (lab_format(r), r.edit(SWEEP, lambda d: d["points"][1].pop("decode_tok_s"))),
        "metric-unknown",
        SWEEP,
        "/points/1",
    ),
    (
        "lab family: view of an unknown metric",
        lambda r: (lab_format(r), r.edit(VIEW, lambda d: d.update(metrics=["decode_toks"]))),
        "metric-unknown",
        VIEW,
        "/metrics/0",
    ),
    (
        "lab family: measurement metric outside the vocabulary",
        lambda r: (lab_format(r), r.edit(RUN, lambda d: d["metrics"].update(decode_toks=[1.0]))),
        "metric-unknown",
        RUN,
        "/metrics/decode_toks",
    ),
    (
        "annotation of a sample that is not there",
        lambda r: r.edit(
            RUN, lambda d: d.update(sample_annotations=[{"metric": "decode_tok_s", "index": 2, "label": "x"}])
        ),
        "sample-annotation-invalid",
        RUN,
        "/sample_annotations/0/index",
    ),
    (
        "annotation of a metric the run lacks",
        lambda r: r.edit(RUN, lambda d: d.update(sample_annotations=[{"metric": "ttft_ms", "index": 0, "label": "x"}])),
        "sample-annotation-invalid",
        RUN,
        "/sample_annotations/0/metric",
    ),
    (
        "annotation misquoting its sample",
        lambda r: r.edit(
            RUN,
            lambda d: d.update(
                sample_annotations=[{"metric": "decode_tok_s", "index": 1, "label": "x", "value": 30.2}]
            ),
        ),
        "sample-annotation-invalid",
        RUN,
        "/sample_annotations/0/value",
    ),
    (
        "initial views empty",
        lambda r: r.edit(FAMILY, lambda d: d.update(initial_view_ids=[])),
        "initial-views-invalid",
        FAMILY,
        "/initial_view_ids",
    ),
    (
        "initial view repeated",
        lambda r: r.edit(FAMILY, lambda d: d.update(initial_view_ids=["tp-view", "tp-view"])),
        "initial-views-invalid",
        FAMILY,
        "/initial_view_ids/1",
    ),
    (
        "record listed twice (a byte-identical duplicate in the manifest)",
        lambda r: r.edit(FAMILY, lambda d: d.update(record_order={"views": ["tp-view", "tp-view"]})),
        "record-listed-twice",
        FAMILY,
        "/record_order/views/1",
    ),
    (
        "projection pinning only the prompt",
        lambda r: r.edit(
            PACKET, lambda d: d.update(projection={"model": "m", "quant": "q", "runtime": "r", "prompt_tokens": 66})
        ),
        "projection-invalid",
        PACKET,
        "/projection",
    ),
    (
        "projection without a model",
        lambda r: r.edit(PACKET, lambda d: d.update(projection={"quant": "q", "runtime": "r"})),
        "projection-invalid",
        PACKET,
        "/projection",
    ),
    (
        "projection of zero tokens",
        lambda r: r.edit(
            PACKET,
            lambda d: d.update(
                projection={"model": "m", "quant": "q", "runtime": "r", "prompt_tokens": 0, "output_tokens": 8}
            ),
        ),
        "projection-invalid",
        PACKET,
        "/projection/prompt_tokens",
    ),
    (
        "artifact with neither revision nor revision_status",
        lambda r: r.edit(FAMILY, lambda d: d["weight_revisions"][1]["quantized_artifacts"][0].pop("revision_status")),
        "artifact-unpinned",
        FAMILY,
        "/weight_revisions/1/quantized_artifacts/0",
    ),
    (
        "estimate unit not the metric's",
        lambda r: r.put(ESTIMATE, estimate(unit="ms")),
        "estimate-invalid",
        ESTIMATE,
        "/unit",
    ),
    (
        "estimate of an unknown metric",
        lambda r: r.put(ESTIMATE, estimate(metric="decode_toks")),
        "estimate-invalid",
        ESTIMATE,
        "/metric",
    ),
    (
        "estimate interval inverted",
        lambda r: r.put(ESTIMATE, estimate(interval={"low": 45.0, "high": 35.0})),
        "estimate-invalid",
        ESTIMATE,
        "/interval",
    ),
    (
        "estimate value outside its band",
        lambda r: r.put(ESTIMATE, estimate(value=50.0)),
        "estimate-invalid",
        ESTIMATE,
        "/value",
    ),
    (
        "estimate superseding itself",
        lambda r: r.put(ESTIMATE, estimate(supersedes="est-1")),
        "estimate-invalid",
        ESTIMATE,
        "/supersedes",
    ),
    (
        "estimate without selectors",
        lambda r: r.put(ESTIMATE, estimate(selectors={})),
        "selector-invalid",
        ESTIMATE,
        "/selectors",
    ),
    (
        "closure selector key not a lowercase word",
        lambda r: r.edit(CLOSURE, lambda d: d["selectors"].update(TP=2)),
        "selector-invalid",
        CLOSURE,
        "/selectors/TP",
    ),
    (
        "matrix axis value with ':'",
        lambda r: r.edit(MATRIX, lambda d: d.update(rows=["q4:k"])),
        "selector-invalid",
        MATRIX,
        "/rows/0",
    ),
    (
        "matrix axis value listed twice",
        lambda r: r.edit(MATRIX, lambda d: d.update(columns=[1, 2, 2])),
        "selector-invalid",
        MATRIX,
        "/columns/2",
    ),
    (
        "both axes one key",
        lambda r: r.edit(MATRIX, lambda d: d.update(row_axis={"key": "tp"})),
        "selector-invalid",
        MATRIX,
        "/column_axis",
    ),
    (
        "named axes without fixed selectors",
        lambda r: r.edit(
            MATRIX, lambda d: (d.pop("fixed_selectors"), d.update(row_axis={"key": "mtp", "label": "MTP"}))
        ),
        "selector-invalid",
        MATRIX,
        "",
    ),
    (
        "fixed selector repeating an axis",
        lambda r: r.edit(MATRIX, lambda d: d["fixed_selectors"].update(tp=1)),
        "selector-invalid",
        MATRIX,
        "/fixed_selectors/tp",
    ),
    (
        "cell selector repeating an inherited one (on an untested cell)",
        lambda r: r.edit(MATRIX, lambda d: d["cells"]["0:2"].update(selectors={"revision": REV_A})),
        "selector-invalid",
        MATRIX,
        "/cells/0:2/selectors/revision",
    ),
    (
        "value label of no axis value",
        lambda r: r.edit(MATRIX, lambda d: d.update(column_axis={"key": "tp", "value_labels": {"4": "TP4"}})),
        "selector-invalid",
        MATRIX,
        "/column_axis/value_labels/4",
    ),
    (
        "matrix selectors without the artifact of an artifact-bound revision",
        lambda r: r.edit(
            MATRIX,
            lambda d: (
                d["fixed_selectors"].pop("artifact_id"),
                d["cells"].pop("0:1"),
                d["cells"].update({"0:1": {"state": "missing"}}),
            ),
        ),
        "artifact-mismatch",
        MATRIX,
        "/fixed_selectors/revision",
    ),
    (
        "matrix selectors naming an artifact of another revision",
        lambda r: r.edit(MATRIX, lambda d: d["fixed_selectors"].update(artifact_id="art-b")),
        "artifact-mismatch",
        MATRIX,
        "/fixed_selectors/artifact_id",
    ),
    (
        "matrix selectors naming an unknown artifact",
        lambda r: r.edit(MATRIX, lambda d: d["fixed_selectors"].update(artifact_id="art-z")),
        "dangling-reference",
        MATRIX,
        "/fixed_selectors/artifact_id",
    ),
    (
        "cell linking a packet of another card count",
        lambda r: r.edit(MATRIX, lambda d: d["cells"]["0:2"].update(packet_id="pkt")),
        "sideways-promotion",
        MATRIX,
        "/cells/0:2/packet_id",
    ),
    (
        "cell linking a packet of another runtime build",
        lambda r: (
            r.edit(PACKET, lambda d: d.update(runtime="vLLM 0.10"))
            or r.edit(MATRIX, lambda d: d["fixed_selectors"].update(runtime="vLLM 0.9"))
        ),
        "sideways-promotion",
        MATRIX,
        "/cells/0:1/packet_id",
    ),
    (
        "estimated cell showing an estimate of another scope",
        lambda r: (
            r.put(ESTIMATE, estimate()),
            r.edit(MATRIX, lambda d: d["cells"].update({"0:2": {"state": "estimated", "estimate_id": "est-1"}})),
        ),
        "sideways-promotion",
        MATRIX,
        "/cells/0:2/estimate_id",
    ),
    (
        "quarantined cell without evidence",
        lambda r: r.edit(
            MATRIX, lambda d: d["cells"].update({"0:2": {"state": "quarantined", "label": "failed gate"}})
        ),
        "cell-evidence-invalid",
        MATRIX,
        "/cells/0:2/state",
    ),
    (
        "estimated cell also citing a run",
        lambda r: (
            r.put(ESTIMATE, estimate(selectors=BOUND | {"natural_eos": True, "mtp": 0, "tp": 2})),
            r.edit(
                MATRIX,
                lambda d: d["cells"].update(
                    {"0:2": {"state": "estimated", "estimate_id": "est-1", "evidence_id": "run-1"}}
                ),
            ),
        ),
        "cell-evidence-invalid",
        MATRIX,
        "/cells/0:2/evidence_id",
    ),
    (
        "point_x without a measurement",
        lambda r: r.edit(MATRIX, lambda d: d["cells"]["0:2"].update(point_x=0)),
        "cell-evidence-invalid",
        MATRIX,
        "/cells/0:2/point_x",
    ),
    (
        "point_x of another cell's context",
        lambda r: r.put(
            CONTEXT,
            context_matrix() | {"cells": context_matrix()["cells"] | {"8192:1": context_matrix()["cells"]["0:1"]}},
        ),
        "cell-point-unbound",
        CONTEXT,
        "/cells/8192:1/point_x",
    ),
    (
        "point label typed, not derived",
        lambda r: r.put(
            CONTEXT,
            context_matrix()
            | {"cells": context_matrix()["cells"] | {"8192:1": context_matrix()["cells"]["8192:1"] | {"label": "D99"}}},
        ),
        "cell-point-unbound",
        CONTEXT,
        "/cells/8192:1/label",
    ),
    (
        "contract rule with a field no cell has",
        lambda r: r.put(
            CONTRACT, contract() | {"rules": [contract()["rules"][0] | {"stat": "closed"}, contract()["rules"][1]]}
        ),
        "contract-rule-invalid",
        CONTRACT,
        "/rules/0/stat",
    ),
    (
        "contract rule matching outside its axis",
        lambda r: r.put(
            CONTRACT,
            contract() | {"rules": [*contract()["rules"], {"id": "tp3", "match": {"tp": 3}, "state": "closed"}]},
        ),
        "contract-rule-invalid",
        CONTRACT,
        "/rules/2/match/tp",
    ),
    (
        "contract rule id repeated",
        lambda r: r.put(
            CONTRACT, contract() | {"rules": [contract()["rules"][0], contract()["rules"][1] | {"id": "all"}]}
        ),
        "contract-rule-invalid",
        CONTRACT,
        "/rules/1/id",
    ),
    (
        "contract retry without a status",
        lambda r: r.put(
            CONTRACT,
            contract() | {"rules": [contract()["rules"][0] | {"retry": {"after": "fix"}}, contract()["rules"][1]]},
        ),
        "contract-rule-invalid",
        CONTRACT,
        "/rules/0/retry",
    ),
    (
        "contract with empty fixed selectors",
        lambda r: r.put(CONTRACT, contract() | {"fixed_selectors": {}}),
        "selector-invalid",
        CONTRACT,
        "/fixed_selectors",
    ),
    (
        "contract axis value '*'",
        lambda r: r.put(CONTRACT, contract() | {"axes": [{"key": "tp", "label": "TP", "values": [1, "*"]}]}),
        "selector-invalid",
        CONTRACT,
        "/axes/0/values/1",
    ),
    (
        "contract speculator of another revision",
        lambda r: r.put(CONTRACT, contract() | {"fixed_selectors": BOUND | {"speculator_artifact_id": "art-b"}}),
        "speculator-mismatch",
        CONTRACT,
        "/fixed_selectors/speculator_artifact_id",
    ),
    (
        "contract speculator that is a target artifact",
        lambda r: r.put(CONTRACT, contract() | {"fixed_selectors": BOUND | {"speculator_artifact_id": "art-a"}}),
        "speculator-mismatch",
        CONTRACT,
        "/fixed_selectors/speculator_artifact_id",
    ),
    (
        "contract cell linking a packet of another card count",
        lambda r: r.put(
            CONTRACT, contract() | {"rules": [contract()["rules"][0], contract()["rules"][1] | {"match": {"tp": 2}}]}
        ),
        "sideways-promotion",
        CONTRACT,
        "/rules/1/packet_id",
    ),
    (
        "contract quarantined cell without evidence",
        lambda r: r.put(CONTRACT, contract() | {"rules": [contract()["rules"][0] | {"state": "quarantined"}]}),
        "cell-evidence-invalid",
        CONTRACT,
        "/rules/0/state",
    ),
    (
        "lab family: collapse flag not a boolean",
        lambda r: r.edit(FAMILY, lambda d: d.update(format=LAB_FORMAT, collapse_coverage_contracts="yes")),
        "lab-format-field",
        FAMILY,
        "/collapse_coverage_contracts",
    ),
    (
        "lab family: packets without a primary packet",
        lambda r: r.edit(FAMILY, lambda d: (d.update(format=LAB_FORMAT), d.pop("primary_packet_id"))),
        "lab-format-field",
        FAMILY,
        "",
    ),
    (
        "lab family: packet without a manifest",
        lambda r: (lab_format(r), r.edit(PACKET, lambda d: d.pop("manifest"))),
        "lab-format-field",
        PACKET,
        "",
    ),
    (
        "lab family: profile_id not a string",
        lambda r: (lab_format(r), r.edit(RUN, lambda d: d.update(profile_id=3))),
        "lab-format-field",
        RUN,
        "/profile_id",
    ),
    (
        "lab family: contract axis without a label",
        lambda r: (lab_format(r), r.put(CONTRACT, contract() | {"axes": [{"key": "tp", "values": [1, 2]}]})),
        "lab-format-field",
        CONTRACT,
        "/axes/0",
    ),
    (
        "model variant repeating a revision id (the family-ids rule)",
        lambda r: r.edit(
            FAMILY,
            lambda d: d.update(format=LAB_FORMAT, model_variants=[SIBLING]),
        ),
        "duplicate-id",
        FAMILY,
        "/model_variants/0/id",
    ),
    (
        "external evidence path with a bidi character",
        lambda r: (
            r.edit(FAMILY, lambda d: d.update(sources={"neural-download": {"repository": "https://example.org/lab"}}))
            or r.edit(RUN, lambda d: d.update(evidence="neural-download:data/run\u202ejson.txt"))
        ),
        "path-unsafe",
        RUN,
        "/evidence",
    ),
    # lab checks our earlier rules already cover (kept here so the table of lab checks stays tested)
    (
        "estimate record outside the repository",
        lambda r: r.put(ESTIMATE, estimate(record="../outside.json")),
        "evidence-escape",
        ESTIMATE,
        "/record",
    ),
    (
        "artifact without its label",
        lambda r: r.edit(FAMILY, lambda d: d["weight_revisions"][0]["quantized_artifacts"][0].pop("label")),
        "schema",
        FAMILY,
        "/weight_revisions/0/quantized_artifacts/0",
    ),
    (
        "estimated cell without an estimate",
        lambda r: r.edit(MATRIX, lambda d: d["cells"].update({"0:2": {"state": "estimated"}})),
        "state-mismatch",
        MATRIX,
        "/cells/0:2/state",
    ),
]


@pytest.mark.parametrize(("edit", "code", "file", "pointer"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_planted_lab_defect_is_found(reg: Reg, edit: Edit, code: str, file: str, pointer: str) -> None:
    edit(reg)
    found = only(reg.findings(), code)
    assert (file, pointer) in {(f.file, f.pointer) for f in found}, [
        (f.code, f.file, f.pointer, f.message) for f in reg.findings()
    ]
    assert all(f.message and f.hint for f in found)


def test_passing_variants(reg: Reg) -> None:
    """The nearest correct form of each planted defect raises nothing."""
    reg.edit(
        RUN,
        lambda d: d.update(
            sample_annotations=[{"metric": "decode_tok_s", "index": 1, "label": "warm", "value": 30.25}]
        ),
    )
    reg.edit(FAMILY, lambda d: d.update(initial_view_ids=["tp-view"], record_order={"views": ["tp-view"]}))
    reg.edit(
        PACKET,
        lambda d: d.update(
            projection={"model": "m", "quant": "q", "runtime": "r", "prompt_tokens": 66, "output_tokens": 128}
        ),
    )
    reg.put(ESTIMATE, estimate(selectors=BOUND | {"natural_eos": True, "mtp": 0, "tp": 2}))
    reg.edit(MATRIX, lambda d: d["cells"].update({"0:2": {"state": "estimated", "estimate_id": "est-1"}}))
    reg.edit(MATRIX, lambda d: d.update(column_axis={"key": "tp", "label": "TP", "value_labels": {"1": "one card"}}))
    reg.put(CONTEXT, context_matrix())  # labels cite the point's values
    reg.put(CONTRACT, contract() | {"fixed_selectors": BOUND | {"speculator_artifact_id": "art-s"}})
    reg.edit(
        FAMILY,
        lambda d: d["weight_revisions"][0]["quantized_artifacts"].append(
            {
                "id": "art-s",
                "label": "draft",
                "quantization": "Q8",
                "repository": "org/d",
                "evidence": EVIDENCE,
                "revision_status": "n/a",
                "role": "speculator",
            }
        ),
    )
    reg.edit(
        FAMILY,
        lambda d: d.update(
            format=LAB_FORMAT,
            collapse_coverage_contracts=True,
            model_variants=[{**SIBLING, "id": "rev-c"}],
        ),
    )
    assert reg.findings() == []


def test_package_backed_packets(reg: Reg) -> None:
    """A packet whose manifest is a package's: the manifest's id is the packet's, and it carries no featured_metric."""
    reg.put("packages/pkt/package.json", {"id": "pkt"})
    reg.edit(PACKET, lambda d: d.update(manifest="packages/pkt/package.json"))
    assert reg.findings() == []
    reg.put("packages/pkt/package.json", {"id": "pkt-tp2"})
    fm = {"metric": "decode_tok_s", "measurement_id": "run-1", "sample_index": 0, "value": 30.21, "unit": "tok/s"}
    reg.edit(
        PACKET,
        lambda d: d.update(
            featured_metric=fm | {"workload": "12 cold prompts, 512 output tokens", "evidence": EVIDENCE}
        ),
    )
    assert hits(reg, "package-id-mismatch") == {(PACKET, "/manifest")}
    assert hits(reg, "featured-on-package") == {(PACKET, "/featured_metric")}


@pytest.mark.slow
def test_the_real_records_raise_no_lab_finding_and_a_planted_label_is_caught(tmp_path: Path) -> None:
    """The real lab data (point cells with cited labels, contracts with packets) passes every lab check; a
    typed label in one of its context cells is caught with the label the point derives."""
    lab = Lab(tmp_path / "lab")
    assert lab.blocking() == []
    cov = f"{Q}/coverage/q38-q4km-q8-context-by-tp.json"
    lab.edit(cov, lambda d: d["cells"]["8192:1"].update(label="D25"))
    [f] = [f for f in lab.blocking() if f.code == "cell-point-unbound"]
    assert (f.file, f.pointer) == (cov, "/cells/8192:1/label") and "'D25'" in f.message and "· P" in f.message


def test_a_byte_identical_duplicate_in_a_lab_manifest_is_imported_and_reported(empty_repo: Path) -> None:
    view = {"id": "v", "metrics": ["decode_tok_s"], "series": [{"label": "a", "measurement_ids": ["run-a"]}]}
    run = {
        "id": "run-a",
        "state": "lab-measured",
        "revision": "rev-a",
        "evidence": "https://example.org/run.json",
        "metrics": {"decode_tok_s": [30.0]},
    }
    manifest = {
        "format": LAB_FORMAT,
        "id": "mini",
        "name": "Mini",
        "weight_revisions": [{"id": "rev-a", "label": "Qwen3.8-27B"}],
        "run_measurements": [run],
        "views": [view, view],
    }
    (empty_repo / "mini.json").write_text(json.dumps(manifest), "utf-8")
    evreg("import", "neural-download", "mini.json", cwd=empty_repo)
    findings = json.loads(evreg("validate", "--format", "json", "--no-cache", cwd=empty_repo).stdout)["findings"]
    assert [(f["code"], f["pointer"]) for f in findings] == [("record-listed-twice", "/record_order/views/1")]


@pytest.mark.parametrize(("key", "theirs", "mixed"), [("profile_id", "p-2", True), ("profile_id", "p-1", False)])
def test_a_joined_curve_keeps_the_labs_identity_keys_too(reg: Reg, key: str, theirs: str, mixed: bool) -> None:
    """The lab's curve identity also holds profile, variant, runtime family and identity fields fixed."""
    reg.edit(RUN, lambda d: d.update({key: "p-1"}))
    other = reg.read(RUN) | {"id": "run-2", "config": {"tp": 2, "mtp": 0, "natural_eos": True}, key: theirs}
    reg.put(f"{F}/measurements/run-2.json", other)
    reg.edit(VIEW, lambda d: d["series"][0]["measurement_ids"].append("run-2"))
    expected = {(VIEW, "/series/0/measurement_ids/1")} if mixed else set()
    assert hits(reg, "curve-identity-mixed") == expected


def test_other_labs_chart_and_sweep_their_own_metrics(reg: Reg) -> None:
    """Outside the lab's format a view or a point may use a metric the vocabulary does not define."""
    reg.edit(SWEEP, lambda d: d["points"][1].update(kld_mean=0.01) or d["points"][1].pop("decode_tok_s"))
    reg.edit(VIEW, lambda d: d.update(metrics=["decode_tok_s", "kld_mean"]))
    assert only(reg.findings(), "metric-unknown") == []
