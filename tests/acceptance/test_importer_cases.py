"""The importers' case matrix: every registered importer (``evreg.formats`` entry points, enumerated from the code,
so a new importer is covered automatically) is tried on a real file for each case below, or the table says why a case
cannot arise for it. A registered importer without a row, or a row without a case, fails
``test_every_importer_has_every_case``.

- ``values``: a real file into the packet of its own run: a value of the file, its unit, its locator (re-read
  independently), the identity the records state, the evidence kept byte for byte, and validation clean.
- ``mismatch``: the same file into a packet of another scope is refused (``import-out-of-scope``), naming both
  sides, and nothing is written.
- ``failed-run``: a run that measured nothing is a closure with its reason, never a measurement of 0.
- ``duplicate``: importing the same file again is a no-op.
- ``changed-number``: the file with one number changed creates records that supersede the old ones (or is refused
  with that advice); a published record is never rewritten, also with ``--overwrite``.
- ``wrong-format``: a file of another tool is refused naming that tool, and this importer's file given to another
  importer is refused naming this one.

Sources of the real files: ``tests/data/real/**/SOURCES.md`` and ``tests/data/lab/SOURCES.json``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git
import pytest

from evreg import formats
from evreg.check import rules
from evreg.claims.citations import unit_of
from evreg.core.findings import Severity
from evreg.core.vocab import unit_bounds
from evreg.store import load
from helpers import REPO, SHARED, evreg, one_packet_registry, value_at

REAL = SHARED / "real"
CASES = ("values", "mismatch", "failed-run", "duplicate", "changed-number", "wrong-format")


@dataclass(frozen=True)
class NotApplicable:
    """A case that cannot arise for an importer, and why."""

    why: str


@dataclass(frozen=True)
class Failed:
    """A run that measured nothing: a real file (``file``) or one made from the subject's file (``make``), and what
    its import does: ``closure`` (written as a closure, rc 0) or ``refused`` (nothing written, never a 0)."""

    expect: str
    file: Path | None = None
    packet: dict[str, Any] | None = None
    make: Callable[[Path, Path], Path] | None = None
    says: str = ""


@dataclass(frozen=True)
class Subject:
    """One importer's real file, the packet its run belongs in (None: the file carries its own identity), a value it
    holds, the identity its records state, and how each case is made from it."""

    file: Path
    packet: dict[str, Any] | None
    value: tuple[str, float]
    identity: dict[str, Any]
    mismatch: tuple[dict[str, Any], str, str] | NotApplicable
    """(packet change, the file's side, the packet's side) as the refusal names them."""
    failed: Failed | NotApplicable
    changed: tuple[str, str]
    """(text in the file, its replacement): one number changed."""
    other: tuple[str, Path]
    """Another importer and a file of its format."""
    extra: tuple[str, ...] = ()
    setup: Callable[[Path], None] | None = None
    changed_mode: str = "supersede"
    notes: dict[str, str] = field(default_factory=dict)


def _json_edit(edit: Callable[[Any], None], name: str | None = None) -> Callable[[Path, Path], Path]:
    """A file made from ``source`` by ``edit`` on its JSON (a JSON Lines file: on its list of lines)."""

    def make(source: Path, folder: Path) -> Path:
        text = source.read_text()
        lines = source.suffix == ".jsonl"
        doc = [json.loads(line) for line in text.splitlines()] if lines else json.loads(text)
        edit(doc)
        out = folder / (name or source.name)
        out.write_text("\n".join(json.dumps(o) for o in doc) + "\n" if lines else json.dumps(doc, indent=2))
        return out

    return make


def _set(*path: Any, value: Any) -> Callable[[Any], None]:
    def edit(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value

    return edit


def _all_na(doc: dict[str, Any]) -> None:
    for scores in doc["results"].values():
        for key in scores:
            if "," in key:
                scores[key] = "N/A"


def _lab_registry(root: Path) -> None:
    """An empty registry, with the committed baseline of the lab data's own findings."""
    (root / "packets").mkdir(parents=True)
    shutil.copytree(REPO / "schema", root / "schema")
    shutil.copy(REPO / "packets/baseline.json", root / "packets/baseline.json")
    git.Repo.init(root).close()


