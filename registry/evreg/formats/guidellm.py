"""GuideLLM benchmark reports: ``guidellm benchmark ... --output-path benchmarks.json`` (``--outputs json``).

A report holds ``benchmarks``, one per strategy GuideLLM ran (a sweep runs several). Two layouts are read:

- GuideLLM 0.2 / 0.3: each benchmark has ``args.strategy``, ``run_stats``, ``worker`` (``backend_type``,
  ``backend_target``, ``backend_model``), ``request_loader`` (``data``, ``processor``), ``request_totals`` and
  ``metrics``;
- GuideLLM 0.4 and later: the report adds ``metadata`` (``guidellm_version``) and ``args`` (``target``, ``model``,
  ``data``, ``profile``, ``rate``); each benchmark has ``config`` (``strategy``, ``backend.model``),
  ``scheduler_state``, ``scheduler_metrics`` and ``metrics`` (with ``request_totals``).

Each metric is a distribution per request status (``successful``, ``errored``, ``incomplete``, ``total``) with
``mean``, ``median``, ``std_dev``, ``min``, ``max`` and ``percentiles`` (``p001`` .. ``p999``). Only the successful
requests' statistics are kept, each with its JSON pointer:

- ``time_to_first_token_ms`` as ``{stat}_ttft_ms``;
- ``inter_token_latency_ms`` as ``{stat}_tpot_ms``: GuideLLM computes it per request as (last token - first
  token) / (output tokens - 1), vLLM's time per output token, not the gap between any two tokens;
- ``request_latency`` (seconds, as GuideLLM writes it) as ``{stat}_e2el_s``;
- the means of ``requests_per_second``, ``output_tokens_per_second``, ``tokens_per_second``,
  ``prompt_tokens_per_second``, ``prompt_token_count`` and ``output_token_count`` as ``requests_per_s``,
  ``aggregate_tok_s``, ``total_tok_s``, ``input_tok_s``, ``mean_input_tokens`` and ``mean_output_tokens``.

``{stat}`` is ``mean``, ``median``, ``min``, ``max``, ``std`` (``std_dev``) or a percentile (``p001`` as ``p0_1``,
``p01`` as ``p1``, ``p999`` as ``p99_9``). ``time_per_output_token_ms`` is left out: GuideLLM changed what it times
(0.3: first to last token; 0.5: request start to last token, over the output tokens), and the file does not always
say which version wrote it.

Each benchmark becomes one run measurement of the target packet (a closure when no request succeeded), its load in
``workload_fields`` as the strategy states it: synchronous is concurrency 1, concurrent N is concurrency N,
constant and poisson at rate R are request rate R with that arrival, throughput is a burst. Synthetic data with
fixed lengths (``prompt_tokens=256,output_tokens=128`` and no spread) states the input and output tokens. The model
is the backend's (compared with the packet) when it is a repository id, else the processor's; GuideLLM's backend is
its HTTP client, not the server, so the runtime is what ``--runtime`` states.
"""

from __future__ import annotations

import re
from typing import Any

from evreg import formats
from evreg.core import codes, jsonio
from evreg.core.findings import Finding, Severity
from evreg.formats import serving as sv

