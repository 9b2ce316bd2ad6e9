"""A reader compares one model across labs: two labs' families of one canonical model meet on its page, results of
one workload class are ranked, other classes are shown apart with the difference named, and two sources measuring
one setup are a replication that agrees or disagrees."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser

from helpers import REPO, REV_A, F, Reg, evreg

SERVE = {"phase": "serving", "concurrency": 1, "input_tokens": 600, "output_end": "natural"}


def _run(mid: str, values: list[float], **fields: Any) -> dict[str, Any]:
    return {
        "kind": "run-measurement",
        "id": mid,
        "state": "lab-measured",
        "revision": REV_A,
        "artifact_id": "art-a",
        "quantization": "INT4",
        "runtime": "vLLM 0.9",
        "runtime_family": "vLLM",
        "hardware": "NVIDIA H100 80GB HBM3",
        "config": {"tp": 1, "cards": 1},
        "workload": "one request at a time",
        "workload_fields": SERVE,
        "metrics": {"decode_tok_s": values},
        **fields,
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("two-labs")
    reg = Reg(root)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO / "site", root / "site")
    # lab one files its runs with evidence in the registry
    for mid, values, extra in (
        ("one-h100", [30.0, 31.0, 32.0], {}),
        ("one-h100-ttft", [20.0, 20.5, 21.0], {"metrics": {"ttft_ms": [20.0, 20.5, 21.0]}}),
        ("one-h100-long", [25.0, 25.5, 26.0], {"workload_fields": {**SERVE, "input_tokens": 9000}}),
        ("one-l40", [18.0, 18.5, 19.0], {"hardware": "NVIDIA L40S"}),
        ("one-a100", [30.9, 31.0, 31.1], {"hardware": "NVIDIA A100 80GB"}),  # ties the H100 setup's best
    ):
        record = _run(mid, values, **extra)
        data = (json.dumps(record["metrics"]) + "\n").encode()
        evidence = f"{F}/evidence/{mid}.json"
        reg.raw(evidence, data)
        digest = {evidence: hashlib.sha256(data).hexdigest()}
        reg.put(f"{F}/measurements/{mid}.json", record | {"evidence": evidence, "evidence_sha256": digest})
    # lab two, another family of the same weights, reads its evidence from its own repository
    reg.put(
        "packets/other/family.json",
        {
            "kind": "family",
            "id": "other",
            "name": "Other lab's Qwen3.8",
            "sources": {"lab2": {"repository": "https://github.com/example/lab2", "commit": "1" * 40}},
            "weight_revisions": [
                {
                    "id": REV_A,
                    "model": "qwen3.8-27b",
                    "label": "Qwen3.8-27B",
                    "repository": "Qwen/Qwen3.8-27B",
                    "revision_status": "not recorded by the lab",
                    "quantized_artifacts": [
                        {
                            "id": "art-a",
                            "label": "INT4",
                            "quantization": "INT4",
                            "repository": "Inferact/Qwen3.8-27B-NVFP4",
                            "revision_status": "not recorded",
                            "evidence": "lab2:artifact.json",
                        }
                    ],
                }
            ],
        },
    )
    for mid, values, extra in (
        ("two-h100", [30.8, 31.2, 31.6], {"hardware": "H100 80GB"}),  # overlaps lab one's: they agree
        ("two-l40", [24.0, 24.5, 25.0], {"hardware": "L40S"}),  # far above lab one's: they disagree
    ):
        reg.put(f"packets/other/measurements/{mid}.json", _run(mid, values, evidence=f"lab2:{mid}.json", **extra))
    reg.commit("two labs, one model")
    built = evreg("build", cwd=root)
    assert built.returncode == 0, built.stdout + built.stderr
    return root / "build/site"


def _text(html: Path) -> str:
    article = LexborHTMLParser(html.read_text("utf-8")).css_first("article")
    assert article is not None
    return re.sub(r"\s+", " ", article.text(separator=" "))


def test_two_labs_families_of_one_model_meet_on_its_page(site: Path) -> None:
    text = _text(site / "models/qwen3-8-27b/index.html")
    assert "Fixture family" in text and "Other lab's Qwen3.8" in text
    assert "lab example/lab2" in text and "contributor Test Author" in text
    models = _text(site / "models/index.html")
    assert re.search(r"Qwen3\.8-27B Qwen fam , other 9 2\b", models)  # measurements, sources
    assert re.search(r"Qwen3\.6-27B Qwen fam 0 0\b", models)  # named by a revision, not measured yet


def test_one_class_is_ranked_and_another_is_shown_apart_with_the_difference(site: Path) -> None:
    page = LexborHTMLParser((site / "models/qwen3-8-27b/index.html").read_text("utf-8"))
    text = _text(site / "models/qwen3-8-27b/index.html")
    short = "end-to-end serving · context up to 1,024 tokens · single stream · natural end of output"
    long = "end-to-end serving · context 8,193" not in text  # the bands are fixed tiers
    assert long
    assert f"Workload: {short}" in text
    assert "Not ranked against the first workload: context up to 1,024 tokens vs context 4,097–16,384 tokens" in text
    # within the short class: the two H100 setups' results share one setup row; L40S ranks apart by value
    tables = page.css("article table")
    ranked = next(t for t in tables if "Rank" in t.text() and "H100" in t.text())
    ranks = [re.sub(r"\s+", " ", tr.text(separator=" ")).strip() for tr in ranked.css("tbody tr")]
    assert [r.split(" ")[:2] for r in ranks[:2]] == [["1", "tied"], ["1", "tied"]]  # spreads that overlap share a rank
    assert {"H100" in ranks[0] or "H100" in ranks[1], "A100" in ranks[0] or "A100" in ranks[1]} == {True}
    assert ranks[2].startswith("3") and "L40S" in ranks[2]  # competition ranking: 1, 1, 3
    # the setup table names a setup nobody measured in a class as a gap
    assert "not measured" in text


def test_two_sources_of_one_setup_are_a_replication_that_agrees_or_disagrees(site: Path) -> None:
    text = _text(site / "replications/index.html")
    assert re.search(r"H100 80GB · vLLM · INT4 · 1 card .* \bagree ?: their spreads overlap", text)
    assert re.search(r"L40S .* disagree ?: their spreads do not overlap; the values are \+32\.4% apart", text)
    model = _text(site / "models/qwen3-8-27b/index.html")
    assert "Replications" in model and "agree" in model


def test_different_metrics_and_models_are_never_ranked_together(site: Path) -> None:
    text = _text(site / "models/qwen3-8-27b/index.html")
    decode = text.split("Time to first token")[0] if "Time to first token" in text else text
    assert "20.00 ms" not in decode  # a latency never sits in the decode ranking


def test_a_measurement_page_states_its_workload_fields_in_words(site: Path) -> None:
    text = _text(site / "families/fam/measurements/index.html")
    assert "workload_fields phase serving · input 600 tokens · output end natural · concurrency 1" in text
    assert "Other stored fields" not in text.split("one-h100")[1].split("Measurement")[0]
