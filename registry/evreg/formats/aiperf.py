"""AIPerf and GenAI-Perf profile exports: ``profile_export_aiperf.json`` (AIPerf, ``aiperf profile``) and
``profile_export_genai_perf.json`` (GenAI-Perf, ``genai-perf profile``).

Both hold one object: each metric as ``{"unit": ..., "avg": ..., "p50": ..., "p99": ..., "min": ..., "max": ...}``
(``time_to_first_token``, ``inter_token_latency``, ``request_latency``, ``request_throughput``,
``output_token_throughput`` ...) and the run's settings in ``input_config`` (AIPerf: ``models.items[].name``,
``endpoint``, ``phases``, ``tokenizer``; older AIPerf: ``endpoint.model_names``, ``loadgen``; GenAI-Perf: ``model``,
``concurrency``, ``request_rate``, ``service_kind``, ``backend``). AIPerf adds ``aiperf_version``, ``error_summary``,
``was_cancelled`` and, with GPU telemetry, the GPUs' names.

The load is read from wherever the version writes it: the profiling phase of ``input_config.phases`` (0.10 and
later: ``concurrency``, or ``rate`` of a ``poisson`` / ``constant`` phase, and ``requests``) or ``loadgen`` (older).

One file becomes one run measurement of the target packet (every statistic its own metric, its spread ``std``
included, in the unit the file states, checked), or a closure when no request completed. A run the export says was
not streamed (``endpoint.streaming`` / ``streaming`` false) stores no time to first token or inter-token latency.
perf_analyzer's raw ``profile_export.json`` (per-request timestamps, no statistics), AIPerf's CSV export and its
per-request ``profile_export.jsonl`` are refused with the file to import instead.
"""

from __future__ import annotations

import re
from typing import Any

from evreg import formats
from evreg.core import codes
from evreg.core.findings import Finding, Severity, join_pointer
from evreg.formats import serving as sv

FORMAT = "an AIPerf / GenAI-Perf profile export (profile_export_aiperf.json, profile_export_genai_perf.json)"

