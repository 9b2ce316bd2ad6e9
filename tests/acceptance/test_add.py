"""`evreg add`: a researcher's raw files into the registry in one command, on real tool output (sources in
``tests/data/real/SOURCES.md``): the file's identity finds or plans its records, the plan is written only with
--yes, what joins an existing packet is written at once, several files go in one call, and nothing is written when
any of them is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import git
import pytest

from helpers import SHARED, evreg

LLAMA = SHARED / "tools/llama-bench.json"
VLLM = SHARED / "tools/vllm-bench-serve.json"
LM_EVAL = SHARED / "tools/lm-eval-results.json"
SERVING_FACTS = ("--quantization", "BF16", "--runtime", "vLLM 0.11.0", "--hardware", "NVIDIA H100 80GB HBM3")
SERVING_FACTS += ("--cards", "1")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty registry, committed."""
    root = tmp_path / "reg"
    assert evreg("init", str(root), cwd=tmp_path).returncode == 0
    repo = git.Repo(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Contributor")
        cw.set_value("user", "email", "c@example.org")
    repo.git.add("-A")
    repo.index.commit("an empty registry")
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "packets").rglob("*")) if p.is_file()}


def test_the_plan_is_printed_and_written_only_with_yes(root: Path) -> None:
    planned = evreg("add", str(LLAMA), "--cards", "1", cwd=root)
    assert planned.returncode == 0, planned.stderr
    assert "creates:" in planned.stderr and "nothing was written" in planned.stderr
    assert "family qwen2-5-7b-instruct" in planned.stderr  # the vocabulary's model of the GGUF file's name
    assert "artifact q4-k-m" in planned.stderr and "Qwen/Qwen2.5-7B-Instruct-GGUF" in planned.stderr
    assert tree(root) == {}
    done = evreg("add", str(LLAMA), "--cards", "1", "--yes", cwd=root)
    assert done.returncode == 0, done.stderr
    family = json.loads((root / "packets/qwen2-5-7b-instruct/family.json").read_text())
    rev = family["weight_revisions"][0]
    assert rev["model"] == "qwen2.5-7b-instruct" and rev["repository"] == "Qwen/Qwen2.5-7B-Instruct"
    assert "revision" not in rev  # the file names no commit: unpinned, never guessed
    [art] = rev["quantized_artifacts"]
    assert (art["quantization"], art["repository"]) == ("Q4_K_M", "Qwen/Qwen2.5-7B-Instruct-GGUF")
    [packet] = (root / "packets/qwen2-5-7b-instruct").glob("*/packet.json")
    data = json.loads(packet.read_text())
    raw = json.loads(LLAMA.read_text())[0]
    assert data["hardware"] == raw["gpu_info"] and data["cards"] == 1 and data["artifact_id"] == art["id"]
    assert raw["build_commit"] in data["runtime"] and str(raw["build_number"]) in data["runtime"]
    assert family["primary_packet_id"] == data["id"]
    measurements = sorted(packet.parent.glob("measurements/*.json"))
    assert len(measurements) == len(json.loads(LLAMA.read_text()))
    assert (packet.parent / "evidence/llama-bench.json").read_bytes() == LLAMA.read_bytes()
    check = evreg("validate", "--base", "HEAD", cwd=root)
    assert check.returncode == 0 and "0 errors, 0 warnings" in check.stdout, check.stdout
    before = tree(root)
    again = evreg("add", str(LLAMA), "--cards", "1", cwd=root)  # nothing new: written at once, and changes nothing
    assert again.returncode == 0 and "creates:" not in again.stderr and "wrote 0 files" in again.stderr
    assert tree(root) == before


