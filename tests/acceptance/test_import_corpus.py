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

from evreg.check import rules
from evreg.claims.citations import unit_of
from evreg.core.findings import Severity
from evreg.store import load
from helpers import SHARED, evreg, one_packet_registry, stating, value_at

REAL = SHARED / "real"
TOOL = {"aiperf": "aiperf", "llama-bench": "llama-bench", "lm-eval": "lm-eval", "sglang": "sglang-bench"}
TOOL |= {"vllm-bench": "vllm-bench", "mlperf": "mlperf", "llmperf": "llmperf", "guidellm": "guidellm"}
TOOL |= {"vllm-offline": "vllm-offline"}


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
    tool: str | None = None
    """The importer, when not the folder's usual one (SGLang's other benchmark)."""


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
    ),
    "lm-eval/corpus/ethereum-dai-gemma4-e4b-gsm8k-a40/base_gsm8k5_2026-08-07T10-43-37.848875.json": Case(
        # lm-eval 0.4.12, hf backend, model_args as an object, the weights' commit (model_sha), one A40
        dict(
            repository="google/gemma-4-E4B-it",
            quantization="BF16",
            runtime="transformers 5.14.1",
            hardware="NVIDIA A40",
            commit="ee0ef6023621cff504d758262d4e04895a5af4a2",
        )
    ),
    "lm-eval/corpus/allenlee37-kt-exaone-winogrande-a100/results_2024-12-23T14-45-44.695233.json": Case(
        # lm-eval 0.4.x (git 6653bd23), hf backend in float32, --limit 10, a chat template with Jinja braces; the
        # host lists eight A100s; a task score of 0.0 is a score (the model's answers missed the regex), not a failure
        dict(
            repository="LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct",
            quantization="FP32",
            runtime="transformers 4.47.1",
            hardware="NVIDIA A100-SXM4-80GB",
            commit="7f15baedd46858153d817445aff032f4d6cf4939",
        )
    ),
    "lm-eval/corpus/eleutherai-fork-afrimmlu-gemma2b-l4/sw_afrimmlu_0shot_2026-01-26T15-03-11.465269.json": Case(
        dict(repository="google/gemma-2b", quantization="BF16", runtime=None, hardware="NVIDIA L4"),
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
    ),
    # lm-evaluation-harness before 0.4: bare METRIC keys, one num_fewshot in config, no configs / n-shot
    "lm-eval/corpus/eleutherai-v03-bloom-1b1-common-sense-0shot/bloom-1b1_common_sense_reasoning_0-shot.json": Case(
        dict(repository="bigscience/bloom-1b1", quantization="FP32", runtime=None, hardware="unknown GPU"),
    ),
    "lm-eval/corpus/eleutherai-v03-llama-7b-gsm8k-8shot/llama-7B_gsm8k_8-shot.json": Case(
        # the model is a local path ('.../LLaMA/lm/huggingface/7B')
        dict(repository="huggyllama/llama-7b", quantization="FP32", runtime=None, hardware="unknown GPU"),
    ),
    "lm-eval/corpus/eleutherai-v03-opt-125m-gpt2-backend/opt-125m.json": Case(
        dict(repository="facebook/opt-125m", quantization="FP32", runtime=None, hardware="unknown GPU"),
    ),
    # vLLM benchmark_serving / vllm bench serve ------------------------------------------------------------------
    "vllm-bench/corpus/lambdalabs-mistral7b-h100-2024/Mistral-7B-Instruct-v0.3_tp1_len2000.json": Case(
        dict(repository="mistralai/Mistral-7B-Instruct-v0.3", quantization="BF16", runtime=None, hardware="NVIDIA H100")
    ),
    "vllm-bench/corpus/nv-action-ascend-llama8b-qps1/serving_llama8B_tp1_1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
    ),
    "vllm-bench/corpus/zhangxinyuehfad-llama8b-qps1/serving_llama8B_tp1_qps_1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
    ),
    # SGLang bench_serving --------------------------------------------------------------------------------------
    "sglang/corpus/jiminator-glm-bisect-one-batch-server/result.jsonl": Case(
        # SGLang's other benchmark, bench_one_batch_server: the file names no model, engine build or GPU
        dict(repository="zai-org/GLM-4.5", quantization="FP8", runtime=None, hardware="unknown GPU", cards=8),
        extra=("--cards", "8"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/frgossen-cuda-graph-one-batch-offline/result.jsonl": Case(
        # the offline bench_one_batch (prefill / median decode / total), with and without CUDA graphs
        dict(repository="meta-llama/Llama-3.1-8B-Instruct", quantization="BF16", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/shenh10-simulator-one-batch-offline/result.jsonl": Case(
        dict(repository="deepseek-ai/DeepSeek-V2-Lite", quantization="BF16", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/ramadharanuh-local-server-one-batch-offline/result.jsonl": Case(
        dict(repository="Qwen/Qwen2.5-1.5B-Instruct", quantization="BF16", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/generatedrandomly-reproduce-one-batch-server/result.jsonl": Case(
        # bench_one_batch_server of 2025 (no input_throughput, last_ttft): fifteen repeats of one batch of 8,192
        dict(repository="meta-llama/Llama-3.1-8B-Instruct", quantization="BF16", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/mtilyxuegao-qwen-quantization-one-batch-server/result.jsonl": Case(
        # the older key set; last_gen_throughput written as 0.0, which no throughput measures (kept beside the metrics)
        dict(repository="Qwen/Qwen2.5-7B-Instruct", quantization="W8A8", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/sabreshao-disagg-one-batch-server/result.jsonl": Case(
        # the 2025 key set (input_throughput, last_ttft, acc_length -1.0, cache_hit_rate null), long contexts
        dict(repository="deepseek-ai/DeepSeek-R1", quantization="FP8", runtime=None, hardware="unknown GPU"),
        tool="sglang-one-batch",
    ),
    "sglang/corpus/lukallm-vllm-backend-qwen3-coder-fp8/vllm_0128_1000_sharegpt.jsonl": Case(
        # SGLang's bench_serving run against a vLLM server (backend "vllm", server_info null) on an L40S vGPU slice
        dict(
            repository="Qwen/Qwen3-Coder-30B-A3B-Instruct",
            artifact="Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8",
            quantization="FP8",
            runtime="vLLM",
            hardware="NVIDIA L40S-48C",
        )
    ),
    "sglang/corpus/tonyli15-qwen25-3b-agg-c8/agg_n50_in128_out64_c8.jsonl": Case(
        dict(
            repository="Qwen/Qwen2.5-3B-Instruct",
            quantization="BF16",
            runtime="SGLang 0.5.5.post3",
            hardware="unknown GPU",
        )
    ),
    "sglang/corpus/wentao274-kimi-k25-metax-c550/bench-test_05-1-1000-i128-o128.jsonl": Case(
        # SGLang 0.5.9 built for MetaX MACA; W4A8 INT8 weights, TP16 over two nodes of MetaX C550
        dict(
            repository="moonshotai/Kimi-K2.5",
            quantization="W4A8-INT8",
            runtime="SGLang 0.5.9+maca3.5.3.204",
            hardware="MetaX C550",
            cards=16,
        )
    ),
    "sglang/corpus/william-qmul-dlora-1022/sglang_1022_1_1024_128.jsonl": Case(
        dict(repository="meta-llama/Llama-2-7b-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
    ),
    # LLMPerf (token_benchmark_ray.py summaries) ----------------------------------------------------------------
    "llmperf/corpus/apeterson7-triton-llama2-7b-c3/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json": Case(
        dict(repository="meta-llama/Llama-2-7b-chat-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
    ),
    "llmperf/corpus/hongxuanzhang-llama2-7b-c24/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json": Case(
        dict(repository="meta-llama/Llama-2-7b-chat-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
    ),
    "llmperf/corpus/leaderboard-groq-llama2-70b/groq_70b.json": Case(
        # Groq's API, the model named by its served name ("llama2-70b-4096"); fixed lengths (stddev 0)
        dict(repository="meta-llama/Llama-2-70b-chat-hf", quantization="FP16", runtime=None, hardware="Groq LPU")
    ),
    # GuideLLM (benchmarks reports) -----------------------------------------------------------------------------
    "guidellm/corpus/danielkorat-gpt-oss-20b-synchronous/openai_gpt-oss-20b_tp4_quant-none_benchmarks.json": Case(
        dict(repository="openai/gpt-oss-20b", quantization="MXFP4", runtime=None, hardware="unknown GPU", cards=4)
    ),
    "guidellm/corpus/danielkorat-qwen3-4b-fp8-c4/Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json": Case(
        dict(
            repository="Qwen/Qwen3-4B-Thinking-2507", quantization="FP8", runtime=None, hardware="unknown GPU", cards=4
        )
    ),
    "guidellm/corpus/guidellm-tests-sync-2025-06/benchmarks_stripped.json": Case(
        # anonymized upstream: the backend model is "example_model", the processor "example_processor"
        dict(repository="example/example_model", quantization="BF16", runtime=None, hardware="unknown GPU")
    ),
    # vLLM offline benchmarks (vllm bench latency / throughput --output-json) -----------------------------------
    "vllm-offline/corpus/cmontemuino-mi300x-latency-bs8-in128-out128/"
    "Llama-3.1-8B_latency_bs8_in128_out128_float16_mem0.9_20250807_191332.json": Case(
        # benchmark_latency.py of vLLM 0.9.2 on ROCm: ten iterations, the first one slower
        dict(
            repository="meta-llama/Llama-3.1-8B-Instruct",
            quantization="FP16",
            runtime=None,
            hardware="AMD Instinct MI300X",
        )
    ),
    "vllm-offline/corpus/cmontemuino-mi300x-latency-bs32-in128-out1024/"
    "Llama-3.1-8B_latency_bs32_in128_out1024_float16_mem0.9_20250807_193434.json": Case(
        dict(
            repository="meta-llama/Llama-3.1-8B-Instruct",
            quantization="FP16",
            runtime=None,
            hardware="AMD Instinct MI300X",
        )
    ),
    "vllm-offline/corpus/zhangxinyuehfad-ascend-latency-llama8b/latency_llama8B_tp1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
    ),
    "vllm-offline/corpus/zhangxinyuehfad-ascend-throughput-llama8b/throughput_llama8B_tp1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
    ),
    "vllm-offline/corpus/zhangxinyuehfad-ascend-throughput-llama8b-rerun/throughput_llama8B_tp1.json": Case(
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
    ),
    # AIPerf and SGLang bench_serving: a load in AIPerf's phases, a disaggregated SGLang deployment ---------------
    "aiperf/corpus/anud18-qwen36-nvfp4-5090-agent-r0.8/profile_export_aiperf.json": Case(
        # AIPerf 0.10.0 at a Poisson request rate of 0.8/s, stated only in input_config.phases
        dict(
            repository="Qwen/Qwen3.6-35B-A3B",
            artifact="nvidia/Qwen3.6-35B-A3B-NVFP4",
            quantization="NVFP4",
            runtime=None,
            hardware="NVIDIA GeForce RTX 5090",
        )
    ),
    "sglang/corpus/william-qmul-dlora-1025-100/sglang_1025_100_1024_128.jsonl": Case(
        # SGLang-dLoRA's server answered each of 99 requests in one piece: no inter-token latency, TTFT the latency
        dict(repository="meta-llama/Llama-2-7b-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
    ),
    "sglang/corpus/tonyli15-pd-inter-node-gh200-a100/pd_inter_node_gh200_a100.jsonl": Case(
        # a prefill server (SGLang 0.5.5.post3) and a decode server (0.5.6) behind SGLang's router, one GPU each
        dict(
            repository="Qwen/Qwen2.5-3B-Instruct",
            quantization="BF16",
            runtime="SGLang 0.5.5.post3 (prefill) + SGLang 0.5.6 (decode)",
            hardware="unknown GPU",
            cards=2,
        )
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
    spec = one_packet_registry(root, **case.packet)
    command = ("import", case.tool or TOOL[name.split("/", 1)[0]], str(file), "--packet", spec)
    command += stating(
        {"cards": 1} | case.packet, case.extra
    )  # one_packet_registry() gives a packet 1 card unless told
    result = evreg(*command, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    records = imported_records(root)
    assert records, "the import wrote neither a measurement nor a closure"
    return root, command, records


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("name", unit_params())
def test_real_corpus_metrics_have_vocabulary_units(tmp_path: Path, name: str) -> None:
    _, _, records = run_import(tmp_path, name)
    metrics = {m for record in records for m in record.get("metrics", {})}
    assert metrics or all(r["kind"] == "closure" for r in records)
    assert {m for m in metrics if not unit_of(m)} == set()


def test_sglang_server_info_identity_keeps_a_run_out_of_another_packet(tmp_path: Path) -> None:
    """SGLang >= 0.5 writes the server's launch settings into each line: Kimi-K2.5 W4A8 on TP16 is not a
    Qwen3 FP8 packet on one H100."""
    root = tmp_path / "reg"
    spec = one_packet_registry(
        root, repository="Qwen/Qwen3-32B", quantization="FP8", runtime=None, hardware="NVIDIA H100"
    )
    name = "sglang/corpus/wentao274-kimi-k25-metax-c550/bench-test_05-1-1000-i128-o128.jsonl"
    result = evreg("import", "sglang-bench", str(REAL / name), "--packet", spec, cwd=root)
    assert result.returncode == 1 and "Kimi-K2.5" in result.stdout and "w4a8" in result.stdout.lower()
    assert "16 cards, the packet 1" in result.stdout and not imported_records(root)


# -- what each importer fix reads, value by value --------------------------------------------------------------------


def attempt(tmp_path: Path, name: str, *extra: str, **packet: Any) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """Import corpus file ``name`` into its case's packet changed by ``packet``: exit code, JSON report, records."""
    case = CASES[name]
    root = tmp_path / "reg"
    spec = one_packet_registry(root, **(case.packet | packet))
    tool = case.tool or TOOL[name.split("/", 1)[0]]
    stated = stating({"cards": 1} | case.packet | packet, extra)
    result = evreg("import", tool, str(REAL / name), "--packet", spec, *stated, "--format", "json", cwd=root)
    return result.returncode, json.loads(result.stdout), imported_records(root)


def metric(records: list[dict[str, Any]], name: str) -> tuple[Any, str, str]:
    """(samples, locator of sample 0, unit) of metric ``name`` in the one record that has it."""
    [record] = [r for r in records if name in r.get("metrics", {})]
    return record["metrics"][name], record["evidence_locators"][f"{name}[0]"], unit_of(name)


NL2FOAM = "lm-eval/corpus/eleutherai-fork-nl2foam-vllm-tp8/results_2025-12-17T20-24-58.608862.json"
GEMMA = "lm-eval/corpus/akamaslabs-gemma4-26b-gsm8k-platinum/results_2026-10-08T12-45-17.743940.json"


def test_lm_eval_model_args_object_and_host_gpu_names(tmp_path: Path) -> None:
    """model_args written as an object is read (the local checkpoint, tensor_parallel_size 8 = 8 cards); the host's
    eight GPU names are hardware names, not figures; the scores have vocabulary units."""
    code, _, records = attempt(tmp_path / "a", NL2FOAM)
    assert code == 0
    run = next(r for r in records if "bleu_none" in r["metrics"])
    assert run["tool"]["hardware"] == ["NVIDIA H100 80GB HBM3"] * 8 and run["hardware"] == "NVIDIA H100 80GB HBM3"
    assert metric(records, "bleu_none") == ([0.5770713868973584], "/results/nl2foam_gen_original/bleu,none", "score")
    assert metric(records, "llm_judge_none")[0] == [89.156] and unit_of("acc_none") == "ratio"
    code, report, _ = attempt(tmp_path / "b", NL2FOAM, cards=1)
    assert code == 1 and "run used 8 cards, the packet 1" in report["findings"][0]["message"]
    code, report, _ = attempt(tmp_path / "c", NL2FOAM, repository="Qwen/Qwen3-8B")
    assert code == 1 and "nl2foam_sft_0" in report["findings"][0]["message"] and "Qwen/Qwen3-8B" in str(report)


ETH = "lm-eval/corpus/ethereum-dai-gemma4-e4b-gsm8k-a40/base_gsm8k5_2026-08-07T10-43-37.848875.json"


def test_lm_eval_hf_run_names_its_gpu_and_weights_commit(tmp_path: Path) -> None:
    """'GPU models and configuration: GPU 0: NVIDIA A40' is the A40; model_sha is the weights' commit."""
    code, _, records = attempt(tmp_path / "a", ETH)
    [run] = records
    assert code == 0 and run["hardware"] == "NVIDIA A40" and run["tool"]["hardware"] == ["NVIDIA A40"]
    assert (
        run["runtime"] == "transformers 5.14.1" and run["config"]["model_args"]["pretrained"] == "google/gemma-4-E4B-it"
    )
    assert metric(records, "exact_match_flexible_extract") == (
        [0.8415466262319939],
        "/results/gsm8k/exact_match,flexible-extract",
        "ratio",
    )
    code, report, _ = attempt(tmp_path / "b", ETH, commit="0123456789abcdef0123456789abcdef01234567")
    assert code == 1 and "weights commit ee0ef6023621cff504d758262d4e04895a5af4a2 (model_sha)" in str(report)


def test_lm_eval_served_alias_is_no_weights_name(tmp_path: Path) -> None:
    """A run against a server names the model by the server's alias ('gemma4-26b-l40s'): it is not compared with
    the weights (a warning says so) instead of being refused or passed as the weights; when the file also names the
    weights (tokenizer=), those are compared."""
    code, report, records = attempt(tmp_path / "a", GEMMA, repository="google/gemma-4-26B-A4B-it")
    assert code == 0 and "'gemma4-26b-l40s', the name the server answered to" in str(report["findings"])
    [run] = records
    assert metric(records, "exact_match_strict_match")[1:] == (
        "/results/gsm8k_platinum_cot_llama/exact_match,strict-match",
        "ratio",
    )
    assert 0 < run["metrics"]["exact_match_strict_match"][0] <= 1
    doc = json.loads((REAL / GEMMA).read_text())
    doc["config"]["model_args"]["tokenizer"] = "Qwen/Qwen3-8B"  # the same alias, other weights named
    other = tmp_path / "named" / Path(GEMMA).name
    other.parent.mkdir()
    other.write_text(json.dumps(doc))
    root = tmp_path / "b" / "reg"
    spec = one_packet_registry(root, **CASES[GEMMA].packet)
    result = evreg("import", "lm-eval", str(other), "--packet", spec, "--format", "json", cwd=root)
    assert result.returncode == 1 and "'Qwen/Qwen3-8B' is not the packet's weights" in result.stdout


def test_aiperf_mid_2025_records_layout(tmp_path: Path) -> None:
    name = "aiperf/corpus/ajcasagrande-aiperf-2025-06/profile_export_aiperf.json"
    code, _, records = attempt(tmp_path, name)
    assert code == 0
    assert metric(records, "mean_ttft_ms") == ([30.4630958], "/records/Time to First Token/avg", "ms")
    assert metric(records, "p99_itl_ms")[0] == [5.00526255030303] and metric(records, "max_ttlt_ms")[2] == "ms"
    [run] = records
    assert run["measurement_class"] == "aiperf-profile" and "requests_per_s" not in run["metrics"]
    wrong = evreg("import", "sglang-bench", str(REAL / name), "--packet", "fam/pkt", cwd=tmp_path / "reg")
    assert wrong.returncode == 1 and "looks like aiperf" in wrong.stdout


def test_vllm_nightly_latency_only_results(tmp_path: Path) -> None:
    name = "vllm-bench/corpus/zhangxinyuehfad-llama8b-qps1/serving_llama8B_tp1_qps_1.json"
    code, _, records = attempt(tmp_path / "a", name)
    assert code == 0
    assert metric(records, "mean_ttft_ms") == ([171.37754512950778], "/mean_ttft_ms", "ms")
    assert metric(records, "std_itl_ms")[0] == [16.346513289856215]
    [run] = records
    assert "aggregate_tok_s" not in run["metrics"] and "latency statistics only" in run["workload"]
    assert run["config"]["request_rate"] == 1.0 and run["tool"]["model_id"].endswith("Meta-Llama-3-8B-Instruct")
    code, report, _ = attempt(tmp_path / "b", name, repository="Qwen/Qwen3-8B")  # the path names the model
    assert code == 1 and report["findings"][0]["code"] == "import-out-of-scope"


IK = "llama-bench/corpus/andrewmoryakov-ik-llamacpp-zen4-cpu/qwen_tg_t16_fa1_rtr1_muge0_r1.json"


def test_ik_llamacpp_log_lines_are_read_past(tmp_path: Path) -> None:
    code, _, records = attempt(tmp_path / "a", IK)
    assert code == 0
    assert metric(records, "decode_tok_s") == ([30.054], "line:64:1", "tok/s")
    [run] = records
    assert run["tool"]["log_lines"] == [1, 2, 3, 4, 6, 7, 8] and run["runtime"] == "ik_llama.cpp b62 (1ee50255a)"
    broken = tmp_path / "broken.json"  # log lines, and JSON that is cut short: a finding naming the log line
    broken.write_bytes((REAL / IK).read_bytes()[:-40])
    root = tmp_path / "b" / "reg"
    spec = one_packet_registry(root, **CASES[IK].packet)
    result = evreg("import", "llama-bench", str(broken), "--packet", spec, "--format", "json", cwd=root)
    [finding] = json.loads(result.stdout)["findings"]
    assert result.returncode == 1 and finding["code"] == "import-unmappable" and finding["pointer"] == "line:1"
    assert "7 log line(s)" in finding["message"] and "ggml_large_pages_available" in finding["message"]


KIMI = "sglang/corpus/wentao274-kimi-k25-metax-c550/bench-test_05-1-1000-i128-o128.jsonl"


def test_sglang_server_info_is_the_run_identity(tmp_path: Path) -> None:
    code, _, records = attempt(tmp_path / "a", KIMI)
    assert code == 0
    [run] = records
    assert run["runtime"] == "SGLang 0.5.9+maca3.5.3.204"
    info = run["tool"]["server_info"]
    assert (info["tp_size"], info["nnodes"], info["quantization"]) == (16, 2, "w4a8_int8")
    assert metric(records, "aggregate_tok_s")[2] == "tok/s" and metric(records, "aggregate_tok_s")[1].startswith(
        "line:1:"
    )
    code, report, _ = attempt(tmp_path / "b", KIMI, cards=8)  # tp_size 16 x pp_size 1 is not 8 cards
    assert code == 1 and "16 cards, the packet 8" in report["findings"][0]["message"]
    code, report, _ = attempt(tmp_path / "c", KIMI, runtime="SGLang 0.4.1")
    assert code == 1 and "'SGLang 0.5.9+maca3.5.3.204' is not the packet's 'SGLang 0.4.1'" in str(report)


def test_sglang_bench_one_batch_server(tmp_path: Path) -> None:
    name = "sglang/corpus/jiminator-glm-bisect-one-batch-server/result.jsonl"
    code, report, records = attempt(tmp_path / "a", name, "--cards", "8")
    assert code == 0 and "does not say the run's model;" in report["findings"][0]["message"]
    assert len(records) == 4
    last = next(r for r in records if r["imported_from"]["row"] == "4")
    assert last["metrics"]["aggregate_tok_s"] == [2102.68] and last["metrics"]["batch_latency_s"] == [26.0523]
    assert last["evidence_locators"]["batch_ttft_s[0]"] == "line:4:8" and unit_of("batch_ttft_s") == "s"
    assert last["config"] == {"run_name": "TP8", "batch_size": 64, "input_len": 4096, "output_len": 512, "cards": 8}
    assert "mean_acceptance_length" not in last["metrics"] and last["tool"]["acc_length"] == -1.0  # not measured
    root = tmp_path / "a" / "reg"
    wrong = evreg("import", "sglang-bench", str(REAL / name), "--packet", "fam/pkt", cwd=root)
    assert wrong.returncode == 1 and "looks like sglang-one-batch" in wrong.stdout
    code, report, _ = attempt(tmp_path / "b", name, "--runtime", "vLLM 0.11.0")
    assert code == 1 and "not the engine" not in str(report) and "vLLM 0.11.0" in str(report)


def test_lm_eval_scores_render_as_numbers_without_a_unit_word(tmp_path: Path) -> None:
    """A task-defined score (BLEU, ROUGE, an LLM judge's grade) is a pure number like a ratio: a citation of it reads
    ``0.577``, never ``0.577 score``; the chart axis still names the unit."""
    from evreg.claims import citations

    name = "lm-eval/corpus/eleutherai-fork-nl2foam-vllm-tp8/results_2025-12-17T20-24-58.608862.json"
    _, _, records = run_import(tmp_path, name)
    scored = [(r, m) for r in records for m in r.get("metrics", {}) if unit_of(m) == "score"]
    assert {m for _, m in scored} >= {"bleu_none", "rouge1_none", "llm_judge_none"}
    for record, metric in scored:
        value = record["metrics"][metric][0]
        text = citations.plain(f"{{{{ m:{record['id']}.{metric}[0] }}}}", {record["id"]: record})
        assert text == citations.format_value(value, metric) == f"{value:.{citations._precision(metric)}f}"
        assert "score" not in text
    assert citations.format_value(0.25, "exact_match_none") == "0.2500"  # a ratio, with four decimals
    assert citations.format_value(30.25, "decode_tok_s").endswith(" tok/s")  # a unit word where there is one


DATABLOOM = "aiperf/corpus/databloom-llama32-3b-gguf-c1-timeouts/profile_export_aiperf.json"
AKAMAS_AIPERF = "aiperf/corpus/akamaslabs-qwen3-4b-c16/profile_export_aiperf.json"


def test_aiperf_served_alias_is_no_weights_name(tmp_path: Path) -> None:
    """AIPerf names the model by what the server answered to ('llama-3.2-3b-instruct-gguf:q4_k_m', its tokenizer
    'gpt2'): an alias is not the weights, so it is an identity-missing warning and is not compared with the packet's
    weights (its quantization word still is); when the export names the weights (a tokenizer repository), they are."""
    code, report, records = attempt(tmp_path / "a", DATABLOOM)
    [alias] = [f for f in report["findings"] if "the name the server answered to" in f["message"]]
    assert code == 0 and records and alias["code"] == "import-identity-missing"
    assert "'llama-3.2-3b-instruct-gguf:q4_k_m'" in alias["message"]
    assert alias["pointer"] == "/input_config/endpoint/model_names/0"
    code, report, _ = attempt(tmp_path / "b", DATABLOOM, repository="Qwen/Qwen2.5-7B-Instruct", artifact=None)
    assert code == 0 and any("answered to" in f["message"] for f in report["findings"])  # not compared, but said
    code, report, _ = attempt(tmp_path / "c", DATABLOOM, quantization="BF16", artifact=None)
    assert code == 1 and "quantization 'Q4_K_M' is not the packet's 'BF16'" in str(report["findings"])
    doc = json.loads((REAL / DATABLOOM).read_text())
    doc["input_config"]["tokenizer"]["name"] = "Qwen/Qwen2.5-7B-Instruct"  # the same alias, the weights named
    named = tmp_path / "named" / "profile_export_aiperf.json"
    named.parent.mkdir()
    named.write_text(json.dumps(doc, indent=2))
    root = tmp_path / "d" / "reg"
    spec = one_packet_registry(root, **CASES[DATABLOOM].packet)
    result = evreg("import", "aiperf", str(named), "--packet", spec, "--hardware", "unknown GPU", cwd=root)
    assert result.returncode == 1 and "'Qwen/Qwen2.5-7B-Instruct' is not the packet's weights" in result.stdout
    assert "meta-llama/Llama-3.2-3B-Instruct" in result.stdout and not imported_records(root)
    # the alias 'qwen3-4b' beside the tokenizer Qwen/Qwen3-4B-Instruct-2507-FP8: the tokenizer is the weights
    code, report, _ = attempt(tmp_path / "e", AKAMAS_AIPERF)
    assert code == 0 and not any("answered to" in f["message"] for f in report["findings"])
    code, report, _ = attempt(tmp_path / "f", AKAMAS_AIPERF, repository="Qwen/Qwen3-32B", artifact="Qwen/Qwen3-32B-FP8")
    assert code == 1 and "'Qwen/Qwen3-4B-Instruct-2507-FP8' is not the packet's weights" in str(report["findings"])


def test_sglang_offline_bench_one_batch_and_older_server_key_sets(tmp_path: Path) -> None:
    """The offline bench_one_batch's keys (prefill, median decode step, total) are read into their own metrics; the
    server benchmark's older key set too, with a 0.0 last decode throughput kept beside the metrics, never as one."""
    name = "sglang/corpus/frgossen-cuda-graph-one-batch-offline/result.jsonl"
    code, _, records = attempt(tmp_path / "a", name)
    assert code == 0 and len(records) == 9
    first = next(r for r in records if r["imported_from"]["row"] == "1")
    assert first["measurement_class"] == "sglang-bench-one-batch-offline"
    assert first["tool"]["name"] == "sglang-bench_one_batch" and first["config"]["run_name"] == "cuda_graph"
    assert first["metrics"]["median_decode_tok_s"] == [112.0005440738405] and unit_of("median_decode_tok_s") == "tok/s"
    assert first["metrics"]["batch_ttft_s"] == [0.01405533216893673] and unit_of("median_decode_step_s") == "s"
    assert first["metrics"]["total_tok_s"] == [991.0135159710844] and "aggregate_tok_s" not in first["metrics"]
    old = "sglang/corpus/mtilyxuegao-qwen-quantization-one-batch-server/result.jsonl"
    code, _, records = attempt(tmp_path / "b", old)
    assert code == 0 and len(records) == 6 and all(r["kind"] == "run-measurement" for r in records)
    row = next(r for r in records if r["imported_from"]["row"] == "1")
    assert row["metrics"]["aggregate_tok_s"] == [4848.36] and "last_decode_tok_s" not in row["metrics"]
    assert row["out_of_bounds"]["last_decode_tok_s"]["value"] == 0.0


EXAONE = "lm-eval/corpus/allenlee37-kt-exaone-winogrande-a100/results_2024-12-23T14-45-44.695233.json"


def test_lm_eval_a_score_of_zero_is_a_score(tmp_path: Path) -> None:
    """A task the model failed (exact_match 0.0 on 10 samples) is a measurement of 0.0 with its stderr, not a failed
    run: the harness ran and scored every sample. The hf run's weights commit, float32 dtype and host GPU are read."""
    code, _, records = attempt(tmp_path / "a", EXAONE)
    [run] = records
    assert code == 0 and run["kind"] == "run-measurement"
    assert metric(records, "exact_match_get_answer") == (
        [0.0],
        "/results/winogrande/exact_match,get-answer",
        "ratio",
    )
    assert run["stderr"] == {"exact_match_get_answer": 0.0} and run["runtime"] == "transformers 4.47.1"
    assert run["hardware"] == "NVIDIA A100-SXM4-80GB" and run["workload"].endswith("0-shot, 10 samples")
    code, report, _ = attempt(tmp_path / "b", EXAONE, quantization="BF16")
    assert code == 1 and "not the packet's 'BF16'" in str(report["findings"])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # a random dataset at range ratio 0.0: lengths drawn from [0, len], so no length is stated
        (
            "sglang/corpus/tonyli15-qwen25-3b-agg-c8/agg_n50_in128_out64_c8.jsonl",
            {"phase": "serving", "sample": "run", "concurrency": 8, "arrival": "burst"} | {"dataset": "random"},
        ),
    ],
)
def test_real_files_fill_the_workload_fields_they_state(tmp_path: Path, name: str, expected: dict[str, Any]) -> None:
    _, _, records = run_import(tmp_path, name)
    assert [r["workload_fields"] for r in records if "workload_fields" in r] == [expected]


def test_lm_eval_a_served_model_is_not_on_the_evaluating_hosts_gpu(tmp_path: Path) -> None:
    """A run against a server (``local-chat-completions``) lists the evaluating host's GPUs: they did not run the
    model, so the packet of the server's hardware takes the run, and the host's GPUs are kept as the host's."""
    doc = json.loads((REAL / GEMMA).read_text())
    doc["pretty_env_info"] = (doc.get("pretty_env_info") or "") + "\nGPU 0: NVIDIA RTX A2000 12GB\n"
    other = tmp_path / "host" / Path(GEMMA).name
    other.parent.mkdir()
    other.write_text(json.dumps(doc))
    root = tmp_path / "reg"
    spec = one_packet_registry(root, **CASES[GEMMA].packet)  # the server's NVIDIA L40S
    stated = ("--hardware", "NVIDIA L40S", "--cards", "1")  # what the file cannot say: the server's accelerators
    result = evreg("import", "lm-eval", str(other), "--packet", spec, *stated, "--format", "json", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = [json.loads(p.read_text()) for p in (root / "packets/fam").rglob("measurements/*.json")]
    assert run["hardware"] == "NVIDIA L40S"
    assert run["tool"]["evaluating_host"] == {"hardware": ["NVIDIA RTX A2000 12GB"]} and "hardware" not in run["tool"]


MI300X = (
    "vllm-offline/corpus/cmontemuino-mi300x-latency-bs8-in128-out128/"
    "Llama-3.1-8B_latency_bs8_in128_out128_float16_mem0.9_20250807_191332.json"
)
ASCEND_THROUGHPUT = "vllm-offline/corpus/zhangxinyuehfad-ascend-throughput-llama8b/throughput_llama8B_tp1.json"


def test_vllm_offline_latency_iterations_are_the_samples_of_one_run(tmp_path: Path) -> None:
    """vllm bench latency's timed iterations are the repeats of one run: every one a sample with its locator, the
    tool's own mean and percentiles beside them; the file names no model, batch size or length, so none is stated."""
    code, report, records = attempt(tmp_path / "a", MI300X, "--runtime", "vLLM 0.9.2", runtime="vLLM 0.9.2")
    [run] = records
    raw = json.loads((REAL / MI300X).read_text())
    assert code == 0 and run["metrics"]["batch_latency_s"] == raw["latencies"] and len(raw["latencies"]) == 10
    assert metric(records, "batch_latency_s")[1:] == ("/latencies/0", "s")
    assert run["metrics"]["batch_latency_s"][0] == 1.114755410933867  # the slow first iteration, kept
    assert run["evidence_locators"]["batch_latency_s[9]"] == "/latencies/9"
    assert (
        run["tool"]["avg_latency_s"] == 0.9204040324199013 and run["tool"]["percentiles_s"]["99"] == 1.0957480660511647
    )
    assert run["workload_fields"] == {"sample": "repeat"} and run["runtime"] == "vLLM 0.9.2"
    assert run["hardware"] == "AMD Instinct MI300X"
    [missing] = [f for f in report["findings"] if f["code"] == "import-identity-missing"]
    assert "does not say the run's model" in missing["message"]
    # stated hardware that is not the packet's: refused, nothing written
    code, report, records = attempt(tmp_path / "b", MI300X, "--hardware", "AMD Instinct MI300X", hardware="NVIDIA H100")
    assert code == 1 and report["findings"][0]["code"] == "import-out-of-scope" and not records
    assert "'AMD Instinct MI300X' is not the packet's 'NVIDIA H100'" in report["findings"][0]["message"]
    # an iteration that is not a positive number of seconds is refused at its pointer, never stored
    doc = json.loads((REAL / MI300X).read_text())
    doc["latencies"][3] = None
    broken = tmp_path / "broken" / Path(MI300X).name
    broken.parent.mkdir()
    broken.write_text(json.dumps(doc, indent=4))
    root = tmp_path / "c" / "reg"
    spec = one_packet_registry(root, **CASES[MI300X].packet)
    result = evreg("import", "vllm-offline", str(broken), "--packet", spec, "--format", "json", cwd=root)
    [finding] = json.loads(result.stdout)["findings"]
    assert result.returncode == 1 and finding["pointer"] == "/latencies/3" and "took null" in finding["message"]


def test_vllm_offline_throughput_is_one_run_of_requests_and_tokens_per_second(tmp_path: Path) -> None:
    code, _, records = attempt(tmp_path / "a", ASCEND_THROUGHPUT)
    [run] = records
    assert code == 0 and run["measurement_class"] == "vllm-bench-throughput"
    assert metric(records, "requests_per_s") == ([2.7631534315929653], "/requests_per_second", "requests/s")
    assert metric(records, "total_tok_s") == ([1190.9743920852], "/tokens_per_second", "tok/s")
    assert run["tool"] == {
        "name": "vllm-bench-throughput",
        "elapsed_time": 72.38106929324567,
        "num_requests": 200,
        "total_num_tokens": 86204,
    }
    assert run["workload_fields"] == {"sample": "run", "requests": 200} and "runtime" not in run
    # the file is vLLM's: a packet of another engine does not take it
    code, report, records = attempt(tmp_path / "b", ASCEND_THROUGHPUT, runtime="SGLang 0.4.1")
    assert code == 1 and report["findings"][0]["code"] == "import-out-of-scope" and not records
    assert "'SGLang 0.4.1'" in report["findings"][0]["message"]
    code, report, _ = attempt(tmp_path / "c", ASCEND_THROUGHPUT, "--runtime", "SGLang 0.4.1")
    assert code == 1 and "backend 'vllm'" in report["findings"][0]["message"]


def test_vllm_offline_and_serve_files_are_refused_by_each_others_importer(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **CASES[ASCEND_THROUGHPUT].packet)
    wrong = evreg("import", "vllm-bench", str(REAL / ASCEND_THROUGHPUT), "--packet", "fam/pkt", cwd=root)
    assert wrong.returncode == 1 and "looks like vllm-offline output" in wrong.stdout
    serve = REAL / "vllm-bench/corpus/lambdalabs-mistral7b-h100-2024/Mistral-7B-Instruct-v0.3_tp1_len2000.json"
    wrong = evreg("import", "vllm-offline", str(serve), "--packet", "fam/pkt", cwd=root)
    assert wrong.returncode == 1 and "looks like vllm-bench output" in wrong.stdout
    assert not imported_records(root)


BLOOM = "lm-eval/corpus/eleutherai-v03-bloom-1b1-common-sense-0shot/bloom-1b1_common_sense_reasoning_0-shot.json"
OPT = "lm-eval/corpus/eleutherai-v03-opt-125m-gpt2-backend/opt-125m.json"


def test_lm_eval_results_from_before_0_4_are_read(tmp_path: Path) -> None:
    """A file before 0.4 has bare METRIC keys: each is the score 0.4 calls METRIC,none, with its stderr; the one
    num_fewshot of the run is every task's shots; a task's version is kept; the model is compared with the packet."""
    code, _, records = attempt(tmp_path / "a", BLOOM)
    assert code == 0 and len(records) == 12
    arc = next(r for r in records if r["imported_from"]["row"] == "arc_easy")
    assert arc["metrics"] == {"acc_none": [0.5147306397306397], "acc_norm_none": [0.45454545454545453]}
    assert arc["evidence_locators"]["acc_none[0]"] == "/results/arc_easy/acc"
    assert arc["stderr"]["acc_norm_none"] == 0.010217299762709435
    assert arc["stderr_locators"]["acc_norm_none"] == "/results/arc_easy/acc_norm_stderr"
    assert arc["config"]["model"] == "hf-causal-experimental" and arc["config"]["num_fewshot"] == 0
    assert (
        arc["workload"].startswith("lm-evaluation-harness task arc_easy, 0-shot") and arc["tool"]["task_version"] == 0
    )
    taco = next(r for r in records if r["imported_from"]["row"] == "mc_taco")
    assert taco["metrics"] == {"em_none": [0.1448948948948949], "f1_none": [0.32425976796237205]}
    assert taco["stderr"] == {} and unit_of("em_none") == "ratio"
    gsm8k = "lm-eval/corpus/eleutherai-v03-llama-7b-gsm8k-8shot/llama-7B_gsm8k_8-shot.json"
    _, _, [run] = attempt(tmp_path / "b", gsm8k)
    assert run["metrics"] == {"acc_none": [0.0803639120545868]} and "8-shot" in run["workload"]
    code, report, records = attempt(tmp_path / "c", BLOOM, repository="Qwen/Qwen3-8B")
    assert code == 1 and report["findings"][0]["code"] == "import-out-of-scope" and not records
    assert "'bigscience/bloom-1b1' is not the packet's weights" in report["findings"][0]["message"]


def test_lm_eval_before_0_4_older_backend_is_transformers(tmp_path: Path) -> None:
    """The gpt2 backend of the harness before 0.4 ran the model with transformers: a vLLM packet does not take it;
    lambada's perplexity (ppl) is a score, not a ratio."""
    code, _, records = attempt(tmp_path / "a", OPT)
    assert code == 0 and len(records) == 65
    assert metric(records, "ppl_none") == ([26.02103896885129], "/results/lambada_openai/ppl", "score")
    code, report, records = attempt(tmp_path / "b", OPT, runtime="vLLM 0.5.0")
    assert code == 1 and not records
    assert "ran the model with transformers (config.model)" in report["findings"][0]["message"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_corpus_file_is_recognised_as_its_tools(name: str) -> None:
    """`evreg add` tells the tool from the file: every real file is its importer's, and no other's."""
    from evreg.formats import looks_like, sniff

    expected = CASES[name].tool or TOOL[name.split("/", 1)[0]]
    assert looks_like(sniff((REAL / name).read_bytes())) == expected


# -- what each importer reads where the tool writes it, and what it refuses to pretend ---------------------------------

R08 = "aiperf/corpus/anud18-qwen36-nvfp4-5090-agent-r0.8/profile_export_aiperf.json"
AKAMAS = "aiperf/corpus/akamaslabs-qwen3-4b-c16/profile_export_aiperf.json"
DATABLOOM = "aiperf/corpus/databloom-llama32-3b-gguf-c1-timeouts/profile_export_aiperf.json"
PD = "sglang/corpus/tonyli15-pd-inter-node-gh200-a100/pd_inter_node_gh200_a100.jsonl"
AGG = "sglang/corpus/tonyli15-qwen25-3b-agg-c8/agg_n50_in128_out64_c8.jsonl"
DLORA = "sglang/corpus/william-qmul-dlora-1022/sglang_1022_1_1024_128.jsonl"
DLORA100 = "sglang/corpus/william-qmul-dlora-1025-100/sglang_1025_100_1024_128.jsonl"
LAMBDA = "vllm-bench/corpus/lambdalabs-mistral7b-h100-2024/Mistral-7B-Instruct-v0.3_tp1_len2000.json"


def raw_json(name: str) -> Any:
    return json.loads((REAL / name).read_text())


def raw_lines(name: str) -> list[Any]:
    return [json.loads(line) for line in (REAL / name).read_text().splitlines() if line.strip()]


def test_aiperf_load_is_read_from_the_phase_that_profiled(tmp_path: Path) -> None:
    """AIPerf 0.10 writes a request rate only as the profiling phase's ``rate``: the run states its rate (not
    "load unstated"), its Poisson arrivals and its requests; concurrency is read from a phase (0.11) and from
    ``loadgen`` (0.8) as before."""
    phase = raw_json(R08)["input_config"]["phases"][1]
    assert (phase["name"], phase["type"], phase["rate"], phase["requests"]) == ("profiling", "poisson", 0.8, 96)
    code, _, [run] = attempt(tmp_path / "a", R08)
    assert code == 0
    assert run["workload_fields"] == {
        "phase": "serving",
        "sample": "run",
        "request_rate": 0.8,
        "arrival": "poisson",
        "requests": 96,
    }
    assert "request rate 0.8" in run["workload"] and run["config"]["type"] == "poisson"
    assert metric([run], "requests_per_s") == ([0.7744939054931779], "/request_throughput/avg", "requests/s")
    [akamas] = attempt(tmp_path / "b", AKAMAS)[2]
    assert akamas["workload_fields"]["concurrency"] == raw_json(AKAMAS)["input_config"]["phases"][0]["concurrency"]
    databloom = [r for r in attempt(tmp_path / "c", DATABLOOM)[2] if r["kind"] == "run-measurement"]
    assert [r["workload_fields"]["concurrency"] for r in databloom] == [1]


def test_spreads_are_kept_as_vllm_keeps_them(tmp_path: Path) -> None:
    """A standard deviation the tool wrote is a metric of its own (``std_ttft_ms``, in ms), as vLLM's importer keeps
    ``std_ttft_ms``: SGLang's and AIPerf's are no longer dropped, and none is relabelled a standard error."""
    vllm_std = metric(attempt(tmp_path / "v", LAMBDA)[2], "std_ttft_ms")
    assert vllm_std[0] == [raw_json(LAMBDA)["std_ttft_ms"]] and vllm_std[2] == "ms"
    _, _, runs = attempt(tmp_path / "s", AGG)
    samples, locator, unit = metric(runs, "std_ttft_ms")
    assert samples == [raw_lines(AGG)[0]["std_ttft_ms"]] and unit == "ms"
    assert value_at((REAL / AGG).read_bytes(), locator) == samples[0]
    assert metric(runs, "std_e2el_ms")[0] == [raw_lines(AGG)[0]["std_e2e_latency_ms"]]
    _, _, aiperf = attempt(tmp_path / "a", AKAMAS)
    assert metric(aiperf, "std_ttft_ms") == (
        [raw_json(AKAMAS)["time_to_first_token"]["std"]],
        "/time_to_first_token/std",
        "ms",
    )
    assert metric(aiperf, "std_e2el_ms")[0] == [raw_json(AKAMAS)["request_latency"]["std"]]
    assert not any(r.get("stderr") for r in (*runs, *aiperf))


def test_responses_that_arrived_whole_store_no_first_token_latency(tmp_path: Path) -> None:
    """SGLang-dLoRA's server answered each request in one piece: the file's TTFT is the request latency (98.006 ms
    against 97.987 ms) with an inter-token latency of 0 over 285 output tokens. TTFT and ITL were not measured, so
    they are not stored; the record says so, and keeps the latency and throughput it did measure."""
    line = raw_lines(DLORA)[0]
    assert line["median_itl_ms"] == 0.0 and line["total_output_tokens"] == 285 and line["completed"] == 1
    code, _, runs = attempt(tmp_path, DLORA)
    assert code == 0 and len(runs) == 2
    for run in runs:
        assert not [m for m in run["metrics"] if "ttft" in m or "itl" in m or "tpot" in m]
        assert run["not_measured"]["metrics"] == ["median_ttft_ms", "median_itl_ms"]
        assert "arrived whole" in run["not_measured"]["why"] and run["tool"]["streamed"] is False
        assert "not streamed" in run["caveat"] and "median_itl_ms" not in run.get("out_of_bounds", {})
    assert sorted(r["metrics"]["median_e2el_ms"][0] for r in runs) == sorted(
        o["median_e2e_latency_ms"] for o in raw_lines(DLORA)
    )
    line = raw_lines(DLORA100)[0]  # 99 requests: TTFT 31,314 ms against a median latency of 31,987 ms
    [run] = attempt(tmp_path / "100", DLORA100)[2]
    assert run["not_measured"]["metrics"] == ["median_ttft_ms", "median_itl_ms"] and run["tool"]["streamed"] is False
    assert metric([run], "median_e2el_ms")[0] == [line["median_e2e_latency_ms"]]
    assert metric([run], "aggregate_tok_s")[0] == [line["output_throughput"]]
    [streamed] = attempt(tmp_path / "agg", AGG)[2]
    assert "mean_ttft_ms" in streamed["metrics"] and "not_measured" not in streamed


def test_sglang_disaggregated_deployment_states_its_model_and_both_versions(tmp_path: Path) -> None:
    """Against SGLang's prefill/decode router, server_info holds each server's own: the model is read from them,
    the two versions are both stated, the cards are the two servers' (the file names no model_id)."""
    line = raw_lines(PD)[0]
    assert "model_id" not in line and [s["version"] for s in line["server_info"]["prefill"]] == ["0.5.5.post3"]
    code, report, records = attempt(tmp_path / "b", PD, repository="Qwen/Qwen3-32B", runtime=None)
    assert code == 1 and not records
    assert "'Qwen/Qwen2.5-3B-Instruct' is not the packet's weights" in report["findings"][0]["message"]
    code, _, [run] = attempt(tmp_path / "a", PD)
    assert code == 0
    assert run["runtime"] == "SGLang 0.5.5.post3 (prefill) + SGLang 0.5.6 (decode)"
    assert [s["version"] for s in run["tool"]["servers"]["decode"]] == ["0.5.6"]
    assert run["tool"]["servers"]["prefill"][0]["disaggregation_mode"] == "prefill"
    samples, locator, _ = metric([run], "mean_ttft_ms")
    assert samples == [line["mean_ttft_ms"]] and value_at((REAL / PD).read_bytes(), locator) == samples[0]
    code, report, _ = attempt(tmp_path / "c", PD, runtime="SGLang 0.5.6")
    assert code == 1 and "SGLang 0.5.5.post3 (prefill) + SGLang 0.5.6 (decode)" in str(report["findings"])


REFUSED = {
    ("aiperf", "aiperf/refused/anud18-agent-r0.8-csv/profile_export_aiperf.csv"): (
        "this is AIPerf's CSV export (profile_export_aiperf.csv): import the profile_export_aiperf.json AIPerf "
        "wrote beside it"
    ),
    ("aiperf", "aiperf/refused/databloom-llama32-3b-c1-csv/profile_export_aiperf.csv"): (
        "this is AIPerf's CSV export (profile_export_aiperf.csv)"
    ),
    ("aiperf", "aiperf/refused/databloom-llama32-3b-c1-records/profile_export.jsonl"): (
        "this is AIPerf's per-request records (profile_export.jsonl), not its profile export: import the "
        "profile_export_aiperf.json AIPerf wrote beside it"
    ),
    ("llama-bench", "llama-bench/refused/llamacpp-readme-b5163-csv/llama-bench-o-csv.csv"): (
        "this is llama-bench's CSV output: rerun with `-o json` or `-o jsonl`"
    ),
    ("llama-bench", "llama-bench/refused/llamacpp-readme-b5163-md/llama-bench-o-md.md"): (
        "this is llama-bench's Markdown output: rerun with `-o json` or `-o jsonl`"
    ),
    ("vllm-bench", "llama-bench/corpus/andrewmoryakov-ik-llamacpp-zen4-cpu/qwen_tg_t16_fa1_rtr1_muge0_r1.json"): (
        "it looks like llama-bench output"
    ),
    ("llama-bench", "vllm-bench/corpus/nv-action-ascend-llama8b-qps1/serving_llama8B_tp1_1.json"): (
        "it looks like vllm-bench output"
    ),
    ("lm-eval", "vllm-bench/corpus/zhangxinyuehfad-llama8b-qps1/serving_llama8B_tp1_qps_1.json"): (
        "it looks like vllm-bench output"
    ),
}


@pytest.mark.parametrize(("tool", "name"), sorted(REFUSED), ids=lambda v: str(v).split("/")[-1])
def test_another_output_is_refused_naming_what_it_is(tmp_path: Path, tool: str, name: str) -> None:
    """A tool's CSV or Markdown output, or another tool's JSON (with log lines printed into it, or a layout of
    its own), is refused saying what the file is and what to import instead; never as JSON with log lines, never
    with a Python type's name."""
    root = tmp_path / "reg"
    spec = one_packet_registry(root, repository="org/model", quantization="BF16", runtime=None, hardware="H100")
    result = evreg("import", tool, str(REAL / name), "--packet", spec, "--format", "json", cwd=root)
    messages = [f["message"] + " " + (f.get("hint") or "") for f in json.loads(result.stdout)["findings"]]
    assert result.returncode == 1 and any(REFUSED[(tool, name)] in m for m in messages), messages
    for text in messages:
        assert "log line" not in text and "<class" not in text and "{'" not in text
        assert not any(word in text.split() for word in ("dict", "list", "str", "NoneType"))
    assert not imported_records(root)


def test_a_prefill_only_batch_is_a_prefill_measurement_not_a_failure(tmp_path: Path) -> None:
    """SGLang's offline bench_one_batch with one output token writes its prefill and total figures but no decode
    step: that is a prefill measurement (its values at their locators), not a closure that measured nothing. The
    file is the real frgossen result with its first line as the tool writes it for ``--output-len 1``."""
    name = "sglang/corpus/frgossen-cuda-graph-one-batch-offline/result.jsonl"
    first = json.loads((REAL / name).read_text().splitlines()[0])
    for key in ("median_decode_latency", "median_decode_throughput"):
        first.pop(key)
    first["output_len"] = 1
    source = tmp_path / "prefill" / "result.jsonl"
    source.parent.mkdir()
    source.write_text(json.dumps(first) + "\n")
    root = tmp_path / "reg"
    spec = one_packet_registry(root, **CASES[name].packet)
    stated = stating({"cards": 1} | CASES[name].packet, ())
    result = evreg("import", "sglang-one-batch", str(source), "--packet", spec, *stated, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = imported_records(root)
    assert run["kind"] == "run-measurement"
    assert run["metrics"]["input_tok_s"] == [first["prefill_throughput"]]
    assert run["metrics"]["batch_ttft_s"] == [first["prefill_latency"]]
    assert run["workload_fields"] == {"phase": "prefill", "input_tokens": 256, "output_tokens": 1}
