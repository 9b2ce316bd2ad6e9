"""``llama-bench -o json`` and ``-o jsonl`` output (llama.cpp from build 1000 in 2023 to today, and forks
such as ik_llama.cpp): one object per test with ``build_commit``, ``build_number``, ``cpu_info``,
``gpu_info``, ``model_filename``, ``model_type``, ``n_prompt``, ``n_gen`` (``n_depth`` since 2025) and the
repetition throughputs ``samples_ts``.

Each test becomes one run measurement of the target packet: ``samples_ts`` are the samples of
``prefill_tok_s`` (a ``pp`` test), ``decode_tok_s`` (``tg``) or ``combined_tok_s`` (both). Every
configuration key the file holds goes into the record's ``config`` (two runs that differ in a knob are
two configurations); the file's build, model file, quantization and hardware are compared with the packet
(a run of another model, build or card is refused). A test without a positive sample is a failed run: a
closure with its reason. ik_llama.cpp prints log lines into its ``-o json`` output (``ggml_...`` before the
array, ``==== Repacked N tensors`` inside it): they are read past, listed in the record's ``tool.log_lines`` and
kept in the evidence, whose numbers are then located by line (``line:N:K``).
"""

from __future__ import annotations

import math
from typing import Any

from evreg.core.findings import join_pointer
from evreg.core.layout import record_path
from evreg.formats import (
    FileIdentity,
    Importer,
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

RESULT_KEYS = {
    "avg_ns",
    "stddev_ns",
    "avg_ts",
    "stddev_ts",
    "samples_ns",
    "samples_ts",
    "test_time",
    "test",
    "build_commit",
    "build_number",
    "cpu_info",
    "gpu_info",
    "model_filename",
    "model_type",
    "model_size",
    "model_n_params",
}
"""What a test object holds besides its configuration: results, the build and the model."""

FORK_KEYS = {"mla_attn", "fused_moe", "attn_max_batch", "ser", "fused_up_gate", "rtr", "run_time_repack"}
"""Keys only ik_llama.cpp writes: a file with them is that fork's output, not llama.cpp's."""

TOOL_KEYS = tuple(sorted(RESULT_KEYS - {"samples_ts"}))
"""What is kept beside the samples: the build, the model file, the host, the tool's own averages."""


def engine(row: dict[str, Any]) -> str:
    return "ik_llama.cpp" if FORK_KEYS & row.keys() else "llama.cpp"


def identity(row: dict[str, Any], base: str) -> FileIdentity:
    """The run's identity as the test object states it: the hardware is its GPU, or its CPU when it offloaded no
    layer (``n_gpu_layers`` 0) or names no GPU."""
    build = row.get("build_number")
    runtime = f"{engine(row)} {'b' + str(build) + ' ' if isinstance(build, int) else ''}({row['build_commit']})"
    gpu = row.get("gpu_info") if isinstance(row.get("gpu_info"), str) and row.get("gpu_info") else None
    cpu = row.get("cpu_info") if isinstance(row.get("cpu_info"), str) and row.get("cpu_info") else None
    if row.get("n_gpu_layers") == 0 and not isinstance(row.get("n_gpu_layers"), bool) and cpu:
        gpu = None  # a GPU build run with no layer offloaded runs on the CPU: gpu_info names the build's device
    model = row.get("model_filename") if isinstance(row.get("model_filename"), str) else None
    quant = quantization_of_name(model) if model else None
    if quant is None and isinstance(row.get("model_type"), str):
        quant = quant_of_type(row["model_type"])
    return FileIdentity(
        model=model,
        quantization=quant,
        runtime=runtime,
        hardware=gpu or cpu,
        where={
            "model": f"{base}/model_filename",
            "quantization": f"{base}/model_filename",
            "runtime": f"{base}/build_commit",
            "hardware": f"{base}/gpu_info" if gpu else f"{base}/cpu_info",
        },
    )


def quant_of_type(model_type: str) -> str | None:
    """``qwen2 7B Q4_K - Medium`` -> Q4_K_M; ``llama 7B mostly Q4_0`` -> Q4_0."""
    import re

    m = re.search(
        r"\b((?:I?Q\d[A-Z0-9_]*)|BF16|F16|F32)(?: - (Small|Medium|Large|Extra small|XS|S|M|L))?\b", model_type
    )
    if m is None:
        return None
    size = {"Small": "S", "Medium": "M", "Large": "L", "Extra small": "XS"}.get(m.group(2) or "", m.group(2) or "")
    return m.group(1) + (f"_{size}" if size else "")


def name_of_test(n_prompt: int, n_gen: int, depth: Any) -> tuple[str, str]:
    metric = "prefill_tok_s" if n_gen == 0 else "decode_tok_s" if n_prompt == 0 else "combined_tok_s"
    test = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}-tg{n_gen}"
    return metric, test + (f"-d{depth}" if depth else "")


