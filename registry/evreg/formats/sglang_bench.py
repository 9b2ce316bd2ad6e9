"""SGLang ``python -m sglang.bench_serving --output-file FILE`` output: JSON Lines, one object per benchmark run
appended to the file (``backend``, ``dataset_name``, ``request_rate``, ``max_concurrency``, the ``random_*`` and
``sharegpt_*`` lengths, ``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
``request_throughput``, ``input_throughput``, ``output_throughput``, later ``total_throughput``, ``model_id``,
``tokenizer_id``, and latency statistics such as ``mean_ttft_ms``, ``median_itl_ms``, ``p99_e2e_latency_ms``).

Every line becomes one run measurement of the target packet (or a closure when it completed no request), every
number with its ``line:N:K`` locator (a JSON pointer cannot address one line of JSON Lines). ``request_rate`` may be
``Infinity`` (JSON Lines as Python writes it): it is kept as ``"inf"``. Output, input and total throughput are
distinct metrics.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evreg.evidence import text_lines
from evreg.formats import Importer, Plan, Request, forbid_citation_markers, refuse
from evreg.formats import serving as sv

FORMAT = "SGLang bench_serving output (JSON Lines from --output-file)"
THROUGHPUT = {
    "request_throughput": "requests_per_s",
    "input_throughput": "input_tok_s",
    "output_throughput": "aggregate_tok_s",
    "total_throughput": "total_tok_s",
    "accept_length": "mean_acceptance_length",
}
_LATENCY = re.compile(r"^(mean|median|min|max|p\d+(?:\.\d+)?)_(e2e_latency|ttft|tpot|itl)_ms$")
SETTINGS = (
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "num_prompts",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "burstiness",
    "tag",
)
ENGINES = {"sglang": "sglang", "vllm": "vllm", "lmdeploy": "lmdeploy", "trt": "tensorrt-llm"}


def _metric(key: str) -> str | None:
    if key in THROUGHPUT:
        return THROUGHPUT[key]
    if m := _LATENCY.match(key):
        stat = m.group(1).replace(".", "_")
        kind = "e2el" if m.group(2) == "e2e_latency" else m.group(2)
        return f"{stat}_{kind}_ms"
    return None


def _numbers(obj: dict[str, Any], n: int, line: str, file: str) -> sv.Numbers:
    numbers = sv.Numbers()
    for key, value in obj.items():
        metric = _metric(key)
        if metric is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        at = re.search(rf'"{re.escape(key)}"\s*:\s*', line)
        found = sv.line_locator(n, line, at.end()) if at else None
        if found is None or found[1] != float(value):
            raise refuse(
                file, f"line:{n}", f"line {n}: {key} is not where JSON Lines puts it", "pass the file unmodified"
            )
        numbers.add(metric, value, found[0])
    return numbers


def _objects(request: Request) -> list[tuple[int, str, dict[str, Any]]]:
    """(line number, line, object) of every run in the file; refuses a file that is not bench_serving's."""
    out = []
    for n, line in enumerate(text_lines(request.raw), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            why = f"line {n} is not a JSON object on one line"
            raise sv.not_this_format(request.file, FORMAT, request.raw, why) from None
        if not isinstance(obj, dict) or not ("output_throughput" in obj or "completed" in obj):
            raise sv.not_this_format(request.file, FORMAT, request.raw, f"line {n} has no output_throughput")
        if "backend" not in obj or not any(k in obj for k in ("dataset_name", "total_output_tokens_retokenized")):
            raise sv.not_this_format(request.file, FORMAT, request.raw, f"line {n} has no backend and dataset_name")
        out.append((n, line, obj))
    if not out:
        raise refuse(request.file, "", "the file holds no benchmark run", "pass the file bench_serving wrote")
    forbid_citation_markers([o for _, _, o in out], request.file)
    return out


def _check_runtime(request: Request, backend: Any, n: int) -> None:
    """A stated runtime must be the engine the file says it benchmarked (``backend``)."""
    runtime = sv.stated_runtime(request)
    engine = ENGINES.get(str(backend).split("-")[0].lower())
    if runtime and engine and engine not in runtime.lower().replace(" ", "-"):
        raise refuse(
            request.file,
            f"line:{n}",
            f"line {n} benchmarked backend {backend!r} ({engine}), but --runtime says {runtime!r}",
            "state the runtime the server ran, or import into the packet of that runtime",
        )


def _run(request: Request, n: int, line: str, obj: dict[str, Any], evidence: str) -> tuple[str, dict[str, Any]]:
    """("run-measurement" or "closure", record) for line ``n``."""
    target = request.packet()
    _check_runtime(request, obj.get("backend"), n)
    config = sv.scalars(obj, SETTINGS)
    tool = {"name": "sglang-bench_serving"} | {
        k: v for k, v in sv.scalars(obj).items() if k not in SETTINGS and _metric(k) is None
    }
    numbers = _numbers(obj, n, line, request.file)
    label = f"l{n}"
    completed = obj.get("completed")
    if completed == 0 or "aggregate_tok_s" not in numbers.metrics:
        reason = "SGLang bench_serving completed no request: the run measured nothing"
        failure: dict[str, Any] = {"line": n, "completed": completed}
        if "errors" in obj:
            failure["errors"] = obj["errors"]
        record = sv.failed_run(
            request, sv.content_id("sglang", target, request.raw, label, "failed"), evidence, reason, failure, config
        )
        return "closure", record
    body: dict[str, Any] = {
        "measurement_class": "sglang-bench-serving",
        "workload": _workload(obj, n),
        "config": config,
        "tool": tool,
        **numbers.body(),
    }
    prompts = obj.get("num_prompts")
    if isinstance(prompts, int) and isinstance(completed, int) and completed < prompts:
        body["partial_failure"] = {"completed": completed, "num_prompts": prompts}
        body["caveat"] = "Not every prompt completed; partial_failure says how many did."
    return "run-measurement", sv.run_record(
        request, sv.content_id("sglang", target, request.raw, label), evidence, body
    )


def _workload(obj: dict[str, Any], n: int) -> str:
    lengths = (
        f"random {obj.get('random_input_len')} in / {obj.get('random_output_len')} out"
        if obj.get("dataset_name") == "random"
        else str(obj.get("dataset_name"))
    )
    concurrency = obj.get("max_concurrency")
    return (
        f"sglang.bench_serving line {n}: {lengths}, request rate {sv.plain(obj.get('request_rate'))}, "
        f"max concurrency {concurrency if concurrency is not None else 'unbounded'}, "
        f"{obj.get('completed')} completed"
    )


def plan(request: Request) -> Plan:
    target = request.packet()
    runs = _objects(request)
    evidence = sv.evidence_path(target, request.raw, request.name)
    out = Plan()
    out.add_file(evidence, request.raw)
    kinds = []
    for n, line, obj in runs:
        kind, record = _run(request, n, line, obj, evidence)
        (sv.add_run if kind == "run-measurement" else sv.add_closure)(out, target, record)
        kinds.append(kind)
    failed = kinds.count("closure")
    out.notes.append(
        f"{len(runs)} SGLang bench_serving runs into packet {target.packet}"
        + (f" ({failed} failed, recorded as closures)" if failed else "")
    )
    missing = [] if all("model_id" in o for _, _, o in runs) else ["model"]
    out.notes += sv.unrecorded_note(
        "sglang-bench", missing + ["hardware"] + ([] if sv.stated_runtime(request) else ["runtime"])
    )
    return out


IMPORTER = Importer(
    "sglang-bench",
    "Import SGLang bench_serving output (the JSON Lines file of --output-file) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
