"""SGLang ``python -m sglang.bench_serving --output-file FILE`` output: JSON Lines, one object per benchmark run
appended to the file (``backend``, ``dataset_name``, ``request_rate``, ``max_concurrency``, the ``random_*`` and
``sharegpt_*`` lengths, ``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
``request_throughput``, ``input_throughput``, ``output_throughput``, later ``total_throughput``, ``model_id``,
``tokenizer_id``, and latency statistics such as ``mean_ttft_ms``, ``median_itl_ms``, ``p99_e2e_latency_ms``).

Every line becomes one run measurement of the target packet (or a closure when it completed no request), every
number with its ``line:N:K`` locator (a JSON pointer cannot address one line of JSON Lines). ``request_rate`` may be
``Infinity`` (JSON Lines as Python writes it): it is kept as ``"inf"``. Output, input and total throughput are
distinct metrics; a spread the tool wrote (``std_ttft_ms``) is a metric of its own, as vLLM's are.

Against a prefill/decode-disaggregated deployment (SGLang's router), ``server_info`` holds the ``prefill`` and
``decode`` servers' own: the model, quantization and cards are read from them, and servers of two SGLang versions
state both (``SGLang 0.5.5.post3 (prefill) + SGLang 0.5.6 (decode)``). A line whose responses arrived whole (every
inter-token latency zero, TTFT the request latency, more than one token per request) stores no TTFT, ITL or TPOT:
they were not measured (``not_measured`` says so).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from evreg import formats
from evreg.formats import serving as sv

FORMAT = "SGLang bench_serving output (JSON Lines from --output-file)"
THROUGHPUT = {
    "request_throughput": "requests_per_s",
    "input_throughput": "input_tok_s",
    "output_throughput": "aggregate_tok_s",
    "total_throughput": "total_tok_s",
    "accept_length": "mean_acceptance_length",
}
_LATENCY = re.compile(r"^(mean|median|std|min|max|p\d+(?:\.\d+)?)_(e2e_latency|ttft|tpot|itl)_ms$")
"""A latency statistic, its spread (``std``) included: kept under its own name, as vLLM's are."""
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


def _metric(key: str) -> str | None:
    if key in THROUGHPUT:
        return THROUGHPUT[key]
    if m := _LATENCY.match(key):
        stat = m.group(1).replace(".", "_")
        kind = "e2el" if m.group(2) == "e2e_latency" else m.group(2)
        return f"{stat}_{kind}_ms"
    return None


def _latencies(obj: dict[str, Any]) -> dict[tuple[str, str], float]:
    """The line's latency statistics by (statistic, kind): ``median_e2e_latency_ms`` is (median, e2el)."""
    out: dict[tuple[str, str], float] = {}
    for key, value in obj.items():
        m = _LATENCY.match(key)
        if m and isinstance(value, int | float) and not isinstance(value, bool):
            out[(m.group(1), "e2el" if m.group(2) == "e2e_latency" else m.group(2))] = float(value)
    return out


def _numbers(obj: dict[str, Any], n: int, line: str, file: str) -> sv.Numbers:
    numbers = sv.Numbers()
    for key, value in obj.items():
        metric = _metric(key)
        if metric is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        sv.add_keyed(numbers, n, line, key, value, metric, file)
    return numbers


def _objects(request: formats.Request) -> list[sv.Line]:
    """(line number, line, object) of every result; refuses a file that is not bench_serving's."""
    return sv.json_lines(
        request,
        "sglang-bench",
        FORMAT,
        "bench_serving",
        lambda o: "backend" in o and "completed" in o,
        "backend and completed",
    )


