"""vLLM's offline benchmarks, which run the engine in-process (no server): ``vllm bench latency --output-json FILE``
and ``vllm bench throughput --output-json FILE``, and the older ``benchmarks/benchmark_latency.py`` and
``benchmarks/benchmark_throughput.py`` they replaced, which write the same JSON (``json.dump(..., indent=4)``).

- **Latency**: ``avg_latency``, ``latencies`` (the seconds each timed iteration took to run one batch of
  prompts end to end) and ``percentiles`` (``"10"`` to ``"99"``, over those iterations). The iterations are the
  repeats of one run: they are the samples of ``batch_latency_s``, each with its locator (``/latencies/N``); the
  tool's own mean and percentiles of them are kept in ``tool``.
- **Throughput**: ``elapsed_time`` (seconds), ``num_requests``, ``total_num_tokens`` (prompt and output tokens
  together), ``requests_per_second`` and ``tokens_per_second``: one run, recorded as ``requests_per_s`` and
  ``total_tok_s``; the counts and the elapsed time are kept in ``tool``, the request count also as the workload's
  ``requests``.

The files name neither the model, the engine's version nor the hardware, nor the batch size and the input and
output lengths (they are the command line's, not the file's): those workload fields stay unstated, and the
import warns ``import-identity-missing``. ``--runtime`` states the vLLM version as you ran it (it must be vLLM)
and ``--hardware`` the accelerators, each compared with the packet's.
"""

from __future__ import annotations

import json
import math
from typing import Any

from evreg import formats
from evreg.formats import serving as sv
from evreg.formats.reading import VLLM_LATENCY, VLLM_THROUGHPUT

FORMAT = "vLLM offline benchmark output (vllm bench latency / throughput --output-json)"
LATENCY_KEYS = tuple(sorted(VLLM_LATENCY))
THROUGHPUT_KEYS = tuple(sorted(VLLM_THROUGHPUT))
THROUGHPUT = {"requests_per_second": "requests_per_s", "tokens_per_second": "total_tok_s"}
"""Throughput keys that are measurements, and the metric each is recorded as (its unit in the vocabulary)."""
RUNTIME_OPTION = formats.Option(
    "runtime",
    "",
    "The vLLM version as you ran it, e.g. 'vLLM 0.9.2' (the file does not record it; it must be vLLM); compared "
    "with the packet's. Without it the records state no runtime.",
)


def kind_of(doc: Any) -> str | None:
    """``latency`` or ``throughput``: which offline benchmark wrote ``doc`` (None if neither)."""
    if not isinstance(doc, dict):
        return None
    if doc.keys() >= VLLM_LATENCY:
        return "latency"
    if doc.keys() >= VLLM_THROUGHPUT:
        return "throughput"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _latency(request: formats.Request, source: formats.Source, doc: dict[str, Any]) -> dict[str, Any]:
    """The body of a latency run: its iterations as the samples of ``batch_latency_s``."""
    file = request.file
    samples = formats.need(doc.get("latencies"), list, file, "/latencies", "latencies")
    for i, value in enumerate(samples):  # a malformed iteration is refused, never published as a measurement
        if not _number(value) or value <= 0:
            raise formats.refuse(
                file,
                f"/latencies/{i}",
                f"vllm bench latency: iteration {i} took {json.dumps(value)}, not a positive number of seconds",
                "pass the file as vLLM wrote it",
            )
    if not samples:
        raise formats.refuse(file, "/latencies", "the file holds no timed iteration", "pass the file vLLM wrote")
    percentiles = doc.get("percentiles") if isinstance(doc.get("percentiles"), dict) else {}
    tool: dict[str, Any] = {"name": "vllm-bench-latency", "iterations": len(samples)}
    if _number(doc.get("avg_latency")):
        tool["avg_latency_s"] = doc["avg_latency"]
    if percentiles:
        tool["percentiles_s"] = {str(k): v for k, v in percentiles.items() if _number(v)}
    return {
        "measurement_class": "vllm-bench-latency",
        "workload": f"vllm bench latency: one batch end to end, {len(samples)} timed iterations (batch size and "
        "lengths not in the file)",
        "workload_fields": {"sample": "repeat"},
        "metrics": {"batch_latency_s": list(samples)},
        "evidence_locators": {
            f"batch_latency_s[{i}]": source.locator(0, f"/latencies/{i}") for i in range(len(samples))
        },
        "tool": tool,
    }


