"""What only the serving-benchmark importers share (AIPerf / GenAI-Perf, MLPerf loadgen, SGLang ``bench_serving``);
reading, identity, ids, evidence and failed runs are the shared base's (``evreg.formats``), as for every tool.

- **Runtime**: none of these files names the server's build. ``--runtime`` states it; a file that names the engine
  it benchmarked (SGLang's and GenAI-Perf's ``backend``) must agree with what is stated, and the engine alone is
  then the run's runtime identity, compared with the packet's (``check_scope``).
- **Numbers**: every statistic its own metric, with its locator: a JSON pointer for JSON, ``line:N[:K]`` for text
  and JSON Lines (the Kth number on line N, counted as validation counts them, ``evreg.core.evidence.TEXT_NUMBER``); a
  value no measurement of its unit can take (a zero latency) is kept beside the metrics (``out_of_bounds``).
- **Settings**: scalars as written; a non-finite float (``Infinity`` request rate) as the text the tool meant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from evreg.claims.runtimes import runtime_matches
from evreg.core import jsonio
from evreg.core.evidence import TEXT_NUMBER, decode, text_lines
from evreg.core.layout import record_path
from evreg.formats import (
    Earlier,
    FileIdentity,
    Option,
    Plan,
    Request,
    earlier_imports,
    evidence_for,
    forbid_citation_markers,
    link_correction,
    quantization_of_name,
    refuse,
    refuse_other_format,
    sha256,
    sniff,
    stated,
)

RUNTIME_OPTION = Option(
    "runtime",
    "",
    "The server's runtime and version as you ran it (e.g. 'SGLang 0.4.1'); the file does not record it, so it is "
    "never taken from the packet. Without it the runs state no runtime.",
)
ENGINES = {
    "sglang": "SGLang",
    "vllm": "vLLM",
    "lmdeploy": "LMDeploy",
    "trt": "TensorRT-LLM",
    "tensorrtllm": "TensorRT-LLM",
    "tgi": "TGI",
}
"""A ``backend`` a serving benchmark names, as the engine's name in a runtime string."""


def line_locator(line_no: int, line: str, start: int) -> tuple[str, float] | None:
    """``line:N`` (or ``line:N:K``) of the first number on ``line`` at or after character ``start``, and its value."""
    matches = list(TEXT_NUMBER.finditer(line))
    for k, m in enumerate(matches, 1):
        if m.start() >= start:
            return (f"line:{line_no}" if len(matches) == 1 else f"line:{line_no}:{k}"), float(m.group())
    return None


def add_keyed(numbers: Numbers, n: int, line: str, key: str, value: float, metric: str, file: str) -> None:
    """``value``, the number after ``"key":`` on JSON Lines line ``n``, added to ``numbers`` as ``metric`` with its
    locator; a line where that number is not the value (a hand-edited file) is refused."""
    at = re.search(rf'"{re.escape(key)}"\s*:\s*', line)
    found = line_locator(n, line, at.end()) if at else None
    if found is None or found[1] != float(value):
        raise refuse(file, f"line:{n}", f"line {n}: {key} is not where JSON Lines puts it", "pass the file unmodified")
    numbers.add(metric, value, found[0])


def plain(value: Any) -> Any:
    """A scalar for a record: a non-finite float (``Infinity`` request rate) as the text the tool meant."""
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    return value


