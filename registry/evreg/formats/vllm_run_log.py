"""The RTX 5090 lab's vLLM run log (``schema_version`` 1).

Top level: ``hardware``, ``software``, ``method``, and the record lists
``runs``, ``failures``, ``sweeps``, ``jitter``, ``divergence``.

Mapping (identity is never invented: what the log does not name stays missing):

- one **family** per model (``Qwen3.8-27B`` -> ``qwen3-8-27b``), with one weight
  revision whose base-weight commit the log does not record, and one
  **artifact** per checkpoint the log names (NVFP4, FP8 ... exports and the
  base BF16 checkpoint), unpinned (the log records no repository revisions);
- one **packet** per checkpoint with runs: vLLM ``software.vllm`` on one
  ``hardware.gpu``;
- ``runs`` -> run measurements (``community-measured``): the post-warm-up
  ``decode_samples`` as ``decode_tok_s`` samples, ``spec_acceptance`` as
  ``draft_acceptance_rate``;
- ``failures`` -> family closures kept with their reason: ``not_attempted`` is
  ``closed``, every other failure (out of memory, too little KV cache) is
  ``unsupported`` on this hardware;
- ``sweeps`` -> series measurements along ``concurrency`` (and one view per
  family charting them): per-stream decode
  as ``decode_tok_s``, total throughput as ``aggregate_tok_s``, the latency
  percentiles under their own keys (seconds). A sweep's checkpoint is its
  profile's: the checkpoint every run of that profile without a ``MODEL=``
  override used; a sweep whose profile is unknown has no artifact;
- ``jitter`` and ``divergence`` -> quality measurements (KL divergence,
  top-1 flip rate and agreement, perplexities). Their checkpoint is the
  model's only checkpoint in the log, or the one checkpoint the label or
  dimensions name; a comparison across two checkpoints has none.

The log is copied once per family into ``packets/<family>/evidence/`` and every
stored number carries an ``evidence_locators`` pointer back into it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Any

from evreg.claims import figures, workload_text
from evreg.core import jsonio
from evreg.core.findings import join_pointer
from evreg.core.layout import record_path, slug
from evreg.core.vocab import model_for
from evreg.formats import (
    Importer,
    ImportRefused,
    Plan,
    forbid_citation_markers,
    refuse,
    refuse_other_format,
    sniff,
)
from evreg.formats.api import JSON_KIND

EVIDENCE_NAME = "rtx5090-vllm-runs.json"


def _refuse(file: str, pointer: str, message: str) -> ImportRefused:
    return refuse(file, pointer, message, "this importer reads the vLLM run log format, schema_version 1")


def _need(log: dict[str, Any], file: str, path: str, kind: type | tuple[type, ...]) -> Any:
    node: Any = log
    for part in path.split("/"):
        if not isinstance(node, dict) or part not in node:
            raise _refuse(file, "/" + path, f"the run log has no {path!r}")
        node = node[part]
    if not isinstance(node, kind) or (isinstance(node, bool) and bool not in _kinds(kind)):
        expected = " or ".join(dict.fromkeys(JSON_KIND.get(k, k.__name__) for k in _kinds(kind)))
        found = "null" if node is None else JSON_KIND.get(type(node), "another value")
        raise _refuse(file, "/" + path, f"{path!r} should be {expected}; it is {found}")
    return node


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def plan_import(raw: bytes, file: str) -> Plan:
    """The records of a vLLM run log: families and artifacts, runs and their packets, failures as
    closures, concurrency sweeps (with a chart view), jitter and divergence measurements."""
    log = _RunLog(raw, file)
    log.families()
    log.runs()
    log.packets()
    log.failures()
    placed = log.sweeps()
    log.quality()
    log.plan.notes.append(
        f"{len(log.models)} families, {len(log.checkpoints)} artifacts, {len(log.packet_of)} packets; "
        f"{len(log.lists['runs'])} runs, {len(log.lists['failures'])} failures as closures, "
        f"{len(log.lists['sweeps'])} sweeps ({placed} with a checkpoint), {len(log.lists['jitter'])} jitter and "
        f"{len(log.lists['divergence'])} divergence measurements"
    )
    return log.plan


class _RunLog:
    """One run log being imported: its identity (hardware, runtime, models, checkpoints) and the
    plan its sections are written into, one method per section."""

    def __init__(self, raw: bytes, file: str) -> None:
        self.file = file
        self.digest = hashlib.sha256(raw).hexdigest()
        self.raw = raw
        self.plan = Plan()
        self.packet_of: dict[str, str] = {}  # checkpoint -> packet id
        self.log, findings = jsonio.parse(raw, self.file)
        refuse_other_format(sniff(raw) if findings else self.log, self.file, "vllm-run-log", "a vLLM run log")
        if findings:
            raise ImportRefused(findings)
        forbid_citation_markers(self.log, self.file)
        if not isinstance(self.log, dict) or self.log.get("schema_version") != 1:
            raise _refuse(self.file, "/schema_version", "not a vLLM run log with schema_version 1")
        self.gpu = _need(self.log, self.file, "hardware/gpu", str)
        self.vllm = _need(self.log, self.file, "software/vllm", str)
        self.workload = _need(self.log, self.file, "method/workload", str)
        self.lists = {
            k: _need(self.log, self.file, k, list) for k in ("runs", "failures", "sweeps", "jitter", "divergence")
        }

        self.models: set[str] = set()
        self.checkpoints: dict[str, tuple[str, str]] = {}  # checkpoint -> (model, precision)
        for i, run in enumerate(self.lists["runs"]):
            for key in ("id", "model", "checkpoint", "precision", "decode_samples"):
                if key not in run:
                    raise _refuse(self.file, join_pointer("runs", i, key), f"run {i} has no {key!r}")
            self.models.add(run["model"])
            self.checkpoints[run["checkpoint"]] = (run["model"], run["precision"])
        for key in ("sweeps", "jitter", "divergence"):
            for i, rec in enumerate(self.lists[key]):
                if not isinstance(rec, dict) or not isinstance(rec.get("model"), str):
                    raise _refuse(self.file, join_pointer(key, i, "model"), f"{key} entry {i} names no model")
                self.models.add(rec["model"])
        for i, fail in enumerate(self.lists["failures"]):
            model = next(
                (m for m in sorted(self.models, key=len, reverse=True) if m in str(fail.get("checkpoint"))), None
            )
            if model is None or "id" not in fail:
                raise _refuse(self.file, join_pointer("failures", i), "a failure names no checkpoint of a known model")
            self.checkpoints.setdefault(fail["checkpoint"], (model, fail.get("precision", "unknown")))

    def families(self) -> None:
        """A family per model: one unpinned revision, an artifact per checkpoint."""
        self.fam_of = {m: slug(m) for m in self.models}
        self.rev_of = {m: m.lower() for m in self.models}
        self.art_of = {c: slug(c) for c in self.checkpoints}
        self.evidence = {m: f"packets/{self.fam_of[m]}/evidence/{EVIDENCE_NAME}" for m in self.models}
        for m in sorted(self.models):
            self.plan.add_file(self.evidence[m], self.raw)
            arts = [
                {
                    "id": self.art_of[c],
                    "label": c,
                    "quantization": prec,
                    "repository": c,
                    "revision_status": "The run log records no repository revision for this checkpoint.",
                    "evidence": self.evidence[m],
                }
                for c, (mm, prec) in sorted(self.checkpoints.items())
                if mm == m
            ]
            self.plan.add(
                record_path("family", self.fam_of[m], self.fam_of[m]),
                {
                    "kind": "family",
                    "id": self.fam_of[m],
                    "name": m,
                    "weight_revisions": [
                        {
                            "id": self.rev_of[m],
                            "label": m,
                            **({"model": known} if (known := model_for(m)) else {}),
                            "revision_status": "The run log names no base-weight commit.",
                            "quantized_artifacts": arts,
                        }
                    ],
                    "evidence_sha256": {self.evidence[m]: self.digest},
                },
            )

    def base(self, model: str, checkpoint: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"state": "community-measured", "revision": self.rev_of[model]}
        if checkpoint:
            out.update(artifact_id=self.art_of[checkpoint], quantization=self.checkpoints[checkpoint][1])
        out.update(
            runtime=f"vLLM {self.vllm}",
            runtime_family="vLLM",
            hardware=self.gpu,
            evidence=self.evidence[model],
            evidence_sha256={self.evidence[model]: self.digest},
        )
        return out

    def runs(self) -> None:
        """Runs: one run measurement each, in the packet of its checkpoint."""
        for i, run in enumerate(self.lists["runs"]):
            c, model = run["checkpoint"], run["model"]
            packet = self.packet_of.setdefault(c, f"rtx5090-{self.art_of[c]}")
            if run.get("status") != "ok":
                raise _refuse(
                    self.file,
                    join_pointer("runs", i, "status"),
                    f"run {run['id']!r} has status {run.get('status')!r}; failed runs belong in `failures`",
                )
            metrics = {"decode_tok_s": run["decode_samples"]}
            locators = {
                f"decode_tok_s[{j}]": join_pointer("runs", i, "decode_samples", j)
                for j in range(len(run["decode_samples"]))
            }
            if "spec_acceptance" in run:
                metrics["draft_acceptance_rate"] = [run["spec_acceptance"]]
                locators["draft_acceptance_rate[0]"] = join_pointer("runs", i, "spec_acceptance")
            config = {
                "tp": 1,
                "cards": 1,
                **{
                    k: run[k]
                    for k in ("max_model_len", "cuda_graphs", "spec_decode", "vision", "kv_cache_dtype", "overrides")
                    if k in run
                },
            }
            extra = {
                k: v
                for k, v in run.items()
                if k
                not in (
                    "id",
                    "model",
                    "checkpoint",
                    "precision",
                    "status",
                    "decode_samples",
                    "spec_acceptance",
                    *config,
                )
            }
            self.plan.add(
                record_path("run-measurement", self.fam_of[model], run["id"], packet),
                {
                    "kind": "run-measurement",
                    "id": slug(run["id"]),
                    **self.base(model, c),
                    "config": config,
                    "workload": self.workload,
                    "workload_fields": run_workload(self.workload),
                    "measurement_class": "single-request-decode",
                    "metrics": metrics,
                    "evidence_locators": locators,
                    **extra,
                },
            )

    def packets(self) -> None:
        """A packet per checkpoint that has runs."""
        for c, packet in self.packet_of.items():
            model, precision = self.checkpoints[c]
            self.plan.add(
                record_path("packet", self.fam_of[model], packet),
                {
                    "kind": "packet",
                    "id": packet,
                    "label": f"{c} · vLLM {self.vllm} · {self.gpu}",
                    "revision": self.rev_of[model],
                    "artifact_id": self.art_of[c],
                    "quantization": precision,
                    "runtime": f"vLLM {self.vllm}",
                    "hardware": self.gpu,
                    "cards": 1,
                    "status": "community-run-log",
                    "manifest": self.evidence[model],
                },
            )

    def failures(self) -> None:
        """Failed or unattempted configurations: closures with their reasons, never measurements."""
        for i, fail in enumerate(self.lists["failures"]):
            c = fail["checkpoint"]
            model = self.checkpoints[c][0]
            state = "closed" if fail.get("status") == "not_attempted" else "unsupported"
            selectors: dict[str, Any] = {
                "revision": self.rev_of[model],
                "hardware": self.gpu,
                "runtime": f"vLLM {self.vllm}",
            }
            if isinstance(fail.get("config"), str):
                selectors["config"] = fail["config"]
            rec: dict[str, Any] = {
                "kind": "closure",
                "id": slug(fail["id"]),
                "state": state,
                "selectors": selectors,
                "artifact_id": self.art_of[c],
                "reason": _quoted(fail["reason"], join_pointer("failures", i, "reason"))
                if isinstance(fail.get("reason"), str) and fail["reason"]
                else f"failed: {fail.get('status')}",
                "evidence": self.evidence[model],
                "evidence_sha256": {self.evidence[model]: self.digest},
                "failure": {k: v for k, v in fail.items() if k not in ("id", "reason")},
            }
            self.plan.add(record_path("closure", self.fam_of[model], rec["id"]), rec)

    def profile_checkpoints(self) -> dict[str, set[str]]:
        """The checkpoints each run profile used, from its runs without a ``MODEL=`` override."""
        profile_checkpoint: dict[str, set[str]] = defaultdict(set)
        for run in self.lists["runs"]:
            if "MODEL=" not in str(run.get("overrides", "")) and run.get("profile"):
                profile_checkpoint[run["profile"]].add(run["checkpoint"])
        return profile_checkpoint

    def sweep_record(self, i: int, sweep: dict[str, Any], c: str | None) -> dict[str, Any]:
        """Sweep ``i`` as a series measurement along ``concurrency``, of checkpoint ``c`` if known."""
        notes = str(sweep.get("notes", ""))
        points, locators = _sweep_points(i, sweep)
        return {
            "kind": "series-measurement",
            "id": slug(f"sweep-{sweep.get('label', i)}"),
            **self.base(sweep["model"], c),
            "config": _sweep_config(sweep),
            "workload": _sweep_workload(sweep),
            "workload_fields": sweep_workload_fields(sweep),
            "measurement_class": "concurrency-sweep",
            "axis": "concurrency",
            "points": points,
            "evidence_locators": locators,
            "label": sweep.get("label"),
            **({"caveat": notes} if notes else {}),
            **(
                {"identity_basis": f"checkpoint of profile {_profile(sweep)!r} (its runs without a MODEL= override)"}
                if c
                else {}
            ),
        }

    def sweep_view(self, model: str, members: list[tuple[str, str]]) -> None:
        """The chart of a model's sweeps: one series per (measurement id, label) in ``members``."""
        self.plan.add(
            record_path("view", self.fam_of[model], "concurrency-sweeps"),
            {
                "kind": "view",
                "id": "concurrency-sweeps",
                "title": f"{model} · concurrency sweeps on one {self.gpu}",
                "x_label": "concurrent requests",
                "x_scale": "log",
                "metrics": ["decode_tok_s", "aggregate_tok_s"],
                "series": [{"label": label, "measurement_ids": [rid]} for rid, label in members],
            },
        )

    def sweeps(self) -> int:
        """Concurrency sweeps as series measurements (in a packet when the checkpoint is known), and
        a chart view per model. Returns how many sweeps were placed with a checkpoint."""
        profile_checkpoint = self.profile_checkpoints()
        placed = 0
        sweep_ids: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for i, sweep in enumerate(self.lists["sweeps"]):
            model = sweep["model"]
            c = _sweep_checkpoint(sweep, profile_checkpoint)
            rec = self.sweep_record(i, sweep, c)
            rid = rec["id"]
            placed += bool(c)
            sweep_ids[model].append((rid, str(sweep.get("label", rid))))
            self.plan.add(
                record_path("series-measurement", self.fam_of[model], rid, self.packet_of.get(c) if c else None), rec
            )
        for model, members in sweep_ids.items():
            self.sweep_view(model, members)

        return placed

    def named_checkpoint(self, model: str, text: str) -> str | None:
        """The model's only checkpoint in the log, or the one checkpoint the text names."""
        words = re.sub(r"\b(bf16|fp8|fp16)\s+kv\b", " ", text.lower())
        mine = [c for c, (m, _p) in self.checkpoints.items() if m == model]
        if len(mine) == 1:
            return mine[0]
        hits = [
            c
            for c in mine
            if ("nvfp4" in c.lower()) == ("nvfp4" in words)
            and ("fp8" in c.lower().replace("nvfp4", "")) == ("fp8" in words.replace("nvfp4", "").replace("fp8 kv", ""))
        ]
        return hits[0] if len(hits) == 1 else None

    def quality(self) -> None:
        """Jitter and divergence records as quality measurements."""
        for key, cls in (("jitter", "reproducibility-jitter"), ("divergence", "quality-divergence")):
            for i, rec_in in enumerate(self.lists[key]):
                model = rec_in["model"]
                label = str(rec_in.get("label", ""))
                metrics, locators = {}, {}
                sources = (
                    [((), rec_in)]
                    if key == "jitter"
                    else [
                        (("teacher_forced",), rec_in.get("teacher_forced") or {}),
                        (("generation",), rec_in.get("generation") or {}),
                    ]
                )
                for prefix, block in sources:
                    for k, v in block.items():
                        if (
                            isinstance(v, int | float)
                            and not isinstance(v, bool)
                            and k not in ("prompts", "repeats", "positions", "max_tokens", "top_k", "schema_version")
                        ):
                            name = k if not prefix or prefix == ("teacher_forced",) else f"generation_{k}"
                            metrics[name] = [v]
                            locators[f"{name}[0]"] = join_pointer(key, i, *prefix, k)
                dims = rec_in.get("dimensions") or {}
                text = f"{label} {dims.get('quant', '')}"
                c = self.named_checkpoint(model, text)
                rid = slug(f"{key}-{rec_in.get('a', '')}-vs-{rec_in['b']}" if key == "divergence" else f"{key}-{label}")
                caveat = " ".join(str(rec_in[k]) for k in ("suspect", "notes") if rec_in.get(k))
                rec = {
                    "kind": "run-measurement",
                    "id": rid,
                    **self.base(model, c),
                    "measurement_class": cls,
                    "workload": label,
                    "metrics": metrics,
                    "evidence_locators": locators,
                    "config": {
                        "tp": 1,
                        "cards": 1,
                        **{
                            k: rec_in[k]
                            for k in ("prompts", "repeats", "positions", "max_tokens", "top_k", "thinking")
                            if k in rec_in
                        },
                        **(rec_in.get("settings") or {}),
                    },
                    **({"caveat": caveat} if caveat else {}),
                    **{k: v for k, v in rec_in.items() if k in ("a", "b", "dimensions", "prompt_set", "generated")},
                    **(
                        {"per_category": rec_in["teacher_forced"]["per_category"]}
                        if isinstance(rec_in.get("teacher_forced"), dict) and "per_category" in rec_in["teacher_forced"]
                        else {}
                    ),
                }
                self.plan.add(
                    record_path("run-measurement", self.fam_of[model], rid, self.packet_of.get(c) if c else None), rec
                )


