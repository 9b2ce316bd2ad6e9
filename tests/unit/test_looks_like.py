"""``looks_like`` names the importer of a real file from the keys its tool always writes: vLLM's offline benchmark
output (latency and throughput) is ``vllm-offline``'s, an lm-evaluation-harness results file from before 0.4 is
``lm-eval``'s, and no other tool's real file is taken for either."""

from __future__ import annotations

from pathlib import Path

import pytest

from evreg.formats import looks_like, sniff

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
LEGACY_LM_EVAL = "lm-eval/corpus/eleutherai-v03-"
"""The corpus folders of lm-evaluation-harness results from before 0.4."""


def real_files() -> list[str]:
    return sorted(
        str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.suffix.lower() not in (".md", "")
    )


MINE = [name for name in real_files() if name.startswith(("vllm-offline/", LEGACY_LM_EVAL))]


def test_the_new_real_files_are_there() -> None:
    assert (
        sum(n.startswith("vllm-offline/") for n in MINE) == 5 and sum(n.startswith(LEGACY_LM_EVAL) for n in MINE) == 3
    )


@pytest.mark.parametrize("name", MINE)
def test_a_new_real_file_is_its_importers(name: str) -> None:
    expected = "vllm-offline" if name.startswith("vllm-offline/") else "lm-eval"
    assert looks_like(sniff((REAL / name).read_bytes())) == expected


@pytest.mark.parametrize("name", [n for n in real_files() if n not in MINE])
def test_no_other_tools_real_file_is_taken_for_them(name: str) -> None:
    kind = looks_like(sniff((REAL / name).read_bytes()))
    assert kind != "vllm-offline"
    assert (kind == "lm-eval") == name.startswith("lm-eval/"), kind
