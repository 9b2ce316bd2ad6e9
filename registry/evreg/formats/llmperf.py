"""ray-project LLMPerf ``token_benchmark_ray.py`` results: ``<name>_summary.json``.

The summary is one flat object: the run's settings (``model``, ``mean_input_tokens``, ``stddev_input_tokens``,
``mean_output_tokens``, ``stddev_output_tokens``, ``num_concurrent_requests``, ``additional_sampling_params_*``),
the statistics of its completed requests (``results_<quantity>_quantiles_p25`` .. ``_p99``, ``_mean``, ``_min``,
``_max``, ``_stddev``), the counts (``results_num_requests_started``, ``results_num_completed_requests``,
``results_number_errors``, ``results_error_rate``, ``results_error_code_frequency``), the overall output throughput
(``results_mean_output_throughput_token_per_s``) and whatever ``--metadata`` the user added (``framework``).

One summary becomes one run measurement of the target packet, every statistic with its JSON pointer. LLMPerf writes
latencies in seconds; they are kept in seconds, under metrics whose unit is ``s``:

- ``ttft_s`` as ``{stat}_ttft_s``, ``end_to_end_latency_s`` as ``{stat}_e2el_s``;
- ``inter_token_latency_s`` as ``{stat}_e2el_per_token_s``: LLMPerf computes it per request as the request's whole
  time (first token included) over its output tokens, which is neither vLLM's inter-token latency nor its TPOT;
- ``request_output_throughput_token_per_s`` (per request) as ``user_output_tok_s`` (mean) and
  ``{stat}_user_output_tok_s``; ``mean_output_throughput_token_per_s`` (all output tokens over the run's wall time)
  as ``aggregate_tok_s``; the mean prompt and output lengths as ``mean_input_tokens`` / ``mean_output_tokens``.

``{stat}`` is ``mean``, ``min``, ``max``, ``std`` (``stddev``) or ``p25`` .. ``p99`` (``quantiles_pNN``). The
requests per minute stay in the record's ``tool`` as written (no metric is per minute).

Workload fields: ``concurrency`` is ``num_concurrent_requests``; ``input_tokens`` / ``output_tokens`` are the mean
lengths only when their stddev is 0 (every request had that length); ``requests`` is the requests started.

The per-request file written beside the summary (``<name>_individual_responses.json``) is not imported: the
summary's statistics are computed from it (errored requests left out) and it names neither the model nor the load.
Given alone it is refused, naming the summary to import. A summary with no completed request is a failed run (a
closure with its reason).
"""

from __future__ import annotations

import re
from typing import Any

from evreg import formats
from evreg.core import codes
from evreg.core.findings import Finding, Severity, join_pointer
from evreg.formats import serving as sv

