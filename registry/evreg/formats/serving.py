"""What the serving-benchmark importers share (AIPerf / GenAI-Perf, MLPerf loadgen, SGLang ``bench_serving``).

- **Identity** comes from the file: the model, tokenizer, backend, scenario, concurrency and tool version it
  records go into the record's ``config`` and ``tool``; the packet gives only the attachment (revision, artifact,
  quantization). What the file does not record stays missing and is listed in the import's notes; the runtime
  is taken only as stated (``--runtime``), never from the packet.
- **Failed runs** (no completed request, a loadgen ``INVALID`` verdict) become closures with their reason, never
  measurements; partial failures are stated in the record (``partial_failure``).
- **Ids** are derived from the file's bytes and the packet: re-importing the same file is a no-op, the same file
  into another packet or two files of one name never collide. Evidence is kept byte-exact under a folder named by
  its sha256.
- **Locators**: a JSON pointer for JSON; ``line:N[:K]`` for text and JSON Lines (the Kth number on line N, counted
  as validation counts them, ``evreg.evidence.TEXT_NUMBER``).
- **Refusal**: a file of another kind is refused with the format it looks like (``looks_like``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from evreg.evidence import TEXT_NUMBER
from evreg.formats import Option, Plan, Request, Target, refuse, sha256
from evreg.layout import record_path, slug

RUNTIME_OPTION = Option(
    "runtime",
    "",
    "The server's runtime and version as you ran it (e.g. 'SGLang 0.4.1'); the file does not record it, so it is "
    "never taken from the packet. Without it the runs state no runtime.",
)
ATTACHMENT = ("revision", "artifact_id", "quantization")
"""What a run takes from its packet: the registry's names for the weights it ran, which no tool's file can hold."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def evidence_path(target: Target, raw: bytes, name: str) -> str:
    """Where the file is kept: under the packet's evidence folder, in a folder named by its sha256, so two
    different files of one name (every ``mlperf_log_summary.txt``) never overwrite each other."""
    if not _SAFE_NAME.fullmatch(name):
        stem, dot, ext = name.rpartition(".")
        name = f"{slug(stem)}.{slug(ext)}" if dot and slug(stem) else slug(name) or "output"
    return f"{target.folder}/evidence/{sha256(raw)[:12]}/{name}"


def content_id(prefix: str, target: Target, raw: bytes, *parts: object) -> str:
    """A measurement or closure id derived from the file's bytes and the packet it joins."""
    digest = sha256(f"{target.family}/{target.packet}\n".encode() + raw)[:10]
    return slug("-".join([prefix, *(str(p) for p in parts if p not in (None, "")), digest]))


def line_locator(line_no: int, line: str, start: int) -> tuple[str, float] | None:
    """``line:N`` (or ``line:N:K``) of the first number on ``line`` at or after character ``start``, and its value."""
    matches = list(TEXT_NUMBER.finditer(line))
    for k, m in enumerate(matches, 1):
        if m.start() >= start:
            return (f"line:{line_no}" if len(matches) == 1 else f"line:{line_no}:{k}"), float(m.group())
    return None


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


def attachment(target: Target) -> dict[str, Any]:
    return {k: target.data[k] for k in ATTACHMENT if k in target.data}


def stated_runtime(request: Request) -> str | None:
    value = str(request.options.get("runtime") or "").strip()
    return value or None


def run_record(request: Request, rid: str, evidence: str, body: dict[str, Any]) -> dict[str, Any]:
    """A run measurement of the request's packet: the attachment, the stated runtime and topology, the
    evidence with its sha256, and ``body`` (metrics, locators, config, workload, tool ...) as read."""
    target = request.packet()
    record: dict[str, Any] = {"kind": "run-measurement", "id": rid, "state": request.state, **attachment(target)}
    if (runtime := stated_runtime(request)) is not None:
        record["runtime"] = runtime
    record |= body
    config = dict(body.get("config") or {})
    if request.cards is not None:
        config["cards"] = request.cards
    record["config"] = config
    record["evidence"] = evidence
    record["evidence_sha256"] = {evidence: sha256(request.raw)}
    return record


def failed_run(
    request: Request, cid: str, evidence: str, reason: str, failure: dict[str, Any], selectors: dict[str, Any]
) -> dict[str, Any]:
    """A closure for a run that measured nothing valid: its reason (prose, so no figures in it) and what the
    file says about the failure (``failure``)."""
    target = request.packet()
    record: dict[str, Any] = {
        "kind": "closure",
        "id": cid,
        "state": "unsupported",
        "selectors": {k: target.data[k] for k in ("revision", "quantization") if k in target.data}
        | {"packet_id": target.packet}
        | {k: plain(v) for k, v in selectors.items() if isinstance(v, str | int | float | bool)},
        "reason": reason,
        "evidence": evidence,
        "evidence_sha256": {evidence: sha256(request.raw)},
        "failure": failure,
    }
    if "artifact_id" in target.data:
        record["artifact_id"] = target.data["artifact_id"]
    if (runtime := stated_runtime(request)) is not None:
        record["selectors"]["runtime"] = runtime
    return record