B5606 = REAL / "llama-bench/llamacpp-b5606-rtx4090.json"
SERVE = REAL / "vllm-bench/bench_serve_v0.25.1.json"
ETH = REAL / "lm-eval/corpus/ethereum-dai-gemma4-e4b-gsm8k-a40/base_gsm8k5_2026-08-07T10-43-37.848875.json"
AKAMAS = REAL / "aiperf/corpus/akamaslabs-qwen3-4b-c16/profile_export_aiperf.json"
SERVER = REAL / "mlperf/inference_results_v4.1-amd-8xmi300x-server/mlperf_log_summary.txt"
INVALID = REAL / "mlperf/bmservice-3d-unet-offline-invalid/mlperf_log_summary.txt"
SGLANG = REAL / "sglang/datacrunch-llama-3-3-70b-online/llama_3_3_70b_online_output.jsonl"
ONE_BATCH = REAL / "sglang/corpus/jiminator-glm-bisect-one-batch-server/result.jsonl"
RUN_LOG = SHARED / "rtx5090-vllm-runs.json"
MANIFEST = SHARED / "lab/families/deepseek-v4.json"
LLMPERF = REAL / "llmperf/corpus/hongxuanzhang-llama2-7b-c24/meta-llama-Llama-2-7b-chat-hf_550_150_summary.json"
GUIDELLM = (
    REAL / "guidellm/corpus/danielkorat-qwen3-4b-fp8-c4/Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json"
)
OFFLINE = REAL / "vllm-offline/corpus/zhangxinyuehfad-ascend-throughput-llama8b/throughput_llama8B_tp1.json"