_SWEEP_LOCATED = (
    ("decode_tok_s", "decode_tok_s_per_stream"),
    ("aggregate_tok_s", "total_tok_s"),
    ("ttft_p50_s", "ttft_p50_s"),
    ("ttft_p95_s", "ttft_p95_s"),
    ("latency_p50_s", "latency_p50_s"),
    ("latency_p95_s", "latency_p95_s"),
)
"""(metric in the record, field in a sweep level) of the values a sweep's points locate in the log."""


def _profile(sweep: dict[str, Any]) -> str:
    """The run profile a sweep's label starts with."""
    return str(sweep.get("label", "")).split(" ")[0]


def _sweep_checkpoint(sweep: dict[str, Any], profile_checkpoint: dict[str, set[str]]) -> str | None:
    """A sweep's checkpoint: its profile's only checkpoint, unless its notes say it overrode ``MODEL=``."""
    found = profile_checkpoint.get(_profile(sweep), set())
    notes = str(sweep.get("notes", ""))
    return next(iter(found)) if len(found) == 1 and "MODEL=" not in notes else None


def run_workload(text: str) -> dict[str, Any]:
    """A run's workload fields: what the method's text states, and what the log's runs are -- requests to a vLLM
    server, the first after start-up discarded, each sample one request (the method says so for every run)."""
    return {"phase": "serving", **workload_text.fields(text), "warmup": 1, "sample": "request"}