def add_run(plan: Plan, target: Target, record: dict[str, Any]) -> None:
    plan.add(record_path("run-measurement", target.family, record["id"], target.packet), record)


def add_closure(plan: Plan, target: Target, record: dict[str, Any]) -> None:
    plan.add(record_path("closure", target.family, record["id"]), record)


def unrecorded_note(tool: str, missing: list[str]) -> list[str]:
    if not missing:
        return []
    return [f"{tool}: the file does not record {', '.join(missing)}; the runs state none (missing stays missing)"]


# -- what a file looks like ----------------------------------------------------------------------

_SGLANG_KEYS = ("total_output_tokens_retokenized", "median_e2e_latency_ms", "mean_e2e_latency_ms", "random_range_ratio")
_VLLM_KEYS = ("mean_e2el_ms", "median_e2el_ms", "burstiness", "request_goodput", "total_token_throughput")


def _json_kind(doc: Any) -> str | None:
    if isinstance(doc, list) and doc and all(isinstance(r, dict) and "samples_ts" in r for r in doc):
        return "llama-bench -o json output (evreg import llama-bench)"
    if not isinstance(doc, dict):
        return None
    config = obj(doc, "input_config")
    if "aiperf_version" in doc or "models" in config or "loadgen" in config:
        return "an AIPerf profile export, profile_export_aiperf.json (evreg import aiperf)"
    if "service_kind" in config or "subcommand" in config:
        return "a GenAI-Perf profile export, profile_export_genai_perf.json (evreg import aiperf)"
    if "experiments" in doc:
        return (
            "perf_analyzer's raw per-request profile_export.json; import the profile_export_genai_perf.json "
            "GenAI-Perf wrote beside it (evreg import aiperf)"
        )
    if isinstance(doc.get("results"), dict) and ("configs" in doc or "lm_eval_version" in doc or "n-shot" in doc):
        return "lm-evaluation-harness results (evreg import lm-eval)"
    if any(k in doc for k in _SGLANG_KEYS):
        return "SGLang bench_serving output (evreg import sglang-bench)"
    if any(k in doc for k in _VLLM_KEYS) or ("output_throughput" in doc and "completed" in doc):
        return "vllm bench serve --save-result output (evreg import vllm-bench)"
    return None


def looks_like(raw: bytes) -> str | None:
    """The format a file seems to be in, with the command that imports it, or None."""
    head = raw[: 1 << 16].decode("utf-8", "replace").lstrip("\ufeff")
    if "MLPerf Results Summary" in head:
        return "an MLPerf loadgen summary, mlperf_log_summary.txt (evreg import mlperf)"
    if ":::MLLOG" in head:
        return "an MLPerf loadgen detail log, mlperf_log_detail.txt (evreg import mlperf)"
    for text in (raw.decode("utf-8", "replace").lstrip("\ufeff"), head.split("\n", 1)[0]):
        try:
            kind = _json_kind(json.loads(text))
        except ValueError:
            continue
        if kind:
            return kind
    return None


def not_this_format(file: str, fmt: str, raw: bytes, why: str) -> Exception:
    """The refusal of a file that is not ``fmt``: what it looks like instead, when that is known."""
    kind = looks_like(raw)
    seems = f"; it looks like {kind}" if kind else ""
    return refuse(
        file,
        "",
        f"not {fmt} ({why}){seems}",
        f"pass the file {fmt} wrote, unmodified, or import it with the format it is in",
    )


def out_of_bounds(metric: str, value: float) -> bool:
    """Whether ``value`` is outside what its metric's unit can measure (``vocab/metrics.json`` units): a tool's
    zero or negative latency is kept in the record beside the metrics, never as a measurement."""
    from evreg.citations import unit_of
    from evreg.vocab import unit_bounds

    bounds = unit_bounds().get(unit_of(metric)) or {}
    return bool(
        ("above" in bounds and not value > bounds["above"])
        or ("min" in bounds and value < bounds["min"])
        or ("max" in bounds and value > bounds["max"])
    )


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

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metrics": self.metrics, "evidence_locators": self.locators}
        if self.rejected:
            out["out_of_bounds"] = self.rejected
        return out