# metric block -> (kind of statistic, allowed units): a latency's statistics, or a single average
LATENCY = {
    "time_to_first_token": "ttft",
    "time_to_second_token": "ttst",
    "inter_token_latency": "itl",
    "request_latency": "e2el",
    "time_to_last_token": "ttlt",
}
AVERAGE = {
    "request_throughput": ("requests_per_s", ("requests/sec", "requests/s", "req/sec", "req/s")),
    "output_token_throughput": ("aggregate_tok_s", ("tokens/sec", "tokens/s", "tok/s")),
    "total_token_throughput": ("total_tok_s", ("tokens/sec", "tokens/s", "tok/s")),
    "output_token_throughput_per_user": ("user_output_tok_s", ("tokens/sec/user", "tokens/sec")),
    "output_token_throughput_per_request": ("user_output_tok_s", ("tokens/sec", "tokens/sec/user")),
    "input_sequence_length": ("mean_input_tokens", ("tokens",)),
    "output_sequence_length": ("mean_output_tokens", ("tokens",)),
}
STATS = {"avg": "mean", "min": "min", "max": "max", **{p: p for p in ("p1", "p5", "p10", "p25", "p50", "p75")}}
STATS |= {p: p for p in ("p90", "p95", "p99")}
STATS["std"] = "std"
"""Each statistic of a latency block and its metric prefix; the spread (``std``) kept under its own name, as vLLM's
and SGLang's ``std_*_ms`` are."""
AIPERF_KEYS = {"models", "phases", "loadgen"}
"""Keys of AIPerf's ``input_config`` that GenAI-Perf's has not."""
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face repository id (``nvidia/Qwen3.6-35B-A3B-NVFP4``), not a path (``/path/to/tokenizer``)."""
GENAI_SETTINGS = (
    "concurrency",
    "request_rate",
    "request_count",
    "endpoint_type",
    "service_kind",
    "backend",
    "streaming",
    "synthetic_input_tokens_mean",
    "synthetic_input_tokens_stddev",
    "output_tokens_mean",
    "output_tokens_stddev",
    "num_dataset_entries",
    "measurement_interval",
    "random_seed",
    "prompt_source",
)


def _blocks(doc: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every metric block of the export by its key, with its JSON pointer: at the top (``time_to_first_token``), or,
    in AIPerf's mid-2025 layout, under ``records`` keyed by display name (``"Time to First Token"``)."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    records = doc.get("records")
    for name, block in records.items() if isinstance(records, dict) else ():
        if isinstance(block, dict):
            key = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")
            out.setdefault(key, (join_pointer("records", name), block))
    for key, block in doc.items():
        if isinstance(block, dict) and key != "records":
            out[key] = (join_pointer(key), block)
    return out


def _block(blocks: dict[str, tuple[str, dict[str, Any]]], key: str, units: tuple[str, ...], file: str) -> Any:
    """(pointer, block) of metric ``key`` in one of ``units``, or None when the export has no such block."""
    if key not in blocks:
        return None
    at, block = blocks[key]
    unit = block.get("unit")
    if unit is not None and unit not in units:
        raise formats.refuse(
            file,
            f"{at}/unit",
            f"{key} is in {unit!r}, not in {' or '.join(units)}; numbers are kept in the unit the tool wrote",
            "pass the export unmodified; a tool version with other units needs its own mapping",
        )
    return at, block


def _numbers(doc: dict[str, Any], file: str) -> sv.Numbers:
    numbers, blocks = sv.Numbers(), _blocks(doc)
    for key, (metric, units) in AVERAGE.items():
        found = _block(blocks, key, units, file)
        if found is not None and "avg" in found[1]:
            numbers.add(metric, found[1]["avg"], f"{found[0]}/avg")
    for key, kind in LATENCY.items():
        found = _block(blocks, key, ("ms",), file)
        for stat, name in STATS.items():
            if found is not None and stat in found[1]:
                numbers.add(f"{name}_{kind}_ms", found[1][stat], f"{found[0]}/{stat}")
    return numbers


def _avg(doc: dict[str, Any], key: str) -> Any:
    block = doc.get(key)
    return block.get("avg") if isinstance(block, dict) else None


def _gpus(node: Any) -> list[str]:
    """GPU names anywhere in AIPerf's telemetry (``gpu_name``), in order, once each."""
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            for key, value in item.items():
                if key in ("gpu_name", "gpu_model") and isinstance(value, str) and value not in found:
                    found.append(value)
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _aiperf_settings(config: dict[str, Any]) -> tuple[dict[str, Any], list[str], str | None]:
    """(settings, model names, tokenizer) of AIPerf's ``input_config`` (0.10: models/phases; older: loadgen)."""
    settings: dict[str, Any] = {}
    models = [m.get("name") for m in sv.obj(config, "models").get("items") or [] if isinstance(m, dict)]
    endpoint = sv.obj(config, "endpoint")
    models += [m for m in endpoint.get("model_names", []) if isinstance(m, str)]
    models += [m for m in config.get("model_names") or [] if isinstance(m, str)]  # mid-2025
    settings |= {f"endpoint_{k}": v for k, v in sv.scalars(endpoint, ("type", "streaming")).items()}
    settings |= _load(config)
    datasets = [d for d in config.get("datasets") or [] if isinstance(d, dict)]
    if datasets:
        settings |= {f"dataset_{k}": v for k, v in sv.scalars(datasets[0], ("type", "dataset", "entries")).items()}
    tokenizer = config.get("tokenizer")
    name = tokenizer.get("name") if isinstance(tokenizer, dict) else None
    return settings, [m for m in models if isinstance(m, str)], name if isinstance(name, str) else None


PHASE_KEYS = {"type": "type", "concurrency": "concurrency", "rate": "request_rate", "request_rate": "request_rate"}
PHASE_KEYS |= {"requests": "requests", "duration": "duration"}
"""What a phase of AIPerf's ``input_config.phases`` (0.10 and later) sets, as the settings name it: its load
(``concurrency``; ``rate``, requests per second, of a ``poisson``, ``constant`` or ``gamma`` phase), its request
count and its duration."""
LOADGEN_KEYS: tuple[str, ...] = ("concurrency", "request_rate", "request_count", "benchmark_duration")
LOADGEN_KEYS += ("arrival_pattern", "request_rate_mode")
"""What older AIPerf's ``input_config.loadgen`` sets."""


def _load(config: dict[str, Any]) -> dict[str, Any]:
    """The load AIPerf ran at, from wherever its version writes it: the profiling phase of ``phases`` (a list of
    phases, or phases by name; the one named ``profiling``, else the last not excluded from the results), or
    ``loadgen``."""
    phases = config.get("phases")
    named = phases.items() if isinstance(phases, dict) else ((None, p) for p in phases or [])
    listed = [(p.get("name", name), p) for name, p in named if isinstance(p, dict)]
    counted = [p for _, p in listed if p.get("exclude_from_results") is not True]
    profiling = next((p for name, p in listed if name == "profiling"), counted[-1] if counted else {})
    out = {PHASE_KEYS[k]: v for k, v in sv.scalars(profiling, tuple(PHASE_KEYS)).items()}
    return out | sv.scalars(sv.obj(config, "loadgen"), LOADGEN_KEYS)


