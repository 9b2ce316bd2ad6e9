"""The tool importers on real output files from public repositories (``tests/data/real/SOURCES.md``):
values, units, locators and identity as the files hold them; runs filed only where they belong; failed
runs as closures; stable ids, corrections that supersede, and the formats as they exist (JSON Lines,
sweep summaries, group rows, ``N/A``, UTF-16)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import git
import pytest

from helpers import SHARED, evreg, imports, one_packet_registry

REAL = SHARED / "real"
SWEEP = "sweep-v0.25.1/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"


def records(root: Path, packet: str = "pkt", folder: str = "measurements") -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((root / f"packets/fam/{packet}/{folder}").glob("*.json"))}


def by_row(recs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["imported_from"]["row"]: r for r in recs.values()}


LLAMA = {
    "llamacpp-b5606-rtx4090.json": dict(
        repository="TheDrummer/Snowpiercer-15B-v1",
        artifact="TheDrummer/Snowpiercer-15B-v1-GGUF",
        quantization="Q3_K_L",
        runtime="llama.cpp b5606",
        hardware="NVIDIA GeForce RTX 4090",
    ),
    "llamacpp-b1275-2023.json": dict(
        repository="meta-llama/Llama-2-7b",
        artifact="TheBloke/Llama-2-7B-GGUF",
        quantization="Q4_0",
        runtime="llama.cpp b1275 (3469684)",
        hardware="NVIDIA GeForce RTX 3090 Ti",
    ),
    "llamacpp-b1275-2023.jsonl": dict(
        repository="meta-llama/Llama-2-7b",
        artifact="TheBloke/Llama-2-7B-GGUF",
        quantization="Q4_0",
        runtime="llama.cpp b1275",
        hardware="NVIDIA GeForce RTX 3090 Ti",
    ),
    "llamacpp-b11254-cpu.json": dict(
        repository="Qwen/Qwen2.5-1.5B-Instruct",
        artifact="Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        quantization="F16",
        runtime="llama.cpp b11254 (8019dc563)",
        hardware="Intel Core i5-1135G7",
    ),
    "ik-llamacpp-3599-xeon.json": dict(
        repository="deepseek-ai/DeepSeek-R1",
        artifact="ubergarm/DeepSeek-R1-GGUF",
        quantization="IQ4_K_R4",
        runtime="ik_llama.cpp 3599",
        hardware="Intel Xeon E5-2690 v3",
    ),
}


def source_rows(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    return [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else json.loads(text)


@pytest.mark.parametrize("name", sorted(LLAMA))
def test_llama_bench_real_files(tmp_path: Path, name: str) -> None:
    root = tmp_path / "reg"
    spec = one_packet_registry(root, **LLAMA[name])
    result = imports("import", "llama-bench", str(REAL / "llama-bench" / name), "--packet", spec, cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = source_rows(REAL / "llama-bench" / name)
    recs = by_row(records(root))
    assert len(recs) == len(rows)
    for i, row in enumerate(rows):
        rec = recs[str(i)]
        metric = "prefill_tok_s" if row["n_gen"] == 0 else "decode_tok_s"
        assert rec["metrics"] == {metric: row["samples_ts"]}  # values as written; tok/s by the metric's name
        engine = "ik_llama.cpp" if "mla_attn" in row else "llama.cpp"
        assert rec["runtime"].startswith(f"{engine} b{row['build_number']} ") and row["build_commit"] in rec["runtime"]
        assert rec["runtime_family"] == engine
        assert rec["hardware"] == (row.get("gpu_info") or row["cpu_info"])
        knobs = {k for k in row if k not in ("samples_ts", "samples_ns", "avg_ts", "avg_ns", "stddev_ts", "stddev_ns")}
        assert knobs - {"test_time", "test", "build_commit", "build_number", "cpu_info", "gpu_info"} - set(
            rec["tool"]
        ) <= set(rec["config"])  # every configuration key is kept
        assert rec["config"]["cards"] == 1  # the contributor's --cards: the file does not record it
        loc = rec["evidence_locators"][f"{metric}[0]"]
        assert loc == (f"line:{i + 1}:" + loc.rsplit(":", 1)[1] if name.endswith(".jsonl") else f"/{i}/samples_ts/0")
        evidence = root / rec["evidence"]
        assert evidence.read_bytes() == (REAL / "llama-bench" / name).read_bytes()
        assert rec["evidence_sha256"][rec["evidence"]] == hashlib.sha256(evidence.read_bytes()).hexdigest()
    if name.startswith("ik-"):
        assert {"mla_attn": 3, "fused_moe": True, "attn_max_batch": 0, "ser": "-1,0"}.items() <= recs["0"][
            "config"
        ].items()
    if name == "llamacpp-b5606-rtx4090.json":
        knobs = recs["0"]["config"]
        assert (knobs["tensor_buft_overrides"], knobs["defrag_thold"], knobs["no_kv_offload"]) == ("none", -1.0, False)


OPT = dict(repository="facebook/opt-125m", quantization="FP16", runtime="vLLM 0.25.1", hardware="NVIDIA L4")


def vllm(root: Path, name: str, *extra: str, spec: str = "fam/pkt") -> Any:
    return imports("import", "vllm-bench", str(REAL / "vllm-bench" / name), "--packet", spec, *extra, cwd=root)


def test_vllm_bench_serve_real_file(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    result = vllm(root, "bench_serve_v0.25.1.json", "--runtime", "vLLM 0.25.1", "--cards", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    # what the file does not say, the contributor stated (--runtime, --cards, --hardware): nothing left missing
    assert "import-identity-missing" not in result.stdout, result.stdout
    source = json.loads((REAL / "vllm-bench/bench_serve_v0.25.1.json").read_text())
    [rec] = records(root).values()
    m = rec["metrics"]
    assert m["aggregate_tok_s"] == [source["output_throughput"]]  # output throughput
    assert m["total_tok_s"] == [source["total_token_throughput"]]  # total: a metric of its own
    assert m["requests_per_s"] == [source["request_throughput"]]
    assert m["p99_ttft_ms"] == [source["p99_ttft_ms"]] and m["std_itl_ms"] == [source["std_itl_ms"]]
    assert rec["evidence_locators"]["total_tok_s[0]"] == "/total_token_throughput"
    assert rec["tool"]["rtfx"] == 0.0 and "rtfx" not in m  # a zero is kept as a fact, never as a measurement
    assert (rec["runtime"], rec["config"]["cards"], rec["config"]["max_concurrency"]) == ("vLLM 0.25.1", 1, 2)
    assert rec["hardware"] == OPT["hardware"]  # the contributor's --hardware: the file names no GPU


def test_vllm_units_are_declared() -> None:
    from evreg.claims.citations import unit_of

    units = {unit_of(m) for m in ("aggregate_tok_s", "total_tok_s", "input_tok_s", "requests_per_s", "p99_itl_ms")}
    assert units == {"tok/s", "requests/s", "ms"}


def test_vllm_fully_failed_run_is_a_closure(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    result = vllm(root, "bench_serve_all_requests_failed_v0.25.1.json", "--runtime", "vLLM 0.25.1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert records(root) == {}  # no measurement of 0.0
    [closure] = {p.stem: json.loads(p.read_text()) for p in (root / "packets/fam/closures").glob("*.json")}.values()
    assert closure["state"] == "unsupported" and "none of 8 requests completed (8 failed)" in closure["reason"]
    assert (
        closure["evidence_sha256"][closure["evidence"]]
        == hashlib.sha256((REAL / "vllm-bench/bench_serve_all_requests_failed_v0.25.1.json").read_bytes()).hexdigest()
    )


def test_vllm_partial_failure_is_stated(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    data = json.loads((REAL / "vllm-bench/bench_serve_v0.25.1.json").read_text())
    data.update(completed=6, failed=2)
    (tmp_path / "partial.json").write_text(json.dumps(data))
    result = imports("import", "vllm-bench", str(tmp_path / "partial.json"), "--packet", "fam/pkt", cwd=root)
    [rec] = records(root).values()
    assert rec["failures"] == {"failed_requests": 2, "completed_requests": 6} and "2 failed" in rec["workload"]
    assert result.returncode == 0 and rec["runtime"] == OPT["runtime"]  # the contributor's --runtime


def test_vllm_sweep_summary_imports_each_point(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    result = vllm(root, SWEEP + "/summary.json", "--runtime", "vLLM 0.25.1")
    assert result.returncode == 0, result.stdout + result.stderr
    recs = by_row(records(root))
    source = json.loads((REAL / "vllm-bench" / SWEEP / "summary.json").read_text())
    for i, point in enumerate(source):
        assert recs[str(i)]["metrics"]["aggregate_tok_s"] == [point["output_throughput"]]
        assert recs[str(i)]["config"]["run_number"] == point["run_number"]
        assert recs[str(i)]["config"]["max_num_seqs"] == 4
        assert recs[str(i)]["evidence_locators"]["mean_e2el_ms[0]"] == f"/{i}/mean_e2el_ms"
    assert len({r["id"] for r in recs.values()}) == 2


def test_vllm_append_result_json_lines(tmp_path: Path) -> None:
    """``--append-result`` writes one result per line: each line imports, with line:N:K locators the evidence
    check re-reads.

    SYNTHETIC, real-shaped: no ``--append-result`` file was found in a public repository (see
    ``vllm-bench/corpus/SOURCES.md``), so the lines are the two real results of the sweep's ``summary.json``
    (vLLM 0.25.1), each written as ``--append-result`` writes it: ``json.dumps`` of one result, one per line."""
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    points = json.loads((REAL / "vllm-bench" / SWEEP / "summary.json").read_text())
    (tmp_path / "appended.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    result = imports(
        "import", "vllm-bench", str(tmp_path / "appended.jsonl"), "--packet", "fam/pkt", "--runtime", "vLLM 0.25.1",
        cwd=root,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr  # an unreadable locator would be an error
    recs = by_row(records(root))
    assert [recs[str(i)]["metrics"]["aggregate_tok_s"] for i in range(2)] == [[p["output_throughput"]] for p in points]
    assert recs["1"]["evidence_locators"]["aggregate_tok_s[0]"].startswith("line:2:")


def test_vllm_multi_turn_with_input_throughput(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(
        root,
        repository="Qwen/Qwen3.8-27B",
        artifact="Qwen/Qwen3.8-27B-FP8",
        quantization="FP8",
        runtime=None,
        hardware="AMD Radeon AI PRO R9700",
        cards=2,
    )
    result = vllm(root, "multiturn-qwen-fp8-concurrency1.json")
    assert result.returncode == 0, result.stdout + result.stderr
    source = json.loads((REAL / "vllm-bench/multiturn-qwen-fp8-concurrency1.json").read_text())
    [rec] = records(root).values()
    assert rec["metrics"]["input_tok_s"] == [source["input_throughput"]]
    assert rec["metrics"]["mean_acceptance_length"] == [source["spec_decode_acceptance_length"]]
    assert rec["metrics"]["p90_e2el_ms"] == [source["p90_e2el_ms"]]
    assert rec["config"]["mode"] == "multi_turn" and rec["tool"]["spec_decode_num_drafts"] == 747


def test_vllm_model_of_another_quantization_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, repository="Qwen/Qwen3.8-27B", quantization="BF16", runtime=None, hardware="R9700")
    result = vllm(root, "multiturn-qwen-fp8-concurrency1.json")
    assert result.returncode == 1 and "nothing was written" in result.stderr
    assert "quantization 'FP8' is not the packet's 'BF16'" in result.stdout
    assert not (root / "packets/fam/pkt/evidence").exists()


EIGHT_B = dict(
    repository="deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
    commit="81cee02dd020268dced5fa1327e8555acce9c63c",
    quantization="FP16",
    runtime="transformers 4.46.3",
    hardware="Tesla V100-PCIE-32GB",
)
LEADERBOARD = REAL / "lm-eval/deepseek-r1-distill-llama-8b-leaderboard-excerpt.json"


def test_lm_eval_real_leaderboard_file(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **EIGHT_B)
    result = imports("import", "lm-eval", str(LEADERBOARD), "--packet", "fam/pkt", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "group 'leaderboard_bbh' has no scores of its own: skipped" in result.stderr
    source = json.loads(LEADERBOARD.read_text())
    recs = by_row(records(root))
    assert set(recs) == {"hellaswag", "leaderboard_bbh_boolean_expressions", "leaderboard_bbh_causal_judgement",
                         "leaderboard_ifeval"}  # fmt: skip
    hella = recs["hellaswag"]
    assert hella["metrics"] == {"acc_none": [source["results"]["hellaswag"]["acc,none"]],
                                "acc_norm_none": [source["results"]["hellaswag"]["acc_norm,none"]]}  # fmt: skip
    assert hella["stderr"]["acc_norm_none"] == source["results"]["hellaswag"]["acc_norm_stderr,none"]
    assert hella["stderr_locators"]["acc_norm_none"] == "/results/hellaswag/acc_norm_stderr,none"
    assert hella["evidence_locators"]["acc_none[0]"] == "/results/hellaswag/acc,none"
    assert hella["runtime"] == "transformers 4.46.3"  # the hf backend names its runtime
    ifeval = recs["leaderboard_ifeval"]
    assert ifeval["stderr_missing"] == ["inst_level_strict_acc_none", "inst_level_loose_acc_none"]  # N/A: missing
    assert "inst_level_strict_acc_none" not in ifeval["stderr"]
    bbh = recs["leaderboard_bbh_boolean_expressions"]
    assert bbh["config"]["task"]["num_fewshot"] == 3 and "3-shot, 250 samples" in bbh["workload"]
    assert "{{" not in json.dumps(bbh)  # the templates are the evidence's content, not the record's
    assert "{{input}}" in (root / bbh["evidence"]).read_text()


def test_lm_eval_other_weights_commit_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **(EIGHT_B | {"commit": "a" * 40}))
    result = imports("import", "lm-eval", str(LEADERBOARD), "--packet", "fam/pkt", "--format", "json", cwd=root)
    assert result.returncode == 1
    [f] = json.loads(result.stdout)["findings"]
    assert f["code"] == "import-out-of-scope" and "81cee02dd020" in f["message"] and "a" * 40 in f["message"]


def test_lm_eval_backend_is_the_runtime(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **(EIGHT_B | {"runtime": "vLLM 0.11.0"}))
    result = imports("import", "lm-eval", str(LEADERBOARD), "--packet", "fam/pkt", cwd=root)
    assert result.returncode == 1 and "ran the model with transformers (config.model)" in result.stdout
    assert "'vLLM 0.11.0'" in result.stdout


B5606 = REAL / "llama-bench/llamacpp-b5606-rtx4090.json"


def llama(root: Path, path: Path, *extra: str, spec: str = "fam/pkt") -> Any:
    return imports("import", "llama-bench", str(path), "--packet", spec, *extra, cwd=root)


def test_a_run_of_another_model_build_and_card_is_refused_naming_both_sides(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b1275-2023.json"])
    result = llama(root, B5606, "--format", "json")
    assert result.returncode == 1 and "nothing was written" in result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {f["code"] for f in findings} == {"import-out-of-scope"}
    found = {f["pointer"]: " | ".join(g["message"] for g in findings if g["pointer"] == f["pointer"]) for f in findings}
    assert set(found) == {"/0/model_filename", "/0/build_commit", "/0/gpu_info"}
    assert "quantization 'Q3_K_L' is not the packet's 'Q4_0'" in found["/0/model_filename"]
    assert "'NVIDIA GeForce RTX 4090' is not the packet's 'NVIDIA GeForce RTX 3090 Ti'" in found["/0/gpu_info"]
    assert "'llama.cpp b5606 (247e5c6e)' is not the packet's 'llama.cpp b1275 (3469684)'" in found["/0/build_commit"]
    assert "Snowpiercer-15B-v1.Q3_K_L.gguf" in found["/0/model_filename"]
    assert list((root / "packets/fam/pkt").iterdir()) == [root / "packets/fam/pkt/packet.json"]


def test_a_fork_is_not_the_packets_engine(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **(LLAMA["ik-llamacpp-3599-xeon.json"] | {"runtime": "llama.cpp b3599"}))
    result = llama(root, REAL / "llama-bench/ik-llamacpp-3599-xeon.json")
    assert result.returncode == 1 and "'ik_llama.cpp b3599 (ddc8eee1)' is not the packet's" in result.stdout


def test_ids_are_stable_unique_and_reimport_is_a_no_op(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    one_packet_registry(root, "other", **LLAMA["llamacpp-b5606-rtx4090.json"])
    assert llama(root, B5606).returncode == 0
    first = {p.name: p.read_bytes() for p in (root / "packets/fam/pkt").rglob("*.json")}
    again = llama(root, B5606)
    assert again.returncode == 0 and "wrote 0 files, 3 unchanged" in again.stderr
    assert {p.name: p.read_bytes() for p in (root / "packets/fam/pkt").rglob("*.json")} == first
    assert llama(root, B5606, spec="fam/other").returncode == 0  # the same file into another packet
    ids = [r["id"] for packet in ("pkt", "other") for r in records(root, packet).values()]
    assert len(ids) == len(set(ids)) == 4


def test_two_results_files_of_one_task_do_not_collide(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **EIGHT_B)
    second = json.loads(LEADERBOARD.read_text())
    second["date"] = 1737745999.0  # another run of the same tasks
    (tmp_path / "results_2.json").write_text(json.dumps(second, indent=2))
    assert imports("import", "lm-eval", str(LEADERBOARD), "--packet", "fam/pkt", cwd=root).returncode == 0
    result = imports("import", "lm-eval", str(tmp_path / "results_2.json"), "--packet", "fam/pkt", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    hella = [r for r in records(root).values() if r["imported_from"]["row"] == "hellaswag"]
    assert len(hella) == 2 and hella[0]["id"] != hella[1]["id"]


def test_changed_numbers_supersede_and_never_rewrite(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    assert llama(root, B5606).returncode == 0
    before = records(root)
    evidence = root / "packets/fam/pkt/evidence" / B5606.name
    original = evidence.read_bytes()
    changed = tmp_path / "changed" / B5606.name  # the same file name, a corrected number
    changed.parent.mkdir()
    changed.write_text(B5606.read_text().replace("85.5525", "85.6525"))
    result = llama(root, changed)
    assert result.returncode == 0, result.stdout + result.stderr
    after = records(root)
    assert {k: v for k, v in after.items() if k in before} == before  # published records untouched
    assert evidence.read_bytes() == original  # and the evidence they cite
    new = [r for k, r in after.items() if k not in before]
    assert sorted(r["supersedes"] for r in new) == sorted(before)
    assert all(r["evidence"] != before[r["supersedes"]]["evidence"] for r in new)
    forced = llama(root, changed, "--overwrite")
    assert forced.returncode == 0 and "wrote 0 files" in forced.stderr  # nothing to rewrite: ids follow content


def test_overwrite_never_rewrites_a_published_measurement(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    assert llama(root, B5606).returncode == 0
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.index.commit("published")  # published: committed
    path = next((root / "packets/fam/pkt/measurements").glob("*.json"))
    edited = path.read_text().replace('"community-measured"', '"lab-measured"')
    path.write_text(edited)
    result = llama(root, B5606, "--overwrite")
    assert result.returncode == 1 and "never rewritten" in result.stderr
    assert path.read_text() == edited


def test_a_file_of_another_tool_is_refused_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **EIGHT_B)
    result = llama(root, LEADERBOARD, "--format", "json")
    [f] = json.loads(result.stdout)["findings"]
    assert result.returncode == 1 and f["code"] == "import-wrong-format" and "looks like lm-eval" in f["message"]
    result = imports("import", "lm-eval", str(B5606), "--packet", "fam/pkt", cwd=root)
    assert result.returncode == 1 and "looks like llama-bench" in result.stdout


@pytest.mark.parametrize("content", [b"", b"  \n", b"[]"])
def test_empty_input_writes_nothing(tmp_path: Path, content: bytes) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    (tmp_path / "empty.json").write_bytes(content)
    result = llama(root, tmp_path / "empty.json")
    assert result.returncode == 1 and "nothing was written" in result.stderr
    assert not (root / "packets/fam/pkt/evidence").exists()


@pytest.mark.parametrize(("encoding", "prefix"), [("utf-16", b""), ("utf-8", b"\xef\xbb\xbf")])
def test_powershell_and_bom_files_are_read_and_kept_byte_exact(tmp_path: Path, encoding: str, prefix: bytes) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    raw = prefix + B5606.read_text().encode(encoding)  # PowerShell's `>` writes UTF-16 with a byte-order mark
    (tmp_path / "ps.json").write_bytes(raw)
    result = llama(root, tmp_path / "ps.json", "--cards", "1")  # the topology the file does not record
    assert result.returncode == 0, result.stdout + result.stderr
    recs = by_row(records(root))
    assert recs["1"]["metrics"]["decode_tok_s"] == json.loads(B5606.read_text())[1]["samples_ts"]
    assert (root / recs["1"]["evidence"]).read_bytes() == raw
    assert recs["1"]["evidence_sha256"][recs["1"]["evidence"]] == hashlib.sha256(raw).hexdigest()
    assert recs["1"]["evidence_locators"]["decode_tok_s[0]"] == "/1/samples_ts/0"  # read decoded, like the file
    assert evreg("validate", cwd=root).returncode == 0  # the evidence check reads it decoded too


def test_import_reports_only_what_it_introduced(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    broken = root / "packets/fam/broken/packet.json"  # an error that was there before
    broken.parent.mkdir()
    broken.write_text('{"kind": "packet", "id": "broken"}')
    result = vllm(root, "bench_serve_v0.25.1.json", "--runtime", "vLLM 0.25.1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout and "findings were there before this import" in result.stderr
    wrong = vllm(root, SWEEP + "/summary.json", "--runtime", "vLLM 0.25.1", "--state", "estimated")
    assert wrong.returncode == 2  # not an observed state: refused by the command line


def test_line_locators_count_numbers_as_the_evidence_check_does() -> None:
    from evreg.formats import NUMBER_IN_TEXT
    from evreg_rules import evidence as rule

    assert NUMBER_IN_TEXT is rule.TEXT_NUMBER  # one grammar (evreg.core.evidence), not two copies


ALL_REAL = sorted(p for p in REAL.rglob("*") if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("path", ALL_REAL, ids=lambda p: p.name)
def test_broken_real_files_are_refused_with_findings_never_a_traceback(path: Path) -> None:
    """Each real file cut short, and with each of its values swapped for another type: every importer either
    plans or refuses with findings."""
    from evreg.formats import ImportRefused, Request, Target, llama_bench, lm_eval, vllm_bench

    target = Target("fam", "pkt", {"revision": "rev-1"}, {"repository": "org/model"}, {}, None)
    raw = path.read_bytes()
    variants = [raw[: len(raw) * k // 7] for k in range(1, 7)]
    text = raw.decode()
    for old, new in (("true", '"yes"'), ('"', "'"), ("[", "{"), ("0.", "-0."), (": 0", ": null")):
        variants.append(text.replace(old, new, 3).encode())
    for module in (llama_bench, vllm_bench, lm_eval):
        for variant in variants:
            try:
                module.plan_request(Request(variant, str(path), path.name, target))
            except ImportRefused as exc:
                assert exc.findings and all(f.file == str(path) or f.file.startswith(str(path)) for f in exc.findings)


def test_llama_bench_test_without_a_positive_sample_is_a_closure(tmp_path: Path) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    rows = json.loads(B5606.read_text())
    rows[1]["samples_ts"] = [0.0, 0.0, 0.0, 0.0, 0.0]  # a test that produced nothing (e.g. out of memory)
    (tmp_path / "oom.json").write_text(json.dumps(rows, indent=2))
    result = llama(root, tmp_path / "oom.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 failed runs recorded as closures" in result.stderr
    assert [r["metrics"] for r in records(root).values()] == [{"prefill_tok_s": rows[0]["samples_ts"]}]
    [closure] = [json.loads(p.read_text()) for p in (root / "packets/fam/closures").glob("*.json")]
    assert "tg1280" in closure["reason"] and closure["selectors"]["packet"] == "pkt"


def test_vllm_older_latency_names_are_kept_with_their_unit(tmp_path: Path) -> None:
    """``benchmark_serving.py`` before ``vllm bench`` (and its forks) wrote ``*_e2e_latency_ms`` and
    ``input_throughput``: each is a metric of its own, in ms or tok/s."""
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    data = json.loads((REAL / "vllm-bench/bench_serve_v0.25.1.json").read_text())
    data |= {"mean_e2e_latency_ms": 301.5, "p99_e2e_latency_ms": 702.25, "input_throughput": 165.78}
    (tmp_path / "old.json").write_text(json.dumps(data))
    result = imports(
        "import", "vllm-bench", str(tmp_path / "old.json"), "--packet", "fam/pkt", "--runtime", "vLLM 0.25.1",
        cwd=root,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    [rec] = records(root).values()
    assert rec["metrics"]["mean_e2e_latency_ms"] == [301.5] and rec["metrics"]["input_tok_s"] == [165.78]
    assert rec["evidence_locators"]["p99_e2e_latency_ms[0]"] == "/p99_e2e_latency_ms"


def test_vllm_sweep_folder_imports_each_point_once(tmp_path: Path) -> None:
    """A ``vllm bench sweep`` output folder: each point's summary.json is imported (its run=N.json files
    repeat it), kept as evidence under its place in the folder."""
    root = tmp_path / "reg"
    one_packet_registry(root, **OPT)
    folder = tmp_path / "sweep-out"
    shutil.copytree(REAL / "vllm-bench/sweep-v0.25.1", folder)
    result = imports("import", "vllm-bench", str(folder), "--packet", "fam/pkt", "--runtime", "vLLM 0.25.1", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    recs = records(root)
    assert len(recs) == 2 and {r["config"]["run_number"] for r in recs.values()} == {0, 1}
    [evidence] = {r["evidence"] for r in recs.values()}
    assert evidence.endswith("/sweep-out-serve-max-num-seqs-4-bench-max-concurrency-2-num-prompts-8-summary.json")
    assert (root / evidence).read_bytes() == (REAL / "vllm-bench" / SWEEP / "summary.json").read_bytes()
    again = imports("import", "vllm-bench", str(folder), "--packet", "fam/pkt", "--runtime", "vLLM 0.25.1", cwd=root)
    assert "wrote 0 files" in again.stderr
    single = imports("import", "llama-bench", str(folder), "--packet", "fam/pkt", cwd=root)
    assert single.returncode == 2  # an importer without folders takes a file


@pytest.mark.parametrize("bad", ["oom", None, True, [1.0]])
def test_llama_bench_malformed_samples_are_refused_not_published_as_a_failure(tmp_path: Path, bad: object) -> None:
    """A sample that is no number is a file the importer cannot read, refused with its pointer; nothing is written
    (a closure would publish "measured nothing" about a run that measured something)."""
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    rows = json.loads(B5606.read_text())
    rows[1]["samples_ts"][2] = bad
    (tmp_path / "bad.json").write_text(json.dumps(rows, indent=2))
    result = llama(root, tmp_path / "bad.json")
    assert result.returncode == 1 and "/1/samples_ts/2" in result.stdout + result.stderr
    assert records(root) == {} and not (root / "packets/fam/closures").exists()


@pytest.mark.parametrize(("bad", "said"), [("512", 'a string "512"'), (None, "missing"), (True, "true")])
def test_a_field_of_the_wrong_type_is_named_as_json_names_it(tmp_path: Path, bad: object, said: str) -> None:
    root = tmp_path / "reg"
    one_packet_registry(root, **LLAMA["llamacpp-b5606-rtx4090.json"])
    rows = json.loads(B5606.read_text())
    rows[0]["n_prompt"] = bad
    (tmp_path / "bad.json").write_text(json.dumps(rows, indent=2))
    out = llama(root, tmp_path / "bad.json")
    text = out.stdout + out.stderr
    assert out.returncode == 1 and f"n_prompt at /0/n_prompt should be a whole number; it is {said}" in text
    assert "<class" not in text


def test_lm_eval_a_diverging_score_is_named_and_every_other_task_kept(tmp_path: Path) -> None:
    """The harness writes NaN or Infinity for a metric that diverged (a perplexity): that score is named on its task,
    never a sample, and the file's other tasks and scores import."""
    root = tmp_path / "reg"
    one_packet_registry(root, **EIGHT_B)
    text = LEADERBOARD.read_text()
    doc = json.loads(text)
    doc["results"]["hellaswag"]["acc,none"] = float("nan")
    doc["results"]["hellaswag"]["acc_norm_stderr,none"] = float("inf")
    (tmp_path / "nan.json").write_text(json.dumps(doc, indent=2))  # Python writes NaN and Infinity, as the tool does
    result = imports("import", "lm-eval", str(tmp_path / "nan.json"), "--packet", "fam/pkt", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    recs = by_row(records(root))
    assert len(recs) == 4
    hella = recs["hellaswag"]
    assert "acc_none" not in hella["metrics"] and hella["metrics"]["acc_norm_none"]
    assert hella["scores_not_finite"] == ["acc_none", "acc_norm_stderr_none"] and "acc_norm_none" not in hella["stderr"]


def test_llama_bench_cpu_only_run_of_a_gpu_build_is_on_the_cpu(tmp_path: Path) -> None:
    """``-ngl 0`` on a CUDA build: ``gpu_info`` names the build's device, the run used the CPU. A packet of the GPU
    refuses it; a packet of the CPU takes it."""
    rows = json.loads(B5606.read_text())
    for row in rows:
        row["n_gpu_layers"] = 0
    (tmp_path / "cpu.json").write_text(json.dumps(rows, indent=2))
    gpu = tmp_path / "gpu"
    one_packet_registry(gpu, **LLAMA["llamacpp-b5606-rtx4090.json"])
    refused = llama(gpu, tmp_path / "cpu.json")
    assert refused.returncode == 1 and rows[0]["cpu_info"] in refused.stdout + refused.stderr
    cpu = tmp_path / "cpu"
    one_packet_registry(cpu, **(LLAMA["llamacpp-b5606-rtx4090.json"] | {"hardware": rows[0]["cpu_info"]}))
    done = llama(cpu, tmp_path / "cpu.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["hardware"] for r in records(cpu).values()} == {rows[0]["cpu_info"]}
