"""Every real output file in ``tests/data/real/<format>/corpus/`` (sources in that folder's ``SOURCES.md``),
imported into a packet whose scope is the file's own run: the import succeeds and writes records, every metric
has a unit from the vocabulary, every stored number's locator re-reads to the stored value (independently and by
``evreg validate``'s rules), and importing the same file again changes nothing.

A file an importer cannot read yet is marked ``xfail(strict=True)`` with the reason: a finding about the
importer, kept here so the test turns red (and the mark must go) once the importer reads it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import SHARED, evreg
from evreg import rules
from evreg.citations import unit_of
from evreg.findings import Severity
from evreg.store import load
from test_new_importers import value_at
from test_real_files import registry

REAL = SHARED / "real"
TOOL = {"aiperf": "aiperf", "llama-bench": "llama-bench", "lm-eval": "lm-eval", "sglang": "sglang-bench"}
TOOL |= {"vllm-bench": "vllm-bench", "mlperf": "mlperf"}


@dataclass(frozen=True)
class Case:
    """One corpus file: the packet its run belongs in, the command-line statements the file cannot make, and the
    reason it is expected to fail (an importer finding) if it is."""

    packet: dict[str, Any]
    extra: tuple[str, ...] = ()
    xfail: str | None = None
    """Why the import itself is expected to fail (an importer finding)."""
    units_xfail: str | None = None
    """Why some metric is expected to lack a vocabulary unit (an importer or vocabulary finding)."""


LM_EVAL_UNITS = (
    "lm-eval scores (exact_match_*, acc_*, bleu_none, ...) have no entry in vocab/metrics.json: unit_of() is ''"
)


CASES: dict[str, Case] = {
    # llama-bench -----------------------------------------------------------------------------------------------
    "llama-bench/corpus/andrewmoryakov-ik-llamacpp-zen4-cpu/qwen_tg_t16_fa1_rtr1_muge0_r1.json": Case(
        dict(
            repository="Qwen/Qwen3-30B-A3B",
            artifact="lmstudio-community/Qwen3-30B-A3B-GGUF",
            quantization="Q4_K_M",
            runtime="ik_llama.cpp b62 (1ee50255a)",
            hardware="AMD Ryzen 9 7950X 16-Core Processor",
        ),
        xfail="ik_llama.cpp prints log lines into its `-o json` output (ggml_* lines before the array, "
        "'============ Repacked 337 tensors' inside it): the llama-bench importer refuses the file as "
        "json-syntax 'invalid JSON: Expecting value' at 1:1, without naming the cause",
    ),
    "llama-bench/corpus/orion-zhen-b7951-rocm-7900xtx/gpt-oss-20b-q8_0-q8_0-20260206.json": Case(
        dict(
            repository="openai/gpt-oss-20b",
            artifact="ggml-org/gpt-oss-20b-GGUF",
            quantization="MXFP4",
            runtime="llama.cpp b7951 (01ec0cc)",
            hardware="AMD Radeon RX 7900 XTX",
        )
    ),
    # AIPerf / GenAI-Perf ---------------------------------------------------------------------------------------
    "aiperf/corpus/ajcasagrande-aiperf-2025-06/profile_export_aiperf.json": Case(
        dict(repository="org/model", quantization="BF16", runtime=None, hardware="unknown GPU"),
        xfail="AIPerf's mid-2025 export (statistics under `records`, keyed by display name such as 'Time to First "
        "Token', beside `input_config`) is refused: import-unmappable 'no input_config beside metric statistics'",
    ),
    "aiperf/corpus/akamaslabs-qwen3-4b-c16/profile_export_aiperf.json": Case(
        dict(
            repository="Qwen/Qwen3-4B-Instruct-2507",
            artifact="Qwen/Qwen3-4B-Instruct-2507-FP8",
            quantization="FP8",
            runtime=None,
            hardware="NVIDIA RTX PRO 4500",
        )
    ),
    "aiperf/corpus/databloom-llama32-3b-gguf-c1-timeouts/profile_export_aiperf.json": Case(
        # llama.cpp servers behind one AIPerf client; 10 of 20 requests timed out
        dict(
            repository="meta-llama/Llama-3.2-3B-Instruct",
            artifact="bartowski/Llama-3.2-3B-Instruct-GGUF",
            quantization="Q4_K_M",
            runtime=None,
            hardware="unknown GPU",
        )
    ),
    # lm-evaluation-harness -------------------------------------------------------------------------------------
    "lm-eval/corpus/akamaslabs-gemma4-26b-gsm8k-platinum/results_2026-10-08T12-45-17.743940.json": Case(
        # the file names the model only by the alias the server gave it ("gemma4-26b-l40s")
        dict(repository="google/gemma-4-26b", quantization="BF16", runtime=None, hardware="NVIDIA L40S"),
        units_xfail=LM_EVAL_UNITS,
    ),
    "lm-eval/corpus/eleutherai-fork-afrimmlu-gemma2b-l4/sw_afrimmlu_0shot_2026-01-26T15-03-11.465269.json": Case(
        dict(repository="google/gemma-2b", quantization="BF16", runtime=None, hardware="NVIDIA L4"),
        units_xfail=LM_EVAL_UNITS,
    ),
    "lm-eval/corpus/eleutherai-fork-nl2foam-vllm-tp8/results_2025-12-17T20-24-58.608862.json": Case(
        # a local checkpoint (an SFT of a Qwen-tokenizer model), vllm backend, tensor parallel 8 on 8x H100
        dict(
            repository="local/nl2foam_sft_0",
            quantization="BF16",
            runtime=None,
            hardware="NVIDIA H100 80GB HBM3",
            cards=8,
        ),
        xfail="the lm-eval importer copies pretty_env_info's GPU names ('NVIDIA H100 80GB HBM3') into "
        "tool.host_gpus, where validation reports '80GB' as orphan-number (16 errors): the import exits 1",
    ),
    # vLLM benchmark_serving / vllm bench serve ------------------------------------------------------------------
    "vllm-bench/corpus/lambdalabs-mistral7b-h100-2024/Mistral-7B-Instruct-v0.3_tp1_len2000.json": Case(
        dict(repository="mistralai/Mistral-7B-Instruct-v0.3", quantization="BF16", runtime=None, hardware="NVIDIA H100")
    ),
    "vllm-bench/corpus/nv-action-ascend-llama8b-qps1/serving_llama8B_tp1_1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
        xfail="a serving result with latency statistics but no output_throughput (vLLM nightly-benchmark layout) is "
        "refused: import-unmappable 'output_throughput at /output_throughput is missing'",
    ),
    "vllm-bench/corpus/zhangxinyuehfad-llama8b-qps1/serving_llama8B_tp1_qps_1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
        xfail="a serving result with latency statistics but no output_throughput (vLLM nightly-benchmark layout) is "
        "refused: import-unmappable 'output_throughput at /output_throughput is missing'",
    ),
    # SGLang bench_serving --------------------------------------------------------------------------------------
    "sglang/corpus/jiminator-glm-bisect-one-batch-server/result.jsonl": Case(
        dict(repository="zai-org/GLM-4.5", quantization="FP8", runtime=None, hardware="unknown GPU", cards=8),
        xfail="SGLang's other benchmark, bench_one_batch_server (run_name, batch_size, latency and last_ttft in s, "
        "overall_throughput), has no importer: sglang-bench refuses it "
        "(import-unmappable 'no backend and dataset_name')",
    ),
    "sglang/corpus/tonyli15-qwen25-3b-agg-c8/agg_n50_in128_out64_c8.jsonl": Case(
        dict(repository="Qwen/Qwen2.5-3B-Instruct", quantization="BF16", runtime=None, hardware="unknown GPU")
    ),
    "sglang/corpus/wentao274-kimi-k25-metax-c550/bench-test_05-1-1000-i128-o128.jsonl": Case(
        # SGLang 0.5.9 built for MetaX MACA; W4A8 INT8 weights, TP16 over two nodes of MetaX C550
        dict(
            repository="moonshotai/Kimi-K2.5",
            quantization="W4A8-INT8",
            runtime=None,
            hardware="MetaX C550",
            cards=16,
        )
    ),
    "sglang/corpus/william-qmul-dlora-1022/sglang_1022_1_1024_128.jsonl": Case(
        dict(repository="meta-llama/Llama-2-7b-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
    ),
}


def corpus_files() -> list[str]:
    return sorted(
        str(p.relative_to(REAL)) for p in REAL.glob("*/corpus/**/*") if p.is_file() and p.name != "SOURCES.md"
    )


def params() -> list[Any]:
    out = []
    for name in sorted(CASES):
        reason = CASES[name].xfail
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name.split("/corpus/")[0] + ":" + Path(name).parent.name))
    return out


def written(root: Path) -> dict[str, bytes]:
    """Every record and evidence file under packets/, by path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "packets").rglob("*")) if p.is_file()}


