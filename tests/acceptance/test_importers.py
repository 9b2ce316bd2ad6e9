"""Importers of the second lab's run log and of common benchmark tools, scaffolding, and the contributor flow."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evreg.claims import citations
from helpers import REPO, REV_A, SHARED, F, Reg, evreg

TOOLS = SHARED / "tools"
RUN_LOG = SHARED / "rtx5090-vllm-runs.json"


def validate_json(root: Path) -> dict:
    result = evreg("validate", "--format", "json", cwd=root)
    return json.loads(result.stdout) | {"exit": result.returncode}


def test_run_log_imports_every_section_with_identity_and_locators(empty_repo: Path) -> None:
    bare = evreg("import", "vllm-run-log", str(RUN_LOG), cwd=empty_repo)
    assert bare.returncode == 1 and "with errors it introduced" in bare.stderr  # the data's own findings
    shutil.rmtree(empty_repo / "packets")
    (empty_repo / "packets").mkdir()
    # The findings the data genuinely has are in the committed baseline: with it, the import is clean.
    shutil.copy(REPO / "packets/baseline.json", empty_repo / "packets/baseline.json")
    result = evreg("import", "vllm-run-log", str(RUN_LOG), cwd=empty_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "3 families, 5 artifacts, 4 packets; 6 runs, 4 failures as closures, 13 sweeps (13 with a checkpoint), "
        "5 jitter and 11 divergence measurements"
    ) in result.stderr
    source = json.loads(RUN_LOG.read_text())
    fam = empty_repo / "packets/qwen3-6-35b-a3b"
    run = json.loads(next(fam.rglob("qwen36-moe-mtp.json")).read_text())
    assert run["metrics"]["decode_tok_s"] == source["runs"][1]["decode_samples"]
    assert run["metrics"]["draft_acceptance_rate"] == [source["runs"][1]["spec_acceptance"]]
    assert run["state"] == "community-measured" and run["hardware"] == "NVIDIA GeForce RTX 5090"
    assert run["runtime"] == "vLLM 0.28.0" and run["artifact_id"] == "nvidia-qwen3-6-35b-a3b-nvfp4"
    assert run["evidence_locators"]["decode_tok_s[0]"] == "/runs/1/decode_samples/0"
    family = json.loads((fam / "family.json").read_text())
    assert "commit" in family["weight_revisions"][0]["revision_status"]  # not invented
    closures = {p.stem: json.loads(p.read_text()) for p in (empty_repo / "packets/qwen3-8-27b/closures").glob("*.json")}
    assert closures["qwen38-bf16"]["state"] == "closed"
    assert closures["qwen38-fp8-8k"]["state"] == "unsupported"
    # the log's message, each figure in it a quote of the log (re-read by validation), not a measurement of ours
    reason = closures["qwen38-fp8-8k"]["reason"]
    assert "{{ e:/failures/1/reason = 31.39 GiB }}" in reason
    assert citations.plain(reason, {}) == source["failures"][1]["reason"]
    sweep = json.loads(next(fam.rglob("sweep-qwen3-6-35b-a3b-baseline.json")).read_text())
    assert [p["x"] for p in sweep["points"]] == [1, 2, 4, 8, 16]
    assert sweep["points"][0]["decode_tok_s"] == source["sweeps"][0]["levels"][0]["decode_tok_s_per_stream"]
    divergence = json.loads(next(fam.rglob("divergence-q36-root-vs-q36-kvfp8.json")).read_text())
    assert divergence["metrics"]["top1_agree"] == [source["divergence"][1]["teacher_forced"]["top1_agree"]]
    report = validate_json(empty_repo)
    blocking = [f for f in report["findings"] if not f["baselined"] and f["code"] != "baseline-stale"]
    assert blocking == []


def test_corrupted_run_log_evidence_value(empty_repo: Path) -> None:
    shutil.copy(REPO / "packets/baseline.json", empty_repo / "packets/baseline.json")
    assert evreg("import", "vllm-run-log", str(RUN_LOG), cwd=empty_repo).returncode == 0
    evidence = empty_repo / "packets/qwen3-6-35b-a3b/evidence/rtx5090-vllm-runs.json"
    text = evidence.read_text().replace("361.9", "369.1", 1)
    evidence.write_text(text)
    report = validate_json(empty_repo)
    hits = [f for f in report["findings"] if f["code"] == "evidence-value-mismatch"]
    assert [(f["pointer"], "369.1" in f["message"]) for f in hits] == [("/evidence_locators/decode_tok_s[0]", True)]
    assert hits[0]["file"].endswith("qwen36-moe-mtp.json")


def test_run_log_missing_a_field_is_refused_whole(empty_repo: Path, tmp_path: Path) -> None:
    log = json.loads(RUN_LOG.read_text())
    del log["runs"][2]["decode_samples"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(log))
    result = evreg("import", "vllm-run-log", str(bad), "--format", "json", cwd=empty_repo)
    assert result.returncode == 1
    [f] = json.loads(result.stdout)["findings"]
    assert (f["code"], f["pointer"]) == ("import-unmappable", "/runs/2/decode_samples")
    assert list((empty_repo / "packets").iterdir()) == []


TOOL_SCOPE = {
    "llama-bench": ("Q4_K_M", "llama.cpp b5163 (8cf427ff)", "NVIDIA GeForce RTX 4080", ()),
    "vllm-bench": ("BF16", "vLLM 0.11.0", "NVIDIA H100 80GB HBM3", ("--runtime", "vLLM 0.11.0", "--hardware", "H100")),
    "lm-eval": ("BF16", "vLLM 0.11.0", "NVIDIA H100 80GB HBM3", ("--runtime", "vLLM 0.11.0", "--hardware", "H100")),
}
"""The scope of the run each tool fixture holds: the packet it belongs to, and what the command states."""


def tool_packet(reg: Reg, tool: str, artifact: bool = True) -> tuple[str, ...]:
    """A weight revision of the fixtures' model (with an artifact of the tool's quantization) and a packet of
    the tool's run in the fixture family; returns the import arguments."""
    quantization, runtime, hardware, stated = TOOL_SCOPE[tool]

    def add_revision(d: dict) -> None:
        d["weight_revisions"].append(
            {
                "id": "rev-q.1",
                "model": "qwen2.5-7b-instruct",
                "repository": "Qwen/Qwen2.5-7B-Instruct",
                "revision": "a09a35458c702b33eeacc393d103063234e8bc28",
                "quantized_artifacts": [
                    {
                        "id": "art-q",
                        "label": quantization,
                        "quantization": quantization,
                        "repository": "Qwen/Qwen2.5-7B-Instruct-GGUF",
                        "revision_status": "not captured",
                        "evidence": "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-GGUF",
                    }
                ],
            }
        )

    reg.edit(f"{F}/family.json", add_revision)
    packet = {"kind": "packet", "id": "tool", "revision": "rev-q.1", "quantization": quantization}
    packet |= {"artifact_id": "art-q"} if artifact else {}
    reg.put(f"{F}/tool/packet.json", packet | {"runtime": runtime, "hardware": hardware, "cards": 1})
    reg.commit("a packet for the tool's run")
    return ("--packet", "fam/tool", "--cards", "1", *stated)