def _arrival(settings: dict[str, Any]) -> int | None:
    """Poisson arrivals as the burstiness of one that ``serving_fields`` reads (a phase of type ``poisson``,
    ``loadgen.arrival_pattern`` or ``request_rate_mode`` poisson)."""
    kinds = (settings.get(k) for k in ("type", "arrival_pattern", "request_rate_mode"))
    return 1 if "poisson" in kinds else None


def _identity(doc: dict[str, Any], file: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(tool name, config, tool block) as the file states them."""
    config = doc.get("input_config")
    if not isinstance(config, dict) or not (_blocks(doc).keys() & {*AVERAGE, *LATENCY}):
        raise formats.refuse(
            file,
            "/input_config",
            f"not {FORMAT}: no input_config beside metric statistics",
            "pass the export the tool wrote, unmodified",
        )
    if "aiperf_version" in doc or "records" in doc or AIPERF_KEYS & config.keys():
        settings, models, tokenizer = _aiperf_settings(config)
        tool: dict[str, Any] = {"name": "aiperf"} | sv.scalars(
            doc, ("aiperf_version", "schema_version", "benchmark_id", "start_time", "end_time", "was_cancelled")
        )
        tool |= sv.scalars(sv.obj(doc, "run_info"), ("cli_command",))
        name = "aiperf"
    else:
        settings = sv.scalars(config, GENAI_SETTINGS)
        models = [m for m in config.get("model") or [] if isinstance(m, str)]
        tokenizer = config.get("tokenizer") if isinstance(config.get("tokenizer"), str) else None
        tool, name = {"name": "genai-perf"}, "genai-perf"
    tool |= {"models": models} if models else {}
    tool |= {"tokenizer": tokenizer} if tokenizer else {}
    for key, out in (("request_count", "request_count"), ("benchmark_duration", "duration_s")):
        if _avg(doc, key) is not None:
            tool[out] = _avg(doc, key)
    return name, settings, tool


def _scope(
    request: formats.Request, doc: dict[str, Any], settings: dict[str, Any], tool: dict[str, Any]
) -> formats.FileIdentity:
    """The run's identity as the export states it: the model (its tokenizer's repository when it names one, else
    the served model's name; a Triton model name is no model identity), the GPUs of its telemetry, the backend."""
    config, models = doc["input_config"], list(tool.get("models") or [])
    tokenizer = tool.get("tokenizer")
    model: tuple[str | None, str] = (None, "")
    if isinstance(tokenizer, str) and REPO_ID.fullmatch(tokenizer):
        at = "/input_config/tokenizer/name" if isinstance(config.get("tokenizer"), dict) else "/input_config/tokenizer"
        model = (tokenizer, at)
    elif models and settings.get("service_kind") != "triton" and REPO_ID.fullmatch(str(models[0])):
        model = (models[0], _model_pointer(config))
    gpus = _gpus(doc.get("telemetry_data"))
    hardware = (gpus[0] if len(gpus) == 1 else " + ".join(gpus)) if gpus else None
    return sv.identity(
        request,
        model=model,
        names=tuple(models),
        backend=(settings.get("backend"), "/input_config/backend"),
        hardware=(hardware, "/telemetry_data"),
    )


def _model_pointer(config: dict[str, Any]) -> str:
    if "models" in config:
        return "/input_config/models/items/0/name"
    return "/input_config/endpoint/model_names/0" if "endpoint" in config else "/input_config/model/0"


def served_alias(doc: dict[str, Any], tool: dict[str, Any], found: formats.FileIdentity, file: str) -> list[Finding]:
    """A warning when the export names the model only by the name the server answered to (``qwen3-4b``,
    ``llama-3.2-3b-instruct-gguf:q4_k_m``): an alias is not the weights, so it is not compared with the packet's
    and the model stays unstated (its quantization words, if any, are still compared)."""
    models = list(tool.get("models") or [])
    if found.model is not None or not models:
        return []
    return [
        codes.IMPORT_IDENTITY_MISSING.at(
            file,
            _model_pointer(doc["input_config"]),
            f"the export names the model only as {models[0]!r}, the name the server answered to, not the weights: "
            "it is not compared with the packet's weights and the records leave the model unstated",
            "profile with --tokenizer ORG/NAME (the weights' repository) so the export names them",
            severity=Severity.WARNING,
        )
    ]


def _read(request: formats.Request) -> tuple[dict[str, Any], str]:
    """The export's one object and the file's encoding; a file of another tool is refused naming it."""
    source = formats.read_source(request.raw, request.file, FORMAT)
    doc = source.objects if source.lines else source.objects[0]
    formats.refuse_other_format(doc, request.file, "aiperf", FORMAT)
    if isinstance(doc, dict) and "experiments" in doc:
        raise formats.refuse(
            request.file,
            "/experiments",
            "this is perf_analyzer's raw per-request profile_export.json, not a profile export with statistics: "
            "import the profile_export_genai_perf.json GenAI-Perf wrote beside it",
            "evreg import aiperf profile_export_genai_perf.json --packet FAMILY/PACKET",
        )
    if not isinstance(doc, dict):
        raise formats.refuse(request.file, "", f"not {FORMAT}: not one JSON object", "pass the export unmodified")
    formats.forbid_citation_markers(doc, request.file)
    return doc, source.encoding


def _failure(doc: dict[str, Any]) -> dict[str, Any]:
    """What the export says went wrong: errors by kind, failed requests, cancellation (empty: nothing)."""
    out: dict[str, Any] = {}
    if doc.get("error_summary"):
        out["error_summary"] = doc["error_summary"]
    if (_avg(doc, "error_request_count") or 0) > 0:
        out["error_request_count"] = _avg(doc, "error_request_count")
    if doc.get("was_cancelled") is True:
        out["was_cancelled"] = True
    return out


def _label(settings: dict[str, Any]) -> str:
    if "concurrency" in settings:
        return f"c{settings['concurrency']}"
    if "request_rate" in settings:
        return f"r{settings['request_rate']}"
    return ""


def plan(request: formats.Request) -> formats.Plan:
    target, raw = request.packet(), request.raw
    doc, encoding = _read(request)
    name, settings, tool = _identity(doc, request.file)
    out = formats.Plan()
    found = _scope(request, doc, settings, tool)
    out.warn(served_alias(doc, tool, found, request.file))
    formats.check_scope(out, target, found, request.file)
    numbers = _numbers(doc, request.file)
    evidence = formats.evidence_for(target, request.name, raw)
    out.add_file(evidence, raw)
    earlier = formats.earlier_imports(target, request.name)
    failure = _failure(doc)
    completed = _avg(doc, "request_count")
    label = _label(settings)
    latency_only = isinstance(doc.get("records"), dict) and bool(numbers.metrics)  # mid-2025: no throughput block
    if ("requests_per_s" not in numbers.metrics and not latency_only) or completed == 0:
        reason = f"{name} completed no request: the run measured nothing"
        detail = failure | {"request_count": completed, "settings": settings}
        rid = formats.content_id(name, raw, target, label, "failed")
        sv.add(out, request, earlier, "0", formats.failed_run(target, rid, evidence, raw, reason, detail))
        out.notes.append(f"{name}: a failed run, recorded as closure {rid}")
        return out
    body: dict[str, Any] = {
        "measurement_class": f"{name}-profile",
        "workload": _workload(name, settings, tool),
        "workload_fields": sv.serving_fields(
            concurrency=settings.get("concurrency"),
            request_rate=settings.get("request_rate"),
            requests=next((settings[k] for k in ("requests", "request_count") if k in settings), None),
            burstiness=_arrival(settings),
        ),
        "config": settings,
        "tool": tool,
        **numbers.body(),
    }
    if any(settings.get(k) is False for k in ("endpoint_streaming", "streaming")):  # AIPerf's, GenAI-Perf's
        body["not_measured"] = {"metrics": numbers.drop(sv.UNSTREAMED_KINDS), "why": sv.UNSTREAMED}
        body.pop("out_of_bounds", None)
        body |= numbers.body()
        tool["streamed"] = False
    if found.hardware:
        body["hardware"] = found.hardware
    if encoding != "utf-8":  # read decoded, by the importer and by validation alike
        body["evidence_encoding"] = encoding
    if failure:
        body["partial_failure"] = failure
        body["caveat"] = "Some requests failed or the run was cancelled; partial_failure says what the tool reported."
    sv.add(
        out, request, earlier, "0", sv.run_record(request, formats.content_id(name, raw, target, label), evidence, body)
    )
    out.notes += [f"1 {name} profile into packet {target.packet} ({len(numbers.metrics)} metrics)"]
    return out


def _workload(name: str, settings: dict[str, Any], tool: dict[str, Any]) -> str:
    load = (
        f"concurrency {settings['concurrency']}"
        if "concurrency" in settings
        else f"request rate {settings['request_rate']}"
        if "request_rate" in settings
        else "load unstated"
    )
    requests = tool.get("request_count")
    return f"{name} profile, {load}, {requests if requests is not None else '?'} requests"


IMPORTER = formats.Importer(
    "aiperf",
    "Import an AIPerf or GenAI-Perf profile export (profile_export_aiperf.json, profile_export_genai_perf.json) "
    "into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
