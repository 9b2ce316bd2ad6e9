"""Workload fields: read from what a file or text states (never guessed), classed into tiers, and told apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evreg.claims import workload, workload_text
from evreg.records.models import Workload

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "config", "expected"),
    [
        # the two labs' single-stream serving runs, as their records state them
        (
            "single request, 300 output tokens cut from a longer answer (no ignore_eos, so speculative decoding sees "
            "natural text), temperature 0, thinking disabled, idle server",
            {},
            {"phase": "serving", "output_tokens": 300, "output_end": "natural", "concurrency": 1, "sampling": "greedy"},
        ),
        (
            "One-slot vLLM OpenAI-compatible HTTP completions; exact submitted token depths; 128 returned token IDs; "
            "cache zero; conventional first-100 decode over 99 intervals",
            {},
            {"phase": "serving", "output_tokens": 128, "concurrency": 1},
        ),
        (
            "i128/o1024 per request, persistent raw-engine batching, 64 simultaneous users, temperature 0, two repeats",
            {"natural_eos": False},
            {
                "input_tokens": 128,
                "output_tokens": 1024,
                "output_end": "fixed",
                "concurrency": 64,
                "sampling": "greedy",
            },
        ),
        (
            "two strict natural-EOS replays; 25 unique cold prompts; up to 512 output tokens; cached_tokens=0",
            {},
            {"output_tokens": 512, "output_end": "natural", "requests": 25},
        ),
        ("700-word prompt, 256 output tokens, ignore_eos True", {}, {"output_tokens": 256, "output_end": "fixed"}),
        # what a text does not state stays unstated: a combined llama-bench test, words instead of tokens
        ("llama-bench pp2048 plus tg128 at each depth, five repetitions; raw-engine shape metric", {}, {}),
        ("Qwen3.6-35B-A3B, bf16 KV", {}, {}),
        ("12 unique cold prompts", {"parallel_slots": 2}, {"requests": 12}),
        ("twelve prompts at temperature 0.7", {"temperature": 0.7}, {}),
    ],
)
def test_a_text_gives_exactly_the_fields_it_states(text: str, config: dict, expected: dict) -> None:
    found = workload_text.fields(text, config)
    assert found == expected
    Workload.model_validate(found)  # every reading is a valid record field


def test_every_real_workload_text_reads_into_valid_fields() -> None:
    for path in sorted((REPO / "packets").rglob("measurements/*.json")):
        record = json.loads(path.read_text("utf-8"))
        fields = workload_text.fields(record.get("workload"), record.get("config"))
        Workload.model_validate(fields)
        if "workload_fields" in record and not str(record.get("evidence", "")).endswith("vllm-runs.json"):
            assert record["workload_fields"] == fields, path  # the stored reading is the text's


def test_classes_rank_like_with_like() -> None:
    serve = {"phase": "serving", "concurrency": 1, "input_tokens": 600, "output_end": "natural"}
    a = workload.class_of({"workload_fields": serve})
    assert a is not None
    assert a == workload.class_of({"workload_fields": {**serve, "input_tokens": 900}})  # one band
    assert a.label() == "end-to-end serving · context up to 1,024 tokens · single stream · natural end of output"
    assert a != workload.class_of({"workload_fields": {**serve, "input_tokens": 2048}})
    assert a != workload.class_of({"workload_fields": {**serve, "concurrency": 8}})
    assert a != workload.class_of({"workload_fields": {**serve, "output_end": "fixed"}})
    assert a != workload.class_of({"workload_fields": {k: v for k, v in serve.items() if k != "concurrency"}})
    assert workload.class_of({"workload_fields": {"concurrency": 1}}) is None  # no phase: no class
    # a series along context depth: each point's depth is its x
    sweep = {"axis": "active_context_tokens", "workload_fields": {"phase": "serving", "concurrency": 1}}
    near, far = workload.class_of(sweep, 512.0), workload.class_of(sweep, 32768.0)
    assert near is not None and far is not None and near.context != far.context


def test_stated_fields_read_in_words_and_an_offered_rate_is_a_setting() -> None:
    parts = workload.described({"phase": "serving", "input_tokens": 2048, "concurrency": 1, "request_rate": 2.0})
    assert parts == [
        ("phase serving", False),
        ("input 2,048 tokens", False),
        ("concurrency 1", False),
        ("rate 2 requests/s", True),
    ]


FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["prefill", "decode", "serving"]),
        "input_tokens": st.integers(0, 200_000),
        "context_depth": st.integers(0, 200_000),
        "concurrency": st.integers(1, 512),
        "output_end": st.sampled_from(["fixed", "natural"]),
    },
)


@given(FIELDS, FIELDS)
def test_one_class_means_no_class_field_differs(a: dict, b: dict) -> None:
    ca, cb = workload.class_of({"workload_fields": a}), workload.class_of({"workload_fields": b})
    if ca is not None and ca == cb:
        assert a.get("phase") == b.get("phase") and a.get("output_end") == b.get("output_end")
        assert workload.load(a) == workload.load(b)
    if a == b:
        assert ca == cb


def test_a_length_with_its_spread_is_not_read_as_its_spread() -> None:
    """``150±0 output tokens`` states a mean and a spread: neither is read as the output length ``0``."""
    from evreg.claims import workload_text

    assert workload_text.fields("150±0 output tokens", {}) == {}
    assert workload_text.fields("a 1/128 output tokens split", {}) == {}
    assert workload_text.fields("up to 128 output tokens", {})["output_tokens"] == 128