def sweep_workload_fields(sweep: dict[str, Any]) -> dict[str, Any]:
    """A sweep's workload fields from its structured ``workload`` (the prompt is stated in words, not tokens)."""
    w = sweep.get("workload") or {}
    out: dict[str, Any] = {"phase": "serving"}
    if isinstance(w.get("output_tokens"), int) and not isinstance(w.get("output_tokens"), bool):
        out["output_tokens"] = w["output_tokens"]
    if isinstance(w.get("ignore_eos"), bool):
        out["output_end"] = "fixed" if w["ignore_eos"] else "natural"
    return out


def _sweep_workload(sweep: dict[str, Any]) -> str:
    """A sweep's workload in words: prompt and output length, rounds per level, EOS and thinking settings."""
    w = sweep.get("workload") or {}
    return (
        f"{w.get('prompt_words', '?')}-word prompt, {w.get('output_tokens', '?')} output tokens, "
        f"{w.get('rounds', '?')} rounds per concurrency level, ignore_eos {w.get('ignore_eos')}, "
        f"thinking {w.get('thinking')}"
    )


def _sweep_config(sweep: dict[str, Any]) -> dict[str, Any]:
    """A sweep's configuration from its ``dimensions`` (on/off switches) and ``max_model_len``."""
    dims = sweep.get("dimensions") or {}
    return {
        "tp": 1,
        "cards": 1,
        "max_num_seqs": _int(dims.get("seqs")),
        "vision": dims.get("vision") == "on",
        "cuda_graphs": dims.get("graphs") == "on",
        "spec_decode": dims.get("mtp") == "on",
        "max_model_len": sweep.get("max_model_len"),
    }


