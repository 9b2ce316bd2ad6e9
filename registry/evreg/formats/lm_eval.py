"""lm-evaluation-harness results JSON (``lm_eval --output_path``), in both layouts the harness has written.

From 0.4: ``results`` maps each task to
``{"alias": ..., "METRIC,FILTER": value, "METRIC_stderr,FILTER": stderr}`` (a stderr the harness cannot
compute is the string ``"N/A"``); group rows (``leaderboard_bbh``) hold no score of their own or an
aggregate over ``group_subtasks``; ``configs`` holds each task's definition with its prompt templates
(``{{question}}``); beside them ``config`` (``model``, ``model_args``), ``n-shot``, ``n-samples``,
``versions``, ``git_hash``, ``lm_eval_version`` (later 0.4 releases), ``pretty_env_info``.

Before 0.4 (``python main.py --output_path``, 0.3 and earlier): ``results`` maps each task to bare
``{"METRIC": value, "METRIC_stderr": stderr}`` (no filter, no alias), beside ``versions`` and a ``config`` of
``model`` (the backend: ``hf-causal``, ``hf-causal-experimental``, ``gpt2``), ``model_args`` (the command line's
string), ``num_fewshot`` (one for every task), ``batch_size``, ``device``, ``no_cache``, ``limit``,
``bootstrap_iters`` and ``description_dict``; no ``configs``, ``n-shot``, ``n-samples`` or ``higher_is_better``. A
bare ``METRIC`` is what 0.4 names ``METRIC,none`` (no filter), so it is recorded as ``METRIC_none``, the name the
same score has in a 0.4 file.

Each task with scores becomes one quality run measurement of the target packet: every ``METRIC,FILTER``
score as the metric ``METRIC_FILTER`` with a locator back into the file, its stderr kept as the metric's
uncertainty (``stderr``, with ``stderr_locators``; ``"N/A"`` is listed as missing, never a number). A group
row without scores is skipped (named in the import's notes), one with aggregate scores is recorded as a
group. The prompt templates stay in the evidence file: they are its content, not the record's prose. The
model, its revision, the harness's backend and the host's GPU are compared with the packet.
"""

from __future__ import annotations

import math
import re
from typing import Any