def test_a_file_of_an_existing_packet_joins_it_without_a_plan(root: Path) -> None:
    assert evreg("add", str(VLLM), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    [packet] = (root / "packets").glob("*/*/packet.json")
    joined = evreg("add", str(LM_EVAL), *SERVING_FACTS, cwd=root)  # the same weights, runtime, GPU and cards
    assert joined.returncode == 0 and "creates:" not in joined.stderr, joined.stderr
    assert [p.parent.parent for p in (root / "packets").glob("*/*/evidence/lm-eval-results.json")] == [packet.parent]
    other = evreg("add", str(LM_EVAL), *SERVING_FACTS[:-1], "2", cwd=root)  # two cards: another packet
    assert "creates:" in other.stderr and "packet " in other.stderr and "nothing was written" in other.stderr


def test_each_missing_fact_is_one_question_and_nothing_is_written(root: Path) -> None:
    result = evreg("add", str(VLLM), "--cards", "1", "--format", "json", cwd=root)
    assert result.returncode == 1 and "needs 3 facts" in result.stderr
    asked = json.loads(result.stdout)["findings"]
    assert [f["code"] for f in asked] == ["import-fact-needed"] * 3
    assert sorted(f["message"].split(": add ")[1].split()[0] for f in asked) == [
        "--hardware",
        "--quantization",
        "--runtime",
    ]
    assert all(f["file"] == str(VLLM) and f["hint"] for f in asked)
    assert tree(root) == {}


def test_several_files_go_in_one_call_and_a_refused_one_stops_all(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(VLLM, folder / "serve.json")
    shutil.copy(LM_EVAL, folder / "eval.json")
    (folder / "notes.txt").write_text("ran on the lab box\n")
    broken = tmp_path / "broken.json"  # llama-bench's keys, a sample that is no number: refused
    rows = json.loads(LLAMA.read_text())
    rows[0]["samples_ts"] = ["fast"]
    broken.write_text(json.dumps(rows))
    refused = evreg("add", str(folder), str(broken), *SERVING_FACTS, "--yes", cwd=root)
    assert refused.returncode == 1 and tree(root) == {}, refused.stderr
    done = evreg("add", str(folder), *SERVING_FACTS, "--yes", cwd=root)
    assert done.returncode == 0, done.stderr
    assert f"not read (no tool's output evreg reads): {folder / 'notes.txt'}" in done.stderr
    evidence = sorted(p.name for p in (root / "packets").glob("*/*/evidence/*"))
    assert evidence == ["eval.json", "serve.json"]  # one packet: the same identity
    assert len(list((root / "packets").glob("*/*/packet.json"))) == 1


def test_an_unrecognised_file_names_the_way_out(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "results.json"
    other.write_text('{"throughput": 12.5}')
    result = evreg("add", str(other), cwd=root)
    assert result.returncode == 1 and "[import-wrong-format]" in result.stdout
    assert "--tool NAME" in result.stdout and "llama-bench" in result.stdout
    wrong = evreg("add", str(LLAMA), "--tool", "lm-eval", "--cards", "1", cwd=root)
    assert wrong.returncode == 1 and "llama-bench" in wrong.stdout + wrong.stderr


def test_model_stated_against_the_file_is_refused(root: Path) -> None:
    result = evreg("add", str(VLLM), *SERVING_FACTS, "--model", "meta-llama/Llama-3.1-8B", cwd=root)
    assert result.returncode == 1 and "[import-out-of-scope]" in result.stdout
    assert "but --model says 'meta-llama/Llama-3.1-8B'" in result.stdout


def test_a_revision_gaining_an_artifact_keeps_its_packets(root: Path) -> None:
    assert evreg("add", str(VLLM), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    [packet] = (root / "packets").glob("*/*/packet.json")
    family = packet.parent.parent.name
    data = json.loads(packet.read_text())
    art = ("new", "artifact", family, "qwen2.5-7b-instruct", "q4", "--quantization", "Q4_K_M")
    art += ("--repository", "Qwen/Qwen2.5-7B-Instruct-GGUF", "--evidence", "https://huggingface.co/Qwen")
    assert data["quantization"] == "BF16"  # the revision's own weights, their precision stated
    assert evreg(*art, cwd=root).returncode == 0
    check = evreg("validate", cwd=root)
    assert check.returncode == 0 and "artifact-mismatch" not in check.stdout  # the packet keeps its meaning


def test_new_artifact_is_refused_while_records_do_not_say_their_weights(root: Path) -> None:
    assert evreg("add", str(VLLM), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    [packet] = (root / "packets").glob("*/*/packet.json")
    data = json.loads(packet.read_text())
    data.pop("quantization")
    packet.write_text(json.dumps(data))
    family = packet.parent.parent.name
    before = (packet.parent.parent / "family.json").read_bytes()
    art = ("new", "artifact", family, "qwen2.5-7b-instruct", "q4", "--quantization", "Q4_K_M")
    art += ("--repository", "Qwen/Qwen2.5-7B-Instruct-GGUF", "--evidence", "https://huggingface.co/Qwen")
    result = evreg(*art, cwd=root)
    assert result.returncode == 1 and "name no artifact and no quantization" in result.stderr
    assert str(packet.relative_to(root)) in result.stderr
    assert (packet.parent.parent / "family.json").read_bytes() == before


def test_a_new_registry_reviews_an_imported_labs_defects_with_the_baseline_command(root: Path) -> None:
    """A lab's run log has genuine defects: its import keeps them, `evreg baseline --propose` writes one entry per
    finding it brought (accepting nothing until a reason is written), reasons make validation pass, a pull request
    that adds entries is still refused, and a fixed defect's entry is stale and pruned."""
    log = SHARED / "rtx5090-vllm-runs.json"
    assert evreg("import", "vllm-run-log", str(log), cwd=root).returncode == 1  # kept, with its errors
    assert evreg("validate", cwd=root).returncode == 1
    proposed = evreg("baseline", "--propose", "--base", "HEAD", cwd=root)
    assert proposed.returncode == 0 and "proposed: " in proposed.stdout, proposed.stdout
    data = json.loads((root / "packets/baseline.json").read_text())
    entries = data["entries"]
    assert entries and all(e["reason"] == "" and e["digest"].startswith("sha256:") for e in entries)
    unreasoned = evreg("validate", "--format", "json", cwd=root)
    assert unreasoned.returncode == 1  # an entry without a reason accepts nothing
    assert any("has no reason yet" in f["message"] for f in json.loads(unreasoned.stdout)["findings"])
    for entry in entries:
        entry["reason"] = "The lab's log records it so; reviewed."
    (root / "packets/baseline.json").write_text(json.dumps(data))
    check = evreg("validate", cwd=root)
    assert check.returncode == 0, check.stdout
    assert "0 stale; 0 without a reason" in evreg("baseline", cwd=root).stdout
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.index.commit("the lab's log, its defects reviewed in the baseline")
    self_approved = evreg("validate", "--base", "HEAD~1", cwd=root)  # as a pull request would be judged
    assert self_approved.returncode == 1 and "[baseline-self-approval]" in self_approved.stdout
    bad = next(e for e in entries if "/measurements/" in e["file"])
    (root / bad["file"]).unlink()  # the defect is gone (with its record)
    listed = evreg("baseline", cwd=root)
    assert "1 stale" in listed.stdout and bad["file"] in listed.stdout
    pruned = evreg("baseline", "--prune", cwd=root)
    assert f"removed stale entry: {bad['code']} at {bad['file']}" in pruned.stdout
    assert len(json.loads((root / "packets/baseline.json").read_text())["entries"]) == len(entries) - 1


def test_a_run_not_committed_yet_is_replaced_by_its_corrected_import(root: Path) -> None:
    """ "Published" is committed: a corrected import replaces what an earlier one wrote and nobody committed (and says
    so); once committed, the same correction is refused as a rewrite of a published measurement."""
    assert evreg("add", str(LLAMA), "--cards", "1", "--yes", cwd=root).returncode == 0
    [packet] = (root / "packets").glob("*/*/packet.json")
    spec = f"{packet.parent.parent.name}/{packet.parent.name}"
    runs = sorted(packet.parent.glob("measurements/*.json"))
    tagged = ("import", "llama-bench", str(LLAMA), "--packet", spec, "--cards", "1", "--state", "lab-measured")
    again = evreg(*tagged, cwd=root)
    assert again.returncode == 0 and "replaced 2 files no commit holds yet" in again.stderr, again.stderr
    assert {json.loads(p.read_text())["state"] for p in runs} == {"lab-measured"}
    repo = git.Repo(root)
    repo.git.add("-A")
    repo.index.commit("the runs")
    back = evreg("import", "llama-bench", str(LLAMA), "--packet", spec, "--cards", "1", cwd=root)
    assert back.returncode == 1 and "published (committed) measurement is never rewritten" in back.stderr
    assert {json.loads(p.read_text())["state"] for p in runs} == {"lab-measured"}


def test_commit_pins_the_weights_of_a_family_add_creates(root: Path) -> None:
    commit = "a09a35458c702b33eeacc393d103063234e8bc28"
    result = evreg("add", str(LLAMA), "--cards", "1", "--commit", commit, "--yes", cwd=root)
    assert result.returncode == 0 and f"commit {commit[:12]}" in result.stderr
    family = json.loads((root / "packets/qwen2-5-7b-instruct/family.json").read_text())
    assert family["weight_revisions"][0]["revision"] == commit
    mlperf = SHARED / "real/mlperf/inference_results_v4.1-amd-8xmi300x-server/mlperf_log_summary.txt"
    facts = ("--model", "meta-llama/Llama-2-70b-chat-hf", "--quantization", "FP8", "--runtime", "vLLM ROCm")
    facts += ("--hardware", "AMD Instinct MI300X", "--cards", "8", "--commit", "not-a-commit", "--yes")
    before = tree(root)
    bad = evreg("add", str(mlperf), *facts, cwd=root)  # the family's revision would not validate: nothing written
    assert bad.returncode == 1 and "revision" in bad.stdout and tree(root) == before


# -- what a hostile contributor tried -------------------------------------------------------------------------------


def test_weights_is_only_for_a_file_that_names_no_repository(root: Path) -> None:
    """A file that names the revision's own repository is of those weights: --weights does not make it an artifact."""
    result = evreg("add", str(VLLM), *SERVING_FACTS, "--weights", "acme/Some-GGUF", "--yes", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "artifact" not in result.stderr
    [packet] = (root / "packets").glob("*/*/packet.json")
    assert "artifact_id" not in json.loads(packet.read_text())


def test_model_stated_against_an_unknown_repository_the_file_names_is_refused(root: Path, tmp_path: Path) -> None:
    foo, bar = json.loads(VLLM.read_text()), json.loads(VLLM.read_text())
    foo["model_id"], bar["model_id"] = "acme/Foo-7B", "other/Bar-13B"
    (tmp_path / "foo.json").write_text(json.dumps(foo))
    (tmp_path / "bar.json").write_text(json.dumps(bar))
    assert evreg("add", str(tmp_path / "foo.json"), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    result = evreg("add", str(tmp_path / "bar.json"), *SERVING_FACTS, "--model", "acme/Foo-7B", cwd=root)
    assert result.returncode == 1 and "but --model says 'acme/Foo-7B'" in result.stdout


def test_a_second_model_on_the_same_setup_gets_a_packet_id_of_its_own(root: Path, tmp_path: Path) -> None:
    other = json.loads(VLLM.read_text())
    other["model_id"] = "meta-llama/Llama-3.1-8B-Instruct"
    (tmp_path / "llama.json").write_text(json.dumps(other))
    assert evreg("add", str(VLLM), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    result = evreg("add", str(tmp_path / "llama.json"), *SERVING_FACTS, "--yes", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    ids = [p.parent.name for p in (root / "packets").glob("*/*/packet.json")]
    assert len(ids) == 2 and len(set(ids)) == 2


def test_a_labs_export_is_left_to_its_importer(root: Path) -> None:
    result = evreg("add", str(SHARED / "rtx5090-vllm-runs.json"), cwd=root)
    assert result.returncode == 1 and "evreg import vllm-run-log" in result.stderr
    assert tree(root) == {}


def test_a_file_name_with_blanks_or_letters_beyond_ascii_is_kept_under_a_safe_name(root: Path, tmp_path: Path) -> None:
    named = tmp_path / "résultat (1).json"
    named.write_bytes(LLAMA.read_bytes())
    result = evreg("add", str(named), "--cards", "1", "--yes", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    [evidence] = (root / "packets").glob("*/*/evidence/*")
    assert evidence.name == "r-sultat-1.json" and evidence.read_bytes() == LLAMA.read_bytes()


def test_a_nan_statistic_is_no_measurement_and_loses_nothing_else(root: Path, tmp_path: Path) -> None:
    doc = json.loads(VLLM.read_text())
    doc["std_tpot_ms"] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps(doc))
    result = evreg("add", str(tmp_path / "nan.json"), *SERVING_FACTS, "--yes", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    [run] = [json.loads(p.read_text()) for p in (root / "packets").glob("*/*/measurements/*.json")]
    assert "std_tpot_ms" not in run["metrics"] and run["metrics"]["mean_ttft_ms"] == [doc["mean_ttft_ms"]]


def test_a_stated_fact_the_file_contradicts_is_refused(root: Path) -> None:
    quant = evreg("add", str(LLAMA), "--cards", "1", "--quantization", "FP8", cwd=root)
    assert quant.returncode == 1 and "states quantization 'Q4_K_M', but --quantization says 'FP8'" in quant.stderr
    runtime = evreg("add", str(LLAMA), "--cards", "1", "--runtime", "vLLM 0.11.0", cwd=root)
    assert runtime.returncode == 1 and "but --runtime says 'vLLM 0.11.0'" in runtime.stderr


def test_baseline_indexes_stay_true_beside_a_malformed_entry_and_blank_reasons_say_nothing(root: Path) -> None:
    assert evreg("import", "vllm-run-log", str(SHARED / "rtx5090-vllm-runs.json"), cwd=root).returncode == 1
    assert evreg("baseline", "--propose", cwd=root).returncode == 0
    path = root / "packets/baseline.json"
    data = json.loads(path.read_text())
    for entry in data["entries"]:
        entry["reason"] = "\u200b\u2800"  # invisible: says nothing
    assert evreg("validate", cwd=root).returncode == 1
    assert f"{len(data['entries'])} without a reason" in evreg("baseline", cwd=root).stdout
    for entry in data["entries"]:
        entry["reason"] = "Reviewed: the lab's log records it so."
    stale = dict(data["entries"][0], file="packets/nowhere/gone.json")
    data["entries"] = ["a note, not an entry", *data["entries"], stale]
    path.write_text(json.dumps(data))
    listed = evreg("baseline", cwd=root).stdout
    assert f"stale /entries/{len(data['entries']) - 1}: " in listed and "packets/nowhere/gone.json" in listed
    assert evreg("baseline", "--prune", cwd=root).returncode == 0
    kept = json.loads(path.read_text())["entries"]
    assert kept == data["entries"][:-1]  # only the stale one removed; the malformed one left for a human


def test_a_tag_or_revision_after_the_repository_names_the_same_weights(root: Path, tmp_path: Path) -> None:
    tagged = json.loads(VLLM.read_text())
    tagged["model_id"] = "Qwen/Qwen2.5-7B-Instruct:latest"
    (tmp_path / "tagged.json").write_text(json.dumps(tagged))
    assert evreg("add", str(VLLM), *SERVING_FACTS, "--yes", cwd=root).returncode == 0
    again = evreg("add", str(tmp_path / "tagged.json"), *SERVING_FACTS, cwd=root)
    assert again.returncode == 0 and "creates:" not in again.stderr, again.stderr
    assert len(list((root / "packets").glob("*/family.json"))) == 1