def _run(request: formats.Request, n: int, line: str, obj: dict[str, Any], evidence: str) -> tuple[str, dict[str, Any]]:
    """(path, run measurement or closure) for line ``n``."""
    target, raw = request.packet(), request.raw
    config = sv.scalars(obj, SETTINGS)
    tool = {"name": "sglang-bench_serving"} | {
        k: v for k, v in sv.scalars(obj).items() if k not in SETTINGS and _metric(k) is None
    }
    if info := sv.scalars(server_info(obj), SERVER_KEYS):
        tool["server_info"] = info
    if split := disaggregated(obj):
        tool["servers"] = {role: [sv.scalars(s, SERVER_KEYS) for s in group] for role, group in split.items()}
    numbers = _numbers(obj, n, line, request.file)
    completed = obj.get("completed")
    if completed == 0 or "aggregate_tok_s" not in numbers.metrics:
        reason = "SGLang bench_serving completed no request: the run measured nothing"
        failure: dict[str, Any] = {"line": n, "completed": completed, "settings": config}
        if "errors" in obj:
            failure["errors"] = obj["errors"]
        return formats.failed_run(
            target, formats.content_id("sglang", raw, target, f"l{n}", "failed"), evidence, raw, reason, failure
        )
    found = line_identity(request, n, obj)
    body: dict[str, Any] = {"runtime": found.runtime} if found.runtime and found.runtime != "SGLang" else {}
    if sv.arrived_whole(_latencies(obj), sv.per_request(obj.get("total_output_tokens"), completed)):
        body["not_measured"] = {"metrics": numbers.drop(sv.UNSTREAMED_KINDS), "why": sv.UNSTREAMED}
        tool["streamed"] = False
    body |= {
        "measurement_class": "sglang-bench-serving",
        "workload": _workload(obj, n),
        "workload_fields": sv.serving_fields(
            concurrency=obj.get("max_concurrency"),
            request_rate=obj.get("request_rate"),
            requests=obj.get("num_prompts"),
            # SGLang draws random lengths from [ratio x len, len]: a length is fixed only at a ratio of one
            input_tokens=obj.get("random_input_len") if _fixed_lengths(obj, 1) else None,
            output_tokens=obj.get("random_output_len") if _fixed_lengths(obj, 1) else None,
            dataset=obj.get("dataset_name"),
        ),
        "config": config,
        "tool": tool,
        **numbers.body(),
    }
    prompts = obj.get("num_prompts")
    if isinstance(prompts, int) and isinstance(completed, int) and completed < prompts:
        body["partial_failure"] = {"completed": completed, "num_prompts": prompts}
        body["caveat"] = "Not every prompt completed; partial_failure says how many did."
    if "not_measured" in body:
        whole = "The responses arrived whole, not streamed: not_measured lists the latencies the file did not measure."
        body["caveat"] = " ".join(c for c in (body.get("caveat"), whole) if c)
    return sv.run_record(request, formats.content_id("sglang", raw, target, f"l{n}"), evidence, body)


def _fixed_lengths(obj: dict[str, Any], fixed_at: float) -> bool:
    """Whether a random dataset's request lengths are all its stated lengths: its range ratio is ``fixed_at``."""
    ratio = obj.get("random_range_ratio")
    return obj.get("dataset_name") == "random" and isinstance(ratio, int | float) and ratio == fixed_at


def _workload(obj: dict[str, Any], n: int) -> str:
    lengths = (
        f"random {obj.get('random_input_len')} in / {obj.get('random_output_len')} out"
        if obj.get("dataset_name") == "random"
        else str(obj.get("dataset_name") or "dataset unstated")
    )
    concurrency = obj.get("max_concurrency")
    return (
        f"sglang.bench_serving line {n}: {lengths}, request rate {sv.plain(obj.get('request_rate'))}, "
        f"max concurrency {concurrency if concurrency is not None else 'unbounded'}, "
        f"{obj.get('completed')} completed"
    )


SERVER_KEYS: tuple[str, ...] = ("model_path", "served_model_name", "quantization", "dtype", "kv_cache_dtype")
SERVER_KEYS += ("tp_size", "pp_size", "dp_size", "ep_size", "nnodes", "device", "attention_backend")
SERVER_KEYS += ("speculative_algorithm", "disaggregation_mode", "version")
"""What of ``server_info`` (SGLang >= 0.5: the server's launch settings) names the run; kept in the record's tool."""


