"""Scope comparisons (``evreg.claims.scope``, ``evreg.claims.runtimes``): one runtime identity however it is
written, an engine-only claim against builds and forks, spellings of one hardware part, one quantization, and the
accelerators a run's parallel layout takes."""

from __future__ import annotations

from typing import Any

import pytest

from evreg.claims.runtimes import runtime_matches
from evreg.claims.scope import differing, same_hardware

# -- runtime identity --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claimed", "measured", "same"),
    [
        # one build written two ways (the lab's own records)
        (
            "llama.cpp SYCL 9976 (e3546c794) + preserved local stack",
            "llama.cpp SYCL e3546c794 + preserved local stack",
            True,
        ),
        ("llama.cpp SYCL 15586e2d", "llama.cpp SYCL 15586e2d7165570fb3aa7c26e0d442e289ef69de", True),
        ("llama.cpp b5163 (8cf427ff)", "LLAMA.CPP  8cf427ff", True),
        ("vLLM 0.28.0", "vLLM 0.28.0", True),
        # a claim naming only the engine covers every build of it, not a build with something added
        ("vLLM XPU", "vLLM XPU 0.20.1", True),
        ("vLLM XPU", "vLLM XPU 0.20.1 + local fallback patch", False),
        ("llama.cpp SYCL", "llama.cpp SYCL 9fee29e plus lab patch", False),
        # a date is a version: the words after it are the build's identity
        ("vLLM XPU 2026-06 strict program", "vLLM XPU 2026-06 strict program", True),
        ("vLLM XPU 2026-06 strict program", "vLLM XPU 2026-06 strict program v2", False),
        ("vLLM XPU 2026-06 strict program", "vLLM XPU 2026-07 strict program", False),
        # not the same build
        ("vLLM 0.28.0 + unmerged fork", "vLLM 0.28.0", False),
        ("vLLM 0.28.0", "vLLM 0.28.1", False),
        ("llama.cpp SYCL 9976 (e3546c794)", "llama.cpp SYCL 9977 (e3546c794)", True),  # the commit decides
        ("llama.cpp SYCL e3546c794", "llama.cpp SYCL e3546c795", False),
        ("vLLM XPU nightly a3561ef8 stock", "vLLM XPU nightly a3561ef8 + TP2 historical-winner overlay", False),
        ("llama.cpp SYCL 9976", "llama.cpp SYCL e3546c794", False),  # nothing comparable on both sides
        ("llama.cpp SYCL graph port", "llama.cpp SYCL fa0f3b25a47f346858a4d0d169f5181aa424b110", False),
        ("vLLM", "vLLM XPU 0.20.1", True),
        ("vLLM XPU", "vLLM 0.28.0", False),
    ],
)
def test_runtime_identity_is_parsed(claimed: str, measured: str, same: bool) -> None:
    from evreg.claims.scope import runtime_matches

    assert runtime_matches(claimed, {"runtime": measured}) is same


def test_more_words_are_another_runtime() -> None:
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": "vLLM XPU 2026-06 strict program v2"})
    assert not runtime_matches("llama.cpp SYCL", {"runtime": "llama.cpp SYCL 9fee29e plus lab patch"})


@pytest.mark.parametrize("runtime", ["vLLM XPU 0.11.0", "vllm  xpu v0.11.1", "vLLM XPU a3561ef8", "vLLM XPU b1275"])
def test_an_engine_only_claim_covers_every_build_of_it(runtime: str) -> None:
    assert runtime_matches("vLLM XPU", {"runtime": runtime})


def test_an_engine_only_claim_and_a_fork_word() -> None:
    assert not runtime_matches("vLLM XPU", {"runtime": "vLLM XPU fork"})
    assert not runtime_matches("vLLM", {"runtime": "vLLM patched 0.11.0"})
    assert runtime_matches("vLLM XPU", {"runtime": "vLLM XPU nightly a3561ef8"})  # a channel, not a change


@pytest.mark.parametrize(
    "runtime", ["vLLM 0.11.0+fork", "vLLM 0.11.0 (patched)", "vLLM 0.11.0-fork", "vLLM 0.11.0 ＋ custom", "vLLM 0.11"]
)
def test_respelt_additions_are_another_runtime(runtime: str) -> None:
    assert not runtime_matches("vLLM 0.11.0", {"runtime": runtime}), runtime


# -- hardware ----------------------------------------------------------------------------------------------------------


def test_variants_of_one_number_are_other_hardware() -> None:
    assert not same_hardware("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090 Laptop GPU")
    assert not same_hardware("H100 SXM", "H100 PCIe")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("NVIDIA GeForce RTX 5090", "RTX 5090 32 GB", True),
        ("NVIDIA GeForce RTX 5090", "RTX5090", True),
        ("Intel Arc Pro B70", "B70", True),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", True),  # nvidia-smi's name of the SXM part names no interface
        ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 4090", False),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 PCIe", False),
        ("RTX 5090 Max-Q", "RTX 5090", False),
        ("Intel Arc Pro B70 + NVIDIA RTX 4090", "NVIDIA RTX 4090 + Intel Arc Pro B70", True),
        ("Intel Arc Pro B70 + NVIDIA RTX 4090", "NVIDIA RTX 4090", False),
    ],
)
def test_hardware_names_one_part_both_ways(a: str, b: str, same: bool) -> None:
    """The one hardware comparison, each way round: spellings of one part are the same, other parts are not."""
    assert same_hardware(a, b) is same and same_hardware(b, a) is same


def test_rtx5090_is_an_rtx_5090() -> None:
    assert same_hardware("NVIDIA GeForce RTX 5090", "RTX5090")


# -- quantization ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [("Q4_K_M", "q4-k-m", True), ("F16", "FP16", True), ("BF16", "FP16", False), ("Q4_K_M", "Q4_K_S", False)],
)
def test_one_quantization_however_spelled(a: str, b: str, same: bool) -> None:
    """Importers and stored records compare quantizations by this one rule."""
    from evreg.claims.scope import differing, same_quantization

    assert same_quantization(a, b) is same
    assert (differing({"quantization": a}, {"quantization": b}, ("quantization",)) == []) is same


# -- topology ----------------------------------------------------------------------------------------------------------


def test_pipeline_parallel_is_topology() -> None:
    assert differing({"cards": 4}, {"config": {"tp": 4, "pp": 2}}, ("topology",))


def test_a_run_contradicting_its_own_topology() -> None:
    assert differing({"cards": 4}, {"cards": 1, "config": {"tp": 4}}, ("topology",))


@pytest.mark.parametrize(
    ("run", "cards"),
    [
        ({"config": {"tp": 4}}, 4),
        ({"config": {"tp": 4, "pp": 2}}, 8),
        ({"config": {"tp": 2, "dp": 2}}, 4),
        ({"config": {"tp": 1, "cards": 2}}, 2),  # a layer split: one rank per layer group, two cards
        ({"cards": 1, "config": {"tp": 4}}, -1),  # four ranks on one card: contradicts itself
        ({"config": {}}, None),
    ],
)
def test_a_runs_accelerators_are_its_cards_or_its_parallel_layout(run: dict[str, Any], cards: int | None) -> None:
    from evreg.claims.scope import topology

    assert topology(run) == cards