def test_fields(n_prompt: int, n_gen: int, depth: Any) -> dict[str, Any]:
    """What one llama-bench test is: prompt processing of ``n_prompt`` tokens or generation of exactly ``n_gen``
    (it runs to the count, never to an end of sequence), one sequence, after ``depth`` tokens of context; each
    sample one repetition. A test of both (``pp+tg``) times them together: no phase."""
    phase = "prefill" if n_gen == 0 else "decode" if n_prompt == 0 else None
    out: dict[str, Any] = {"phase": phase} if phase else {}
    out |= {"input_tokens": n_prompt} if n_prompt else {}
    out |= {"output_tokens": n_gen, "output_end": "fixed"} if n_gen else {}
    if isinstance(depth, int) and not isinstance(depth, bool) and depth >= 0:
        out["context_depth"] = depth
    return out | {"concurrency": 1, "sample": "repeat"}


def plan_request(request: Request) -> Plan:
    target, file, raw = request.packet(), request.file, request.raw
    source = read_source(raw, file, "llama-bench results", logs=True)
    rows = source.objects[0] if not source.lines else source.objects
    refuse_other_format(rows, file, "llama-bench", "llama-bench output")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "n_prompt" in r for r in rows):
        raise refuse(
            file,
            "",
            "not llama-bench output: `llama-bench -o json` writes a JSON array (`-o jsonl` one line) of test objects "
            "with build_commit, model_filename, n_prompt, n_gen and samples_ts",
            "pass the file llama-bench -o json or -o jsonl wrote, unmodified",
        )
    if not rows:
        raise refuse(file, "", "the file holds no llama-bench results; nothing to import", "run llama-bench again")
    evidence = evidence_for(target, request.name, raw)
    plan = Plan()
    plan.add_file(evidence, raw)
    earlier = earlier_imports(target, request.name)
    failed = 0
    for i, row in enumerate(rows):
        base = "" if source.lines else join_pointer(i)
        need(row, dict, file, base, "a benchmark object")
        forbid_citation_markers(row, file)
        path, record = test_record(plan, request, source, i, row, base, evidence)
        link_correction(record, earlier, str(i))
        failed += record["kind"] == "closure"
        plan.add(path, record)
    if source.log_lines:
        plan.notes.append(
            f"read past {len(source.log_lines)} log lines the tool printed into its JSON (lines "
            f"{', '.join(map(str, source.log_lines))}); the evidence keeps them, the locators count lines"
        )
    plan.notes.append(
        f"{len(rows)} llama-bench results into packet {target.packet}"
        + (f" ({failed} failed runs recorded as closures)" if failed else "")
    )
    return plan


def test_record(
    plan: Plan, request: Request, source: Source, i: int, row: dict[str, Any], base: str, evidence: str
) -> tuple[str, dict[str, Any]]:
    target, file, raw = request.packet(), request.file, request.raw
    samples = need(row.get("samples_ts"), list, file, f"{base}/samples_ts", "samples_ts")
    n_prompt = need(row.get("n_prompt"), int, file, f"{base}/n_prompt", "n_prompt")
    n_gen = need(row.get("n_gen"), int, file, f"{base}/n_gen", "n_gen")
    need(row.get("build_commit"), str, file, f"{base}/build_commit", "build_commit")
    depth = row.get("n_depth", 0)
    found = identity(row, base)
    check_scope(plan, target, found, file, base)
    metric, test = name_of_test(n_prompt, n_gen, depth)
    rid = content_id(f"llama-bench-{test}", raw, target, i)
    for j, s in enumerate(samples):  # a malformed sample is refused, never published as a failed run
        if isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s):
            raise refuse(
                file,
                f"{base}/samples_ts/{j}",
                f"llama-bench {test}: sample {j} is {s!r}, not a finite number of tokens per second",
                "pass the file as llama-bench wrote it",
            )
    numbers = list(samples)
    if not numbers or all(s <= 0 for s in numbers):
        reason = f"llama-bench {test}: no positive throughput sample ({len(samples)} samples: {samples[:5]})"
        path, closure = failed_run(target, rid, evidence, raw, reason, {"test": test, "row": i})
        closure["imported_from"] = {"file": request.name, "row": str(i)}
        return path, closure
    locators = {f"{metric}[{j}]": source.locator(i, f"{base}/samples_ts/{j}") for j in range(len(samples))}
    record: dict[str, Any] = {
        "kind": "run-measurement",
        "id": rid,
        "state": request.state,
        **target.identity(),
        "runtime": found.runtime,
        "runtime_family": engine(row),
        **({"hardware": found.hardware} if found.hardware else {}),
        "config": {k: v for k, v in row.items() if k not in RESULT_KEYS} | stated(request.cards),
        "workload": f"llama-bench {test}, {len(samples)} repetitions",
        "workload_fields": test_fields(n_prompt, n_gen, depth),
        "measurement_class": "llama-bench",
        "metrics": {metric: samples},
        "evidence": evidence,
        "evidence_sha256": {evidence: sha256(raw)},
        "tool": {k: row[k] for k in TOOL_KEYS if k in row}
        | ({"log_lines": list(source.log_lines)} if source.log_lines else {}),
        "imported_from": {"file": request.name, "row": str(i)},
    }
    if all(locators.values()):
        record["evidence_locators"] = locators
    if source.encoding != "utf-8":
        record["evidence_encoding"] = source.encoding
    return record_path("run-measurement", target.family, rid, target.packet), record


IMPORTER = Importer("llama-bench", "Import `llama-bench -o json` or `-o jsonl` output into a packet.", plan_request)