SUBJECTS: dict[str, Subject] = {
    "llama-bench": Subject(
        B5606,
        dict(
            repository="TheDrummer/Snowpiercer-15B-v1",
            artifact="TheDrummer/Snowpiercer-15B-v1-GGUF",
            quantization="Q3_K_L",
            runtime="llama.cpp b5606",
            hardware="NVIDIA GeForce RTX 4090",
        ),
        ("prefill_tok_s", 2849.862466),
        {"runtime": "llama.cpp b5606 (247e5c6e)", "hardware": "NVIDIA GeForce RTX 4090"},
        ({"hardware": "NVIDIA GeForce RTX 3090"}, "'NVIDIA GeForce RTX 4090'", "'NVIDIA GeForce RTX 3090'"),
        Failed("closure", make=_json_edit(_set(1, "samples_ts", value=[0.0] * 5)), says="tg128"),
        ("85.5525", "85.6525"),
        ("lm-eval", ETH),
    ),
    "vllm-bench": Subject(
        SERVE,
        dict(repository="facebook/opt-125m", quantization="FP16", runtime="vLLM 0.25.1", hardware="NVIDIA L4"),
        ("aggregate_tok_s", 82.89297074037474),
        {"runtime": "vLLM 0.25.1"},  # stated: the file names no build
        ({"repository": "meta-llama/Llama-3.1-8B"}, "'facebook/opt-125m'", "meta-llama/Llama-3.1-8B"),
        Failed("closure", file=REAL / "vllm-bench/bench_serve_all_requests_failed_v0.25.1.json", says="8 failed"),
        ("82.89297074037474", "82.99297074037474"),
        ("sglang-bench", SGLANG),
        extra=("--runtime", "vLLM 0.25.1"),
    ),
    "lm-eval": Subject(
        ETH,
        dict(
            repository="google/gemma-4-E4B-it",
            quantization="BF16",
            runtime="transformers 5.14.1",
            hardware="NVIDIA A40",
            commit="ee0ef6023621cff504d758262d4e04895a5af4a2",
        ),
        ("exact_match_strict_match", 0.8559514783927218),
        {"runtime": "transformers 5.14.1", "hardware": "NVIDIA A40"},
        ({"hardware": "NVIDIA L4"}, "'NVIDIA A40'", "'NVIDIA L4'"),
        # the harness writes its results file only when every task ran (a crash writes none); a file whose tasks
        # have no score is refused whole: nothing written, never a 0
        Failed("refused", make=_json_edit(_all_na), says="no task in the file has a score"),
        ("0.8559514783927218", "0.8569514783927218"),
        ("llama-bench", B5606),
    ),
    "aiperf": Subject(
        AKAMAS,
        dict(
            repository="Qwen/Qwen3-4B-Instruct-2507",
            artifact="Qwen/Qwen3-4B-Instruct-2507-FP8",
            quantization="FP8",
            runtime=None,
            hardware="NVIDIA RTX PRO 4500",
        ),
        ("requests_per_s", 0.0),  # filled in below from the file
        {"hardware": "NVIDIA RTX PRO 4500"},
        (
            {"repository": "Qwen/Qwen3-32B", "artifact": "Qwen/Qwen3-32B-FP8"},
            "'Qwen/Qwen3-4B-Instruct-2507-FP8'",
            "Qwen/Qwen3-32B",
        ),
        Failed("closure", make=_json_edit(_set("request_count", "avg", value=0.0)), says="completed no request"),
        ('"avg": 28.736161119863013', '"avg": 28.746161119863013'),  # the mean TTFT
        ("mlperf", SERVER),
    ),
    "mlperf": Subject(
        SERVER,
        dict(
            repository="meta-llama/Llama-2-70b-chat-hf",
            quantization="FP8",
            runtime="vLLM ROCm",
            hardware="AMD Instinct MI300X",
        ),
        ("samples_per_s", 71.74),
        {"hardware": "AMD Instinct MI300X"},  # stated: loadgen's log names no hardware
        ({"runtime": "SGLang 0.4"}, "'vLLM ROCm'", "'SGLang 0.4'"),
        Failed(
            "closure",
            file=INVALID,
            packet=dict(repository="org/3d-unet", quantization="INT8", runtime=None, hardware="Sophon BM1684"),
            says="INVALID",
        ),
        ("71.74", "71.75"),
        ("aiperf", AKAMAS),
        extra=("--runtime", "vLLM ROCm"),
        notes={"mismatch": "loadgen's log names no model or hardware: the stated runtime is what is compared"},
    ),
    "sglang-bench": Subject(
        SGLANG,
        dict(
            repository="meta-llama/Llama-3.3-70B-Instruct",
            quantization="BF16",
            runtime="SGLang",
            hardware="NVIDIA H200",
        ),
        ("aggregate_tok_s", 0.0),  # filled in below from the file
        {"hardware": "NVIDIA H200"},
        ({"runtime": "vLLM 0.11.0"}, "'SGLang'", "'vLLM 0.11.0'"),
        Failed("closure", make=_json_edit(lambda d: d[0].update(completed=0, output_throughput=0.0))),
        ("", ""),  # filled in below from the file
        ("vllm-bench", SERVE),
    ),
    "sglang-one-batch": Subject(
        ONE_BATCH,
        dict(repository="zai-org/GLM-4.5", quantization="FP8", runtime=None, hardware="unknown GPU", cards=8),
        ("aggregate_tok_s", 84.44),
        {"hardware": "unknown GPU"},
        ({"runtime": "vLLM 0.11.0"}, "'SGLang'", "'vLLM 0.11.0'"),
        Failed("closure", make=_json_edit(lambda d: d[0].update(output_throughput=0.0)), says="measured nothing"),
        ('"output_throughput": 84.44', '"output_throughput": 84.45'),
        ("sglang-bench", SGLANG),
        extra=("--cards", "8"),
    ),
    "vllm-offline": Subject(
        OFFLINE,
        dict(
            repository="meta-llama/Meta-Llama-3-8B-Instruct", quantization="BF16", runtime=None, hardware="Ascend 910B"
        ),
        ("requests_per_s", 2.7631534315929653),
        {"hardware": "Ascend 910B"},  # stated: the file names no hardware
        ({"runtime": "SGLang 0.4.1"}, "'vLLM'", "'SGLang 0.4.1'"),
        Failed(
            "closure",
            make=_json_edit(lambda d: d.update(requests_per_second=0.0, tokens_per_second=0.0)),
            says="no positive throughput",
        ),
        ('"tokens_per_second": 1190.9743920852', '"tokens_per_second": 1190.9843920852'),
        ("vllm-bench", SERVE),
        notes={"mismatch": "the file names no model or hardware: the engine it is (vLLM) is what is compared"},
    ),
    "vllm-run-log": Subject(
        RUN_LOG,
        None,
        ("decode_tok_s", 0.0),  # filled in below from the file
        {"runtime": "vLLM 0.28.0", "hardware": "NVIDIA GeForce RTX 5090"},
        NotApplicable(
            "the log is its own identity: it writes the families, artifacts and packets it names (GPU, vLLM build, "
            "checkpoints); there is no target packet whose scope it could disagree with"
        ),
        Failed("closure", says="GiB"),  # the log's own `failures` section
        ("", ""),  # filled in below from the file
        ("neural-download", MANIFEST),
        setup=_lab_registry,
        changed_mode="refuse",
    ),
    "neural-download": Subject(
        MANIFEST,
        None,
        ("decode_tok_s", 80.82005189243556),
        {"revision": "deepseek-v4-flash-180b-k160-7c360e1"},
        NotApplicable(
            "the manifest is its own identity: it writes its family, weight revisions and packets as the lab "
            "published them; there is no target packet whose scope it could disagree with"
        ),
        Failed("closure", says="frontier is paused"),  # the lab's own family_closures
        ("80.82005189243556", "80.83005189243556"),
        ("vllm-run-log", RUN_LOG),
        setup=_lab_registry,
        changed_mode="refuse",
    ),
    "llmperf": Subject(
        LLMPERF,
        dict(repository="meta-llama/Llama-2-7b-chat-hf", quantization="FP16", runtime=None, hardware="unknown GPU"),
        ("mean_ttft_s", 0.7092350025244135),
        {"hardware": "unknown GPU"},
        ({"repository": "Qwen/Qwen3-8B"}, "'meta-llama/Llama-2-7b-chat-hf'", "Qwen/Qwen3-8B"),
        Failed(
            "closure",
            make=_json_edit(_set("results_num_completed_requests", value=0)),
            says="completed no request",
        ),
        ("0.7092350025244135", "0.7093350025244135"),  # the mean TTFT
        ("guidellm", GUIDELLM),
    ),
    "guidellm": Subject(
        GUIDELLM,
        dict(
            repository="Qwen/Qwen3-4B-Thinking-2507", quantization="FP8", runtime=None, hardware="unknown GPU", cards=4
        ),
        ("mean_ttft_ms", 0.0),  # filled in below from the file
        {"hardware": "unknown GPU"},
        ({"repository": "Qwen/Qwen3-8B"}, "'Qwen/Qwen3-4B-Thinking-2507'", "Qwen/Qwen3-8B"),
        Failed(
            "closure",
            make=_json_edit(lambda d: d["benchmarks"][0]["metrics"]["request_totals"].update(successful=0)),
            says="no request succeeded",
        ),
        ("", ""),  # filled in below from the file
        ("llmperf", LLMPERF),
        extra=("--cards", "4"),
    ),
}


