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

from conftest import REPO, SHARED, evreg

REAL = SHARED / "real"


def registry(
    root: Path,
    packet: str = "pkt",
    *,
    repository: str,
    quantization: str,
    runtime: str | None,
    hardware: str,
    artifact: str | None = None,
    commit: str | None = None,
    cards: int = 1,
) -> str:
    """A registry with one family (one weight revision, an artifact when ``artifact`` names its repository) and
    one packet, committed; returns FAMILY/PACKET."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "schema").exists():
        shutil.copytree(REPO / "schema", root / "schema")
    fam = root / "packets/fam"
    fam.mkdir(parents=True, exist_ok=True)
    rev: dict[str, Any] = {"id": "rev-1", "repository": repository, "revision_status": "not captured"}
    if commit:
        rev = {"id": "rev-1", "repository": repository, "revision": commit}
    if artifact:
        rev["quantized_artifacts"] = [
            {
                "id": "art",
                "label": quantization,
                "quantization": quantization,
                "repository": artifact,
                "revision_status": "not captured",
                "evidence": f"https://huggingface.co/{artifact}",
            }
        ]
    family = {"kind": "family", "id": "fam", "name": "Fixture", "weight_revisions": [rev]}
    (fam / "family.json").write_text(json.dumps(family))
    data: dict[str, Any] = {"kind": "packet", "id": packet, "revision": "rev-1", "quantization": quantization}
    data |= {"artifact_id": "art"} if artifact else {}
    data |= {"runtime": runtime} if runtime else {}
    data |= {"hardware": hardware, "cards": cards}
    (fam / packet).mkdir(exist_ok=True)
    (fam / packet / "packet.json").write_text(json.dumps(data))
    repo = git.Repo.init(root)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "Contributor")
        cw.set_value("user", "email", "c@example.org")
    repo.git.add("-A")
    repo.index.commit("registry")
    return f"fam/{packet}"


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
    spec = registry(root, **LLAMA[name])
    result = evreg("import", "llama-bench", str(REAL / "llama-bench" / name), "--packet", spec, cwd=root)
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
        assert "cards" not in rec["config"]  # not stated: not invented
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
