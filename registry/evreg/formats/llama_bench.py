"""``llama-bench -o json`` output (llama.cpp; fields as of build 5163 and later:
``build_commit``, ``gpu_info``, ``model_filename``, ``n_prompt``, ``n_gen``,
``n_depth``, ``samples_ts`` ...).

Each array entry becomes one run measurement of the target packet: the
repetition throughputs ``samples_ts`` are the samples of ``prefill_tok_s``
(a ``pp`` test), ``decode_tok_s`` (a ``tg`` test) or ``combined_tok_s`` (both).
"""

from __future__ import annotations

from typing import Any

from evreg import jsonio
from evreg.findings import join_pointer
from evreg.formats import Importer, ImportRefused, Plan, Target, forbid_citation_markers, need, sha256, stated
from evreg.layout import record_path, slug

CONFIG_KEYS = (
    "n_batch",
    "n_ubatch",
    "n_threads",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "split_mode",
    "flash_attn",
    "n_prompt",
    "n_gen",
    "n_depth",
    "devices",
    "tensor_split",
    "backends",
    "use_mmap",
)


def plan_import(raw: bytes, file: str, target: Target, name: str, state: str, cards: int | None = None) -> Plan:
    results, findings = jsonio.parse(raw, file)
    if findings:
        raise ImportRefused(findings)
    forbid_citation_markers(results, file)
    need(results, list, file, "", "the llama-bench JSON array")
    evidence = target.evidence_path(name)
    plan = Plan()
    plan.add_file(evidence, raw)
    stem = slug(name.rsplit(".", 1)[0])
    for i, r in enumerate(results):
        base = join_pointer(i)
        need(r, dict, file, base, "a benchmark object")
        samples = need(r.get("samples_ts"), list, file, f"{base}/samples_ts", "samples_ts")
        n_prompt = need(r.get("n_prompt"), int, file, f"{base}/n_prompt", "n_prompt")
        n_gen = need(r.get("n_gen"), int, file, f"{base}/n_gen", "n_gen")
        depth = r.get("n_depth", 0)
        commit = need(r.get("build_commit"), str, file, f"{base}/build_commit", "build_commit")
        metric = "prefill_tok_s" if n_gen == 0 else "decode_tok_s" if n_prompt == 0 else "combined_tok_s"
        test = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}-tg{n_gen}"
        rid = slug(f"{stem}-{test}-d{depth}-{i}")
        record: dict[str, Any] = {
            "kind": "run-measurement",
            "id": rid,
            "state": state,
            **target.identity(),
            "runtime": f"llama.cpp {commit}",
            "runtime_family": "llama.cpp",
            "hardware": r.get("gpu_info") or r.get("cpu_info"),
            "config": {k: r[k] for k in CONFIG_KEYS if k in r} | stated(cards),
            "workload": f"llama-bench {test} at depth {depth}, {len(samples)} repetitions",
            "measurement_class": "llama-bench",
            "metrics": {metric: samples},
            "evidence": evidence,
            "evidence_sha256": {evidence: sha256(raw)},
            "evidence_locators": {f"{metric}[{j}]": f"{base}/samples_ts/{j}" for j in range(len(samples))},
            "tool": {
                k: r[k] for k in ("build_commit", "build_number", "model_filename", "model_type", "test_time") if k in r
            },
        }
        if "runtime" in target.data and target.data["runtime"] != record["runtime"]:
            record["packet_runtime"] = target.data["runtime"]
        plan.add(record_path("run-measurement", target.family, rid, target.packet), record)
    plan.notes.append(f"{len(results)} llama-bench results into packet {target.packet}")
    return plan


IMPORTER = Importer(
    "llama-bench",
    "Import `llama-bench -o json` output into a packet.",
    lambda r: plan_import(r.raw, r.file, r.packet(), r.name, r.state, r.cards),
)