def _sweep_points(i: int, sweep: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A sweep's levels as series points (every field kept), with a locator for each metric value."""
    points, locators = [], {}
    for j, level in enumerate(sweep.get("levels") or []):
        x = level["concurrency"]
        renamed = ("concurrency", "decode_tok_s_per_stream", "total_tok_s")
        points.append(
            {
                "x": x,
                "decode_tok_s": level["decode_tok_s_per_stream"],
                "aggregate_tok_s": level["total_tok_s"],
                **{k: v for k, v in level.items() if k not in renamed},
            }
        )
        for key, src in _SWEEP_LOCATED:
            if src in level:
                locators[f"{key}@{x}"] = join_pointer("sweeps", i, "levels", j, src)
    return points, locators


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


IMPORTER = Importer(
    "vllm-run-log",
    "Import the RTX 5090 lab's vLLM run log (runs, failures, sweeps, jitter, divergence).",
    lambda r: plan_import(r.raw, r.file),
    into_packet=False,
)


def _quoted(text: str, pointer: str) -> str:
    """A message copied from the run log with each figure in it written as a quote of the log at ``pointer``
    (``{{ e:POINTER = 31.4 GiB }}``): what the log says, re-read by validation, not a measurement of ours."""
    for fig in reversed(figures.find_figures(text)):
        text = text[: fig.start] + "{{ e:" + pointer + " = " + fig.text + " }}" + text[fig.end :]
    return text