def imported_records(root: Path) -> list[dict[str, Any]]:
    """The measurements and closures an import wrote (not the family and packet the fixture made)."""
    out = []
    for path in sorted((root / "packets").rglob("*.json")):
        if path.parent.name in ("measurements", "closures"):
            out.append(json.loads(path.read_text()))
    return out


def test_every_corpus_file_has_a_case_and_a_source() -> None:
    files = corpus_files()
    assert files and set(files) == set(CASES), set(files) ^ set(CASES)
    for name in files:
        sources = (REAL / name.split("/corpus/")[0] / "corpus" / "SOURCES.md").read_text()
        assert f"`{Path(name).parent.name}/`" in sources, f"{name} is not listed in its SOURCES.md"


def run_import(tmp_path: Path, name: str) -> tuple[Path, tuple[str, ...], list[dict[str, Any]]]:
    """Import corpus file ``name`` into a packet of its own scope; the registry, the command and the records."""
    case, file = CASES[name], REAL / name
    root = tmp_path / "reg"
    spec = registry(root, **case.packet)
    command = ("import", TOOL[name.split("/", 1)[0]], str(file), "--packet", spec, *case.extra)
    result = evreg(*command, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    records = imported_records(root)
    assert records, "the import wrote neither a measurement nor a closure"
    return root, command, records


@pytest.mark.parametrize("name", params())
def test_real_corpus_file_imports_into_its_own_packet(tmp_path: Path, name: str) -> None:
    root, command, records = run_import(tmp_path, name)
    raw = (REAL / name).read_bytes()
    for record in records:
        for metric, samples in record.get("metrics", {}).items():
            for i, sample in enumerate(samples):
                locator = record["evidence_locators"][f"{metric}[{i}]"]
                assert value_at(raw, locator) == sample, (metric, locator)  # re-read independently
        for metric, locator in record.get("stderr_locators", {}).items():
            assert value_at(raw, locator) == record["stderr"][metric], (metric, locator)
        assert (root / record["evidence"]).read_bytes() == raw  # the evidence is the file, byte for byte
    errors = [f for f in rules.run(load(root), rules.discover()).findings if f.severity == Severity.ERROR]
    assert errors == [], [f"{f.code} {f.file} {f.pointer}: {f.message}" for f in errors]
    before = written(root)
    again = evreg(*command, cwd=root)
    assert again.returncode == 0 and "wrote 0 files" in again.stderr, again.stdout + again.stderr
    assert written(root) == before  # re-import is a no-op


def unit_params() -> list[Any]:
    out = []
    for name in sorted(n for n, c in CASES.items() if c.xfail is None):
        reason = CASES[name].units_xfail
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name.split("/corpus/")[0] + ":" + Path(name).parent.name))
    return out