from evreg.claims.runtimes import parse_runtime
from evreg.core import codes
from evreg.core.findings import Finding, Severity, join_pointer
from evreg.core.layout import record_path, slug
from evreg.formats import (
    FileIdentity,
    Importer,
    Option,
    Plan,
    Request,
    Source,
    Target,
    check_scope,
    content_id,
    earlier_imports,
    evidence_for,
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

RUN_KEYS = ("model", "model_args", "num_fewshot", "batch_size", "limit", "gen_kwargs", "random_seed", "fewshot_seed")
"""What of the harness's ``config`` describes the run (``num_fewshot``: before 0.4, for every task)."""
TASK_KEYS = ("dataset_path", "dataset_name", "test_split", "output_type", "num_fewshot", "repeats")
"""What of a task's definition names it (its templates stay in the evidence)."""
TOOL_KEYS = (
    "lm_eval_version",
    "git_hash",
    "date",
    "transformers_version",
    "model_name",
    "model_source",
    "total_evaluation_time_seconds",
)
BACKENDS = {"hf": "transformers", "vllm": "vLLM", "sglang": "SGLang", "hf-multimodal": "transformers"}
BACKENDS |= {"hf-causal": "transformers", "hf-causal-experimental": "transformers", "hf-seq2seq": "transformers"}
BACKENDS |= {"gpt2": "transformers"}  # before 0.4: the transformers causal LM class, whatever the model
"""The harness's ``--model`` backends that name the runtime that ran the model."""


def model_args(value: Any) -> dict[str, str]:
    """``model_args`` as a dict of strings: the harness writes the command line's ``pretrained=org/name,dtype=float16``
    or (called from Python, later 0.4 releases) an object; nulls are left out."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if isinstance(v, str | int | float) and v is not None}
    if not isinstance(value, str):
        return {}
    return dict(part.split("=", 1) for part in value.split(",") if "=" in part)


API_BACKENDS = ("local-chat-completions", "local-completions", "openai-chat-completions", "openai-completions")
"""Backends that send requests to a running server: their ``model`` is the name the server answers to (an alias
such as ``gemma4-26b-l40s``), not the weights, unless it is a repository id."""


def model_of(config: dict[str, Any], args: dict[str, str], doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the weights the file names, the served alias it names instead, if any). Against a server the ``model`` is
    the server's name for it: a repository id (``org/name``) counts as the weights; an alias does not, and the weights
    are then what ``pretrained`` or ``tokenizer`` names, or unknown (never guessed from the alias)."""
    named = args.get("pretrained") or args.get("model") or doc.get("model_name")
    named = named if isinstance(named, str) and named else None
    served = str(config.get("model")) in API_BACKENDS or "base_url" in args
    if not served or named is None or "pretrained" in args or REPO_ID.fullmatch(named):
        return named, None
    weights = args.get("tokenizer")
    return (weights if weights and weights != "None" else None), named


REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face repository id (``google/gemma-2b``), which a server may answer to as its model name."""


DTYPES = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32"}
"""Weights dtypes as ``dtype=`` names them (``model_dtype`` writes ``torch.bfloat16``), as a quantization."""


def dtype_of(args: dict[str, str], config: dict[str, Any]) -> tuple[str | None, str]:
    """The dtype the run loaded the weights in (``dtype=`` in ``model_args``, else the harness's ``model_dtype``) as a
    quantization, and where the file says it."""
    if args.get("dtype") in DTYPES:
        return DTYPES[args["dtype"]], "/config/model_args"
    written = str(config.get("model_dtype") or "").removeprefix("torch.")
    return (DTYPES[written], "/config/model_dtype") if written in DTYPES else (None, "/config/model_args")


def identity(request: Request, doc: dict[str, Any], target: Target) -> tuple[FileIdentity, str | None]:
    """The run's identity as the results file states it, and its backend's engine (``vLLM``) if named."""
    config: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    args = model_args(config.get("model_args"))
    model, _ = model_of(config, args, doc)
    quant = args.get("quantization") or (quantization_of_name(model) if model else None)
    quant_at = "/config/model_args"
    if quant is None:
        quant, quant_at = dtype_of(args, config)
    engine = BACKENDS.get(str(config.get("model")))
    runtime = request.options.get("runtime") or None
    if runtime is None and engine == "transformers" and isinstance(doc.get("transformers_version"), str):
        runtime = f"transformers {doc['transformers_version']}"
    tp = args.get("tensor_parallel_size")
    # a server's model runs on the server's accelerators: the evaluating host's GPUs say nothing about them
    gpus = [] if config.get("model") in API_BACKENDS else host_gpus(doc.get("pretty_env_info"))
    return FileIdentity(
        model=model,
        quantization=quant,
        runtime=runtime,
        hardware=gpus[0] if len(set(gpus)) == 1 else None,
        cards=int(tp) if tp and tp.isdigit() else None,
        where={
            "model": "/config/model_args",
            "quantization": quant_at,
            "runtime": "/config/model",
            "hardware": "/pretty_env_info",
            "cards": "/config/model_args",
        },
        stated=("runtime",) if request.options.get("runtime") else (),
    ), engine


def host_gpus(env: Any) -> list[str]:
    """The GPUs ``pretty_env_info`` lists (the host's, one line each, or the one model on the line, written as
    ``GPU 0: NVIDIA A40`` by recent PyTorch)."""
    if not isinstance(env, str):
        return []
    listed = re.findall(r"^GPU \d+: (.+)$", env, re.M)
    if listed:
        return [g.strip() for g in listed]
    one = re.search(r"^GPU models and configuration: (?:GPU \d+: )?(\S.*)$", env, re.M)
    return [one.group(1).strip()] if one else []


def served_alias(doc: dict[str, Any], file: str) -> list[Finding]:
    """A warning when the file names the model only by a server's alias (the weights stay unstated)."""
    config: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    model, alias = model_of(config, model_args(config.get("model_args")), doc)
    if alias is None or model is not None:
        return []
    return [
        codes.IMPORT_IDENTITY_MISSING.at(
            file,
            "/config/model_args",
            f"the file names the model only as {alias!r}, the name the server answered to, not the weights: it is "
            "not compared with the packet's weights and the records leave the model unstated",
            "run the harness with tokenizer=ORG/NAME in --model_args (the weights' repository) so the file names them",
            severity=Severity.WARNING,
        )
    ]


def host_hardware(doc: dict[str, Any]) -> dict[str, Any]:
    """The host's GPUs as ``pretty_env_info`` lists them, under ``hardware``: each a hardware name (``NVIDIA H100
    80GB HBM3``), whose memory size is part of the name, not a claimed figure (``models.NAME_KEYS``). For a server
    backend they are the evaluating host's (``evaluating_host``), not the hardware that ran the model."""
    gpus = host_gpus(doc.get("pretty_env_info"))
    if not gpus:
        return {}
    config = doc["config"] if isinstance(doc.get("config"), dict) else {}
    served = str(config.get("model")) in API_BACKENDS
    return {"evaluating_host": {"hardware": gpus}} if served else {"hardware": gpus}


def check_backend(found: FileIdentity, engine: str | None, target: Target, file: str) -> None:
    """The harness's backend (``vllm``, ``hf``) is the runtime's engine, stated or the packet's."""
    for claimed, whose in ((found.runtime, "the stated runtime"), (target.data.get("runtime"), "the packet's")):
        if engine and isinstance(claimed, str) and parse_runtime(claimed).engine[:1] != (engine.lower(),):
            raise refuse_scope(file, f"the file ran the model with {engine} (config.model), not {whose} {claimed!r}")


def refuse_scope(file: str, message: str) -> Exception:
    from evreg.formats import ImportRefused

    return ImportRefused([codes.IMPORT_OUT_OF_SCOPE.at(file, "/config/model", message)])


def check_revision(doc: dict[str, Any], target: Target, file: str) -> None:
    """A weights commit the file names (``revision=`` in ``model_args``, ``model_sha``) is the packet's."""
    config: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    want = target.weights.get("revision")
    for got, pointer in (
        (model_args(config.get("model_args")).get("revision"), "model_args"),
        (config.get("model_sha"), "model_sha"),
    ):
        if not (isinstance(got, str) and isinstance(want, str) and re.fullmatch(r"[0-9a-f]{7,40}", got)):
            continue
        if not (want.startswith(got) or got.startswith(want)):
            raise refuse_scope(file, f"the file's weights commit {got} ({pointer}) is not the packet's revision {want}")


def plan_request(request: Request) -> Plan:
    target, file, raw = request.packet(), request.file, request.raw
    source = read_source(raw, file, "lm-evaluation-harness results")
    doc = source.objects[0]
    refuse_other_format(doc, file, "lm-eval", "an lm-evaluation-harness results file")
    if not isinstance(doc, dict) or "results" not in doc:
        raise refuse(
            file,
            "/results",
            "not lm-evaluation-harness output: its results file is one JSON object with results (scores by task), "
            "configs, versions and n-shot",
            "pass the results_*.json file lm_eval --output_path wrote, unmodified",
        )
    results = need(doc.get("results"), dict, file, "/results", "results")
    old = legacy(doc)
    found, engine = identity(request, doc, target)
    check_backend(found, engine, target, file)
    check_revision(doc, target, file)
    plan = Plan()
    plan.warn(served_alias(doc, file))
    check_scope(plan, target, found, file)
    evidence = evidence_for(target, request.name, raw)
    plan.add_file(evidence, raw)
    earlier = earlier_imports(target, request.name)
    recorded = 0
    for task, scores in results.items():
        need(scores, dict, file, join_pointer("results", task), f"the scores of task {task!r}")
        record = task_record(request, source, doc, task, scores, (evidence, found))
        if record is None and old:
            plan.notes.append(f"task {task!r} has no numeric score: skipped")
            continue
        if record is None:
            plan.notes.append(f"group {task!r} has no scores of its own: skipped (its subtasks are recorded)")
            continue
        forbid_citation_markers({"workload": record["workload"], "config": record["config"]}, file)
        link_correction(record, earlier, task)
        plan.add(record_path("run-measurement", target.family, record["id"], target.packet), record)
        recorded += 1
    if not recorded:
        raise refuse(
            file,
            "/results",
            "no task in the file has a score (METRIC,FILTER from 0.4, a bare METRIC before)",
            "pass the results file the harness wrote with --output_path, unmodified",
        )
    plan.notes.append(f"{recorded} lm-evaluation-harness tasks into packet {target.packet}")
    return plan


def legacy(doc: dict[str, Any]) -> bool:
    """The layout before 0.4: bare ``METRIC`` keys (no ``,FILTER`` in any task's scores) and no ``configs``."""
    results = doc.get("results")
    tasks = results.values() if isinstance(results, dict) else []
    keys = [k for scores in tasks if isinstance(scores, dict) for k in scores]
    return "configs" not in doc and not any("," in k for k in keys)


def scores_of(source: Source, task: str, scores: dict[str, Any], old: bool = False) -> dict[str, Any]:
    """A task's metrics, stderrs (numbers, with locators) and the stderrs the harness wrote as N/A. ``old``: the
    layout before 0.4, whose bare ``METRIC`` is 0.4's ``METRIC,none``."""
    out: dict[str, Any] = {
        "metrics": {},
        "locators": {},
        "stderr": {},
        "stderr_locators": {},
        "missing": [],
        "not_finite": [],
    }
    for key, value in scores.items():
        if "," not in key and not old:
            continue
        metric, filt = key.split(",", 1) if "," in key else (key, "none")
        name = slug(f"{metric}_{filt}").replace("-", "_")
        pointer = join_pointer("results", task, key)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and not math.isfinite(value):  # a diverging metric (NaN, Infinity): named, never a sample
            out["not_finite"].append(name)
            continue
        if metric.endswith("_stderr"):
            bare = slug(f"{metric[: -len('_stderr')]}_{filt}").replace("-", "_")
            if number:
                out["stderr"][bare] = value
                out["stderr_locators"][bare] = source.locator(0, pointer)
            else:
                out["missing"].append(bare)
        elif number:
            out["metrics"][name] = [value]
            out["locators"][f"{name}[0]"] = source.locator(0, pointer)
    return out


def task_record(
    request: Request,
    source: Source,
    doc: dict[str, Any],
    task: str,
    scores: dict[str, Any],
    context: tuple[str, FileIdentity],
) -> dict[str, Any] | None:
    target, raw = request.packet(), request.raw
    evidence, found = context
    found_scores = scores_of(source, task, scores, legacy(doc))
    if not found_scores["metrics"]:
        return None
    subtasks = (doc.get("group_subtasks") or {}).get(task) or []
    config: dict[str, Any] = doc["config"] if isinstance(doc.get("config"), dict) else {}
    shots = (doc.get("n-shot") or {}).get(task)
    if shots is None and legacy(doc):  # before 0.4: one --num_fewshot for every task
        shots = config.get("num_fewshot")
    samples = ((doc.get("n-samples") or {}).get(task) or {}).get("effective")
    task_config = (doc.get("configs") or {}).get(task) or {}
    record: dict[str, Any] = {
        "kind": "run-measurement",
        "id": content_id("lm-eval", raw, target, task),
        "state": request.state,
        **target.identity(),
        **({"runtime": found.runtime} if found.runtime else {}),
        **({"hardware": found.hardware} if found.hardware else {}),
        "workload": f"lm-evaluation-harness {'group' if subtasks else 'task'} {task}, "
        f"{shots if shots is not None else '?'}-shot, {samples if samples is not None else '?'} samples",
        "measurement_class": "quality-eval-group" if subtasks else "quality-eval",
        "metrics": found_scores["metrics"],
        "stderr": found_scores["stderr"],
        **({"scores_not_finite": found_scores["not_finite"]} if found_scores["not_finite"] else {}),
        "config": {k: config[k] for k in RUN_KEYS if k in config}
        | {"task": {k: task_config[k] for k in TASK_KEYS if k in task_config}}
        | stated(request.cards),
        "evidence": evidence,
        "evidence_sha256": {evidence: sha256(raw)},
        "tool": {k: doc[k] for k in TOOL_KEYS if k in doc}
        | {"task_version": (doc.get("versions") or {}).get(task)}
        | host_hardware(doc),
        "imported_from": {"file": request.name, "row": task},
    }
    if subtasks:
        record["subtasks"] = subtasks
    if found_scores["missing"]:
        record["stderr_missing"] = found_scores["missing"]
    if all(found_scores["locators"].values()):
        record["evidence_locators"] = found_scores["locators"]
        record["stderr_locators"] = found_scores["stderr_locators"]
    if source.encoding != "utf-8":
        record["evidence_encoding"] = source.encoding
    return record


IMPORTER = Importer(
    "lm-eval",
    "Import lm-evaluation-harness results JSON into a packet.",
    plan_request,
    options=(
        Option(
            "runtime",
            "",
            "The runtime that served the model as you ran it, e.g. 'vLLM 0.11.0' (the file names the backend but "
            "not its version); compared with the packet's. Without it the records state no runtime unless the file "
            "does (transformers' version for the hf backend).",
        ),
    ),
)
