"""SGLang ``python -m sglang.bench_one_batch_server --result-filename FILE`` output: JSON Lines, one object per
(batch size, input length, output length) appended to the file: ``run_name``, ``batch_size``, ``input_len``,
``output_len``, ``latency`` and ``last_ttft`` in **seconds**, ``input_throughput``, ``output_throughput``,
``overall_throughput`` and ``last_gen_throughput`` in tok/s, later ``acc_length`` (-1 without speculative
decoding) and ``cache_hit_rate`` (null when not measured).

Every line becomes one run measurement of the target packet (a closure when it measured no output throughput),
every number in the unit the tool wrote with its ``line:N:K`` locator: the batch's latency and last TTFT as
``batch_latency_s`` and ``batch_ttft_s``, output throughput as ``aggregate_tok_s``, input as ``input_tok_s``,
input and output together as ``total_tok_s``, the last decode step's throughput as ``last_decode_tok_s``, the
acceptance length (when speculative decoding ran) as ``mean_acceptance_length``. The file names neither the model
nor the server: ``--runtime`` and ``--cards`` state them as you ran it, and the rest is reported as missing.

The offline ``python -m sglang.bench_one_batch`` writes the same kind of file (``result.jsonl``) with other keys:
``prefill_latency`` and ``total_latency`` (seconds) as ``batch_ttft_s`` and ``batch_latency_s``, ``prefill_throughput``
as ``input_tok_s``, ``overall_throughput`` as ``total_tok_s``, and the median decode step's latency and throughput as
``median_decode_step_s`` and ``median_decode_tok_s`` (a median step, not the server benchmark's mean output
throughput, so a metric of its own).
"""

from __future__ import annotations

from typing import Any

from evreg import formats
from evreg.formats import serving as sv

FORMAT = "SGLang bench_one_batch_server or bench_one_batch output (JSON Lines from --result-filename)"
METRICS = {
    "latency": "batch_latency_s",
    "last_ttft": "batch_ttft_s",
    "input_throughput": "input_tok_s",
    "output_throughput": "aggregate_tok_s",
    "overall_throughput": "total_tok_s",
    "last_gen_throughput": "last_decode_tok_s",
    "acc_length": "mean_acceptance_length",
    # the offline bench_one_batch
    "prefill_latency": "batch_ttft_s",
    "total_latency": "batch_latency_s",
    "prefill_throughput": "input_tok_s",
    "median_decode_latency": "median_decode_step_s",
    "median_decode_throughput": "median_decode_tok_s",
}
"""Keys that are measurements, and the metric each is recorded as (its unit in the vocabulary)."""
SETTINGS = ("run_name", "batch_size", "input_len", "output_len")
NOT_MEASURED = {"acc_length": -1}
"""Values the tool writes for a statistic it did not measure (no speculative decoding): kept in ``tool``."""


def _objects(request: formats.Request) -> list[sv.Line]:
    """(line number, line, object) of every result; refuses a file that is not bench_one_batch_server's."""
    return sv.json_lines(
        request,
        "sglang-one-batch",
        FORMAT,
        "bench_one_batch_server",
        lambda o: "batch_size" in o and bool({"latency", "total_latency"} & o.keys()),
        "batch_size and latency (or total_latency)",
    )


def _numbers(obj: dict[str, Any], n: int, line: str, file: str) -> sv.Numbers:
    numbers = sv.Numbers()
    for key, metric in METRICS.items():
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or NOT_MEASURED.get(key) == value:
            continue
        sv.add_keyed(numbers, n, line, key, value, metric, file)
    return numbers


def _run(request: formats.Request, n: int, line: str, obj: dict[str, Any], evidence: str) -> tuple[str, dict[str, Any]]:
    """(path, run measurement or closure) for line ``n``."""
    target, raw = request.packet(), request.raw
    config = sv.scalars(obj, SETTINGS)
    offline = "latency" not in obj  # bench_one_batch, not bench_one_batch_server
    bench = "bench_one_batch" if offline else "bench_one_batch_server"
    tool = {"name": f"sglang-{bench}"} | {
        k: v for k, v in sv.scalars(obj).items() if k not in SETTINGS and (k not in METRICS or NOT_MEASURED.get(k) == v)
    }
    numbers = _numbers(obj, n, line, request.file)
    decoded = any(v > 0 for k in ("aggregate_tok_s", "median_decode_tok_s") for v in numbers.metrics.get(k, []))
    prefill_only = obj.get("output_len") == 1  # one output token: no decode step to measure
    if not numbers.metrics or not (decoded or prefill_only):
        reason = f"SGLang {bench} measured no output throughput: the batch measured nothing"
        rid = formats.content_id("sglang-one-batch", raw, target, f"l{n}", "failed")
        return formats.failed_run(target, rid, evidence, raw, reason, {"line": n, "settings": config})
    body: dict[str, Any] = {
        "measurement_class": "sglang-bench-one-batch" + ("-offline" if offline else ""),
        "workload": f"sglang.{bench} line {n}: {config.get('run_name', '?')}, batch size "
        f"{obj.get('batch_size')}, {obj.get('input_len')} in / {obj.get('output_len')} out",
        "config": config,
        "tool": tool,
        **numbers.body(),
    }
    if obj.get("output_len") == 1 and isinstance(obj.get("input_len"), int):
        # one output token: the batch measured its prefill (no decode step), which is a measurement, not a failure
        body["workload_fields"] = {"phase": "prefill", "input_tokens": obj["input_len"], "output_tokens": 1}
    return sv.run_record(request, formats.content_id("sglang-one-batch", raw, target, f"l{n}"), evidence, body)


def plan(request: formats.Request) -> formats.Plan:
    """Every line one batch. The file names no model, engine or hardware: the stated runtime (``--runtime``, which
    must be SGLang) is compared with the packet's, and what is not stated is reported missing."""
    target = request.packet()
    runs = _objects(request)
    out = formats.Plan()
    found = sv.identity(request, backend=("sglang", ""))
    formats.check_scope(out, target, found, request.file)
    sv.add_lines(out, request, runs, _run, "SGLang bench_one_batch_server results", "measured nothing")
    return out


IMPORTER = formats.Importer(
    "sglang-one-batch",
    "Import SGLang bench_one_batch_server output (the JSON Lines of --result-filename) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
