"""lm-evaluation-harness results JSON (``lm_eval --output_path``, 0.4.x):
``results`` maps each task to ``{"alias": ..., "METRIC,FILTER": value,
"METRIC_stderr,FILTER": stderr}``; beside it ``config`` (``model``,
``model_args``), ``n-shot``, ``n-samples``, ``versions``, ``lm_eval_version``.

Each task becomes one quality run measurement of the target packet: every
``METRIC,FILTER`` score as the metric ``METRIC_FILTER`` (its stderr kept
beside it), with a locator back into the file.
"""

from __future__ import annotations

from typing import Any

from evreg import jsonio
from evreg.findings import join_pointer
from evreg.formats import Importer, ImportRefused, Plan, Target, forbid_citation_markers, need, refuse, sha256, stated
from evreg.layout import record_path, slug

RUN_KEYS = ("model", "model_args", "batch_size", "limit")
"""What of the harness's ``config`` describes the run."""


def plan_import(raw: bytes, file: str, target: Target, name: str, state: str, cards: int | None = None) -> Plan:
    doc, findings = jsonio.parse(raw, file)
    if findings:
        raise ImportRefused(findings)
    forbid_citation_markers(doc, file)
    need(doc, dict, file, "", "the lm-evaluation-harness results object")
    results = need(doc.get("results"), dict, file, "/results", "results")
    evidence = target.evidence_path(name)
    plan = Plan()
    plan.add_file(evidence, raw)
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    for task, scores in results.items():
        need(scores, dict, file, join_pointer("results", task), f"the scores of task {task!r}")
        metrics: dict[str, list[Any]] = {}
        locators: dict[str, str] = {}
        stderr: dict[str, Any] = {}
        for key, value in scores.items():
            if "," not in key or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            metric, filt = key.split(",", 1)
            name_ = slug(f"{metric}_{filt}").replace("-", "_")
            if metric.endswith("_stderr"):
                stderr[name_] = value
                continue
            metrics[name_] = [value]
            locators[f"{name_}[0]"] = join_pointer("results", task, key)
        if not metrics:
            raise refuse(
                file,
                join_pointer("results", task),
                f"task {task!r} has no METRIC,FILTER score",
                "pass the harness's results JSON unmodified",
            )
        shots = (doc.get("n-shot") or {}).get(task)
        samples = ((doc.get("n-samples") or {}).get(task) or {}).get("effective")
        rid = slug(f"lm-eval-{task}")
        record = {
            "kind": "run-measurement",
            "id": rid,
            "state": state,
            **target.identity(),
            "workload": f"lm-evaluation-harness task {task}, {shots if shots is not None else '?'}-shot, "
            f"{samples if samples is not None else '?'} samples",
            "measurement_class": "quality-eval",
            "metrics": metrics,
            "stderr": stderr,
            "config": {k: config[k] for k in ("model", "model_args", "batch_size", "limit") if k in config}
            | stated(cards),
            "evidence": evidence,
            "evidence_sha256": {evidence: sha256(raw)},
            "evidence_locators": locators,
            "tool": {k: doc[k] for k in ("lm_eval_version", "git_hash", "date", "transformers_version") if k in doc},
        }
        plan.add(record_path("run-measurement", target.family, rid, target.packet), record)
    plan.notes.append(f"{len(results)} lm-evaluation-harness tasks into packet {target.packet}")
    return plan


IMPORTER = Importer(
    "lm-eval",
    "Import lm-evaluation-harness results JSON into a packet.",
    lambda r: plan_import(r.raw, r.file, r.packet(), r.name, r.state, r.cards),
)