def scalars(data: Mapping[str, Any], keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The scalar fields of ``data`` (those in ``keys`` when given), non-finite floats as text, nulls left out."""
    out = {}
    for key, value in data.items():
        if (keys is None or key in keys) and isinstance(value, str | int | float | bool):
            out[key] = plain(value)
    return out


def obj(node: Any, key: str) -> dict[str, Any]:
    """``node[key]`` when both are JSON objects, else an empty one."""
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


def stated_runtime(request: Request) -> str | None:
    value = str(request.options.get("runtime") or "").strip()
    return value or None


def identity(
    request: Request,
    *,
    model: tuple[str | None, str] = (None, ""),
    names: tuple[str, ...] = (),
    backend: tuple[object, str] = (None, ""),
    hardware: tuple[str | None, str] = (None, ""),
) -> FileIdentity:
    """The run's identity for ``check_scope``: the model (``(name, pointer)``; its quantization from it or from
    the other ``names`` the file gives the model), the GPUs, and the runtime: as stated (``--runtime``), which
    must be the ``backend`` the file names, or else that engine."""
    runtime = stated_runtime(request)
    engine = ENGINES.get(str(backend[0]).split("-")[0].lower()) if backend[0] is not None else None
    if runtime and engine and not runtime_matches(engine, {"runtime": runtime}):
        raise refuse(
            request.file,
            backend[1],
            f"the file benchmarked backend {backend[0]!r} ({engine}), but --runtime says {runtime!r}",
            "state the runtime the server ran, or import into the packet of that runtime",
        )
    quant = next((q for q in map(quantization_of_name, (n for n in (model[0], *names) if n)) if q), None)
    where = {"model": model[1], "quantization": model[1], "hardware": hardware[1]}
    return FileIdentity(
        model=model[0],
        quantization=quant,
        runtime=runtime or engine,
        hardware=hardware[0],
        where=where | ({} if runtime else {"runtime": backend[1]}),
        stated=("runtime",) if runtime else (),
    )


def run_record(request: Request, rid: str, evidence: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A run measurement of the request's packet: the weights it ran (``Target.identity``), the stated runtime
    and topology, the evidence with its sha256, and ``body`` (metrics, locators, config, workload, tool ...)."""
    target = request.packet()
    record: dict[str, Any] = {"kind": "run-measurement", "id": rid, "state": request.state, **target.identity()}
    if (runtime := stated_runtime(request)) is not None:
        record["runtime"] = runtime
    record |= body
    record["config"] = dict(body.get("config") or {}) | stated(request.cards)
    record["evidence"] = evidence
    record["evidence_sha256"] = {evidence: sha256(request.raw)}
    if (encoding := decode(request.raw)[1]) != "utf-8":  # read decoded, by the importer and by validation alike
        record["evidence_encoding"] = encoding
    return record_path("run-measurement", target.family, rid, target.packet), record


def add(plan: Plan, request: Request, earlier: Earlier, row: str, written: tuple[str, dict[str, Any]]) -> None:
    """Add a record of row ``row`` of the file, noting where it came from; it supersedes what an earlier import of
    that row wrote (a changed file)."""
    path, record = written
    record["imported_from"] = {"file": request.name, "row": row}
    link_correction(record, earlier, row)
    plan.add(path, record)


Line = tuple[int, str, Any]
"""One object of a JSON Lines file: its line number, its text and its value."""


def json_lines(
    request: Request, importer: str, fmt: str, tool: str, accepts: Callable[[Any], bool], needs: str
) -> list[Line]:
    """Every object of a JSON Lines file (``fmt``, written by ``tool``) that ``accepts`` takes; a file another importer
    reads is refused naming it, and a line that is not such an object (``needs``: what it must hold) or a file with
    none is refused."""
    out: list[Line] = []
    for n, line in enumerate(text_lines(request.raw), 1):
        if not line.strip():
            continue
        try:
            obj = jsonio.loads(line)
        except ValueError:
            obj = None
        refuse_other_format(obj if obj is not None else sniff(request.raw), request.file, importer, fmt)
        if not isinstance(obj, dict) or not accepts(obj):
            raise refuse(
                request.file,
                f"line:{n}",
                f"not {fmt}: line {n} is not a JSON object with {needs}",
                f"pass the file {tool} wrote, unmodified",
            )
        out.append((n, line, obj))
    if not out:
        raise refuse(request.file, "", "the file holds no result", f"pass the file {tool} wrote")
    forbid_citation_markers([o for _, _, o in out], request.file)
    return out


def add_lines(
    plan: Plan,
    request: Request,
    lines: list[Line],
    make: Callable[[Request, int, str, Any, str], tuple[str, dict[str, Any]]],
    what: str,
    failed_as: str,
) -> None:
    """The file as evidence, and one record per line (``make``: a run, or a closure where it measured nothing), each
    superseding what an earlier import of that line wrote; a note of how many, and how many were ``failed_as``."""
    target = request.packet()
    evidence = evidence_for(target, request.name, request.raw)
    plan.add_file(evidence, request.raw)
    earlier = earlier_imports(target, request.name)
    failed = 0
    for n, line, obj in lines:
        path, record = make(request, n, line, obj, evidence)
        failed += record["kind"] == "closure"
        add(plan, request, earlier, str(n), (path, record))
    plan.notes.append(
        f"{len(lines)} {what} into packet {target.packet}"
        + (f" ({failed} {failed_as}, recorded as closures)" if failed else "")
    )


def out_of_bounds(metric: str, value: float) -> bool:
    """Whether ``value`` is outside what its metric's unit can measure (``vocab/metrics.json`` units): a tool's
    zero or negative latency is kept in the record beside the metrics, never as a measurement."""
    from evreg.claims.citations import unit_of
    from evreg.core.vocab import unit_bounds

    if not math.isfinite(value):
        return True  # NaN or Infinity: the tool measured nothing there
    bounds = unit_bounds().get(unit_of(metric)) or {}
    return bool(
        ("above" in bounds and not value > bounds["above"])
        or ("min" in bounds and value < bounds["min"])
        or ("max" in bounds and value > bounds["max"])
    )


