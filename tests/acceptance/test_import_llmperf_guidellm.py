"""LLMPerf summaries and GuideLLM reports, read value by value from the real files of the corpus: the statistics
and their locators, the load as workload fields, failed runs as closures, and refusals (another packet's scope,
another tool's file, LLMPerf's per-request file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evreg.claims.citations import unit_of
from helpers import SHARED, evreg, one_packet_registry, stating

REAL = SHARED / "real"
GROQ = REAL / "llmperf/corpus/leaderboard-groq-llama2-70b/groq_70b.json"
C24 = REAL / "llmperf/corpus/hongxuanzhang-llama2-7b-c24/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json"
PER_REQUEST = REAL / "llmperf/individual/meta-llama-Llama-2-7b-chat-hf_550_150_individual_responses.json"
QWEN = REAL / "guidellm/corpus/danielkorat-qwen3-4b-fp8-c4/Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json"
OLD = REAL / "guidellm/corpus/guidellm-tests-sync-2025-06/benchmarks_stripped.json"

LLAMA = dict(repository="meta-llama/Llama-2-7b-chat-hf", quantization="FP16", runtime=None, hardware="unknown GPU")
QWEN_PACKET = dict(
    repository="Qwen/Qwen3-4B-Thinking-2507", quantization="FP8", runtime=None, hardware="unknown GPU", cards=4
)


def run(tmp_path: Path, tool: str, file: Path, **packet: Any) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """Import ``file`` with ``tool`` into a packet of ``packet``'s scope: exit code, JSON report, records written."""
    root = tmp_path / "reg"
    spec = one_packet_registry(root, **packet)
    stated = stating({"cards": 1} | packet, ())
    result = evreg("import", tool, str(file), "--packet", spec, *stated, "--format", "json", cwd=root)
    records = [
        json.loads(p.read_text())
        for p in sorted((root / "packets").rglob("*.json"))
        if p.parent.name in ("measurements", "closures")
    ]
    return result.returncode, json.loads(result.stdout), records


def edited(tmp_path: Path, source: Path, change: Any) -> Path:
    """A copy of real file ``source`` with ``change`` applied to its JSON (a situation no corpus file shows)."""
    doc = json.loads(source.read_text())
    change(doc)
    path = tmp_path / "input" / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def at(raw: dict[str, Any], pointer: str) -> Any:
    node: Any = raw
    for part in pointer.strip("/").split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


# -- LLMPerf -----------------------------------------------------------------------------------------------------


def test_llmperf_summary_keeps_seconds_and_states_its_load(tmp_path: Path) -> None:
    code, _, [rec] = run(tmp_path, "llmperf", C24, **LLAMA)
    raw = json.loads(C24.read_text())
    assert code == 0 and rec["kind"] == "run-measurement"
    assert rec["metrics"]["mean_ttft_s"] == [raw["results_ttft_s_mean"]] == [0.7092350025244135]
    assert rec["evidence_locators"]["mean_ttft_s[0]"] == "/results_ttft_s_mean" and unit_of("mean_ttft_s") == "s"
    assert rec["evidence_locators"]["p99_e2el_s[0]"] == "/results_end_to_end_latency_s_quantiles_p99"
    assert rec["metrics"]["p99_e2el_s"] == [5.0840243804152125]
    assert rec["metrics"]["aggregate_tok_s"] == [raw["results_mean_output_throughput_token_per_s"]]
    assert rec["metrics"]["mean_e2el_per_token_s"] == [raw["results_inter_token_latency_s_mean"]]
    assert rec["metrics"]["user_output_tok_s"] == [raw["results_request_output_throughput_token_per_s_mean"]]
    assert not any(m.endswith("_ms") or "itl" in m for m in rec["metrics"])  # no silent conversion or renaming
    # 550±150 and 150±10 tokens: the lengths varied, so they are no workload field
    assert rec["workload_fields"] == {"phase": "serving", "sample": "run", "concurrency": 24, "requests": 96}
    assert rec["tool"]["results_num_completed_requests_per_min"] == 277.0174022677183


def test_llmperf_fixed_lengths_and_served_name(tmp_path: Path) -> None:
    packet = dict(repository="meta-llama/Llama-2-70b-chat-hf", quantization="FP16", runtime=None, hardware="Groq LPU")
    code, report, [rec] = run(tmp_path, "llmperf", GROQ, **packet)
    assert code == 0 and "'llama2-70b-4096', the name the API answered to" in str(report["findings"])
    assert rec["workload_fields"]["input_tokens"] == 550 and rec["workload_fields"]["output_tokens"] == 150
    assert rec["workload_fields"]["concurrency"] == 5 and rec["tool"]["framework"] == "groq"
    assert rec["metrics"]["p50_ttft_s"] == [0.2218883791938424]


def test_llmperf_refuses_another_packets_model(tmp_path: Path) -> None:
    code, report, records = run(tmp_path, "llmperf", C24, **(LLAMA | {"repository": "Qwen/Qwen3-8B"}))
    [finding] = report["findings"]
    assert code == 1 and finding["code"] == "import-out-of-scope" and records == []
    assert "'meta-llama/Llama-2-7b-chat-hf' is not the packet's weights (Qwen/Qwen3-8B)" in finding["message"]


def test_llmperf_per_request_file_is_refused_naming_the_summary(tmp_path: Path) -> None:
    code, report, records = run(tmp_path, "llmperf", PER_REQUEST, **LLAMA)
    [finding] = report["findings"]
    assert code == 1 and records == [] and "per-request file" in finding["message"]
    assert "meta-llama-Llama-2-7b-chat-hf_550_150_summary.json" in finding["hint"]