UNITLESS = "vllm-run-log"
"""The one importer whose records hold metrics without a vocabulary unit: the lab run log's divergence statistics
(``kld_*``, ``dp_*``, ``ppl_*``, ``top1_*``, ``support_mass_mean``). Its named metric has one; the rest is a
vocabulary gap, not checked here."""


def _fill() -> None:
    """Values read from the files themselves where the table says 'below' (no number typed twice)."""
    rows = json.loads(B5606.read_text())
    SUBJECTS["llama-bench"] = _replace(SUBJECTS["llama-bench"], value=("prefill_tok_s", rows[0]["samples_ts"][0]))
    eth = json.loads(ETH.read_text())["results"]["gsm8k"]["exact_match,strict-match"]
    SUBJECTS["lm-eval"] = _replace(
        SUBJECTS["lm-eval"], value=("exact_match_strict_match", eth), changed=(repr(eth), repr(eth + 0.001))
    )
    aiperf = json.loads(AKAMAS.read_text())
    SUBJECTS["aiperf"] = _replace(SUBJECTS["aiperf"], value=("requests_per_s", aiperf["request_throughput"]["avg"]))
    line = SGLANG.read_text().splitlines()[0]
    out = json.loads(line)["output_throughput"]
    SUBJECTS["sglang-bench"] = _replace(
        SUBJECTS["sglang-bench"],
        value=("aggregate_tok_s", out),
        changed=(f"{out}", f"{out + 1}"),
    )
    ttft = json.loads(GUIDELLM.read_text())["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]
    SUBJECTS["guidellm"] = _replace(
        SUBJECTS["guidellm"],
        value=("mean_ttft_ms", ttft["mean"]),
        changed=(f'"mean": {ttft["mean"]!r}', f'"mean": {ttft["mean"] + 1!r}'),  # the successful requests' first
    )
    log = json.loads(RUN_LOG.read_text())
    first = log["runs"][0]["decode_samples"][0]
    SUBJECTS["vllm-run-log"] = _replace(
        SUBJECTS["vllm-run-log"], value=("decode_tok_s", first), changed=(f"{first}", f"{first + 1}")
    )


def _replace(subject: Subject, **change: Any) -> Subject:
    from dataclasses import replace

    return replace(subject, **change)


_fill()


# -- running an import as a contributor does --------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    subject: Subject
    root: Path

    @property
    def importer(self) -> formats.Importer:
        return formats.load(formats.discover()[self.name])

    def args(self, packet: dict[str, Any] | None) -> tuple[str, ...]:
        if packet is None:
            return ()
        out = ["--packet", "fam/pkt", *self.subject.extra]
        if "--cards" not in out:
            out += ["--cards", str(packet.get("cards", 1))]
        # the runtime the run used, where the file names no version: the subject's own scope, also when the
        # case files it into a packet of another scope (a contributor states what they ran, not the target)
        runtime = (self.subject.packet or {}).get("runtime")
        if "--runtime" not in out and runtime and any(o.name == "runtime" for o in self.importer.options):
            out += ["--runtime", runtime]
        return (*out, "--hardware", packet["hardware"])

    def make(self, packet: dict[str, Any] | None = None) -> None:
        if self.subject.setup is not None:
            self.subject.setup(self.root)
        else:
            one_packet_registry(self.root, **(packet or self.subject.packet or {}))

    def run(self, file: Path, *more: str, packet: dict[str, Any] | None = None, tool: str | None = None) -> Any:
        packet = packet or self.subject.packet
        result = evreg(
            "import", tool or self.name, str(file), *self.args(packet), *more, "--format", "json", cwd=self.root
        )
        try:
            report = json.loads(result.stdout)
        except ValueError:
            report = {"findings": []}
        return result.returncode, report, result.stderr

    def files(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for p in sorted((self.root / "packets").rglob("*"))
            if p.is_file()
        }

    def records(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.root / "packets").rglob("*.json")):
            if path.parent.name in ("measurements", "closures"):
                out.append(json.loads(path.read_text()))
        return out


