"""A headline is a statistic of its repeats: ``statistic: median`` states the median of the run's samples, copied
exactly, and binds nothing else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import EVIDENCE, F, Reg, evreg, only

PACKET = f"{F}/pkt/packet.json"
RUN = f"{F}/pkt/measurements/run-1.json"


def _headline(**fields: Any) -> dict[str, Any]:
    return {
        "metric": "decode_tok_s",
        "measurement_id": "run-1",
        "statistic": "median",
        "value": 30.23,  # the median of 30.21 and 30.25
        "unit": "tok/s",
        "workload": "12 cold prompts, 512 output tokens",
        "evidence": EVIDENCE,
    } | fields


def test_the_median_of_the_runs_samples_is_a_headline(reg: Reg) -> None:
    reg.edit(PACKET, lambda d: d.update(featured_metric=_headline()))
    assert reg.findings() == []


@pytest.mark.parametrize(
    ("fields", "code", "pointer"),
    [
        ({"value": 30.25}, "featured-mismatch", "/featured_metric/value"),  # a sample is not the median
        ({"sample_index": 0}, "featured-unbound", "/featured_metric/statistic"),  # both at once
        ({"measurement_id": "sweep-1"}, "featured-unbound", "/featured_metric/statistic"),  # a series has no repeats
    ],
)
def test_a_median_headline_that_misstates_or_overbinds_is_a_finding(
    reg: Reg, fields: dict[str, Any], code: str, pointer: str
) -> None:
    reg.edit(PACKET, lambda d: d.update(featured_metric=_headline(**fields)))
    assert (PACKET, pointer) in [(f.file, f.pointer) for f in only(reg.findings(), code)]


def test_feature_makes_the_median_by_default_and_one_sample_on_request(reg: Reg) -> None:
    reg.edit(RUN, lambda d: d["metrics"].update(decode_tok_s=[30.21, 29.0, 30.25]))
    reg.commit("three repeats")
    done = evreg("feature", "fam/pkt", "run-1", "decode_tok_s", cwd=reg.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the median of run-1.decode_tok_s" in done.stdout
    fm = json.loads((reg.root / PACKET).read_text())["featured_metric"]
    assert fm["statistic"] == "median" and fm["value"] == 30.21 and "sample_index" not in fm
    one = evreg("feature", "fam/pkt", "run-1", "decode_tok_s", "--sample", "1", cwd=reg.root)
    assert one.returncode == 0
    fm = json.loads((reg.root / PACKET).read_text())["featured_metric"]
    assert fm["sample_index"] == 1 and fm["value"] == 29.0 and "statistic" not in fm


def test_a_median_in_prose_is_checked_and_catalogued_as_the_median(reg: Reg) -> None:
    """``{{ median:m:ID.METRIC }}`` resolves to the median of the run's samples everywhere: validation, the catalog's
    citations and headlines."""
    reg.edit(PACKET, lambda d: d.update(caveat="Decode {{ median:m:run-1.decode_tok_s }} at the median."))
    reg.edit(PACKET, lambda d: d.update(featured_metric=_headline()))
    assert reg.findings() == []
    reg.commit("a median in prose and as the headline")
    cited = evreg(
        "query", "SELECT selector, value, text FROM citations WHERE field = '/caveat'", "--format", "json", cwd=reg.root
    )
    assert cited.returncode == 0, cited.stderr
    assert json.loads(cited.stdout) == [{"selector": "[median]", "value": 30.23, "text": "30.23 tok/s"}]
    heads = evreg("query", "SELECT value, unit, statistic FROM headlines", "--format", "json", cwd=reg.root)
    assert json.loads(heads.stdout) == [{"value": 30.23, "unit": "tok/s", "statistic": "median"}]
    reg.edit(PACKET, lambda d: d.update(caveat="Decode {{ median:m:sweep-1.decode_tok_s }}."))  # a series: no repeats
    assert [f.code for f in reg.findings()] == ["citation-unresolved"]


def test_a_headline_label_names_the_scope_of_the_run_it_cites() -> None:
    """The real hero of qwen-27b is labelled as its run (AutoRound INT4, TP4); relabelled as another topology,
    quantization or model, it names another run's scope."""
    import json

    from evreg_rules.featured import label_scope
    from helpers import REPO

    family = json.loads((REPO / "packets/qwen-27b/family.json").read_text())
    hero = next(r for r in family["featured_results"] if r["role"] == "hero")
    [path] = (REPO / "packets/qwen-27b").rglob(f"{hero['measurement_id']}.json")
    run = json.loads(path.read_text())
    rev = next(r for r in family["weight_revisions"] if r["id"] == run["revision"])
    art = next(a for a in rev["quantized_artifacts"] if a["id"] == run["artifact_id"])
    assert label_scope(hero["label"], run, rev, art) == []
    assert label_scope("Qwen3.8 AutoRound INT4 · TP1 graph overlay", run, rev, art)  # the run is TP4
    assert label_scope("Qwen3.8 NVFP4 · TP4 graph overlay", run, rev, art)  # the run is AutoRound INT4
    assert label_scope("Qwen3.6-27B AutoRound INT4 · TP4", run, rev, art)  # another model the vocabulary knows
    assert label_scope("8x B70, AutoRound INT4", run, rev, art)  # four cards, not eight
    assert label_scope("AutoRound INT4 on 4 cards · TP4", run, rev, art) == []