FORMAT = "an LLMPerf summary (token_benchmark_ray.py's <name>_summary.json)"
QUANTITIES = {
    "ttft_s": "ttft_s",
    "end_to_end_latency_s": "e2el_s",
    "inter_token_latency_s": "e2el_per_token_s",
    "request_output_throughput_token_per_s": "user_output_tok_s",
}
"""LLMPerf's per-request quantities whose statistics are metrics, and the metric kind each becomes."""
STAT = re.compile(r"^(quantiles_p(\d+)|mean|min|max|stddev)$")
SETTINGS: tuple[str, ...] = ("mean_input_tokens", "stddev_input_tokens", "mean_output_tokens", "stddev_output_tokens")
SETTINGS += ("num_concurrent_requests",)
COUNTS = (
    "results_num_requests_started",
    "results_num_completed_requests",
    "results_num_completed_requests_per_min",
    "results_number_errors",
    "results_error_rate",
    "results_error_code_frequency",
)
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face repository id (``meta-llama/Llama-2-7b-chat-hf``), not a served name (``llama2-70b-4096``)."""


def _stat(name: str) -> str | None:
    m = STAT.match(name)
    if m is None:
        return None
    if m.group(2):
        return f"p{m.group(2)}"
    return "std" if name == "stddev" else name


def _metric(key: str) -> str | None:
    """The metric a summary key is recorded as, or None (a setting, a count, a token-count spread)."""
    if key == "results_mean_output_throughput_token_per_s":
        return "aggregate_tok_s"
    if key == "results_number_input_tokens_mean":
        return "mean_input_tokens"
    if key == "results_number_output_tokens_mean":
        return "mean_output_tokens"
    for quantity, kind in QUANTITIES.items():
        prefix = f"results_{quantity}_"
        if key.startswith(prefix) and (stat := _stat(key[len(prefix) :])) is not None:
            if kind == "user_output_tok_s" and stat == "mean":
                return "user_output_tok_s"
            return f"{stat}_{kind}"
    return None


def _numbers(doc: dict[str, Any]) -> sv.Numbers:
    numbers = sv.Numbers()
    for key, value in doc.items():
        if (metric := _metric(key)) is not None:
            numbers.add(metric, value, join_pointer(key))
    return numbers


def _read(request: formats.Request) -> dict[str, Any]:
    """The summary's one object; the per-request file and other tools' files are refused naming what to import."""
    source = formats.read_source(request.raw, request.file, FORMAT)
    doc = source.objects if source.lines else source.objects[0]
    if formats.looks_like(doc) == "llmperf" and isinstance(doc, list):
        summary = re.sub(r"_individual_responses(\.json)?$", "_summary.json", request.name)
        summary = summary if summary != request.name else "NAME_summary.json"
        raise formats.refuse(
            request.file,
            "",
            "this is LLMPerf's per-request file (individual_responses): it holds no run statistics, model or load",
            f"import the summary LLMPerf wrote beside it ({summary})",
        )
    formats.refuse_other_format(doc, request.file, "llmperf", FORMAT)
    if not isinstance(doc, dict) or not any(str(k).startswith("results_") for k in doc):
        raise formats.refuse(
            request.file,
            "",
            f"not {FORMAT}: no results_* statistics",
            "pass the <name>_summary.json token_benchmark_ray.py wrote, unmodified",
        )
    formats.forbid_citation_markers(doc, request.file)
    return doc


def _scope(request: formats.Request, doc: dict[str, Any]) -> tuple[formats.FileIdentity, list[Finding]]:
    """The run's identity: the model the requests named, when it is a repository id (a served name such as Groq's
    ``llama2-70b-4096`` is not the weights: a warning, and the model stays unstated)."""
    model = doc.get("model")
    named = model if isinstance(model, str) and REPO_ID.fullmatch(model) else None
    found = sv.identity(request, model=(named, "/model"), names=(model,) if isinstance(model, str) else ())
    if named is not None or not isinstance(model, str):
        return found, []
    return found, [
        codes.IMPORT_IDENTITY_MISSING.at(
            request.file,
            "/model",
            f"the summary names the model only as {model!r}, the name the API answered to, not the weights: it is "
            "not compared with the packet's weights and the record leaves the model unstated",
            "keep the file as it is; the packet states the weights",
            severity=Severity.WARNING,
        )
    ]


def _fixed(doc: dict[str, Any], which: str) -> Any:
    """The mean length of ``which`` (input/output) when every request had it (its stddev is 0), else None."""
    stddev = doc.get(f"stddev_{which}_tokens")
    fixed = isinstance(stddev, int | float) and not isinstance(stddev, bool) and stddev == 0
    return doc.get(f"mean_{which}_tokens") if fixed else None


def plan(request: formats.Request) -> formats.Plan:
    target, raw = request.packet(), request.raw
    doc = _read(request)
    out = formats.Plan()
    found, warnings = _scope(request, doc)
    out.warn(warnings)
    formats.check_scope(out, target, found, request.file)
    evidence = formats.evidence_for(target, request.name, raw)
    out.add_file(evidence, raw)
    earlier = formats.earlier_imports(target, request.name)
    config = sv.scalars(doc, SETTINGS) | {k: v for k, v in sv.scalars(doc).items() if k.startswith("additional_")}
    tool: dict[str, Any] = {"name": "llmperf"} | sv.scalars(doc, ("version", "name", "model", "timestamp", *COUNTS))
    tool |= {
        k: v
        for k, v in sv.scalars(doc).items()
        if k not in tool and k not in config and not k.startswith("results_") and k not in SETTINGS
    }  # what --metadata added (framework, ...)
    completed = doc.get("results_num_completed_requests")
    label = f"c{doc.get('num_concurrent_requests')}"
    numbers = _numbers(doc)
    if completed == 0 or not numbers.metrics:
        reason = "LLMPerf completed no request: the run measured nothing"
        detail = {k: v for k, v in tool.items() if k in COUNTS} | {"settings": config}
        rid = formats.content_id("llmperf", raw, target, label, "failed")
        sv.add(out, request, earlier, "0", formats.failed_run(target, rid, evidence, raw, reason, detail))
        out.notes.append(f"llmperf: a failed run, recorded as closure {rid}")
        return out
    body: dict[str, Any] = {
        "measurement_class": "llmperf-token-benchmark",
        "workload": _workload(doc),
        "workload_fields": sv.serving_fields(
            concurrency=doc.get("num_concurrent_requests"),
            requests=doc.get("results_num_requests_started"),
            input_tokens=_fixed(doc, "input"),
            output_tokens=_fixed(doc, "output"),
        ),
        "config": config,
        "tool": tool,
        **numbers.body(),
    }
    errors = doc.get("results_number_errors")
    if isinstance(errors, int) and errors > 0:
        body["partial_failure"] = {k: tool[k] for k in COUNTS if k in tool}
        body["caveat"] = "Some requests failed; partial_failure says how many, as LLMPerf counted them."
    rid = formats.content_id("llmperf", raw, target, label)
    sv.add(out, request, earlier, "0", sv.run_record(request, rid, evidence, body))
    out.notes.append(f"1 LLMPerf summary into packet {target.packet} ({len(numbers.metrics)} metrics)")
    return out


def _workload(doc: dict[str, Any]) -> str:
    def lengths(which: str) -> str:
        mean, stddev = doc.get(f"mean_{which}_tokens", "?"), doc.get(f"stddev_{which}_tokens", "?")
        return f"{which} mean {mean} tokens (stddev {stddev})"

    return (
        f"LLMPerf token benchmark: {lengths('input')}, {lengths('output')}, "
        f"{doc.get('num_concurrent_requests', '?')} concurrent requests, "
        f"{doc.get('results_num_completed_requests', '?')} of {doc.get('results_num_requests_started', '?')} completed"
    )


IMPORTER = formats.Importer(
    "llmperf",
    "Import an LLMPerf token benchmark summary (token_benchmark_ray.py's <name>_summary.json) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