def test_llmperf_run_with_no_completed_request_is_a_closure(tmp_path: Path) -> None:
    def fail(doc: dict[str, Any]) -> None:
        doc |= {"results_num_completed_requests": 0, "results_number_errors": 150, "results_error_rate": 1.0}

    code, _, [closure] = run(tmp_path, "llmperf", edited(tmp_path, GROQ, fail), **LLAMA)
    assert code == 0 and closure["kind"] == "closure" and "LLMPerf completed no request" in closure["reason"]
    assert closure["failure"]["results_number_errors"] == 150


# -- GuideLLM ----------------------------------------------------------------------------------------------------


def test_guidellm_new_layout_statistics_and_concurrency(tmp_path: Path) -> None:
    code, _, [rec] = run(tmp_path, "guidellm", QWEN, **QWEN_PACKET)
    raw = json.loads(QWEN.read_text())
    assert code == 0
    base = "/benchmarks/0/metrics"
    for metric, pointer in (
        ("mean_ttft_ms", f"{base}/time_to_first_token_ms/successful/mean"),
        ("p99_tpot_ms", f"{base}/inter_token_latency_ms/successful/percentiles/p99"),
        ("median_e2el_s", f"{base}/request_latency/successful/median"),
        ("aggregate_tok_s", f"{base}/output_tokens_per_second/successful/mean"),
    ):
        assert rec["evidence_locators"][f"{metric}[0]"] == pointer
        assert rec["metrics"][metric] == [at(raw, pointer)]
    assert unit_of("median_e2el_s") == "s" and unit_of("p99_tpot_ms") == "ms"
    assert rec["workload_fields"] == {"phase": "serving", "sample": "run", "concurrency": 4, "requests": 4}
    assert rec["tool"]["version"] == "0.5.0.dev0" and rec["tool"]["model"] == "Qwen/Qwen3-4B-Thinking-2507"


def test_guidellm_old_layout_synchronous_fixed_synthetic_lengths(tmp_path: Path) -> None:
    packet = dict(repository="example/example_model", quantization="BF16", runtime=None, hardware="unknown GPU")
    code, _, [rec] = run(tmp_path, "guidellm", OLD, **packet)
    raw = json.loads(OLD.read_text())
    assert code == 0
    pointer = "/benchmarks/0/metrics/time_to_first_token_ms/successful/percentiles/p999"
    assert rec["evidence_locators"]["p99_9_ttft_ms[0]"] == pointer and rec["metrics"]["p99_9_ttft_ms"] == [
        at(raw, pointer)
    ]
    assert rec["metrics"]["requests_per_s"] == [1.5481806532737452]
    assert rec["workload_fields"] == {
        "phase": "serving",
        "sample": "run",
        "concurrency": 1,
        "input_tokens": 256,
        "output_tokens": 128,
        "requests": 47,
    }


def test_guidellm_rate_strategies_are_their_arrival(tmp_path: Path) -> None:
    """The strategies no corpus file shows, on a real report with its strategy changed."""
    cases = {
        "constant": ({"type_": "constant", "rate": 5.0}, {"request_rate": 5.0, "arrival": "constant"}),
        "poisson": ({"type_": "poisson", "rate": 2.5}, {"request_rate": 2.5, "arrival": "poisson"}),
        "throughput": ({"type_": "throughput", "max_concurrency": 512}, {"arrival": "burst"}),
    }
    for name, (strategy, expected) in cases.items():

        def change(doc: dict[str, Any], strategy: dict[str, Any] = strategy) -> None:
            doc["benchmarks"][0]["config"]["strategy"] = strategy

        code, _, [rec] = run(tmp_path / name, "guidellm", edited(tmp_path / name, QWEN, change), **QWEN_PACKET)
        fields = rec["workload_fields"]
        assert code == 0 and {k: fields[k] for k in expected} == expected and "concurrency" not in fields, name


def test_guidellm_benchmark_with_no_successful_request_is_a_closure(tmp_path: Path) -> None:
    def fail(doc: dict[str, Any]) -> None:
        doc["benchmarks"][0]["metrics"]["request_totals"] |= {"successful": 0, "errored": 4}

    code, _, [closure] = run(tmp_path, "guidellm", edited(tmp_path, QWEN, fail), **QWEN_PACKET)
    assert code == 0 and closure["kind"] == "closure" and "no request succeeded" in closure["reason"]
    assert closure["failure"]["request_totals"]["errored"] == 4


def test_guidellm_refuses_another_packets_model_and_the_wrong_importer(tmp_path: Path) -> None:
    code, report, records = run(tmp_path / "a", "guidellm", QWEN, **(QWEN_PACKET | {"repository": "Qwen/Qwen3-8B"}))
    [finding] = report["findings"]
    assert code == 1 and finding["code"] == "import-out-of-scope" and records == []
    assert "'Qwen/Qwen3-4B-Thinking-2507' is not the packet's weights" in finding["message"]
    code, report, _ = run(tmp_path / "b", "llmperf", QWEN, **QWEN_PACKET)
    assert code == 1 and "looks like guidellm output" in report["findings"][0]["message"]
    code, report, _ = run(tmp_path / "c", "guidellm", C24, **LLAMA)
    assert code == 1 and "looks like llmperf output" in report["findings"][0]["message"]
