"""Model identity: the vocabulary gives each repository one model; a revision names its model, and what it and its
artifacts state agrees with the model's entry."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from evreg.core import vocab
from evreg.core.layout import ID_PATTERN
from helpers import QWEN36_COMMIT, QWEN38_COMMIT, F, Reg, only

FAMILY = f"{F}/family.json"
SIX = "Qwen/Qwen3.6-27B"


def test_the_vocabulary_gives_every_repository_and_name_one_model() -> None:
    repositories: Counter[str] = Counter()
    names: Counter[str] = Counter()
    for mid, spec in vocab.models().items():
        assert re.fullmatch(ID_PATTERN, mid), mid
        assert spec["name"] and spec.get("publisher"), mid
        for commit in spec.get("commits", []):
            assert re.fullmatch(r"[0-9a-f]{40}", commit), (mid, commit)
        assert not spec.get("commits") or spec.get("repository"), f"{mid}: commits of no repository"
        repositories.update(
            {vocab.repository_key(r) for r in [spec.get("repository"), *spec.get("derivatives", [])] if r}
        )
        names.update({vocab.model_key(n) for n in [mid, spec["name"], *spec.get("names", [])]})
    assert [k for k, n in repositories.items() if n > 1] == []
    assert [k for k, n in names.items() if n > 1] == []


def test_what_a_model_page_prints_from_the_vocabulary_holds_no_figure() -> None:
    """A model's name, publisher and names are printed on its page: like record text, none may be a figure (the
    build refuses one, so validate clean could not build)."""
    from evreg.claims import figures

    shown = [t for spec in vocab.models().values() for t in (spec["name"], spec["publisher"], *spec.get("names", []))]
    assert [t for t in shown if figures.find_figures(t)] == []


def test_the_vocabulary_reads_the_spellings_a_file_states() -> None:
    assert vocab.model_for("Qwen/Qwen3.8-27B-FP8") == "qwen3.8-27b"  # a derivative repository
    assert vocab.model_for("/models/unsloth/Qwen3.8-27B-GGUF") == "qwen3.8-27b"  # a path ending in one
    assert vocab.model_for("qwen3.8 27b") == "qwen3.8-27b"  # a lab's spelling, any case and separator
    assert vocab.model_for(None, "", "Qwen3.6-27B") == "qwen3.6-27b"  # the first statement it knows
    assert vocab.model_for("Qwen3.8-27B-NVFP4-experimental") is None  # never a prefix or a guess
    assert vocab.model_of_repository("Qwen3.8 27B") is None  # a name is not a repository
    assert vocab.model_of_repository("https://huggingface.co/Qwen/Qwen3.6-27B/") == ("qwen3.6-27b", "repository")
    assert vocab.model_of_repository("Unsloth-Qwen3.6/27B_GGUF") is None  # another owner, however it is folded


def _rev(d: dict[str, Any], **fields: Any) -> None:
    d["weight_revisions"][0].update(fields)


@pytest.mark.parametrize(
    ("edit", "code", "pointer"),
    [
        (lambda d: d["weight_revisions"][0].pop("model"), "model-missing", "/weight_revisions/0"),
        (lambda d: _rev(d, model="qwen9-1b"), "model-unknown", "/weight_revisions/0/model"),
        # the repository is another model's upstream, or derivative
        (lambda d: _rev(d, repository="Qwen/Qwen3.6-27B"), "model-contradicted", "/weight_revisions/0/repository"),
        (
            lambda d: _rev(d, repository="unsloth/Qwen3.6-27B-GGUF"),
            "model-contradicted",
            "/weight_revisions/0/repository",
        ),
        # the upstream commit of another model, and one the entry does not list
        (lambda d: _rev(d, revision=QWEN36_COMMIT), "model-contradicted", "/weight_revisions/0/revision"),
        (lambda d: _rev(d, revision="e" * 40), "model-unlisted", "/weight_revisions/0/revision"),
        # the repository is unknown; so is an artifact's
        (lambda d: _rev(d, repository="someone/Qwen3.8-27B-copy"), "model-unlisted", "/weight_revisions/0/repository"),
        (
            lambda d: d["weight_revisions"][0]["quantized_artifacts"][0].update(repository="x/Qwen3.8-27B-GGUF"),
            "model-unlisted",
            "/weight_revisions/0/quantized_artifacts/0/repository",
        ),
        (
            lambda d: d["weight_revisions"][0]["quantized_artifacts"][0].update(repository="unsloth/Qwen3.6-27B-GGUF"),
            "model-contradicted",
            "/weight_revisions/0/quantized_artifacts/0/repository",
        ),
        # a sibling in model_variants is checked the same way
        (
            lambda d: d.update(
                model_variants=[{"id": "sib", "model": "qwen3.8-27b", "repository": "Qwen/Qwen3.6-27B"}]
            ),
            "model-contradicted",
            "/model_variants/0/repository",
        ),
        (lambda d: d.update(model_variants=[{"id": "sib"}]), "model-missing", "/model_variants/0"),
        # a revision that states nothing the vocabulary knows as its model, or a label of another model
        (
            lambda d: d.update(model_variants=[{"id": "phi4-alt", "label": "Phi-4 re-run", "model": "qwen3.8-27b"}]),
            "model-untied",
            "/model_variants/0/model",
        ),
        (
            lambda d: _rev(d, label="Qwen3.6 27B"),
            "model-contradicted",
            "/weight_revisions/0/label",
        ),
        (
            lambda d: _rev(d, repository="https://huggingface.co/Qwen/Qwen3.6-27B"),
            "model-contradicted",
            "/weight_revisions/0/repository",
        ),
    ],
)
def test_a_revision_that_contradicts_or_lacks_its_model_is_a_finding(
    reg: Reg, edit: Any, code: str, pointer: str
) -> None:
    assert reg.findings() == []
    reg.edit(FAMILY, edit)
    hits = only(reg.findings(), code)
    assert [(f.file, f.pointer) for f in hits] == [(FAMILY, pointer)], reg.findings()
    assert hits[0].hint


def test_a_speculator_artifact_is_another_model(reg: Reg) -> None:
    """A draft model for speculative decoding is other weights: its repository is not the revision's model's."""
    reg.edit(
        FAMILY,
        lambda d: d["weight_revisions"][0]["quantized_artifacts"].append(
            {
                "id": "draft",
                "label": "draft",
                "quantization": "Q8_0",
                "repository": "someone/tiny-draft",
                "revision_status": "n/a",
                "evidence": "https://example.org/draft",
                "role": "speculator",
            }
        ),
    )
    assert reg.findings() == []


def test_the_fixture_links_two_known_models_at_their_known_commits(reg: Reg) -> None:
    revisions = reg.read(FAMILY)["weight_revisions"]
    assert [(r["model"], r["revision"]) for r in revisions] == [
        ("qwen3.8-27b", QWEN38_COMMIT),
        ("qwen3.6-27b", QWEN36_COMMIT),
    ]


def test_the_real_families_of_one_model_meet() -> None:
    """The two labs' families of the same weights name one canonical model."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "packets"
    by_model: dict[str, set[str]] = {}
    for path in root.glob("*/family.json"):
        fam = json.loads(path.read_text("utf-8"))
        for key in ("weight_revisions", "model_variants"):
            for rev in fam.get(key) or []:
                if rev.get("model"):
                    by_model.setdefault(rev["model"], set()).add(fam["id"])
    assert by_model["qwen3.8-27b"] == {"qwen-27b", "qwen3-8-27b"}
    assert by_model["qwen3.6-35b-a3b"] == {"qwen-35b", "qwen3-6-35b-a3b"}
    assert by_model["nemotron-3.5-lightning-30b-a3b"] == {"nemotron-3-5", "nemotron-3-5-lightning-30b-a3b"}


RUN = f"{F}/pkt/measurements/run-1.json"


@pytest.mark.parametrize(
    ("fields", "pointer"),
    [
        ({"output_tokens": 128}, "/workload_fields/output_tokens"),  # the text says 512
        ({"output_end": "fixed"}, "/workload_fields/output_end"),  # the config says natural_eos
        ({"requests": 25}, "/workload_fields/requests"),  # the text says 12 cold prompts
    ],
)
def test_workload_fields_that_contradict_the_records_own_text_are_a_finding(
    reg: Reg, fields: dict[str, Any], pointer: str
) -> None:
    reg.edit(RUN, lambda d: d.update(workload_fields={"phase": "serving", **fields}))
    assert [f.pointer for f in only(reg.findings(), "workload-contradicted")] == [pointer]


def test_a_series_states_its_swept_field_only_along_its_axis(reg: Reg) -> None:
    sweep = f"{F}/measurements/sweep-1.json"
    reg.edit(sweep, lambda d: d.update(workload_fields={"phase": "serving", "context_depth": 0}))
    assert [f.pointer for f in only(reg.findings(), "workload-contradicted")] == ["/workload_fields/context_depth"]