UNSTREAMED_KINDS = ("ttft", "ttst", "itl", "tpot")
"""The latencies a run measures only when its responses stream token by token: time to first (and second) token,
inter-token latency, time per output token."""
UNSTREAMED = (
    "the responses arrived whole, not token by token: time to first token is the whole request latency and no "
    "inter-token latency was measured; time to first token, inter-token latency and time per output token are not "
    "stored"
)


def arrived_whole(latency: Mapping[tuple[str, str], float], tokens_per_request: float | None) -> bool:
    """Whether a run's responses came in one piece (a backend that does not stream, or ``--disable-stream``): its
    file states every inter-token latency as zero and each time-to-first-token statistic as the request latency's
    (within 5%: the first chunk held nearly the whole response), while its requests produced more than one token
    each (a run of one output token is a prefill measurement, whose first token is its latency). ``latency``:
    ``(statistic, kind)`` -> value, the kinds ``ttft``, ``e2el``, ``itl``."""
    itl = [v for (_, kind), v in latency.items() if kind == "itl"]
    pairs = [(v, latency.get((stat, "e2el"), 0.0)) for (stat, kind), v in latency.items() if kind == "ttft"]
    pairs = [(t, e) for t, e in pairs if e > 0]
    if not itl or any(v != 0 for v in itl) or not pairs or tokens_per_request is None or tokens_per_request <= 1:
        return False
    return all(abs(t - e) <= 0.05 * e for t, e in pairs)


def per_request(total: Any, count: Any) -> float | None:
    """``total`` over ``count`` (output tokens per request) when both are counts and ``count`` is positive."""
    if _whole(total) is None or _whole(count) is None or not count:
        return None
    return float(total) / float(count)


class Numbers:
    """The metrics of one run as they are read, each with its locator; values no measurement can take go to
    ``out_of_bounds`` with their locator instead."""

    def __init__(self) -> None:
        self.metrics: dict[str, list[float]] = {}
        self.locators: dict[str, str] = {}
        self.rejected: dict[str, dict[str, Any]] = {}

    def add(self, metric: str, value: Any, locator: str) -> None:
        if metric in self.metrics or metric in self.rejected:
            return  # the first place a file states a number is its locator
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return
        if out_of_bounds(metric, float(value)):
            self.rejected[metric] = {"value": value, "at": locator}
            return
        self.metrics[metric] = [value]
        self.locators[f"{metric}[0]"] = locator

    def drop(self, kinds: tuple[str, ...]) -> list[str]:
        """Remove the metrics of latency ``kinds`` (``mean_ttft_ms`` is of kind ``ttft``); their names."""
        gone = [m for m in (*self.metrics, *self.rejected) if m.endswith("_ms") and m.split("_")[-2] in kinds]
        for metric in gone:
            self.metrics.pop(metric, None)
            self.rejected.pop(metric, None)
            self.locators.pop(f"{metric}[0]", None)
        return gone

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metrics": self.metrics, "evidence_locators": self.locators}
        if self.rejected:
            out["out_of_bounds"] = self.rejected
        return out


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _rate(value: Any) -> float | None:
    """A request rate as a tool writes it: a number, or ``inf`` (every request at once)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return math.inf if isinstance(value, str) and value.strip().lower() in ("inf", "infinity") else None


def serving_fields(
    *,
    concurrency: Any = None,
    request_rate: Any = None,
    requests: Any = None,
    input_tokens: Any = None,
    output_tokens: Any = None,
    dataset: Any = None,
    burstiness: Any = None,
) -> dict[str, Any]:
    """The workload fields a serving benchmark's result states (requests sent to a server; each stored value is one
    run's aggregate over its requests): what is absent or not a plain value stays unstated."""
    out: dict[str, Any] = {"phase": "serving", "sample": "run"}
    if _whole(input_tokens) is not None:
        out["input_tokens"] = input_tokens
    if _whole(output_tokens) is not None:
        out["output_tokens"] = output_tokens
    if _whole(concurrency):
        out["concurrency"] = concurrency
    rate = _rate(request_rate)
    if rate is not None and math.isinf(rate) and rate > 0:
        out["arrival"] = "burst"  # every request at once
    elif rate is not None and math.isfinite(rate) and rate > 0:
        out["request_rate"] = rate
        if burstiness == 1 and not isinstance(burstiness, bool):
            out["arrival"] = "poisson"
    if _whole(requests) is not None:
        out["requests"] = requests
    if isinstance(dataset, str) and dataset.strip():
        out["dataset"] = dataset.strip()
    return out