@pytest.mark.parametrize(
    ("tool", "fixture", "metric", "locator"),
    [
        ("llama-bench", "llama-bench.json", "decode_tok_s", "/1/samples_ts/0"),
        ("vllm-bench", "vllm-bench-serve.json", "aggregate_tok_s", "/output_throughput"),
        ("lm-eval", "lm-eval-results.json", "exact_match_strict_match", "/results/gsm8k/exact_match,strict-match"),
    ],
)
def test_tool_imports_attach_to_a_packet_and_detect_corrupted_evidence(
    reg: Reg, tool: str, fixture: str, metric: str, locator: str
) -> None:
    args = tool_packet(reg, tool)
    sideways = evreg("import", tool, str(TOOLS / fixture), "--packet", "fam/pkt", cwd=reg.root)
    assert sideways.returncode == 1 and "is not the packet's" in sideways.stdout  # another model, runtime, card
    result = evreg("import", tool, str(TOOLS / fixture), *args, cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert reg.findings() == []
    records = [json.loads(p.read_text()) for p in (reg.root / f"{F}/tool/measurements").glob("*.json")]
    mine = [r for r in records if metric in r.get("metrics", {}) and "evidence_locators" in r]
    quantization, runtime, _, _ = TOOL_SCOPE[tool]
    assert mine and all(r["artifact_id"] == "art-q" and r["quantization"] == quantization for r in mine)
    assert all(r["runtime"] == runtime and r["config"]["cards"] == 1 for r in mine)
    assert locator in mine[0]["evidence_locators"].values()
    source = json.loads((TOOLS / fixture).read_text())
    node = source
    for token in locator.strip("/").split("/"):
        node = node[int(token)] if isinstance(node, list) else node[token]
    selector = next(k for k, v in mine[0]["evidence_locators"].items() if v == locator)
    assert mine[0]["metrics"][metric][int(selector.split("[")[1].rstrip("]"))] == node
    evidence = reg.root / mine[0]["evidence"]
    text = evidence.read_text().replace(json.dumps(node), json.dumps(node + 1), 1)
    evidence.write_text(text)
    codes = {(f.code, f.pointer) for f in reg.findings()}
    assert ("evidence-value-mismatch", f"/evidence_locators/{selector.replace('~', '~0').replace('/', '~1')}") in codes


def test_tool_import_never_invents_identity(reg: Reg) -> None:
    from evreg.app import imports

    args = tool_packet(reg, "vllm-bench")
    reg.edit(f"{F}/tool/packet.json", lambda d: (d.pop("artifact_id"), d.pop("quantization")))
    result = evreg("import", "vllm-bench", str(TOOLS / "vllm-bench-serve.json"), *args[:4], cwd=reg.root)
    assert "does not say the run's runtime, hardware" in result.stdout  # not stated: not invented, and said
    assert result.returncode == 1 and "[artifact-mismatch]" in result.stdout  # what it would leave is an error
    assert "names neither one (artifact_id)" in result.stdout and "nothing was written" in result.stderr
    assert not list((reg.root / f"{F}/tool").rglob("measurements/*.json"))  # taken back: the tree is as it was
    assert not (reg.root / f"{F}/tool/evidence").exists()
    assert not [f for f in reg.findings() if "/tool/measurements/" in f.file]
    importer = imports.importer("vllm-bench")
    assert importer is not None
    planned = imports.plan(
        reg.root, importer, TOOLS / "vllm-bench-serve.json", {"runtime": None}, packet=args[1], cards=1
    )
    [rec] = [json.loads(c) for path, c in planned.files.items() if "/measurements/" in path]
    assert not {"artifact_id", "quantization", "runtime", "hardware"} & rec.keys()


def test_a_refused_tool_import_leaves_nothing_and_the_corrected_run_goes_in(reg: Reg) -> None:
    """A run imported into a packet that states its cards, without ``--cards``: refused, nothing written; the same
    command with ``--cards`` then imports it (no file of the first try stands in its way)."""
    args = tool_packet(reg, "llama-bench")
    before = sorted(p.relative_to(reg.root).as_posix() for p in (reg.root / "packets").rglob("*"))
    first = evreg("import", "llama-bench", str(TOOLS / "llama-bench.json"), *args[:2], cwd=reg.root)
    assert first.returncode == 1 and "nothing was written" in first.stderr, first.stdout + first.stderr
    assert sorted(p.relative_to(reg.root).as_posix() for p in (reg.root / "packets").rglob("*")) == before
    second = evreg("import", "llama-bench", str(TOOLS / "llama-bench.json"), *args, cwd=reg.root)
    assert second.returncode == 0, second.stdout + second.stderr
    assert list((reg.root / f"{F}/tool").rglob("measurements/*.json"))


@pytest.mark.parametrize(
    ("tool", "fixture", "break_it", "pointer"),
    [
        ("llama-bench", "llama-bench.json", lambda d: d[0].pop("samples_ts"), "/0/samples_ts"),
        ("vllm-bench", "vllm-bench-serve.json", lambda d: d.update(output_throughput="fast"), "/output_throughput"),
        ("lm-eval", "lm-eval-results.json", lambda d: d.pop("results"), "/results"),
    ],
)
def test_tool_import_refuses_what_it_does_not_understand(
    reg: Reg, tmp_path: Path, tool, fixture, break_it, pointer
) -> None:
    data = json.loads((TOOLS / fixture).read_text())
    break_it(data)
    bad = tmp_path / fixture
    bad.write_text(json.dumps(data))
    result = evreg("import", tool, str(bad), "--packet", "fam/pkt", "--format", "json", cwd=reg.root)
    assert result.returncode == 1
    [f] = json.loads(result.stdout)["findings"]
    assert (f["code"], f["pointer"]) == ("import-unmappable", pointer)
    assert evreg("import", tool, str(TOOLS / fixture), "--packet", "fam/nope", cwd=reg.root).returncode == 1


def test_scaffolds_refuse_what_the_registry_does_not_know(reg: Reg) -> None:
    def new(*args: str) -> tuple[int, str]:
        result = evreg("new", *args, cwd=reg.root)
        return result.returncode, result.stderr

    base = ["--runtime", "vLLM 0.9", "--hardware", "H100", "--cards", "1"]
    code, err = new("packet", "nofam", "p2", "--revision", REV_A, *base)
    assert code == 1 and "no valid family 'nofam'" in err
    code, err = new("packet", "fam", "p2", "--revision", "rev-z.9", "--artifact", "art-a", *base)
    assert code == 1 and "no weight revision 'rev-z.9'" in err and REV_A in err
    code, err = new("packet", "fam", "p2", "--revision", REV_A, *base)
    assert code == 1 and "name one with --artifact" in err
    code, err = new("packet", "fam", "p2", "--revision", REV_A, "--artifact", "art-b", *base)
    assert code == 1 and "has no artifact 'art-b'" in err
    code, err = new("packet", "fam", "p2", "--revision", REV_A, "--artifact", "art-a", "--quantization", "INT8", *base)
    assert code == 1 and "is 'INT4', not 'INT8'" in err
    code, _ = new(
        "packet", "fam", "p2", "--revision", REV_A, "--artifact", "art-a", "--runtime", "vLLM 0.9", "--cards", "1"
    )
    assert code == 2  # hardware is asked for
    assert not (reg.root / f"{F}/p2").exists()
    code, err = new("packet", "fam", "p2", "--revision", REV_A, "--artifact", "art-a", *base)
    assert code == 0, err
    written = reg.read(f"{F}/p2/packet.json")
    assert (written["quantization"], written["hardware"], written["cards"]) == ("INT4", "H100", 1)
    code, err = new("packet", "fam", "p2", "--revision", REV_A, "--artifact", "art-a", *base)
    assert code == 1 and "exists already" in err
    for bad in ("../../evil", "qwén", "Fam"):
        code, err = new("family", bad, "--name", "x", "--revision", "r-1", "--repository", "o/r")
        assert code == 1 and "is not an id" in err
        code, err = new("packet", "fam", bad, "--revision", REV_A, "--artifact", "art-a", *base)
        assert code == 1 and "is not an id" in err
    assert not (reg.root.parent / "evil").exists()
    refused = evreg("feature", "fam/p2", "run-1", "decode_tok_s", "--sample", "7", cwd=reg.root)
    assert refused.returncode == 1 and "index 7 is out of range" in refused.stderr


def test_feature_can_make_a_packet_its_familys_primary(reg: Reg) -> None:
    """A contributor sets a headline and makes its packet the family's primary in one command, both or neither; the
    family page then shows that headline (the family declares no featured results of its own)."""
    reg.edit(f"{F}/family.json", lambda d: (d.pop("featured_results", None), d.pop("primary_packet_id", None)))
    done = evreg("feature", "fam/pkt", "run-1", "decode_tok_s", "--sample", "1", "--primary", cwd=reg.root)
    assert done.returncode == 0, done.stderr
    assert reg.read(f"{F}/family.json")["primary_packet_id"] == "pkt"
    assert reg.read(f"{F}/pkt/packet.json")["featured_metric"]["sample_index"] == 1
    before = {p: (reg.root / p).read_bytes() for p in (f"{F}/family.json", f"{F}/pkt/packet.json")}
    refused = evreg("feature", "fam/nope", "run-1", "decode_tok_s", "--sample", "1", "--primary", cwd=reg.root)
    assert refused.returncode == 1
    assert {p: (reg.root / p).read_bytes() for p in before} == before  # neither written


def test_an_importer_is_one_module_and_one_entry_point(
    reg: Reg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A format added from outside the package: a module naming an Importer, and its registration in the
    ``evreg.formats`` group (here, the metadata an installed distribution would have)."""
    site = tmp_path / "site-packages"
    (site / "demo_format-1.0.dist-info").mkdir(parents=True)
    (site / "demo_format-1.0.dist-info/METADATA").write_text("Metadata-Version: 2.1\nName: demo-format\nVersion: 1.0\n")
    (site / "demo_format-1.0.dist-info/entry_points.txt").write_text(
        "[evreg.formats]\ndemo-copy = demo_format:IMPORTER\n"
    )
    (site / "demo_format.py").write_text(
        "from evreg.formats import Importer, Plan\n"
        "def plan(request):\n"
        "    out = Plan()\n"
        "    out.add_file(request.packet().evidence_path(request.name), request.raw)\n"
        "    return out\n"
        "IMPORTER = Importer('demo-copy', 'Copy a file into a packet as evidence.', plan)\n"
    )
    monkeypatch.syspath_prepend(str(site))
    assert "demo-copy" in evreg("import", "--help").stdout
    data = tmp_path / "raw.txt"
    data.write_text("tok/s 52.3\n")
    result = evreg("import", "demo-copy", str(data), "--packet", "fam/pkt", cwd=reg.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (reg.root / f"{F}/pkt/evidence/raw.txt").read_text() == "tok/s 52.3\n"
    assert evreg("import", "demo-copy", str(data), cwd=reg.root).returncode == 2  # --packet is required


@pytest.mark.parametrize(
    ("tool", "fixture", "expected"),
    [
        (
            "llama-bench",
            "llama-bench.json",
            [
                {"phase": "prefill", "input_tokens": 512, "context_depth": 0, "concurrency": 1, "sample": "repeat"},
                {"phase": "decode", "output_tokens": 128, "output_end": "fixed", "context_depth": 0}
                | {"concurrency": 1, "sample": "repeat"},
            ],
        ),
        (
            "vllm-bench",
            "vllm-bench-serve.json",
            [{"phase": "serving", "sample": "run", "concurrency": 16, "arrival": "burst", "requests": 200}],
        ),
    ],
)
def test_a_tool_import_fills_the_workload_fields_its_file_states(
    reg: Reg, tool: str, fixture: str, expected: list[dict]
) -> None:
    """The file's own settings become fields (a rate of ``inf`` is every request at once); nothing it does not state
    is filled (vLLM's file here names no dataset or lengths)."""
    args = tool_packet(reg, tool)
    assert evreg("import", tool, str(TOOLS / fixture), *args, cwd=reg.root).returncode == 0
    records = [json.loads(p.read_text()) for p in sorted((reg.root / f"{F}/tool/measurements").glob("*.json"))]
    found = sorted((r["workload_fields"] for r in records), key=lambda f: f.get("phase", ""))
    assert found == sorted(expected, key=lambda f: f.get("phase", ""))
