"""``vllm bench serve --save-result`` JSON (vLLM's ``vllm/benchmarks/serve.py``,
0.10 and later): run settings (``model_id``, ``num_prompts``,
``request_rate``, ``burstiness``, ``max_concurrency``) merged with the
benchmark result (``completed``, ``duration``, ``request_throughput``,
``output_throughput``, ``total_token_throughput``, and for each of ttft,
tpot, itl and e2el: ``mean_*_ms``, ``median_*_ms``, ``std_*_ms``, ``p99_*_ms`` ...).

One file becomes one run measurement of the target packet: aggregate output
throughput as ``aggregate_tok_s``, every latency statistic under its own key
(milliseconds), each with a locator back into the file.
"""

from __future__ import annotations

import re
from typing import Any

from evreg import jsonio
from evreg.formats import Importer, ImportRefused, Plan, Target, forbid_citation_markers, need, sha256, stated
from evreg.layout import record_path, slug

_LATENCY = re.compile(r"^(mean|median|std|p\d+(\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")
SETTINGS = ("num_prompts", "request_rate", "burstiness", "max_concurrency", "backend", "endpoint_type", "label")


def plan_import(raw: bytes, file: str, target: Target, name: str, state: str, cards: int | None = None) -> Plan:
    result, findings = jsonio.parse(raw, file)
    if findings:
        raise ImportRefused(findings)
    forbid_citation_markers(result, file)
    need(result, dict, file, "", "the vllm bench serve result object")
    need(result.get("output_throughput"), (int, float), file, "/output_throughput", "output_throughput")
    completed = need(result.get("completed"), int, file, "/completed", "completed")
    evidence = target.evidence_path(name)
    metrics: dict[str, list[Any]] = {"aggregate_tok_s": [result["output_throughput"]]}
    locators = {"aggregate_tok_s[0]": "/output_throughput"}
    for key in ("total_token_throughput", "request_throughput"):
        if isinstance(result.get(key), int | float):
            metrics[key] = [result[key]]
            locators[f"{key}[0]"] = f"/{key}"
    for key, value in result.items():
        if _LATENCY.fullmatch(key) and isinstance(value, int | float) and not isinstance(value, bool):
            name_ = key.replace(".", "_")
            metrics[name_] = [value]
            locators[f"{name_}[0]"] = f"/{key}"
    rid = slug(f"vllm-bench-{name.rsplit('.', 1)[0]}")
    concurrency = result.get("max_concurrency")
    record = {
        "kind": "run-measurement",
        "id": rid,
        "state": state,
        **target.identity(),
        "config": {k: result[k] for k in SETTINGS if k in result and result[k] is not None} | stated(cards),
        "workload": f"vllm bench serve: {result.get('num_prompts')} prompts, "
        f"request rate {result.get('request_rate')}, "
        f"max concurrency {concurrency if concurrency is not None else 'unbounded'}; "
        f"{completed} completed",
        "measurement_class": "vllm-bench-serve",
        "metrics": metrics,
        "evidence": evidence,
        "evidence_sha256": {evidence: sha256(raw)},
        "evidence_locators": locators,
        "tool": {
            k: result[k]
            for k in (
                "date",
                "model_id",
                "tokenizer_id",
                "duration",
                "completed",
                "failed",
                "total_input_tokens",
                "total_output_tokens",
            )
            if k in result
        },
    }
    plan = Plan()
    plan.add_file(evidence, raw)
    plan.add(record_path("run-measurement", target.family, rid, target.packet), record)
    plan.notes.append(f"1 vllm bench serve result into packet {target.packet} ({len(metrics)} metrics)")
    return plan


IMPORTER = Importer(
    "vllm-bench",
    "Import a `vllm bench serve --save-result` JSON file into a packet.",
    lambda r: plan_import(r.raw, r.file, r.packet(), r.name, r.state, r.cards),
)