@pytest.mark.parametrize("name", unit_params())
def test_real_corpus_metrics_have_vocabulary_units(tmp_path: Path, name: str) -> None:
    _, _, records = run_import(tmp_path, name)
    metrics = {m for record in records for m in record.get("metrics", {})}
    assert metrics or all(r["kind"] == "closure" for r in records)
    assert {m for m in metrics if not unit_of(m)} == set()


@pytest.mark.xfail(
    strict=True,
    reason="the SGLang importer ignores server_info (model_path, quantization, tp_size, nnodes, version): a run of "
    "another model, quantization and topology is filed without a scope conflict",
)
def test_sglang_server_info_identity_keeps_a_run_out_of_another_packet(tmp_path: Path) -> None:
    """SGLang >= 0.5 writes the server's launch settings into each line: Kimi-K2.5 W4A8 on TP16 is not a
    Qwen3 FP8 packet on one H100."""
    root = tmp_path / "reg"
    spec = registry(root, repository="Qwen/Qwen3-32B", quantization="FP8", runtime=None, hardware="NVIDIA H100")
    name = "sglang/corpus/wentao274-kimi-k25-metax-c550/bench-test_05-1-1000-i128-o128.jsonl"
    result = evreg("import", "sglang-bench", str(REAL / name), "--packet", spec, cwd=root)
    assert result.returncode == 1 and "Kimi-K2.5" in result.stdout and "w4a8" in result.stdout.lower()
