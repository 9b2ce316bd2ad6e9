"""``looks_like(sniff(raw))`` names the importer of every real LLMPerf and GuideLLM file, and names neither of them
for any other importer's real file (it is what refuses a file given to the wrong importer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evreg.formats import looks_like, sniff
from helpers import SHARED

REAL = SHARED / "real"
MINE = {"llmperf": "llmperf", "guidellm": "guidellm"}
"""Corpus folder -> the importer its files are recognised as."""


def real_files(folder: str) -> list[Path]:
    return sorted(p for p in (REAL / folder).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))


def others() -> list[Path]:
    files = [p for p in REAL.glob("*/corpus/**/*") if p.is_file() and p.name != "SOURCES.md"]
    files += [p for p in (SHARED / "tools").iterdir() if p.is_file()]
    return sorted(p for p in files if p.relative_to(SHARED).parts[1] not in MINE)


@pytest.mark.parametrize("folder", sorted(MINE))
def test_real_files_are_recognised_as_their_importers(folder: str) -> None:
    files = real_files(folder)
    assert len(files) >= 3, files  # the corpus summaries/reports (and LLMPerf's per-request file)
    for path in files:
        assert looks_like(sniff(path.read_bytes())) == MINE[folder], path


def test_llmperf_per_request_file_is_recognised_as_llmperf() -> None:
    [path] = real_files("llmperf/individual")
    assert path.name.endswith("_individual_responses.json")
    assert looks_like(sniff(path.read_bytes())) == "llmperf"


def test_other_importers_real_files_are_neither() -> None:
    files = others()
    assert len(files) > 20, files
    for path in files:
        assert looks_like(sniff(path.read_bytes())) not in MINE.values(), path
