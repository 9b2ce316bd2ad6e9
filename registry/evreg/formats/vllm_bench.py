"""vLLM serving benchmark results: ``vllm bench serve --save-result`` JSON (0.10 and later), the older
``benchmarks/benchmark_serving.py`` JSON, ``--append-result`` JSON Lines (one result per line) and a
``vllm bench sweep`` ``summary.json`` (an array of results, each with its sweep parameters).

A result holds run settings (``model_id``, ``num_prompts``, ``request_rate``, ``burstiness``,
``max_concurrency``, sweep and multi-turn parameters), counts (``completed``, ``failed``), throughputs
(``request_throughput`` requests/s, ``input_throughput``, ``output_throughput``, ``total_token_throughput``
tok/s) and latency statistics in milliseconds (``mean|median|std|pNN`` of ttft, tpot, itl, e2el, and the
older ``*_latency_ms``). vLLM's nightly-benchmark results (``run-nightly-benchmarks``, also vLLM Ascend's) keep
only the settings and the latency statistics: they import as latency measurements whose counts are unknown.

Each result becomes one run measurement of the target packet: output throughput as ``aggregate_tok_s``,
total throughput as ``total_tok_s``, input as ``input_tok_s``, requests as ``requests_per_s``, every
latency statistic under its own ``*_ms`` name, each with a locator back into the file. The file names the
model (compared with the packet) but neither the vLLM version nor the hardware: ``--runtime`` states the
version as you ran it (compared with the packet's), and what is not stated stays missing. A result with no
completed request is a failed run (a closure with its reason); failed requests of a partial run are stated
in the record.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from evreg.core.layout import record_path
from evreg.formats import (
    FileIdentity,
    Importer,
    Option,
    Plan,
    Request,
    Source,
    check_scope,
    content_id,
    earlier_imports,
    evidence_for,
    failed_run,
    forbid_citation_markers,
    link_correction,
    need,
    quantization_of_name,
    read_source,
    refuse,
    refuse_other_format,
    sha256,
    stated,
)
from evreg.formats.serving import UNSTREAMED, UNSTREAMED_KINDS, arrived_whole, per_request, serving_fields

LATENCY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_([a-z0-9_]+?)_ms$")
THROUGHPUT = {
    "output_throughput": "aggregate_tok_s",
    "total_token_throughput": "total_tok_s",
    "input_throughput": "input_tok_s",
    "request_throughput": "requests_per_s",
    "max_output_tokens_per_s": "peak_output_tok_s",
    "spec_decode_acceptance_length": "mean_acceptance_length",
    "spec_decode_acceptance_rate": "draft_acceptance_pct",
}
"""Result keys that are measurements, and the metric each is recorded as (its unit from the name)."""
TOOL_KEYS = {
    "date",
    "model_id",
    "tokenizer_id",
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "max_concurrent_requests",
    "request_goodput",
    "rtfx",
}
"""Result keys that describe what happened (counts, durations, names): kept beside the metrics."""
TOOL_PREFIXES = ("total_", "spec_decode_", "conversations_", "avg_", "max_concurrent")
"""Prefixes of further counts some versions write (multi-turn, speculative decoding)."""


def is_count(key: str) -> bool:
    return key in TOOL_KEYS or key.startswith(TOOL_PREFIXES)


def plan_request(request: Request) -> Plan:
    target, file, raw = request.packet(), request.file, request.raw
    source = read_source(raw, file, "vllm bench serve results")
    rows = source.rows()
    refuse_other_format([row for _, _, row in rows], file, "vllm-bench", "vllm bench serve output")
    if not rows or rows == [(0, "", [])]:
        raise refuse(file, "", "the file holds no benchmark results; nothing to import", "pass the saved result")
    evidence = evidence_for(target, request.name, raw)
    plan = Plan()
    plan.add_file(evidence, raw)
    earlier = earlier_imports(target, request.name)
    failed = 0
    for n, (index, base, row) in enumerate(rows):
        need(row, dict, file, base, "a benchmark result object")
        forbid_citation_markers({k: v for k, v in row.items() if not isinstance(v, list)}, file)
        path, record = result_record(plan, request, source, (n, index, base), row, evidence)
        link_correction(record, earlier, str(n))
        failed += record["kind"] == "closure"
        plan.add(path, record)
    plan.notes.append(
        f"{len(rows)} vllm bench serve results into packet {target.packet}"
        + (f" ({failed} failed runs recorded as closures)" if failed else "")
    )
    return plan


def identity(request: Request, row: dict[str, Any], base: str) -> FileIdentity:
    model = row.get("model_id") if isinstance(row.get("model_id"), str) else None
    runtime = request.options.get("runtime") or None
    return FileIdentity(
        model=model,
        quantization=quantization_of_name(model) if model else None,
        runtime=runtime,
        stated=("runtime",),
        where={"model": f"{base}/model_id", "quantization": f"{base}/model_id"},
    )


def result_record(
    plan: Plan, request: Request, source: Source, at: tuple[int, int, str], row: dict[str, Any], evidence: str
) -> tuple[str, dict[str, Any]]:
    target, file, raw = request.packet(), request.file, request.raw
    n, index, base = at
    completed = counts(row, file, base)
    found = identity(request, row, base)
    check_scope(plan, target, found, file, base)
    concurrency = row.get("max_concurrency")
    rid = content_id("vllm-bench", raw, target, f"c{concurrency}" if concurrency is not None else "", n)
    failed = row.get("failed") if isinstance(row.get("failed"), int) else None
    if completed == 0:
        errors = [e for e in row.get("errors") or [] if isinstance(e, str) and e]
        reason = (
            f"vllm bench serve: none of {row.get('num_prompts', '?')} requests completed"
            + (f" ({failed} failed)" if failed is not None else "")
            + (f"; first error: {errors[0][:200]}" if errors else "")
        )
        path, closure = failed_run(target, rid, evidence, raw, reason, {"row": n, "completed": 0, "failed": failed})
        closure["imported_from"] = {"file": request.name, "row": str(n)}
        return path, closure
    metrics, locators = measurements(source, index, base, row)
    if not metrics:
        raise refuse(file, base or "/", "the result holds no positive throughput or latency", "pass the saved result")
    whole = arrived_whole(latencies(row), per_request(row.get("total_output_tokens"), completed))
    unmeasured = [m for m in metrics if LATENCY.fullmatch(m) and m.split("_")[-2] in UNSTREAMED_KINDS] if whole else []
    for name in unmeasured:
        del metrics[name], locators[f"{name}[0]"]
    record: dict[str, Any] = {
        "kind": "run-measurement",
        "id": rid,
        "state": request.state,
        **target.identity(),
        **({"runtime": found.runtime, "runtime_family": found.runtime.split()[0]} if found.runtime else {}),
        "config": settings(row) | stated(request.cards),
        "workload": workload(row, completed, failed),
        "workload_fields": serving_fields(
            concurrency=row.get("max_concurrency"),
            request_rate=row.get("request_rate"),
            requests=row.get("num_prompts"),
            # vLLM draws random lengths from len x [1 - ratio, 1 + ratio]: a length is fixed only at a ratio of zero
            input_tokens=row.get("random_input_len") if row.get("random_range_ratio") == 0 else None,
            output_tokens=row.get("random_output_len") if row.get("random_range_ratio") == 0 else None,
            dataset=row.get("dataset_name"),
            burstiness=row.get("burstiness"),
        ),
        "measurement_class": "vllm-bench-serve",
        "metrics": metrics,
        "evidence": evidence,
        "evidence_sha256": {evidence: sha256(raw)},
        "tool": {
            k: v
            for k, v in row.items()
            if not isinstance(v, list | dict) and ((is_count(k) and k not in THROUGHPUT) or _zero_measure(k, v))
        },
        "imported_from": {"file": request.name, "row": str(n)},
    }
    if failed:
        record["failures"] = {"failed_requests": failed, "completed_requests": completed}
    if whole:
        record["not_measured"] = {"metrics": unmeasured, "why": UNSTREAMED}
        record["tool"]["streamed"] = False
        record["caveat"] = "The responses arrived whole, not streamed: not_measured lists the latencies not measured."
    if all(locators.values()):
        record["evidence_locators"] = locators
    if source.encoding != "utf-8":
        record["evidence_encoding"] = source.encoding
    return record_path("run-measurement", target.family, rid, target.packet), record


def _zero_measure(key: str, value: Any) -> bool:
    """A statistic of zero (the spread of one request, a counter that stayed 0): a fact about the run, kept
    with the counts; no throughput or latency is zero."""
    return (key in THROUGHPUT or bool(LATENCY.fullmatch(key))) and value == 0


def measurements(
    source: Source, index: int, base: str, row: dict[str, Any]
) -> tuple[dict[str, list[Any]], dict[str, str | None]]:
    metrics: dict[str, list[Any]] = {}
    locators: dict[str, str | None] = {}
    for key, value in row.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        name = THROUGHPUT.get(key) or (key.replace(".", "_") if LATENCY.fullmatch(key) else None)
        if name is None or not math.isfinite(value) or value <= 0:
            continue  # NaN (a statistic of no request) or zero: no measurement
        metrics[name] = [value]
        locators[f"{name}[0]"] = source.locator(index, f"{base}/{key}")
    return metrics, locators


def latencies(row: dict[str, Any]) -> dict[tuple[str, str], float]:
    """The result's latency statistics by (statistic, kind): ``median_ttft_ms`` is (median, ttft)."""
    out: dict[tuple[str, str], float] = {}
    for key, value in row.items():
        m = LATENCY.fullmatch(key)
        if m and isinstance(value, int | float) and not isinstance(value, bool):
            out[(m.group(1), m.group(2))] = float(value)
    return out