def errors(root: Path) -> list[str]:
    found = rules.run(load(root), rules.discover()).findings
    return [
        f"{f.code} {f.file} {f.pointer}: {f.message}" for f in found if f.severity == Severity.ERROR and not f.baselined
    ]


# -- the cases -------------------------------------------------------------------------------------------------------


def case_values(r: Run) -> None:
    r.make()
    code, _, stderr = r.run(r.subject.file)
    assert code == 0, stderr
    metric, value = r.subject.value
    records = r.records()
    assert any(value in (rec.get("metrics") or {}).get(metric, []) for rec in records), (metric, value)
    assert unit_of(metric), f"{metric} has no unit in vocab/metrics.json"
    relocated = 0
    for rec in records:
        evidence = r.root / str(rec.get("evidence", ""))
        for m, samples in (rec.get("metrics") or {}).items():
            assert unit_of(m) or r.subject.packet is None, f"{m} has no unit"  # lab logs: see UNITLESS
            for i, sample in enumerate(samples):
                locator = (rec.get("evidence_locators") or {}).get(f"{m}[{i}]")
                if locator and evidence.is_file():  # a lab's evidence may be external: validation names it
                    assert value_at(evidence.read_bytes(), locator) == sample, (rec["id"], m, locator)
                    relocated += 1
    assert relocated or r.subject.packet is None
    if r.subject.packet is not None:
        assert all((r.root / rec["evidence"]).read_bytes() == r.subject.file.read_bytes() for rec in records)
    for key, want in r.subject.identity.items():
        assert any(rec.get(key) == want or (rec.get("selectors") or {}).get(key) == want for rec in records), key
    assert errors(r.root) == []


def case_mismatch(r: Run) -> None:
    change, file_side, packet_side = r.subject.mismatch  # type: ignore[misc]
    packet = {**(r.subject.packet or {}), **change}
    r.make(packet)
    before = r.files()
    code, report, stderr = r.run(r.subject.file, packet=packet)
    out = [f for f in report["findings"] if f["code"] == "import-out-of-scope"]
    assert code == 1 and "nothing was written" in stderr, stderr
    assert any(file_side in f["message"] and packet_side in f["message"] for f in out), report["findings"]
    assert r.files() == before


