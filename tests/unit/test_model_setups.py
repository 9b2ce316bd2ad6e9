"""A model's results grouped by setup, as its page and the replications show them: a result joins the first group
whose setup is its own however the setup is spelled (``same_setup``: ``RTX 5090`` is ``NVIDIA GeForce RTX 5090``,
``Q4_K_M`` is ``q4-k-m``), each group named by its first result's setup, in the order the results come. The
grouping compares each new spelling once; tried against that definition, one result at a time, with setups drawn
from spellings of a few accelerators, runtimes, quantizations and topologies (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evreg.site.models import Setup, by_setup, same_setup

HARDWARE = ["RTX 5090", "NVIDIA GeForce RTX 5090", "RTX5090", "RTX 5090 32 GB", "RTX 4090", "B70 + RTX 4090"]
HARDWARE += ["RTX 4090 + B70", "Intel Arc Pro B70", "RTX 5090 Laptop GPU", "H100 SXM", "H100 PCIe", "H100"]
RUNTIMES = ["vLLM", "vllm", "llama.cpp", "LLAMA.CPP", "sglang"]
QUANTS = ["Q4_K_M", "q4-k-m", "Q4_K_S", "FP16", "F16", "fp8"]
TOPOLOGIES = ["TP1", "TP2", "TP2 · PP2"]

setups = st.builds(
    Setup, st.sampled_from(HARDWARE), st.sampled_from(RUNTIMES), st.sampled_from(QUANTS), st.sampled_from(TOPOLOGIES)
)


def defined(items: list[tuple[int, Setup]]) -> list[tuple[Setup, list[tuple[int, Setup]]]]:
    """The grouping as defined: each item compared with every group's first setup, in order."""
    groups: list[tuple[Setup, list[tuple[int, Setup]]]] = []
    for item in items:
        group = next((g for s, g in groups if same_setup(s, item[1])), None)
        if group is None:
            groups.append((item[1], [item]))
        else:
            group.append(item)
    return groups


@given(st.lists(setups, max_size=60))
def test_results_join_the_first_group_of_their_setup_however_spelled(drawn: list[Setup]) -> None:
    items = list(enumerate(drawn))
    assert by_setup(items, lambda item: item[1]) == defined(items)


def test_spellings_of_one_setup_share_a_group_and_other_parts_do_not() -> None:
    spelled = [
        Setup("RTX 5090", "vLLM", "Q4_K_M", "TP1"),
        Setup("NVIDIA GeForce RTX 5090", "vllm", "q4-k-m", "TP1"),
        Setup("RTX 4090", "vLLM", "Q4_K_M", "TP1"),
        Setup("RTX5090", "VLLM", "Q4_K_M", "TP1"),
        Setup("RTX 5090", "vLLM", "Q4_K_S", "TP1"),
        Setup("RTX 5090", "vLLM", "Q4_K_M", "TP2"),
    ]
    groups = by_setup(spelled, lambda s: s)
    assert [(named, len(members)) for named, members in groups] == [
        (spelled[0], 3),
        (spelled[2], 1),
        (spelled[4], 1),
        (spelled[5], 1),
    ]