def settings(row: dict[str, Any]) -> dict[str, Any]:
    """Every scalar setting of the run (what is neither a measurement nor a count), as written."""
    return {
        k: v
        for k, v in row.items()
        if v is not None
        and not isinstance(v, list | dict)
        and k not in THROUGHPUT
        and not is_count(k)
        and not LATENCY.fullmatch(k)
    }


def counts(row: dict[str, Any], file: str, base: str) -> int | None:
    """The result's ``completed`` count; None for vLLM's nightly-benchmark layout (``benchmarks/
    run-nightly-benchmarks``), which keeps only the latency statistics (no counts, no throughput)."""
    if "completed" not in row and "output_throughput" not in row and any(LATENCY.fullmatch(k) for k in row):
        return None
    if "completed" not in row and "output_throughput" not in row:
        raise refuse(
            file,
            base or "/",
            "not vllm bench serve output: a result holds completed, output_throughput, request_throughput and "
            "latency statistics (mean_ttft_ms, median_tpot_ms, ...)",
            "pass the file vllm bench serve --save-result wrote, unmodified",
        )
    need(row.get("output_throughput"), (int, float), file, f"{base}/output_throughput", "output_throughput")
    return int(need(row.get("completed"), int, file, f"{base}/completed", "completed"))


def workload(row: dict[str, Any], completed: int | None, failed: int | None) -> str:
    concurrency = row.get("max_concurrency")
    text = (
        f"vllm bench serve: {row.get('num_prompts', '?')} prompts, request rate {row.get('request_rate', '?')}, "
        f"max concurrency {concurrency if concurrency is not None else 'unbounded'}; "
        + (f"{completed} completed" if completed is not None else "latency statistics only (no counts)")
    )
    return text + (f", {failed} failed" if failed else "")


def sweep_files(folder: Path) -> list[Path]:
    """A ``vllm bench sweep`` output folder: the ``summary.json`` of each point (it holds every run of the point,
    with the point's parameters; the ``run=N.json`` files beside it repeat them one by one)."""
    return sorted(folder.rglob("summary.json"))


IMPORTER = Importer(
    "vllm-bench",
    "Import `vllm bench serve --save-result` output (JSON, --append-result JSON Lines, a sweep summary.json, or a "
    "`vllm bench sweep` output folder).",
    plan_request,
    folder=sweep_files,
    options=(
        Option(
            "runtime",
            "",
            "The vLLM version as you ran it, e.g. 'vLLM 0.11.0' (the file does not record it); compared with the "
            "packet's. Without it the records state no runtime.",
        ),
    ),
)