def _throughput(request: formats.Request, doc: dict[str, Any]) -> dict[str, Any]:
    """The body of a throughput run: requests and tokens per second, the counts beside them."""
    file = request.file
    numbers = sv.Numbers()
    for key, metric in THROUGHPUT.items():
        value = formats.need(doc.get(key), (int, float), file, f"/{key}", key)
        if not math.isfinite(value):
            raise formats.refuse(
                file, f"/{key}", f"vllm bench throughput: {key} is not a finite number", "pass the file vLLM wrote"
            )
        numbers.add(metric, value, f"/{key}")
    requests = doc.get("num_requests")
    counted = isinstance(requests, int) and not isinstance(requests, bool) and requests >= 0
    tool = {"name": "vllm-bench-throughput"} | sv.scalars(doc, ("elapsed_time", "num_requests", "total_num_tokens"))
    return {
        "measurement_class": "vllm-bench-throughput",
        "workload": f"vllm bench throughput: {requests if counted else '?'} requests offline (lengths not in the file)",
        "workload_fields": {"sample": "run"} | ({"requests": requests} if counted else {}),
        "tool": tool,
        **numbers.body(),
    }


def plan(request: formats.Request) -> formats.Plan:
    """One run: a latency or a throughput benchmark of the packet's model, on the stated runtime and hardware."""
    target, file, raw = request.packet(), request.file, request.raw
    source = formats.read_source(raw, file, FORMAT)
    doc = source.objects[0]
    formats.refuse_other_format(doc, file, "vllm-offline", FORMAT)
    formats.need(doc, dict, file, "", "the benchmark result object")
    kind = kind_of(doc)
    if kind is None:
        raise formats.refuse(
            file,
            "",
            f"not {FORMAT}: the object holds neither {', '.join(LATENCY_KEYS)} (latency) nor "
            f"{', '.join(THROUGHPUT_KEYS)} (throughput)",
            "pass the file `vllm bench latency` or `vllm bench throughput` wrote with --output-json, unmodified",
        )
    formats.forbid_citation_markers(doc, file)
    out = formats.Plan()
    formats.check_scope(out, target, sv.identity(request, backend=("vllm", "")), file)
    body = _latency(request, source, doc) if kind == "latency" else _throughput(request, doc)
    evidence = formats.evidence_for(target, request.name, raw)
    out.add_file(evidence, raw)
    earlier = formats.earlier_imports(target, request.name)
    if not body["metrics"]:  # a throughput of zero: the run completed nothing
        reason = (
            f"vllm bench throughput measured no positive throughput: requests_per_second {doc['requests_per_second']}, "
            f"tokens_per_second {doc['tokens_per_second']} over {doc.get('num_requests')} requests"
        )
        rid = formats.content_id("vllm-offline-throughput", raw, target, "failed")
        sv.add(out, request, earlier, "0", formats.failed_run(target, rid, evidence, raw, reason, {"kind": kind}))
        out.notes.append(f"vllm bench {kind}: a failed run, recorded as a closure of packet {target.packet}")
        return out
    rid = formats.content_id(f"vllm-offline-{kind}", raw, target)
    sv.add(out, request, earlier, "0", sv.run_record(request, rid, evidence, body | {"config": {}}))
    out.notes.append(f"1 vllm bench {kind} run into packet {target.packet}")
    return out


IMPORTER = formats.Importer(
    "vllm-offline",
    "Import `vllm bench latency` or `vllm bench throughput` --output-json output (also benchmark_latency.py / "
    "benchmark_throughput.py) into a packet.",
    plan,
    options=(RUNTIME_OPTION,),
)