def server_info(obj: dict[str, Any]) -> dict[str, Any]:
    info = obj.get("server_info")
    return info if isinstance(info, dict) else {}


ROLES = ("prefill", "decode")
"""The servers of a prefill/decode-disaggregated deployment, as SGLang's router reports them in ``server_info``."""


def disaggregated(obj: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The servers of a run against a prefill/decode-disaggregated deployment: SGLang's router answers
    ``get_server_info`` with the ``prefill`` and ``decode`` servers' own ``server_info``, each a list (empty: not
    disaggregated)."""
    info = server_info(obj)
    out = {role: [s for s in info.get(role) or [] if isinstance(s, dict)] for role in ROLES}
    return {role: group for role, group in out.items() if group} if any(out.values()) else {}


def _versions(servers: list[tuple[str, dict[str, Any]]]) -> str | None:
    """The SGLang build the servers ran: one version, or each role's when they differ (``SGLang 0.5.5.post3
    (prefill) + SGLang 0.5.6 (decode)``: a deployment of two builds is neither)."""
    by_role: dict[str, list[str]] = {}
    for role, info in servers:
        version = info.get("version")
        if isinstance(version, str) and version and version not in by_role.setdefault(role, []):
            by_role[role].append(version)
    versions = {v for vs in by_role.values() for v in vs}
    if len(versions) <= 1:
        return f"SGLang {versions.pop()}" if versions else None
    return " + ".join(f"SGLang {v} ({role})" for role, vs in by_role.items() for v in vs)


def line_identity(request: formats.Request, n: int, obj: dict[str, Any]) -> formats.FileIdentity:
    """The identity line ``n`` states: the model (``model_id``, ``tokenizer_id``, or the server's ``model_path``),
    the engine (``backend``) and, from ``server_info``, its version, quantization and tensor x pipeline parallel
    size (the cards). Against a prefill/decode-disaggregated deployment, ``server_info`` holds each server's: the
    model and quantization are theirs, the cards their sum, and the version each one's."""
    split = disaggregated(obj)
    servers = [(role, s) for role, group in split.items() for s in group] if split else [("", server_info(obj))]
    paths = [v for _, info in servers for v in (info.get("model_path"), info.get("served_model_name"))]
    names = [v for v in (obj.get("model_id"), obj.get("tokenizer_id"), *paths) if isinstance(v, str) and v]
    at = f"line:{n}"
    found = sv.identity(
        request, model=(names[0] if names else None, at), names=tuple(names), backend=(obj.get("backend"), at)
    )
    changes: dict[str, Any] = {}
    quants = [info["quantization"] for _, info in servers if isinstance(info.get("quantization"), str)]
    if quants and quants[0]:
        changes["quantization"] = quants[0]
    version = _versions(servers)
    if "runtime" not in found.stated and version and found.runtime == "SGLang":
        changes["runtime"] = version
    cards = [_cards(info) for _, info in servers]
    if cards and all(c is not None for c in cards):
        changes["cards"] = sum(c for c in cards if c is not None)
    return replace(found, **changes, where=found.where | {"cards": at, "runtime": at}) if changes else found


def _cards(info: dict[str, Any]) -> int | None:
    """A server's GPUs: its tensor x pipeline parallel size."""
    tp, pp = info.get("tp_size"), info.get("pp_size") or 1
    return tp * pp if isinstance(tp, int) and isinstance(pp, int) and tp > 0 and pp > 0 else None


def plan(request: formats.Request) -> formats.Plan:
    """Every line one run. The file names the engine it benchmarked (``backend``) and, since 2024, the model
    (``model_id``, ``tokenizer_id``): each is compared with the packet; the hardware it does not name."""
    target = request.packet()
    runs = _objects(request)
    out = formats.Plan()
    for n, _, obj in runs:
        formats.check_scope(out, target, line_identity(request, n, obj), request.file, f"line:{n}")
    sv.add_lines(out, request, runs, _run, "SGLang bench_serving runs", "failed")
    return out


IMPORTER = formats.Importer(
    "sglang-bench",
    "Import SGLang bench_serving output (the JSON Lines file of --output-file) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