def case_failed_run(r: Run) -> None:
    failed: Failed = r.subject.failed  # type: ignore[assignment]
    source = failed.file or r.subject.file
    if failed.make is not None:
        folder = r.root.parent / "failed"
        folder.mkdir()
        source = failed.make(r.subject.file, folder)
    r.make(failed.packet)
    before = r.files()
    code, report, stderr = r.run(source, packet=failed.packet)
    if failed.expect == "refused":
        assert code == 1 and r.files() == before, stderr
        assert failed.says in json.dumps(report["findings"])
        return
    assert code == 0, json.dumps(report)[:2000] + stderr
    records = r.records()
    closures = [c for c in records if c["kind"] == "closure"]
    assert closures and all(c["reason"] for c in closures)
    assert any(failed.says in c["reason"] for c in closures), [c["reason"] for c in closures]
    bounds = unit_bounds()
    for rec in records:
        for metric, samples in (rec.get("metrics") or {}).items():
            floor = bounds.get(unit_of(metric), {}).get("above")
            assert floor is None or all(s > floor for s in samples), (rec["id"], metric, samples)  # never a 0


def case_duplicate(r: Run) -> None:
    r.make()
    assert r.run(r.subject.file)[0] == 0
    before = r.files()
    code, _, stderr = r.run(r.subject.file)
    assert code == 0 and "wrote 0 files" in stderr, stderr
    assert r.files() == before


def case_changed_number(r: Run) -> None:
    old, new = r.subject.changed
    text = r.subject.file.read_bytes()
    assert text.count(old.encode()) >= 1, old
    changed = r.root.parent / "changed" / r.subject.file.name  # the same name, a corrected number
    changed.parent.mkdir()
    changed.write_bytes(text.replace(old.encode(), new.encode(), 1))
    r.make()
    assert r.run(r.subject.file)[0] == 0
    published = r.files()
    ids = {rec["id"] for rec in r.records()}
    code, _, stderr = r.run(changed)
    if r.subject.changed_mode == "refuse":
        assert code == 1 and "never rewritten" in stderr and "supersedes" in stderr, stderr
    else:
        assert code == 0, stderr
        new_records = [rec for rec in r.records() if rec["id"] not in ids]
        assert new_records and {rec.get("supersedes") for rec in new_records} <= ids
        assert any(rec.get("supersedes") in ids for rec in new_records)
    assert {k: v for k, v in r.files().items() if k in published} == published  # nothing published rewritten
    after = r.files()
    code, _, stderr = r.run(changed, "--overwrite")
    assert code == (1 if r.subject.changed_mode == "refuse" else 0), stderr
    assert r.files() == after  # --overwrite rewrites no published record either


def case_wrong_format(r: Run) -> None:
    other, other_file = r.subject.other
    r.make()
    before = r.files()
    code, report, _ = r.run(other_file)
    [finding] = report["findings"]
    assert code == 1 and finding["code"] == "import-wrong-format", report
    assert f"looks like {other} output" in finding["message"] and f"evreg import {other} " in finding["hint"]
    # and this importer's file, given to the other importer, is refused naming this one
    code, report, _ = Run(other, SUBJECTS[other], r.root).run(r.subject.file, packet=r.subject.packet)
    [finding] = report["findings"]
    assert code == 1 and f"looks like {r.name} output" in finding["message"], report
    assert r.files() == before


RUNNERS: dict[str, Callable[[Run], None]] = {
    "values": case_values,
    "mismatch": case_mismatch,
    "failed-run": case_failed_run,
    "duplicate": case_duplicate,
    "changed-number": case_changed_number,
    "wrong-format": case_wrong_format,
}


def case_of(subject: Subject, case: str) -> object:
    return {"mismatch": subject.mismatch, "failed-run": subject.failed}.get(case, True)


def test_every_importer_has_every_case() -> None:
    registered = set(formats.discover())
    assert registered and set(SUBJECTS) == registered, registered ^ set(SUBJECTS)
    assert set(RUNNERS) == set(CASES)
    for name, subject in SUBJECTS.items():
        assert subject.file.is_file() and subject.changed[0] and subject.changed[0] != subject.changed[1], name
        for case in CASES:
            entry = case_of(subject, case)
            if isinstance(entry, NotApplicable):
                assert len(entry.why) > 40, (name, case)  # a reason, not a shrug
        assert subject.packet is None or formats.load(formats.discover()[name]).into_packet
        assert subject.other[0] in registered and subject.other[0] != name


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", sorted(formats.discover()))
def test_importer_case(tmp_path: Path, name: str, case: str) -> None:
    if name not in SUBJECTS:
        pytest.fail(f"importer {name!r} has no row in the case matrix (SUBJECTS)")
    subject = SUBJECTS[name]
    entry = case_of(subject, case)
    if isinstance(entry, NotApplicable):
        pytest.skip(f"{name}: {case} does not arise: {entry.why}")
    RUNNERS[case](Run(name, subject, tmp_path / "reg"))