FORMAT = "a GuideLLM benchmarks report (guidellm benchmark --output-path benchmarks.json)"
LATENCY = {"time_to_first_token_ms": "ttft_ms", "inter_token_latency_ms": "tpot_ms", "request_latency": "e2el_s"}
"""Distributions whose statistics are metrics: GuideLLM's name -> the metric kind (its unit as written)."""
MEANS = {
    "requests_per_second": "requests_per_s",
    "output_tokens_per_second": "aggregate_tok_s",
    "tokens_per_second": "total_tok_s",
    "prompt_tokens_per_second": "input_tok_s",
    "prompt_token_count": "mean_input_tokens",
    "output_token_count": "mean_output_tokens",
}
"""Distributions whose mean is a metric."""
STATS = {"mean": "mean", "median": "median", "min": "min", "max": "max", "std_dev": "std"}
PERCENTILE = re.compile(r"^p(\d)(\d*)$")
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face repository id, not a served name or a path."""
SPREAD = re.compile(r"(?i)(stdev|std_dev|variance|_min|_max)")
"""Keys of synthetic data that make lengths vary (``prompt_tokens_stdev``, ``output_tokens_min`` ...)."""


def _percentile(key: str) -> str | None:
    """``p001`` -> ``p0_1``, ``p01`` -> ``p1``, ``p05`` -> ``p5``, ``p50`` -> ``p50``, ``p999`` -> ``p99_9``."""
    m = PERCENTILE.match(key)
    if m is None:
        return None
    digits = m.group(1) + m.group(2)
    whole, frac = digits[:2].lstrip("0") or "0", digits[2:]
    return f"p{whole}_{frac}" if frac else f"p{whole}"


def _numbers(metrics: dict[str, Any], base: str) -> sv.Numbers:
    numbers = sv.Numbers()
    for name, kind in LATENCY.items():
        ok = sv.obj(sv.obj(metrics, name), "successful")
        at = f"{base}/metrics/{name}/successful"
        for stat, out in STATS.items():
            if stat in ok:
                numbers.add(f"{out}_{kind}", ok[stat], f"{at}/{stat}")
        for key, value in sv.obj(ok, "percentiles").items():
            if (p := _percentile(key)) is not None:
                numbers.add(f"{p}_{kind}", value, f"{at}/percentiles/{key}")
    for name, metric in MEANS.items():
        ok = sv.obj(sv.obj(metrics, name), "successful")
        if "mean" in ok:
            numbers.add(metric, ok["mean"], f"{base}/metrics/{name}/successful/mean")
    return numbers


class Run:
    """One benchmark of the report, read the same way from either layout."""

    def __init__(self, doc: dict[str, Any], index: int, bench: dict[str, Any]) -> None:
        self.index, self.bench, self.base = index, bench, f"/benchmarks/{index}"
        self.new = isinstance(bench.get("config"), dict)
        args = sv.obj(doc, "args")
        if self.new:
            config = bench["config"]
            backend = sv.obj(config, "backend")
            self.strategy, self.strategy_at = sv.obj(config, "strategy"), f"{self.base}/config/strategy"
            self.model = backend.get("model") if backend.get("model") else args.get("model")
            self.model_at = f"{self.base}/config/backend/model" if backend.get("model") else "/args/model"
            self.processor = args.get("processor")
            self.target = backend.get("target") or args.get("target")
            self.backend = args.get("backend")
            data = args.get("data")
            self.data = data[0] if isinstance(data, list) and len(data) == 1 else None
            self.totals = sv.obj(bench.get("metrics"), "request_totals")
            self.version = sv.obj(doc, "metadata").get("guidellm_version")
        else:
            worker, loader = sv.obj(bench, "worker"), sv.obj(bench, "request_loader")
            self.strategy, self.strategy_at = sv.obj(sv.obj(bench, "args"), "strategy"), f"{self.base}/args/strategy"
            self.model, self.model_at = worker.get("backend_model"), f"{self.base}/worker/backend_model"
            self.processor = loader.get("processor")
            self.target, self.backend = worker.get("backend_target"), worker.get("backend_type")
            self.data = loader.get("data")
            self.totals = sv.obj(bench, "request_totals") or sv.obj(sv.obj(bench, "run_stats"), "requests_made")
            self.version = None

    @property
    def kind(self) -> str:
        return str(self.strategy.get("type_") or "")

    def label(self) -> str:
        s = self.strategy
        value = s.get("rate") if self.kind in ("constant", "poisson") else s.get("streams")
        if self.kind == "concurrent" and value is None:
            value = s.get("max_concurrency")
        return f"{self.kind}{sv.plain(value) if value is not None else ''}"

    def workload_fields(self) -> dict[str, Any]:
        s, kind = self.strategy, self.kind
        concurrency = 1 if kind == "synchronous" else s.get("streams") or s.get("max_concurrency")
        fixed = _fixed_lengths(self.data)
        fields = sv.serving_fields(
            concurrency=concurrency if kind in ("synchronous", "concurrent") else None,
            request_rate="inf" if kind == "throughput" else s.get("rate") if kind in ("constant", "poisson") else None,
            burstiness=1 if kind == "poisson" else None,
            requests=self.totals.get("total"),
            input_tokens=fixed.get("prompt_tokens"),
            output_tokens=fixed.get("output_tokens"),
        )
        if kind == "constant" and "request_rate" in fields:
            fields["arrival"] = "constant"
        return fields

    def workload(self) -> str:
        s, kind = self.strategy, self.kind
        load = {
            "synchronous": "synchronous (one request at a time)",
            "concurrent": f"concurrent, {s.get('streams') or s.get('max_concurrency')} streams",
            "throughput": "throughput (all requests at once)",
            "constant": f"constant, request rate {sv.plain(s.get('rate'))}",
            "poisson": f"poisson, request rate {sv.plain(s.get('rate'))}",
        }.get(kind, kind or "strategy unstated")
        totals = self.totals
        return (
            f"GuideLLM benchmark {self.index}: {load}; data {self.data if isinstance(self.data, str) else '?'}; "
            f"{totals.get('successful', '?')} successful, {totals.get('errored', '?')} errored, "
            f"{totals.get('incomplete', '?')} incomplete"
        )

    def config(self) -> dict[str, Any]:
        out = {f"strategy_{k.rstrip('_')}": v for k, v in sv.scalars(self.strategy).items()}
        if isinstance(self.data, str):
            out["data"] = self.data
        return out

    def tool(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": "guidellm"}
        out |= {"version": self.version} if isinstance(self.version, str) else {}
        for key, value in (("backend", self.backend), ("target", self.target), ("model", self.model)):
            if isinstance(value, str):
                out[key] = value
        if isinstance(self.processor, str):
            out["processor"] = self.processor
        out["request_totals"] = sv.scalars(self.totals)
        out |= sv.scalars(self.bench, ("start_time", "end_time", "duration"))
        return out


def _fixed_lengths(data: Any) -> dict[str, Any]:
    """The prompt and output tokens of synthetic data that states both and no spread (``prompt_tokens=256,
    output_tokens=128`` or its JSON form), else nothing."""
    if not isinstance(data, str):
        return {}
    try:
        parsed = jsonio.loads(data)
    except ValueError:
        parsed = dict(p.split("=", 1) for p in data.split(",") if p.count("=") == 1)
    if not isinstance(parsed, dict) or any(SPREAD.search(str(k)) for k in parsed):
        return {}
    out = {}
    for key in ("prompt_tokens", "output_tokens"):
        value = parsed.get(key)
        value = int(value) if isinstance(value, str) and value.strip().isdigit() else value
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
    return out if len(out) == 2 else {}


def _scope(request: formats.Request, run: Run) -> tuple[formats.FileIdentity, list[Finding]]:
    """The benchmark's identity: the backend's model when it is a repository id, else the processor (tokenizer)
    when it is one; a served name alone is not the weights (a warning, the model stays unstated)."""
    names = tuple(n for n in (run.model, run.processor) if isinstance(n, str))
    model: tuple[str | None, str] = (None, run.model_at)
    if isinstance(run.model, str) and REPO_ID.fullmatch(run.model):
        model = (run.model, run.model_at)
    elif isinstance(run.processor, str) and REPO_ID.fullmatch(run.processor):
        model = (run.processor, run.model_at)
    found = sv.identity(request, model=model, names=names)
    if found.model is not None or not names:
        return found, []
    return found, [
        codes.IMPORT_IDENTITY_MISSING.at(
            request.file,
            run.model_at,
            f"the report names the model only as {names[0]!r}, not a weights repository: it is not compared with "
            "the packet's weights and the records leave the model unstated",
            "benchmark with --processor ORG/NAME (the weights' repository) so the report names them",
            severity=Severity.WARNING,
        )
    ]


def _read(request: formats.Request) -> tuple[dict[str, Any], list[Run]]:
    source = formats.read_source(request.raw, request.file, FORMAT)
    doc = source.objects if source.lines else source.objects[0]
    formats.refuse_other_format(doc, request.file, "guidellm", FORMAT)
    benches = doc.get("benchmarks") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(benches, list) or not benches:
        raise formats.refuse(
            request.file,
            "/benchmarks",
            f"not {FORMAT}: no benchmarks list",
            "pass the JSON report guidellm benchmark wrote (--output-path benchmarks.json), unmodified",
        )
    runs = []
    for i, bench in enumerate(benches):
        formats.need(bench, dict, request.file, f"/benchmarks/{i}", "a benchmark")
        formats.need(bench.get("metrics"), dict, request.file, f"/benchmarks/{i}/metrics", "the benchmark's metrics")
        runs.append(Run(doc, i, bench))
    formats.forbid_citation_markers({k: v for k, v in doc.items() if k != "benchmarks"}, request.file)
    formats.forbid_citation_markers([{k: v for k, v in b.items() if k != "requests"} for b in benches], request.file)
    return doc, runs


def plan(request: formats.Request) -> formats.Plan:
    target, raw = request.packet(), request.raw
    _, runs = _read(request)
    out = formats.Plan()
    for run in runs:
        found, warnings = _scope(request, run)
        out.warn(warnings)
        formats.check_scope(out, target, found, request.file, run.base)
    evidence = formats.evidence_for(target, request.name, raw)
    out.add_file(evidence, raw)
    earlier = formats.earlier_imports(target, request.name)
    failed = 0
    for run in runs:
        row = str(run.index)
        numbers = _numbers(run.bench["metrics"], run.base)
        if run.totals.get("successful") == 0 or not numbers.metrics:
            reason = f"GuideLLM benchmark {run.index} ({run.label() or 'strategy unstated'}): no request succeeded"
            detail = {"benchmark": run.index, "request_totals": sv.scalars(run.totals), "settings": run.config()}
            rid = formats.content_id("guidellm", raw, target, run.label(), run.index, "failed")
            sv.add(out, request, earlier, row, formats.failed_run(target, rid, evidence, raw, reason, detail))
            failed += 1
            continue
        body: dict[str, Any] = {
            "measurement_class": "guidellm-benchmark",
            "workload": run.workload(),
            "workload_fields": run.workload_fields(),
            "config": run.config(),
            "tool": run.tool(),
            **numbers.body(),
        }
        errored = run.totals.get("errored")
        if isinstance(errored, int) and errored > 0:
            body["partial_failure"] = {"request_totals": sv.scalars(run.totals)}
            body["caveat"] = "Some requests errored; the statistics are those of the successful ones."
        rid = formats.content_id("guidellm", raw, target, run.label(), run.index)
        sv.add(out, request, earlier, row, sv.run_record(request, rid, evidence, body))
    out.notes.append(
        f"{len(runs)} GuideLLM benchmarks into packet {target.packet}"
        + (f" ({failed} with no successful request, recorded as closures)" if failed else "")
    )
    return out


IMPORTER = formats.Importer(
    "guidellm",
    "Import a GuideLLM benchmarks report (guidellm benchmark --output-path benchmarks.json) into a packet.",
    plan,
    options=(sv.RUNTIME_OPTION,),
)
